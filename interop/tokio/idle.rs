//! How the multi-thread scheduler's idle workers search, sleep and are
//! woken: a thin shim over the `eventcount` crate.
//!
//! This file is eventcount's, not tokio's: eventcount's interop tool writes
//! it into a copy of tokio as `src/runtime/scheduler/multi_thread/idle.rs`
//! (docs/tokio.md in the eventcount repository). It takes the place of
//! tokio's packed searching/unparked word, its sleeper list under the
//! scheduler mutex, and the per-worker condvar park: the crate keeps the
//! count of idle workers awake, the sleepers, the final check before a
//! sleep and the hand-off wake at the end of a search. tokio keeps its
//! driver: the worker that holds it sleeps in the driver's poll, through
//! `no_work_found_parked`, and a wake that picks that worker reaches it
//! through the driver's unpark (the hook given to `Idle::new`). Every other
//! idle worker sleeps on the crate's own futex word.
//!
//! Which protocol the pool runs is a feature of the patched tokio:
//! `eventcount-notifier` runs `NotifierSleep`, the event count; without it
//! the pool runs `JecSleep`, rayon's jobs-event-counter protocol. The idle
//! policy is `IdlePolicy::tokio()` (no search rounds, at most half the
//! workers stealing, as stock tokio), or eventcount's default with the
//! `eventcount-default-policy` feature.

use eventcount::{CoreLatch, IdlePolicy, Round, SleepProtocol, Unpark};
use std::time::Instant;

// eventcount-choice: begin
#[cfg(feature = "eventcount-notifier")]
type Protocol = eventcount::NotifierSleep;
#[cfg(not(feature = "eventcount-notifier"))]
type Protocol = eventcount::JecSleep;

const POLICY: IdlePolicy = if cfg!(feature = "eventcount-default-policy") {
    IdlePolicy::new()
} else {
    IdlePolicy::tokio()
};
// eventcount-choice: end

pub(super) struct Idle {
    sleep: Protocol,
    /// One idle-loop latch per worker, never set: the scheduler stops its
    /// workers through `has_work` (the inject queue is closed) and
    /// `notify_all`, so a latch only gives each worker's rounds their own.
    latches: Box<[CoreLatch]>,
}

/// One worker's search: from the first pass that finds its own queues
/// empty to the task it runs next. Dropping it ends the search too.
pub(super) struct Search<'a> {
    state: <Protocol as SleepProtocol>::Idle<'a>,
    latch: &'a CoreLatch,
    /// The last round announced the worker, or was a timed one: the next
    /// one may sleep, and counts as a park.
    announced: bool,
    /// The last round's park, the driver's, returned for its own events
    /// with no wake: the crate counts the worker busy until its next round.
    left_idle: bool,
    /// The cap let the worker steal in its last pass. A capped worker's
    /// final check leaves the other workers' queues out, as stock tokio's
    /// parking worker does: their owners run what they hold, and the
    /// searcher that ends its search hands off. Counting that work would
    /// send the worker back to a pass that may not steal it, again and
    /// again, for as long as the searcher holding the slot is off the CPU.
    steal_allowed: bool,
}

impl Idle {
    /// `unpark(i)` wakes worker `i` while it sleeps in the driver.
    pub(super) fn new(num_workers: usize, unpark: Unpark) -> Idle {
        let sleep = match Protocol::try_new(num_workers, POLICY, Some(unpark)) {
            Ok(sleep) => sleep,
            Err(err) => panic!("tokio on eventcount: {err}"),
        };
        Idle {
            sleep,
            latches: (0..num_workers).map(|_| CoreLatch::idle_loop()).collect(),
        }
    }

    pub(super) fn start_searching(&self, worker: usize) -> Search<'_> {
        Search {
            state: self.sleep.start_looking(worker),
            latch: &self.latches[worker],
            announced: false,
            left_idle: false,
            steal_allowed: true,
        }
    }

    /// Whether the searching worker may steal now: at most half the
    /// workers steal at once, as in stock tokio.
    pub(super) fn may_steal(&self, search: &mut Search<'_>) -> bool {
        search.steal_allowed = self.sleep.may_search(&mut search.state, search.latch);
        search.steal_allowed
    }

    /// Whether the worker's last pass was let steal: its final check then
    /// looks at the other workers' queues too.
    pub(super) fn may_steal_last_pass(search: &Search<'_>) -> bool {
        search.steal_allowed
    }

    /// The search found a task. The last idle worker awake wakes a sleeper
    /// to search in its place.
    pub(super) fn found_work(&self, search: Search<'_>) {
        self.sleep.work_found(search.state);
    }

    /// Whether the next round may put the worker to sleep.
    pub(super) fn may_sleep(search: &Search<'_>) -> bool {
        search.announced
    }

    /// Whether the last round left the worker busy: its driver returned
    /// with no wake (stock tokio's worker back from the driver, not
    /// searching).
    pub(super) fn left_idle(search: &Search<'_>) -> bool {
        search.left_idle
    }

    /// One empty round, for a worker that does not hold the driver: it
    /// sleeps, if it does, on the crate's futex word, until `deadline` at
    /// the latest.
    pub(super) fn round(
        &self,
        search: &mut Search<'_>,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
    ) {
        match deadline {
            None => {
                let round = self
                    .sleep
                    .no_work_found(&mut search.state, search.latch, has_work);
                search.announced = round == Round::Announced;
                search.left_idle = false;
            }
            Some(deadline) => {
                // A timed round does not say whether it announced the
                // worker: count the next one as a park (metrics only).
                let _ = self.sleep.no_work_found_until(
                    &mut search.state,
                    search.latch,
                    has_work,
                    deadline,
                );
                search.announced = true;
                search.left_idle = false;
            }
        }
    }

    /// One empty round, for the worker that holds the driver: it sleeps,
    /// if it does, in `park`, the driver's poll, until `deadline` at the
    /// latest.
    pub(super) fn round_in_driver(
        &self,
        search: &mut Search<'_>,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
        park: impl FnMut(Option<Instant>),
    ) {
        let round = self.sleep.no_work_found_parked(
            &mut search.state,
            search.latch,
            has_work,
            deadline,
            park,
        );
        search.announced = round == Round::Announced;
        search.left_idle = matches!(round, Round::ParkReturned | Round::TimedOut);
    }

    /// A task went to a worker's own queue.
    pub(super) fn notify_local(&self) {
        self.sleep.new_internal_jobs(1, true);
    }

    /// A task went to the inject queue.
    pub(super) fn notify_remote(&self) {
        self.sleep.new_injected_jobs(1, true);
    }

    /// Wake every worker: shutdown, or a trace request.
    pub(super) fn notify_all(&self) {
        self.sleep.wake_all();
    }
}

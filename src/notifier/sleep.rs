//! [`NotifierSleep`]: the [`Notifier`] behind the [`SleepProtocol`] trait,
//! with an [`IdlePolicy`] for the rounds before a worker sleeps. Its
//! operations are the trait's methods alone, and the notifier inside stays
//! inside: a wait prepared on it by hand would take wakes that the protocol
//! counts on a worker coming back.

use std::time::Instant;

use crossbeam_utils::CachePadded;

use super::idle_count::IdleCount;
use super::{Ended, Notifier, PreparedWait};
use crate::error::{all_looking, check_capacity, CapacityError, Count};
use crate::idle::{IdlePolicy, Step};
use crate::latch::CoreLatch;
use crate::protocol::{withdrew, Rounds, SleepProtocol};
use crate::round::Round;
use crate::shell::{check_round, PoolIdle, Search, Searcher, WorkerIdle};
use crate::stats::SleepStats;
use crate::sync::{self, shared_clock_ns, unmodeled};
use crate::unpark::Unpark;

/// A [`Notifier`] plus an [`IdlePolicy`]: the event count as a pool's sleep
/// protocol.
///
/// An idle worker spends the policy's rounds spinning or yielding; then each
/// empty round is one check / prepare / re-check / commit cycle on the
/// notifier, with the worker's [`CoreLatch`] stepped through SLEEPY and
/// SLEEPING so a latch setter knows when to wake it.
///
/// A post wakes only as many sleepers as the awake idle workers cannot
/// cover; with nobody asleep it costs one fence and one load
/// ([docs/notifier.md](crate::docs::notifier), "NotifierSleep", has the
/// count's layout and orderings).
///
/// # Examples
///
/// ```
/// use eventcount::{IdlePolicy, NotifierSleep, SleepProtocol};
///
/// let sleep = NotifierSleep::try_new(4, IdlePolicy::rayon(), None).unwrap();
/// assert_eq!(sleep.capacity(), 4);
/// sleep.new_internal_jobs(1, true); // nobody sleeps: one fence, one load
/// ```
#[derive(Debug)]
pub struct NotifierSleep {
    notifier: Notifier,
    /// The workers a post can rely on, in one word on its own cache line
    /// (`idle_count.rs` has the details):
    ///
    /// | bits   | field        | meaning                                   |
    /// |--------|--------------|-------------------------------------------|
    /// | 0..32  | `waking` + 2³¹ | wakes the protocol delivered whose worker is not yet back (signed) |
    /// | 32..64 | `awake_idle` | idle workers that are not asleep or announced (≤ capacity) |
    idle: CachePadded<IdleCount>,
    /// What each worker's idle periods learned and cost.
    workers_idle: Box<[CachePadded<WorkerIdle>]>,
    /// Workers in an idle period, asleep or not, for rayon PR #1314's
    /// searcher bound, and counted only under it: a word every search
    /// would write. No wake depends on it.
    looking: unmodeled::AtomicU32,
    pool: PoolIdle,
}

/// What an idle worker of a [`NotifierSleep`] pool carries between rounds:
/// its search, which ends when this state goes to `work_found` or is
/// dropped.
#[must_use = "a NotifierIdle is passed to no_work_found each empty round, then to work_found"]
pub struct NotifierIdle<'a>(
    /// The search; its announcement is the wait prepared on the waiter stack,
    /// and it is uncounted (`counted` false) after a park of the caller's
    /// returned unwoken (docs/notifier.md, "NotifierSleep", step 8).
    pub(crate) Search<'a, NotifierSleep>,
);

impl std::fmt::Debug for NotifierIdle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.debug("NotifierIdle", f)
    }
}

impl NotifierSleep {
    fn build(
        workers: usize,
        policy: IdlePolicy,
        unpark: Option<Unpark>,
    ) -> Result<Self, CapacityError> {
        // The error names the type the caller built, not the one inside.
        check_capacity("NotifierSleep", "workers", workers, Notifier::MAX_CAPACITY)?;
        let notifier = match unpark {
            Some(unpark) => Notifier::with_unpark(workers, unpark),
            None => Notifier::new(workers),
        };
        Ok(NotifierSleep {
            notifier,
            idle: CachePadded::new(IdleCount::new()),
            workers_idle: (0..workers)
                .map(|_| CachePadded::new(WorkerIdle::default()))
                .collect(),
            looking: unmodeled::AtomicU32::new(0),
            pool: PoolIdle::new(policy, workers),
        })
    }

    internal! {
        /// Workers awake and idle right now: a snapshot, for tests and
        /// monitoring.
        #[must_use]
        pub fn awake_idle(&self) -> usize {
            self.idle.load().awake_idle()
        }
    }
}

/// Ends a sleep attempt, however it ends (a panic included): the wait
/// withdrawn if still prepared, the latch back to UNSET if this attempt
/// stepped it, and the worker counted awake and idle again.
struct AwakeAgain<'a> {
    notifier: &'a Notifier,
    idle: &'a IdleCount,
    /// The prepared wait, until the attempt commits or withdraws it.
    wait: Option<PreparedWait<'a>>,
    /// A wake of the protocol's reached the worker: it moves from
    /// `waking` to `awake_idle`.
    woken: bool,
    /// Cleared when the worker leaves its idle period instead: a park of
    /// the caller's returned with no wake.
    count: bool,
    /// Set once this attempt put the latch to SLEEPING: a latch it never
    /// stepped may be another worker's (a misuse), and must be left alone.
    latch: Option<&'a CoreLatch>,
}

impl AwakeAgain<'_> {
    /// Leave the waiter set, keeping a notification that reached the worker.
    fn withdraw(&mut self, operation: &str) {
        if let Some(wait) = self.wait.take() {
            self.woken |= self.notifier.withdraw_keeping(wait, operation);
        }
    }
}

impl Drop for AwakeAgain<'_> {
    fn drop(&mut self) {
        self.withdraw("a panicking sleep attempt");
        if let Some(latch) = self.latch {
            latch.wake_up();
        }
        if self.count {
            if self.woken {
                self.idle.back_from_wake();
            } else {
                self.idle.back();
            }
        }
    }
}

impl NotifierSleep {
    #[cfg(all(test, loom))]
    pub(crate) fn searcher_slots_taken(&self) -> u32 {
        self.pool.slots.taken()
    }

    /// Wakes credited whose worker is not back yet (0 at rest).
    #[cfg(all(test, loom))]
    pub(crate) fn waking(&self) -> i64 {
        self.idle.load().waking()
    }

    /// `awake_idle += 1`, refusing to pass the capacity.
    #[inline]
    #[track_caller]
    fn count_awake_idle(&self, operation: &str, worker: usize) {
        let capacity = self.notifier.capacity();
        // Check before write: a count above the capacity is never
        // published, not even for a moment that another thread could act on.
        if !self.idle.try_count_in(capacity) {
            panic!(
                "{operation}: worker {worker} would be looking for work while {}; a \
                 search was started and never ended (was its NotifierIdle leaked?)",
                all_looking(capacity)
            );
        }
        if self.pool.slots.counts_busy() {
            self.looking.fetch_add(1, unmodeled::Relaxed);
        }
    }

    /// A round that starts after its deadline: no search and no sleep. An
    /// announced worker withdraws as when its final check finds work
    /// (docs/notifier.md, "NotifierSleep").
    fn past_deadline(&self, operation: &str, idle: &mut Search<'_, Self>) -> Round {
        if let Some(wait) = idle.announced.take() {
            if self.notifier.withdraw_keeping(wait, operation) {
                self.idle.back_from_wake();
            } else {
                self.idle.back();
            }
            idle.period.sleepy_again();
        }
        Round::PastDeadline
    }

    /// The round after the announcement, whose search found nothing: steps
    /// 5–8 of [docs/notifier.md](crate::docs::notifier), "NotifierSleep".
    #[allow(clippy::too_many_arguments)]
    #[track_caller]
    fn sleep(
        &self,
        operation: &str,
        idle: &mut Search<'_, Self>,
        wait: PreparedWait<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
        park: Option<impl FnMut(Option<Instant>)>,
    ) -> Round {
        let mut awake_again = AwakeAgain {
            notifier: &self.notifier,
            idle: &self.idle,
            wait: Some(wait),
            woken: false,
            count: true,
            latch: None,
        };
        // 5. UNSET -> SLEEPY -> SLEEPING, after the worker is on the waiter
        //    stack, so a setter that sees SLEEPING and notifies reaches it.
        let asleep = latch.get_sleepy_as(idle.worker, operation) && latch.fall_asleep();
        if asleep {
            awake_again.latch = Some(latch);
        }
        // 6. The final check; either way out keeps a notification (step 8).
        let outcome = if !asleep || has_work() {
            awake_again.withdraw(operation);
            idle.period.search_again();
            Round::Withdrew
        } else {
            // 7. Sleep until notified or the deadline, on the slot's futex
            //    word or in the caller's `park`.
            let worker_idle = &self.workers_idle[idle.worker];
            idle.period.sleeping(worker_idle);
            let external = park.is_some();
            let wait = awake_again
                .wait
                .take()
                .expect("the attempt's wait is prepared");
            let ended = self
                .notifier
                .commit_for_round(wait, operation, deadline, park);
            match ended {
                Ended::Notified => {
                    awake_again.woken = true;
                    idle.period.woken(worker_idle, &self.pool);
                    Round::Notified
                }
                Ended::Woken => {
                    awake_again.woken = true;
                    idle.period.woken(worker_idle, &self.pool);
                    Round::Woken
                }
                Ended::Withdrew => {
                    if external {
                        idle.period.park_returned(worker_idle);
                        // The park returned for its own reason: the worker
                        // has work of its own, and no post counted on it.
                        awake_again.count = false;
                        idle.counted = false;
                        if self.pool.slots.counts_busy() {
                            self.looking.fetch_sub(1, unmodeled::Relaxed);
                        }
                    } else {
                        idle.period.timed_out(worker_idle);
                    }
                    withdrew(external, deadline)
                }
            }
        };
        // 8. Awake again: `awake_idle += 1`, or `waking -= 1, awake_idle += 1`
        //    in one step after a wake of the protocol's.
        drop(awake_again);
        outcome
    }

    /// `notify_one`, crediting the wake it delivers to `waking`.
    fn wake_one(&self) {
        self.notifier
            .notify_up_to(1, |n| n, |wid| self.delivered(wid));
    }

    /// A wake of worker `wid` is about to be made: stamp it, so the worker
    /// can measure what its sleep cost, and credit it to `waking`.
    fn delivered(&self, wid: usize) {
        self.workers_idle[wid].stamp_wake();
        self.idle.credit(1);
    }

    /// A post of `n` jobs: wake as many sleepers as the awake idle workers
    /// cannot cover, or all `n` if the queue was not empty (rayon's rule).
    #[inline]
    fn new_jobs(&self, n: usize, queue_was_empty: bool) {
        self.notifier.notify_up_to(
            n,
            |n| {
                if queue_was_empty {
                    // After the NotifyFence: a worker that left this count
                    // before its WaitFence is not in it, and one still in it
                    // will see the jobs in its re-check; a worker woken and
                    // not yet back will search. Relaxed: the fences order it.
                    n.saturating_sub(self.idle.load().covering())
                } else {
                    n
                }
            },
            // Credited at each delivery, before the wake's system call: so
            // `waking` never counts a wake that did not happen, and posts
            // during the system call rely on the woken worker.
            |wid| self.delivered(wid),
        );
    }
}

impl Searcher for NotifierSleep {
    type Announced<'a> = PreparedWait<'a>;

    fn pool(&self) -> &PoolIdle {
        &self.pool
    }

    fn worker_idle(&self, worker: usize) -> &WorkerIdle {
        &self.workers_idle[worker]
    }

    /// Busy workers are those in no idle period: `looking` counts the
    /// sleepers too, as JecSleep's inactive count does.
    fn idle_counts(&self) -> (usize, usize) {
        let looking = self.looking.load(unmodeled::Relaxed) as usize;
        (
            self.awake_idle(),
            self.notifier.capacity().saturating_sub(looking),
        )
    }

    /// The end of a search, from the idle state's drop: uncount the worker,
    /// give back its slot, and hand off to one sleeper if no worker a post
    /// can rely on is left (docs/notifier.md, "The awake idle count").
    fn end_search(&self, idle: &mut Search<'_, Self>) {
        if !idle.counted {
            // Uncounted since its park returned: no post counted on it.
            self.pool.slots.release(&mut idle.period.slot);
            return;
        }
        if self.pool.slots.counts_busy() {
            self.looking.fetch_sub(1, unmodeled::Relaxed);
        }
        self.pool.slots.release(&mut idle.period.slot);
        let left = match idle.announced.take() {
            Some(wait) => {
                if self.notifier.withdraw_keeping(wait, "work_found") {
                    self.idle.woken_and_gone()
                } else {
                    self.idle.load()
                }
            }
            None => self.idle.leave(),
        };
        if left.covering() == 0 {
            self.wake_one();
        }
    }
}

impl<'a> Rounds<NotifierIdle<'a>> for NotifierSleep {
    #[track_caller]
    fn round(
        &self,
        operation: &str,
        idle: &mut NotifierIdle<'a>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
        park: Option<impl FnMut(Option<Instant>)>,
    ) -> Round {
        let idle = &mut idle.0;
        let (parks, hook) = (park.is_some(), self.notifier.unpark.is_some());
        check_round(operation, idle.sleep, self, idle.worker, parks, hook);
        if !idle.counted {
            // Back after a park's own return with no wake: count it again.
            self.count_awake_idle(operation, idle.worker);
            idle.counted = true;
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return self.past_deadline(operation, idle);
        }
        if let Some(wait) = idle.announced.take() {
            return self.sleep(operation, idle, wait, latch, has_work, deadline, park);
        }
        let step = idle
            .period
            .round(&self.workers_idle[idle.worker], &self.pool, latch, || {
                self.idle_counts()
            });
        if step == Step::Search {
            sync::yield_now();
            return Round::Searched;
        }
        // 1. The search is over (the period gave its slot back).
        // 2. Claim the worker's waiter slot; a slot in use is refused before
        //    anything is written.
        // 3. Leave the awake idle count before the push and the WaitFence: a
        //    poster that still sees us after its NotifyFence is ordered
        //    before our WaitFence, so our caller's next search sees its work.
        //    Relaxed: the fences order it. (Through `idle.sleep`, which is
        //    `self`: the token lives as long as the idle state.)
        let announced = idle.sleep.notifier.try_prepare_wait(idle.worker, || {
            self.idle.leave();
        });
        match announced {
            Ok(wait) => idle.announced = Some(wait),
            Err(state) => panic!(
                "{operation}: worker {} is already asleep or registering on another \
                 thread (its waiter slot is {state}): two threads use one worker index",
                idle.worker
            ),
        }
        // 4. The caller searches every queue once more: the re-check, which
        //    also sees work where `has_work` does not look (its own deque).
        Round::Announced
    }
}

impl SleepProtocol for NotifierSleep {
    type Idle<'a> = NotifierIdle<'a>;

    fn try_new(
        workers: usize,
        policy: IdlePolicy,
        unpark: Option<Unpark>,
    ) -> Result<Self, CapacityError> {
        NotifierSleep::build(workers, policy, unpark)
    }

    fn capacity(&self) -> usize {
        self.notifier.capacity()
    }

    #[inline]
    #[track_caller]
    fn start_looking(&self, worker: usize) -> NotifierIdle<'_> {
        let capacity = self.notifier.capacity();
        assert!(
            worker < capacity,
            "start_looking: worker index {worker} is out of range for a NotifierSleep of {}",
            Count(capacity, "worker")
        );
        self.count_awake_idle("start_looking", worker);
        NotifierIdle(Search::new(self, worker))
    }

    #[track_caller]
    fn may_search(&self, idle: &mut NotifierIdle<'_>, latch: &CoreLatch) -> bool {
        idle.0.may_search(self, latch)
    }

    #[inline]
    #[track_caller]
    fn work_found(&self, idle: NotifierIdle<'_>) {
        // Dropping the state ends the search: `end_search`.
        idle.0.found(self);
    }

    #[inline]
    fn new_internal_jobs(&self, n: usize, queue_was_empty: bool) {
        self.new_jobs(n, queue_was_empty);
    }

    #[inline]
    fn new_injected_jobs(&self, n: usize, queue_was_empty: bool) {
        self.new_jobs(n, queue_was_empty);
    }

    #[track_caller]
    fn notify_worker_latch_is_set(&self, worker: usize) {
        let capacity = self.notifier.capacity();
        assert!(
            worker < capacity,
            "notify_worker_latch_is_set: worker index {worker} is out of range for a NotifierSleep of {}",
            Count(capacity, "worker")
        );
        // The owner only: a targeted wake, no herd. Credited as every wake
        // of the protocol's: the owner moves from `waking` to `awake_idle`.
        self.workers_idle[worker].stamp_wake();
        if self.notifier.notify_waiter(worker) {
            self.idle.credit(1);
        }
    }

    fn wake_all(&self) {
        let woken = self.notifier.notify_all();
        self.idle.credit(woken);
    }

    fn stats(&self) -> SleepStats {
        let now = shared_clock_ns();
        self.workers_idle
            .iter()
            .fold(self.notifier.stats(), |s, w| w.counters.add_to(s, now))
    }

    #[track_caller]
    fn worker_stats(&self, worker: usize) -> SleepStats {
        let capacity = self.notifier.capacity();
        assert!(
            worker < capacity,
            "worker_stats: worker index {worker} is out of range for a NotifierSleep of {}",
            Count(capacity, "worker")
        );
        self.workers_idle[worker].counters.add_to(
            SleepStats::default().add(self.notifier.slot_counts(worker)),
            shared_clock_ns(),
        )
    }

    fn num_sleeping(&self) -> usize {
        self.notifier.num_sleeping()
    }
}

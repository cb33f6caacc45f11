//! [`NotifierSleep`]: the [`Notifier`] behind the [`SleepProtocol`] trait,
//! with an [`IdlePolicy`] for the rounds before a worker sleeps. It lives
//! beside the notifier it adapts, as `JecSleep` lives in `src/jec/`.
//!
//! The protocol's operations are the methods of [`SleepProtocol`] and
//! nothing else, as for [`JecSleep`](crate::JecSleep): one contract,
//! documented once on the trait, that a scheduler generic over the protocol
//! and one that names `NotifierSleep` call in the same words, with no
//! forwarding layer between the two to drift. What is inherent is what only
//! this type has: its constructors, its policy and its count of awake idle
//! workers. The notifier inside stays inside: a wait prepared on it by hand
//! would take wakes that the protocol counts on a worker coming back.

use std::time::Instant;

use crossbeam_utils::CachePadded;

use super::idle_count::IdleCount;
use super::{Ended, Notifier, PreparedWait};
use crate::error::{all_looking, check_capacity, CapacityError, Count};
use crate::idle::{IdlePolicy, Step};
use crate::latch::CoreLatch;
use crate::protocol::{withdrew, Rounds, SleepProtocol};
use crate::round::Round;
use crate::shell::{check_owner, Period, PoolIdle, WorkerIdle};
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
/// Awake idle workers are counted in one shared word, as rayon counts its
/// inactive ones: `start_looking` and a wake add one, the end of a search
/// and going to sleep take one off. A worker that a wake reached counts
/// from the moment its waker delivered it, before it runs, as rayon's
/// waker takes a woken worker off the sleeping count. A post wakes only as
/// many sleepers as these workers cannot cover (when the queue was empty
/// before it), and costs one fence plus one load when nobody sleeps. The
/// last of them to find work wakes one sleeper to search in its place
/// (the hand-off), and the searcher cap sends workers over it straight to
/// sleep. A worker that withdraws from a sleep attempt keeps a
/// notification that reached it: it counts as woken by it. [docs/notifier.md](crate::docs::notifier),
/// "NotifierSleep", has the word's layout, its orderings and why no wake
/// is lost.
///
/// A latch wake is [`Notifier::notify_waiter`]: the owner and nobody else.
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
    /// The workers a post can rely on, in one word on its own cache line:
    ///
    /// | bits   | field        | meaning                                   |
    /// |--------|--------------|-------------------------------------------|
    /// | 0..32  | `waking` + 2³¹ | wakes the protocol delivered whose worker is not yet back (signed) |
    /// | 32..64 | `awake_idle` | idle workers that are not asleep or announced (≤ capacity) |
    ///
    /// (`idle_count.rs` has the details.)
    idle: CachePadded<IdleCount>,
    /// What each worker's idle periods learned and cost (only that worker
    /// writes it).
    workers_idle: Box<[CachePadded<WorkerIdle>]>,
    /// Workers in an idle period, asleep or not: what rayon PR #1314's
    /// searcher bound counts as not busy, as `JecSleep`'s inactive count
    /// does. No wake depends on it.
    looking: unmodeled::AtomicU32,
    pool: PoolIdle,
}

/// What an idle worker of a [`NotifierSleep`] pool carries between rounds:
/// its search, which ends when this state goes to `work_found` or is
/// dropped (as [`JecIdle`](crate::JecIdle)'s does).
///
/// # Examples
///
/// ```
/// use eventcount::{NotifierSleep, SleepProtocol};
///
/// let sleep = NotifierSleep::new(2);
/// let idle = sleep.start_looking(1);
/// sleep.work_found(idle);
/// ```
#[derive(Debug)]
#[must_use = "a NotifierIdle is passed to no_work_found each empty round, then to work_found"]
pub struct NotifierIdle<'a> {
    sleep: &'a NotifierSleep,
    worker: usize,
    period: Period,
    /// The announcement: the worker is on the waiter stack, out of the
    /// awake idle count, and its caller is making its last search.
    prepared: Option<PreparedWait<'a>>,
    /// Whether the worker is in the awake idle count or announced: false
    /// from a park of the caller's that returned with no wake until the
    /// next round, which counts it back in (docs/notifier.md,
    /// "NotifierSleep", step 8).
    counted: bool,
}

#[cfg(all(test, loom))]
impl NotifierIdle<'_> {
    /// Whether this search holds a searcher slot (for the loom models).
    pub(crate) fn holds_searcher_slot(&self) -> bool {
        self.period.slot
    }
}

impl Drop for NotifierIdle<'_> {
    fn drop(&mut self) {
        self.sleep.end_search(self);
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
        /// Workers awake and idle right now: between `start_looking` (or a
        /// wake) and the end of their search (or their announcement, the round
        /// before they try to sleep). At most [`capacity`](SleepProtocol::capacity).
        /// A snapshot, for tests and monitoring.
        ///
        /// # Examples
        ///
        /// ```
        /// use eventcount::{NotifierSleep, SleepProtocol};
        ///
        /// let sleep = NotifierSleep::new(2);
        /// let idle = sleep.start_looking(1);
        /// assert_eq!(sleep.awake_idle(), 1);
        /// sleep.work_found(idle);
        /// assert_eq!(sleep.awake_idle(), 0);
        /// ```
        #[must_use]
        pub fn awake_idle(&self) -> usize {
            self.idle.load().awake_idle()
        }
    }
}

/// Ends a sleep attempt, however it ends (a commit, a withdrawal, or a
/// panic in the caller's check or at a misuse): the wait withdrawn if it is
/// still prepared, the latch back from SLEEPING to UNSET if this attempt
/// stepped it there, and the worker counted awake and idle again.
struct AwakeAgain<'a> {
    notifier: &'a Notifier,
    idle: &'a IdleCount,
    /// The prepared wait, until the attempt commits or withdraws it.
    wait: Option<PreparedWait<'a>>,
    /// A wake of the protocol's reached the worker: it moves from
    /// `waking` to `awake_idle`, where its waker's credit counted it.
    woken: bool,
    /// Cleared when the worker leaves its idle period instead: a park of
    /// the caller's returned with no wake.
    count: bool,
    /// Set once this attempt put the latch to SLEEPING: a latch it never
    /// stepped may be another worker's (a misuse), and must be left alone.
    latch: Option<&'a CoreLatch>,
}

impl AwakeAgain<'_> {
    /// Leave the waiter set without sleeping, keeping a notification that
    /// already reached the worker: it counts as woken by it.
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
    /// Searcher slots taken right now (for the loom models' checks).
    #[cfg(all(test, loom))]
    pub(crate) fn searcher_slots_taken(&self) -> u32 {
        self.pool.slots.taken()
    }

    /// Wakes credited whose worker is not back yet (for the loom models'
    /// checks: 0 at rest).
    #[cfg(all(test, loom))]
    pub(crate) fn waking(&self) -> i64 {
        self.idle.load().waking()
    }

    /// (idle workers awake, busy workers), for rayon PR #1314's searcher
    /// bound. This protocol does not count its sleepers, so they count as
    /// busy here.
    fn idle_counts(&self) -> (usize, usize) {
        let looking = self.looking.load(unmodeled::Relaxed) as usize;
        (
            self.awake_idle(),
            self.notifier.capacity().saturating_sub(looking),
        )
    }

    /// `awake_idle += 1` for a worker that starts looking (or looks again
    /// after its park's own return), refusing to pass the capacity.
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
        self.looking.fetch_add(1, unmodeled::Relaxed);
    }

    /// A round that starts after its deadline: no search and no sleep. A
    /// worker that announced itself in the round before withdraws, as it
    /// does when its final check finds work: it leaves the waiter set,
    /// keeping a notification that reached it (it counts as woken by it),
    /// it counts among the awake idle workers again, and its next round
    /// announces it anew. Its caller searches before that round, or ends
    /// the search (and hands off), as after any round, so a post that now
    /// relies on it loses nothing.
    fn past_deadline(&self, operation: &str, idle: &mut NotifierIdle<'_>) -> Round {
        if let Some(wait) = idle.prepared.take() {
            if self.notifier.withdraw_keeping(wait, operation) {
                self.idle.back_from_wake();
            } else {
                self.idle.back();
            }
            idle.period.sleepy_again();
        }
        Round::PastDeadline
    }

    /// The round after the announcement: the caller searched every queue
    /// since `wait` was prepared and found nothing. Steps 5–8 of
    /// [docs/notifier.md](crate::docs::notifier), "NotifierSleep". `operation` is the public call,
    /// for the messages.
    #[allow(clippy::too_many_arguments)]
    #[track_caller]
    fn sleep(
        &self,
        operation: &str,
        idle: &mut NotifierIdle<'_>,
        wait: PreparedWait<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
        park: Option<impl FnMut(Option<Instant>)>,
    ) -> Round {
        // However this ends (a commit, a withdrawal, or a panic): the wait
        // withdrawn if still prepared, the worker counted awake and idle
        // again, and the latch back to UNSET once this attempt stepped it.
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
        //    Either step fails only if the latch is set; the first panics,
        //    writing nothing, if another worker holds the latch.
        let asleep = latch.get_sleepy_as(idle.worker, operation) && latch.fall_asleep();
        if asleep {
            awake_again.latch = Some(latch);
        }
        // 6. The final check, as the protocols' contract names it.
        //    Either way out, the wait is withdrawn keeping a notification
        //    that reached it: the worker counts as woken by it (step 8).
        let outcome = if !asleep || has_work() {
            awake_again.withdraw(operation);
            idle.period.search_again();
            Round::Withdrew
        } else {
            // 7. Sleep until notified, or until the deadline: on the slot's
            //    futex word, or in the caller's `park` (the slot parked
            //    externally, which a notify wakes through the hook). A
            //    return with no notification withdraws the slot as a
            //    timeout does.
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
                        // Out of the caller's park with no wake, the worker
                        // leaves its idle period instead of counting awake
                        // again: the park returned for its own reason (a
                        // driver's event), so the worker has work of its
                        // own, no post counted on it, and its end hands off
                        // nothing. Its next round counts it back in.
                        awake_again.count = false;
                        idle.counted = false;
                        self.looking.fetch_sub(1, unmodeled::Relaxed);
                    } else {
                        idle.period.timed_out(worker_idle);
                    }
                    withdrew(external, deadline)
                }
            }
        };
        // 8. Awake again: `awake_idle += 1`, or, if a wake of the
        //    protocol's reached the worker, `waking -= 1, awake_idle += 1`
        //    in one step (its waker credited it to `waking`).
        drop(awake_again);
        outcome
    }

    /// The end of a search, from the idle state's drop: uncount the worker
    /// and give back its searcher slot. If that leaves no worker a post can
    /// rely on (none awake and idle, none on its way back from a wake), it
    /// wakes one sleeper to search in its place (the hand-off): a post that
    /// it covered woke nobody, and it may be taking other work (one fence
    /// and one load if none sleeps). A worker that announced itself and
    /// found work in its last search leaves the waiter set instead, keeping
    /// a notification that reached it (as if woken by it, and gone at
    /// once), and hands off on the same rule.
    fn end_search(&self, idle: &mut NotifierIdle<'_>) {
        if !idle.counted {
            // Out of the count since its park returned with no wake: no
            // post counted on it, so there is nothing to hand off.
            self.pool.slots.release(&mut idle.period.slot);
            return;
        }
        self.looking.fetch_sub(1, unmodeled::Relaxed);
        self.pool.slots.release(&mut idle.period.slot);
        let left = match idle.prepared.take() {
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

    /// `notify_one`, crediting a wake it delivers to `waking` before the
    /// wake's system call (`Notifier::notify_up_to`).
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
    /// cannot cover. When the queue was not empty, nobody took the earlier
    /// work, so wake for all `n` (rayon's rule).
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
            // that `waking` never counts a wake that did not happen, and
            // that posts during the system call rely on the woken worker.
            // A worker back before the credit lands is counted once, in
            // `awake_idle` (idle_count.rs).
            |wid| self.delivered(wid),
        );
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
        check_owner(operation, idle.sleep, self, idle.worker);
        assert!(
            park.is_none() || self.notifier.unpark.is_some(),
            "{operation}: worker {} would park externally, but this NotifierSleep has no \
             unpark hook (build it with try_new and Some(unpark))",
            idle.worker
        );
        if !idle.counted {
            // The first round after a park of the caller's returned with no
            // wake: idle again, counted as `start_looking` counts it, even
            // if the round goes no further.
            self.count_awake_idle(operation, idle.worker);
            idle.counted = true;
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return self.past_deadline(operation, idle);
        }
        if let Some(wait) = idle.prepared.take() {
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
        // 1. The search is over: no longer a searcher (the period gave its
        //    slot back).
        // 2. The announcement starts with a claim of the worker's waiter
        //    slot: a slot in use means another thread waits as this worker,
        //    and it is refused before anything is written.
        // 3. Then leave the awake idle count, before the push and the
        //    WaitFence: a poster that reads the count after its NotifyFence
        //    and still sees us there is ordered before our WaitFence, and
        //    the search our caller makes next sees its work
        //    (docs/notifier.md, "NotifierSleep"). Relaxed: the fences order
        //    it.
        // (Through `idle.sleep`, which is `self`: the token lives as long
        // as the idle state.)
        let announced = idle.sleep.notifier.try_prepare_wait(idle.worker, || {
            self.idle.leave();
        });
        match announced {
            Ok(wait) => idle.prepared = Some(wait),
            Err(state) => panic!(
                "{operation}: worker {} is already asleep or registering on another \
                 thread (its waiter slot is {state}): two threads use one worker index",
                idle.worker
            ),
        }
        // 4. Back to the caller, who searches every queue once more: the
        //    re-check of the event count, and the one that sees work pushed
        //    to a queue `has_work` does not look at (a worker's own deque).
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
        NotifierIdle {
            sleep: self,
            worker,
            period: Period::new(worker),
            prepared: None,
            counted: true,
        }
    }

    fn may_search(&self, idle: &mut NotifierIdle<'_>, latch: &CoreLatch) -> bool {
        check_owner("may_search", idle.sleep, self, idle.worker);
        idle.period
            .may_search(&self.pool, latch, || self.idle_counts())
    }

    #[inline]
    #[track_caller]
    fn work_found(&self, mut idle: NotifierIdle<'_>) {
        check_owner("work_found", idle.sleep, self, idle.worker);
        idle.period
            .found(&self.workers_idle[idle.worker], &self.pool);
        // Dropping the state ends the search: `end_search`.
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

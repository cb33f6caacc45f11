//! [`NotifierSleep`]: the [`Notifier`] behind the [`SleepProtocol`] trait,
//! with an [`IdlePolicy`] for the rounds before a worker sleeps.

use std::time::Instant;

use crossbeam_utils::CachePadded;

use super::SleepProtocol;
use crate::error::CapacityError;
use crate::latch::CoreLatch;
use crate::notifier::Notifier;
use crate::outcome::WaitOutcome;
use crate::policy::IdlePolicy;
use crate::stats::SleepStats;
use crate::sync::{AtomicU32, Ordering};

/// A [`Notifier`] plus an [`IdlePolicy`]: the event count as a pool's sleep
/// protocol.
///
/// An idle worker spends the policy's rounds spinning or yielding; then each
/// empty round is one check / prepare / re-check / commit cycle on the
/// notifier, with the worker's [`CoreLatch`] stepped through SLEEPY and
/// SLEEPING so a latch setter knows when to wake it.
///
/// Awake idle workers are counted in one shared word, as rayon counts its
/// inactive ones: `start_looking` and a wake add one, `work_found` and
/// going to sleep take one off. A post wakes only as many sleepers as the
/// awake idle workers cannot cover (when the queue was empty before it),
/// and costs one fence plus one load when nobody sleeps. The last awake
/// idle worker to find work wakes one sleeper to search in its place (the
/// hand-off), and the policy's searcher cap sends workers over it straight
/// to sleep. docs/notifier.md, "NotifierSleep", has the word's layout, its
/// orderings and why no wake is lost.
///
/// A latch wake is [`Notifier::notify_waiter`]: the owner and nobody else.
///
/// # Examples
///
/// ```
/// use eventcount::{IdlePolicy, NotifierSleep, SleepProtocol};
///
/// let sleep = NotifierSleep::with_policy(4, IdlePolicy::new().yield_rounds(8));
/// assert_eq!(sleep.capacity(), 4);
/// sleep.new_internal_jobs(1, true); // nobody sleeps: one fence, one load
/// ```
#[derive(Debug)]
pub struct NotifierSleep {
    notifier: Notifier,
    /// Workers awake and idle: between `start_looking` (or a wake) and
    /// `work_found` (or going to sleep). One `u32`, on its own cache line:
    ///
    /// | bits  | field        | meaning                                   |
    /// |-------|--------------|-------------------------------------------|
    /// | 0..32 | `awake_idle` | idle workers that are not asleep (≤ capacity) |
    awake_idle: CachePadded<AtomicU32>,
    policy: IdlePolicy,
    /// The policy's searcher cap for this many workers (None: no cap).
    searcher_cap: Option<u32>,
}

/// What an idle worker of a [`NotifierSleep`] pool carries between rounds.
///
/// # Examples
///
/// ```
/// use eventcount::{NotifierSleep, SleepProtocol};
///
/// let sleep = NotifierSleep::new(2);
/// let idle = sleep.start_looking(1);
/// assert_eq!(idle.worker(), 1);
/// sleep.work_found();
/// ```
#[derive(Debug)]
#[must_use = "a NotifierIdle is passed to no_work_found each empty round"]
pub struct NotifierIdle<'a> {
    sleep: &'a NotifierSleep,
    worker: usize,
    rounds: u32,
}

impl NotifierIdle<'_> {
    /// The worker this state belongs to.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{NotifierSleep, SleepProtocol};
    /// assert_eq!(NotifierSleep::new(1).start_looking(0).worker(), 0);
    /// ```
    #[must_use]
    pub fn worker(&self) -> usize {
        self.worker
    }
}

impl NotifierSleep {
    /// A protocol for `workers` workers with the default [`IdlePolicy`].
    ///
    /// # Panics
    ///
    /// If `workers` exceeds [`NotifierSleep::MAX_CAPACITY`]. Use
    /// [`NotifierSleep::try_new`] to get an error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// let sleep = eventcount::NotifierSleep::new(8);
    /// assert_eq!(sleep.capacity(), 8);
    /// ```
    pub fn new(workers: usize) -> Self {
        NotifierSleep::with_policy(workers, IdlePolicy::default())
    }

    /// The most workers a `NotifierSleep` can manage: 65,535, the
    /// [`Notifier`]'s [`MAX_CAPACITY`](Notifier::MAX_CAPACITY).
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{Notifier, NotifierSleep};
    /// assert_eq!(NotifierSleep::MAX_CAPACITY, Notifier::MAX_CAPACITY);
    /// ```
    pub const MAX_CAPACITY: usize = Notifier::MAX_CAPACITY;

    /// A protocol with the default [`IdlePolicy`], or an error if `workers`
    /// exceeds [`NotifierSleep::MAX_CAPACITY`].
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::NotifierSleep;
    /// assert!(NotifierSleep::try_new(NotifierSleep::MAX_CAPACITY + 1).is_err());
    /// ```
    pub fn try_new(workers: usize) -> Result<Self, CapacityError> {
        NotifierSleep::try_with_policy(workers, IdlePolicy::default())
    }

    /// A protocol with a chosen [`IdlePolicy`].
    ///
    /// # Panics
    ///
    /// If `workers` exceeds [`NotifierSleep::MAX_CAPACITY`].
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{IdlePolicy, NotifierSleep};
    /// let sleep = NotifierSleep::with_policy(2, IdlePolicy::new().spin_rounds(4));
    /// assert_eq!(sleep.policy().rounds_until_sleepy(), 36);
    /// ```
    pub fn with_policy(workers: usize, policy: IdlePolicy) -> Self {
        match NotifierSleep::try_with_policy(workers, policy) {
            Ok(sleep) => sleep,
            Err(err) => panic!("NotifierSleep: {err}"),
        }
    }

    /// A protocol with a chosen [`IdlePolicy`], or an error if `workers`
    /// exceeds [`NotifierSleep::MAX_CAPACITY`].
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{IdlePolicy, NotifierSleep};
    ///
    /// let err = NotifierSleep::try_with_policy(70_000, IdlePolicy::default()).unwrap_err();
    /// assert_eq!(err.max_capacity(), NotifierSleep::MAX_CAPACITY);
    /// ```
    pub fn try_with_policy(workers: usize, policy: IdlePolicy) -> Result<Self, CapacityError> {
        Ok(NotifierSleep {
            notifier: Notifier::try_new(workers)?,
            awake_idle: CachePadded::new(AtomicU32::new(0)),
            searcher_cap: policy.searcher_cap(workers),
            policy,
        })
    }

    /// The notifier inside.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::NotifierSleep::new(2).notifier().num_sleeping(), 0);
    /// ```
    #[must_use]
    pub fn notifier(&self) -> &Notifier {
        &self.notifier
    }

    /// The idle policy in use.
    ///
    /// # Examples
    ///
    /// ```
    /// let sleep = eventcount::NotifierSleep::new(1);
    /// assert_eq!(sleep.policy().rounds_until_sleepy(), 32);
    /// ```
    pub fn policy(&self) -> &IdlePolicy {
        &self.policy
    }

    /// The number of workers this protocol was built for: their indices
    /// are `0..capacity()`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::NotifierSleep::new(3).capacity(), 3);
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.notifier.capacity()
    }

    /// Workers asleep right now: a snapshot, for tests and monitoring.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::NotifierSleep::new(3).num_sleeping(), 0);
    /// ```
    #[must_use]
    pub fn num_sleeping(&self) -> usize {
        self.notifier.num_sleeping()
    }

    /// How many times workers slept and wakers made a wake syscall.
    ///
    /// # Examples
    ///
    /// ```
    /// let sleep = eventcount::NotifierSleep::new(2);
    /// assert_eq!(sleep.stats().waits, 0);
    /// ```
    #[must_use]
    pub fn stats(&self) -> SleepStats {
        self.notifier.stats()
    }
}

/// Ends a sleep attempt, however it ends (a commit, a cancel, or the
/// caller's check unwinding): the latch back from SLEEPING to UNSET, and
/// the worker counted awake and idle again.
struct AwakeAgain<'a> {
    awake_idle: &'a AtomicU32,
    latch: &'a CoreLatch,
}

impl Drop for AwakeAgain<'_> {
    fn drop(&mut self) {
        self.latch.wake_up();
        // Relaxed: a poster that misses this increment wakes one more
        // sleeper than needed, never one fewer.
        self.awake_idle.fetch_add(1, Ordering::Relaxed);
    }
}

impl NotifierSleep {
    /// The awake idle count (for the loom models' checks at rest).
    #[cfg(all(test, loom))]
    pub(crate) fn awake_idle(&self) -> u32 {
        self.awake_idle.load(Ordering::Relaxed)
    }

    /// One empty round; a sleep it starts ends at `deadline` if given.
    fn round(
        &self,
        operation: &str,
        idle: &mut NotifierIdle<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
    ) -> WaitOutcome {
        assert!(
            std::ptr::eq(idle.sleep, self),
            "{operation}: the idle state of worker {} belongs to a different NotifierSleep",
            idle.worker
        );
        if idle.rounds < self.policy.rounds_until_sleepy() {
            self.policy.pause(idle.rounds);
            idle.rounds += 1;
            return WaitOutcome::Notified;
        }
        idle.rounds = 0;
        // UNSET -> SLEEPY: fails only if the latch is set.
        if !latch.get_sleepy() {
            return WaitOutcome::Notified;
        }
        // Leave the awake idle count before the WaitFence in prepare_wait:
        // a poster that reads the count after its NotifyFence and still
        // sees us there is ordered before our re-check, which then sees its
        // work (docs/notifier.md, "NotifierSleep"). Relaxed: the fences
        // order it.
        self.awake_idle.fetch_sub(1, Ordering::Relaxed);
        let awake_again = AwakeAgain {
            awake_idle: &self.awake_idle,
            latch,
        };
        // On the waiter stack before the latch says SLEEPING, so a setter
        // that sees SLEEPING and notifies reaches us.
        let wait = self.notifier.prepare_wait(idle.worker);
        let outcome = if !latch.fall_asleep() {
            // Set meanwhile: its setter saw SLEEPY and will not wake us.
            self.notifier.cancel_wait(wait);
            WaitOutcome::Notified
        } else if has_work() {
            // If the caller's check panics, the token's drop cancels the
            // wait and `awake_again` counts us back.
            self.notifier.cancel_wait(wait);
            WaitOutcome::Notified
        } else if let Some(deadline) = deadline {
            self.notifier.commit_wait_until(wait, deadline)
        } else {
            self.notifier.commit_wait(wait);
            WaitOutcome::Notified
        };
        drop(awake_again);
        idle.rounds = self.first_round(self.awake_idle.load(Ordering::Relaxed));
        outcome
    }

    /// The round a worker starts searching at when `awake_idle` workers
    /// (itself included) are awake and idle: 0, or the sleepy round (no
    /// spin or yield rounds) if that is more than the searcher cap allows.
    #[inline]
    fn first_round(&self, awake_idle: u32) -> u32 {
        match self.searcher_cap {
            Some(cap) if awake_idle > cap => self.policy.rounds_until_sleepy(),
            _ => 0,
        }
    }

    /// A post of `n` jobs: wake as many sleepers as the awake idle workers
    /// cannot cover. When the queue was not empty, nobody took the earlier
    /// work, so wake for all `n` (rayon's rule).
    #[inline]
    fn new_jobs(&self, n: u32, queue_was_empty: bool) {
        self.notifier.notify_up_to(n as usize, |n| {
            if queue_was_empty {
                // After the NotifyFence: a worker that left this count before
                // its WaitFence is not in it, and one still in it will see
                // the jobs in its re-check. Relaxed: the fences order it.
                n.saturating_sub(self.awake_idle.load(Ordering::Relaxed) as usize)
            } else {
                n
            }
        });
    }
}

impl SleepProtocol for NotifierSleep {
    type Idle<'a> = NotifierIdle<'a>;

    const MAX_CAPACITY: usize = NotifierSleep::MAX_CAPACITY;

    fn try_with_policy(workers: usize, policy: IdlePolicy) -> Result<Self, CapacityError> {
        NotifierSleep::try_with_policy(workers, policy)
    }

    fn capacity(&self) -> usize {
        NotifierSleep::capacity(self)
    }

    #[inline]
    fn start_looking(&self, worker: usize) -> NotifierIdle<'_> {
        let capacity = self.notifier.capacity();
        assert!(
            worker < capacity,
            "start_looking: worker index {worker} is out of range for a NotifierSleep of {capacity} workers"
        );
        let before = self.awake_idle.fetch_add(1, Ordering::Relaxed);
        if before as usize >= capacity {
            self.awake_idle.fetch_sub(1, Ordering::Relaxed);
            panic!(
                "start_looking: worker {worker} would be looking for work while all \
                 {capacity} workers already are; a search was started without work_found \
                 ending it"
            );
        }
        NotifierIdle {
            sleep: self,
            worker,
            rounds: self.first_round(before + 1),
        }
    }

    fn no_work_found(
        &self,
        idle: &mut NotifierIdle<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
    ) {
        let _ = self.round("no_work_found", idle, latch, has_work, None);
    }

    fn no_work_found_until(
        &self,
        idle: &mut NotifierIdle<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Instant,
    ) -> WaitOutcome {
        self.round("no_work_found_until", idle, latch, has_work, Some(deadline))
    }

    #[inline]
    fn work_found(&self) {
        let before = self.awake_idle.fetch_sub(1, Ordering::Relaxed);
        if before == 0 {
            self.awake_idle.fetch_add(1, Ordering::Relaxed);
            panic!(
                "work_found: no awake worker of this NotifierSleep is looking for work; \
                 each work_found must end a search begun with start_looking"
            );
        }
        if before == 1 {
            // The hand-off: the last awake idle worker found work, so more
            // may be queued that posters left to it. Wake one sleeper to
            // search in its place (one fence and one load if none sleeps).
            self.notifier.notify_one();
        }
    }

    #[inline]
    fn new_internal_jobs(&self, n: u32, queue_was_empty: bool) {
        self.new_jobs(n, queue_was_empty);
    }

    #[inline]
    fn new_injected_jobs(&self, n: u32, queue_was_empty: bool) {
        self.new_jobs(n, queue_was_empty);
    }

    fn notify_worker_latch_is_set(&self, worker: usize) {
        let capacity = self.notifier.capacity();
        assert!(
            worker < capacity,
            "notify_worker_latch_is_set: worker index {worker} is out of range for a NotifierSleep of {capacity} workers"
        );
        // The owner only: a targeted wake, no herd.
        self.notifier.notify_waiter(worker);
    }

    fn wake_all(&self) {
        self.notifier.notify_all();
    }

    fn name(&self) -> &'static str {
        "notifier"
    }

    fn stats(&self) -> SleepStats {
        NotifierSleep::stats(self)
    }

    fn num_sleeping(&self) -> usize {
        NotifierSleep::num_sleeping(self)
    }
}

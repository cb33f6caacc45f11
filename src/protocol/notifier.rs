//! [`NotifierSleep`]: the [`Notifier`] behind the [`SleepProtocol`] trait,
//! with an [`IdlePolicy`] for the rounds before a worker sleeps.

use std::time::Instant;

use super::SleepProtocol;
use crate::error::CapacityError;
use crate::latch::CoreLatch;
use crate::notifier::Notifier;
use crate::outcome::WaitOutcome;
use crate::policy::IdlePolicy;
use crate::stats::SleepStats;

/// A [`Notifier`] plus an [`IdlePolicy`]: the event count as a pool's sleep
/// protocol.
///
/// An idle worker spends the policy's rounds spinning or yielding; then each
/// empty round is one check / prepare / re-check / commit cycle on the
/// notifier, with the worker's [`CoreLatch`] stepped through SLEEPY and
/// SLEEPING so a latch setter knows when to wake it. Every post is a notify:
/// exact (no post is ever missed, internal or injected), and one fence plus
/// one load when nobody sleeps. `start_looking` and `work_found` touch no
/// shared memory.
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
    policy: IdlePolicy,
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
    #[must_use]
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

/// Puts the latch back from SLEEPING to UNSET when the sleep attempt ends,
/// however it ends.
struct LatchAwake<'a>(&'a CoreLatch);

impl Drop for LatchAwake<'_> {
    fn drop(&mut self) {
        self.0.wake_up();
    }
}

impl NotifierSleep {
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
        // UNSET -> SLEEPY: fails only if the latch is set.
        if !latch.get_sleepy() {
            return WaitOutcome::Notified;
        }
        // On the waiter stack before the latch says SLEEPING, so a setter
        // that sees SLEEPING and notifies reaches us.
        let wait = self.notifier.prepare_wait(idle.worker);
        idle.rounds = 0;
        if !latch.fall_asleep() {
            // Set meanwhile: its setter saw SLEEPY and will not wake us.
            self.notifier.cancel_wait(wait);
            return WaitOutcome::Notified;
        }
        // The caller's check may panic: the token's drop then cancels the
        // wait, and this guard puts the latch back to UNSET.
        let _latch_awake = LatchAwake(latch);
        if has_work() {
            self.notifier.cancel_wait(wait);
            return WaitOutcome::Notified;
        }
        match deadline {
            None => {
                self.notifier.commit_wait(wait);
                WaitOutcome::Notified
            }
            Some(deadline) => self.notifier.commit_wait_until(wait, deadline),
        }
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
        NotifierIdle {
            sleep: self,
            worker,
            rounds: 0,
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
        // Nothing to undo: an idle Notifier worker holds no shared state.
    }

    #[inline]
    fn new_internal_jobs(&self, n: u32, _queue_was_empty: bool) {
        self.notifier.notify_n(n as usize);
    }

    #[inline]
    fn new_injected_jobs(&self, n: u32, _queue_was_empty: bool) {
        self.notifier.notify_n(n as usize);
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

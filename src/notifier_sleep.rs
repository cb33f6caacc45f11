//! [`NotifierSleep`]: the [`Notifier`] behind the [`SleepProtocol`] trait,
//! with an [`IdlePolicy`] for the rounds before a worker sleeps.

use crate::error::CapacityError;
use crate::idle::IdlePolicy;
use crate::jec::CoreLatch;
use crate::notifier::Notifier;
use crate::protocol::SleepProtocol;

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
/// assert_eq!(sleep.notifier().size(), 4);
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
    pub fn worker(&self) -> usize {
        self.worker
    }
}

impl NotifierSleep {
    /// A protocol for `workers` workers with the default [`IdlePolicy`].
    ///
    /// # Panics
    ///
    /// If `workers` exceeds [`Notifier::capacity()`].
    ///
    /// # Examples
    ///
    /// ```
    /// let sleep = eventcount::NotifierSleep::new(8);
    /// assert_eq!(sleep.notifier().size(), 8);
    /// ```
    pub fn new(workers: usize) -> Self {
        NotifierSleep::with_policy(workers, IdlePolicy::default())
    }

    /// A protocol with a chosen [`IdlePolicy`].
    ///
    /// # Panics
    ///
    /// If `workers` exceeds [`Notifier::capacity()`].
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
    /// exceeds [`Notifier::capacity()`].
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{IdlePolicy, Notifier, NotifierSleep};
    ///
    /// let err = NotifierSleep::try_with_policy(70_000, IdlePolicy::default()).unwrap_err();
    /// assert_eq!(err.capacity(), Notifier::capacity());
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
    /// assert_eq!(eventcount::NotifierSleep::new(2).notifier().num_waiters(), 0);
    /// ```
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
}

/// Puts the latch back from SLEEPING to UNSET when the sleep attempt ends,
/// however it ends.
struct LatchAwake<'a>(&'a CoreLatch);

impl Drop for LatchAwake<'_> {
    fn drop(&mut self) {
        self.0.wake_up();
    }
}

impl SleepProtocol for NotifierSleep {
    type Idle<'a> = NotifierIdle<'a>;

    const MAX_WORKERS: usize = Notifier::capacity();

    fn try_with_policy(workers: usize, policy: IdlePolicy) -> Result<Self, CapacityError> {
        NotifierSleep::try_with_policy(workers, policy)
    }

    #[inline]
    fn start_looking(&self, worker: usize) -> NotifierIdle<'_> {
        let size = self.notifier.size();
        assert!(
            worker < size,
            "start_looking: worker index {worker} is out of range for a NotifierSleep of {size} workers"
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
        assert!(
            std::ptr::eq(idle.sleep, self),
            "no_work_found: the idle state of worker {} belongs to a different NotifierSleep",
            idle.worker
        );
        if idle.rounds < self.policy.rounds_until_sleepy() {
            self.policy.pause(idle.rounds);
            idle.rounds += 1;
            return;
        }
        // UNSET -> SLEEPY: fails only if the latch is set.
        if !latch.get_sleepy() {
            return;
        }
        // On the waiter stack before the latch says SLEEPING, so a setter
        // that sees SLEEPING and notifies reaches us.
        let wait = self.notifier.prepare_wait(idle.worker);
        if !latch.fall_asleep() {
            // Set meanwhile: its setter saw SLEEPY and will not wake us.
            self.notifier.cancel_wait(wait);
            idle.rounds = 0;
            return;
        }
        // The caller's check may panic: the token's drop then cancels the
        // wait, and this guard puts the latch back to UNSET.
        let latch_guard = LatchAwake(latch);
        if has_work() {
            self.notifier.cancel_wait(wait);
        } else {
            self.notifier.commit_wait(wait);
        }
        drop(latch_guard);
        idle.rounds = 0;
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
        let size = self.notifier.size();
        assert!(
            worker < size,
            "notify_worker_latch_is_set: worker index {worker} is out of range for a NotifierSleep of {size} workers"
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

    fn stats(&self) -> crate::SleepStats {
        self.notifier.stats()
    }

    fn sleeping_workers(&self) -> usize {
        self.notifier.num_waiters()
    }
}

//! [`Round`]: what one idle round of a sleep protocol did.

/// What one empty round of a [`SleepProtocol`] did, and why it returned:
/// returned by [`no_work_found`] and [`no_work_found_parked`].
///
/// A scheduler's park hooks and metrics read it: [`Round::slept`] says
/// whether the worker went to sleep in this round (run an "after unpark"
/// hook, count a park), and the variant says why the round ended. Every
/// outcome leaves the worker awake, and its caller searches again or ends
/// the search with `work_found`. Every outcome but one leaves it counted
/// idle: a park of the caller's that returned with no wake
/// ([`ParkReturned`](Round::ParkReturned), or [`TimedOut`](Round::TimedOut)
/// from `no_work_found_parked`) counts it busy until its next round.
///
/// [`SleepProtocol`]: crate::SleepProtocol
/// [`no_work_found`]: crate::SleepProtocol::no_work_found
/// [`no_work_found_parked`]: crate::SleepProtocol::no_work_found_parked
///
/// # Examples
///
/// ```
/// use eventcount::{CoreLatch, IdlePolicy, NotifierSleep, Round, SleepProtocol};
/// use std::time::Duration;
///
/// let policy = IdlePolicy::fixed_budget(Duration::ZERO); // no search
/// let sleep = NotifierSleep::try_new(1, policy, None).unwrap();
/// let latch = CoreLatch::idle_loop();
/// let mut idle = sleep.start_looking(0);
/// assert_eq!(sleep.no_work_found(&mut idle, &latch, || false), Round::Announced);
/// // The final check finds work: the worker withdraws without sleeping.
/// let round = sleep.no_work_found(&mut idle, &latch, || true);
/// assert_eq!(round, Round::Withdrew);
/// assert!(!round.slept());
/// sleep.work_found(idle);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Round {
    /// A search round: the worker spun, yielded or just returned, per the
    /// idle policy (a worker over the searcher cap gets rounds of this kind
    /// too, shortened). It did not announce itself and did not sleep.
    Searched,
    /// The worker announced that it is about to sleep (`JecSleep`: its
    /// sleepy JEC; `NotifierSleep`: its prepared wait). Its caller searches
    /// every queue once more; the next round tries to sleep. A caller whose
    /// `has_work` looks at every queue that search would may skip it and go
    /// straight to the next round: its final check comes after the
    /// announcement, so it is that search.
    Announced,
    /// The worker tried to sleep and did not: its final check found work,
    /// its latch was set, or work was posted since its announcement. It
    /// withdrew, and no wake meant for anyone was taken.
    Withdrew,
    /// A wake reached the worker after its announcement and before it
    /// blocked, so it did not sleep.
    Notified,
    /// The worker slept, and a wake (a post, its latch, `wake_all`, a
    /// hand-off) ended the sleep.
    Woken,
    /// The worker slept, and its deadline ended the sleep. It withdrew from
    /// the sleepers without taking a wake from anyone: a wake that raced the
    /// deadline and won makes the round [`Woken`](Round::Woken) instead.
    /// From `no_work_found_parked`, the worker also left its idle period,
    /// as on [`ParkReturned`](Round::ParkReturned).
    TimedOut,
    /// The worker slept in the caller's `park`
    /// ([`no_work_found_parked`](crate::SleepProtocol::no_work_found_parked)),
    /// which returned before the deadline with no wake from the protocol:
    /// spuriously, or for the park's own reason (an I/O event). The worker
    /// withdrew exactly as on a timeout, and left its idle period: it
    /// counts as busy, its end of search hands off nothing, and its next
    /// round counts it idle again.
    ParkReturned,
    /// The round started after its deadline and returned at once, without
    /// searching or sleeping (see
    /// [`no_work_found_until`](crate::SleepProtocol::no_work_found_until)).
    PastDeadline,
}

impl Round {
    /// Whether the worker went to sleep in this round (on the protocol's
    /// own parker or in the caller's `park`): [`Woken`](Round::Woken),
    /// [`TimedOut`](Round::TimedOut) or [`ParkReturned`](Round::ParkReturned).
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::Round;
    ///
    /// assert!(Round::Woken.slept());
    /// assert!(!Round::Notified.slept());
    /// ```
    #[must_use]
    pub fn slept(self) -> bool {
        matches!(self, Round::Woken | Round::TimedOut | Round::ParkReturned)
    }
}

//! [`SleepProtocol`]: the one interface a worker loop needs, so a
//! scheduler can plug in either protocol. The trait stands below its
//! implementations: [`JecSleep`](crate::JecSleep) in `src/jec/` and
//! [`NotifierSleep`](crate::NotifierSleep) in `src/notifier/sleep.rs`
//! implement it, and nothing here knows them.

use std::time::Instant;

use crate::error::{short_type_name, CapacityError, Count};
use crate::idle::IdlePolicy;
use crate::latch::CoreLatch;
use crate::outcome::WaitOutcome;
use crate::round::Round;
use crate::stats::SleepStats;
use crate::unpark::Unpark;

/// A round of no `park`, for the rounds that sleep on the protocol's own
/// parker.
const NO_PARK: Option<fn(Option<Instant>)> = None;

/// The one idle round that every `no_work_found` variant of
/// [`SleepProtocol`] runs, each protocol's own, on its idle state `Idle`.
/// The trait is public, as `eventcount::Rounds`, only with the `internals`
/// feature: without it [`SleepProtocol`] is sealed, since implementing it
/// means implementing this round, which only the latch's sleep steps (also
/// `internals`) make possible outside this crate.
pub trait Rounds<Idle> {
    /// One empty round of the call `operation` (a name for panics): it
    /// may search, announce the worker, or sleep, as
    /// [`SleepProtocol::no_work_found`] describes. A sleep it starts ends
    /// at `deadline` at the latest, and is in `park` if given
    /// ([`SleepProtocol::no_work_found_parked`]); a round that starts past
    /// `deadline` returns [`Round::PastDeadline`] at once.
    fn round(
        &self,
        operation: &str,
        idle: &mut Idle,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
        park: Option<impl FnMut(Option<Instant>)>,
    ) -> Round;
}

/// How a pool of worker threads puts idle workers to sleep and wakes them.
///
/// The methods follow a worker loop:
///
/// ```text
/// let mut idle = sleep.start_looking(me);
/// loop {
///     if let Some(job) = find_work() { sleep.work_found(idle); run(job); break; }
///     sleep.no_work_found(&mut idle, &latch, || any_work_visible());
/// }
/// ```
///
/// The same loop serves a worker's top-level idle loop and its waits for a
/// job in flight (the stolen half of a `join`): the latch tells them apart.
/// The top-level loop waits on [`CoreLatch::idle_loop`], set only to stop
/// the worker; any other latch ([`CoreLatch::new`]) is set by a job, and a
/// worker waiting on it is joining: the idle policy sizes its search for
/// the job, and never counts it against a searcher cap.
///
/// Each round returns a [`Round`]: what it did (searched, announced the
/// worker, slept) and why it returned, for a scheduler's park hooks and
/// metrics. A worker whose sleep must happen elsewhere than on the
/// protocol's own parker, in an I/O driver's poll for one, runs its rounds
/// with [`no_work_found_parked`](SleepProtocol::no_work_found_parked) on a
/// protocol built with an [`Unpark`] hook
/// ([`try_new`](SleepProtocol::try_new)); the guide's "A
/// worker that sleeps in a poller" shows one. A scheduler that caps its
/// searchers asks [`may_search`](SleepProtocol::may_search) before it
/// steals.
///
/// Posting work: push first, then `new_internal_jobs` (the worker's own
/// queue) or `new_injected_jobs` (a queue fed from outside the pool). A
/// latch owned by a worker is set with [`set_latch`](SleepProtocol::set_latch),
/// which wakes the owner only if it sleeps on the latch. Shutdown: make the
/// stop condition visible to `has_work`, then `wake_all`.
///
/// Implemented by [`JecSleep`](crate::JecSleep) (Rayon's protocol) and
/// [`NotifierSleep`](crate::NotifierSleep) (the
/// [`Notifier`](crate::Notifier) event count with an idle policy). The
/// trait's methods are the only way to call either protocol, so bring it
/// into scope (`use eventcount::SleepProtocol;`) to use them. It is generic,
/// never a trait object: a call compiles to the implementation's code.
///
/// # Sealed, unless `internals`
///
/// A scheduler written against the trait accepts either protocol. Only this
/// crate implements it: its bound `Rounds`, the one idle round every
/// `no_work_found` variant runs, is public only with the `internals`
/// feature, and so are the latch's sleep steps and the [`CapacityError`]
/// constructor that an implementation needs. With that feature a protocol
/// from outside plugs in (this repository's benchmarks measure an
/// Eigen-style event count so), outside semantic versioning: an
/// implementation must keep the latch protocol and the no-lost-wakeup
/// argument of docs/jec-sleep.md on its own. Sealed, the trait can grow
/// methods without breaking anyone.
///
/// # Examples
///
/// A worker loop written once, run on both protocols:
///
/// ```
/// use eventcount::{CoreLatch, JecSleep, NotifierSleep, SleepProtocol};
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// use std::thread;
///
/// fn run_one_job<S: SleepProtocol>(sleep: &S, jobs: &AtomicUsize) {
///     let latch = CoreLatch::idle_loop();
///     let mut idle = sleep.start_looking(0);
///     loop {
///         if jobs.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok() {
///             sleep.work_found(idle);
///             return;
///         }
///         sleep.no_work_found(&mut idle, &latch, || jobs.load(Ordering::Acquire) > 0);
///     }
/// }
///
/// fn demo<S: SleepProtocol + 'static>(sleep: S) {
///     let sleep = Arc::new(sleep);
///     let jobs = Arc::new(AtomicUsize::new(0));
///     let worker = {
///         let (sleep, jobs) = (sleep.clone(), jobs.clone());
///         thread::spawn(move || run_one_job(&*sleep, &jobs))
///     };
///     let was_empty = jobs.fetch_add(1, Ordering::Release) == 0;
///     sleep.new_injected_jobs(1, was_empty);
///     worker.join().unwrap();
/// }
///
/// demo(JecSleep::new(1));
/// demo(NotifierSleep::new(1));
/// ```
pub trait SleepProtocol: Send + Sync + Sized
where
    Self: for<'a> Rounds<<Self as SleepProtocol>::Idle<'a>>,
{
    /// What an idle worker carries between rounds.
    type Idle<'a>
    where
        Self: 'a;
    /// A protocol for `workers` workers, indices `0..workers`, with the
    /// idle policy `policy`, or an error if `workers` is 0 or more than the
    /// protocol can hold (65,535 for both of this crate's). `unpark` is the
    /// hook that wakes a worker parked through
    /// [`no_work_found_parked`](SleepProtocol::no_work_found_parked): a wake
    /// that picks such a worker calls `unpark(worker)` in place of the
    /// protocol's own futex wake. Workers that sleep in ordinary rounds are
    /// woken as before, so a pool may mix the two, round by round. A
    /// scheduler generic over the protocol builds it with this.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{IdlePolicy, NotifierSleep, SleepProtocol, Unpark};
    /// use std::sync::Arc;
    ///
    /// let unpark: Unpark = Arc::new(|_worker| {});
    /// let sleep = NotifierSleep::try_new(2, IdlePolicy::tokio(), Some(unpark)).unwrap();
    /// assert_eq!(sleep.capacity(), 2);
    /// let err = NotifierSleep::try_new(70_000, IdlePolicy::default(), None).unwrap_err();
    /// assert_eq!(err.to_string(), "NotifierSleep supports at most 65535 workers, but 70000 were requested");
    /// ```
    fn try_new(
        workers: usize,
        policy: IdlePolicy,
        unpark: Option<Unpark>,
    ) -> Result<Self, CapacityError>;

    /// A protocol for `workers` workers with the default [`IdlePolicy`]
    /// and no [`Unpark`] hook.
    ///
    /// # Panics
    ///
    /// If [`try_new`](SleepProtocol::try_new) would return an error, with
    /// its message after the call's name (`JecSleep::new: ...`).
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{JecSleep, SleepProtocol};
    ///
    /// let sleep = JecSleep::new(4);
    /// assert_eq!(sleep.capacity(), 4);
    /// ```
    #[track_caller]
    #[must_use]
    fn new(workers: usize) -> Self {
        match Self::try_new(workers, IdlePolicy::default(), None) {
            Ok(protocol) => protocol,
            Err(err) => panic!("{}::new: {err}", short_type_name::<Self>()),
        }
    }

    /// The number of workers this protocol was built for: their indices
    /// are `0..capacity()`.
    #[must_use]
    fn capacity(&self) -> usize;

    /// Worker `worker` ran out of local work and starts searching. The
    /// search lasts until the returned state goes back to
    /// [`work_found`](SleepProtocol::work_found), or is dropped.
    fn start_looking(&self, worker: usize) -> Self::Idle<'_>;

    /// One search round found nothing. May spin, yield, or sleep. The
    /// protocol calls `has_work` after announcing itself and before it
    /// sleeps; it must report any work this worker would run (at least all
    /// work announced with `new_injected_jobs`), and only work that its
    /// next pass would take: a `true` sends the worker back to that pass
    /// ([`Round::Withdrew`]), so work the pass skips (another worker's
    /// queue while [`may_search`](SleepProtocol::may_search) says no) would
    /// have it announce and withdraw again without ever blocking. `latch`
    /// is what the worker waits on; its kind ([`CoreLatch::idle_loop`] or
    /// [`CoreLatch::new`]) is read at the first round. The [`Round`] says what the round did:
    /// whether the worker searched, announced itself, slept, and why it
    /// returned.
    ///
    /// # Panics
    ///
    /// Both protocols in this crate panic, naming this call and the
    /// workers, when the worker's sleep attempt finds that another thread
    /// is asleep or about to sleep with the same worker index (two threads
    /// use one index), or that another worker is on `latch` (two workers
    /// share one latch; see [`CoreLatch`], "Panics"). That thread's sleep is
    /// left intact, and so are the protocol's counts and `latch`; the idle
    /// state ends its search as the caller unwinds.
    #[track_caller]
    fn no_work_found(
        &self,
        idle: &mut Self::Idle<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
    ) -> Round {
        self.round("no_work_found", idle, latch, has_work, None, NO_PARK)
    }

    /// [`no_work_found`](SleepProtocol::no_work_found) with a deadline.
    ///
    /// - A round that starts before `deadline` is a round of
    ///   `no_work_found`, except that a sleep it starts ends at `deadline`
    ///   at the latest. It returns [`WaitOutcome::TimedOut`] if the deadline
    ///   ended that sleep: the worker is then back to searching.
    /// - A round that starts after the deadline (`Instant::now() >=
    ///   deadline`) returns [`WaitOutcome::TimedOut`] at once, without
    ///   searching or sleeping, and the worker stays counted idle. Its idle
    ///   period stays where it was: a sleepy `JecSleep` worker tries to sleep
    ///   at its next round. A `NotifierSleep` worker that announced itself
    ///   in the round before withdraws, as it does when its final check
    ///   finds work (keeping a notification that reached it: it counts as
    ///   woken by it), and announces itself again at its next round.
    /// - Every other round returns [`WaitOutcome::Notified`].
    ///
    /// Either way no wake meant for this worker or for anyone else is lost:
    /// after `TimedOut`, as after any round, the caller searches again or
    /// ends the search.
    ///
    /// In [`Round`]s: `TimedOut` is [`Round::TimedOut`] or
    /// [`Round::PastDeadline`], and `Notified` is every other round.
    /// [`no_work_found_parked`](SleepProtocol::no_work_found_parked) with a
    /// `park` that sleeps until its deadline gives the [`Round`] itself.
    ///
    /// # Panics
    ///
    /// As [`no_work_found`](SleepProtocol::no_work_found).
    #[track_caller]
    fn no_work_found_until(
        &self,
        idle: &mut Self::Idle<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Instant,
    ) -> WaitOutcome {
        let operation = "no_work_found_until";
        match self.round(operation, idle, latch, has_work, Some(deadline), NO_PARK) {
            Round::TimedOut | Round::PastDeadline => WaitOutcome::TimedOut,
            _ => WaitOutcome::Notified,
        }
    }

    /// A round of [`no_work_found`](SleepProtocol::no_work_found) in which
    /// the worker, if it sleeps, sleeps in `park` instead of the protocol's
    /// own parker: in an I/O driver's poll, for one. A round that starts
    /// after `deadline` returns [`Round::PastDeadline`] at once, as
    /// [`no_work_found_until`](SleepProtocol::no_work_found_until) does.
    ///
    /// The protocol calls `park(deadline)` after its final check, once the
    /// worker is registered as parked externally; a wake that picks the
    /// worker then calls the [`Unpark`] hook given at construction
    /// ([`try_new`](SleepProtocol::try_new)) with its
    /// index. `park` must keep a driver's contract with that hook:
    /// - an unpark that came before the call makes `park` return at once;
    /// - `park` returns by `deadline` (if given), or after an unpark, and it
    ///   may return at any other time (spuriously, or for its own reason).
    ///
    /// After `park` returns the protocol decides the race with the wakers:
    /// if a wake reached the worker, the round is [`Round::Woken`];
    /// otherwise the worker withdraws from the sleepers exactly as on a
    /// timeout, taking no wake from anyone ([`Round::TimedOut`] if the
    /// deadline has passed, [`Round::ParkReturned`] if not). After such an
    /// unwoken return the worker also leaves its idle period, in the same
    /// step: the park returned for its own reason (a driver's events, its
    /// timers), so the worker counts as busy while it runs that work. No
    /// post counted on it, so ending the search then wakes nobody (no
    /// hand-off), and the next round counts it idle again and starts a new
    /// search. Keep the state and call the next round, or end the search
    /// with `work_found`: either is right. `park` may be
    /// called again in the same round, with no deadline, only when a waker
    /// has claimed the worker and is about to call the hook (`JecSleep`'s
    /// claimed state): that call returns at the hook.
    ///
    /// Every other outcome is that of `no_work_found`. A pool may mix
    /// workers that park here with workers that sleep in ordinary rounds.
    ///
    /// # Panics
    ///
    /// As [`no_work_found`](SleepProtocol::no_work_found); and, for the
    /// protocols in this crate, if the protocol was built without an
    /// [`Unpark`] hook, when the worker would park (before anything is
    /// written).
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{CoreLatch, IdlePolicy, NotifierSleep, Round, SleepProtocol, Unpark};
    /// use std::sync::Arc;
    /// use std::time::{Duration, Instant};
    ///
    /// let unpark: Unpark = Arc::new(|_worker| {}); // nobody else here to wake it
    /// let policy = IdlePolicy::fixed_budget(Duration::ZERO);
    /// let sleep = NotifierSleep::try_new(1, policy, Some(unpark)).unwrap();
    /// let latch = CoreLatch::idle_loop();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// let mut idle = sleep.start_looking(0);
    /// let mut parks = 0;
    /// loop {
    ///     let round = sleep.no_work_found_parked(&mut idle, &latch, || false, Some(deadline), |until| {
    ///         parks += 1; // a poller would wait here, until `until` at the latest
    ///         std::thread::sleep(until.unwrap().saturating_duration_since(Instant::now()));
    ///     });
    ///     if round == Round::TimedOut {
    ///         break;
    ///     }
    /// }
    /// assert_eq!(parks, 1);
    /// sleep.work_found(idle);
    /// ```
    #[track_caller]
    fn no_work_found_parked(
        &self,
        idle: &mut Self::Idle<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
        park: impl FnMut(Option<Instant>),
    ) -> Round {
        let operation = "no_work_found_parked";
        self.round(operation, idle, latch, has_work, deadline, Some(park))
    }

    /// Whether the searching worker may search other workers' queues
    /// (steal) now, under the policy's searcher bound: a scheduler that
    /// caps its searchers calls it before its steal pass, and a worker told
    /// `false` skips the pass and goes on with its rounds (which send it to
    /// sleep). A `true` may take one of the cap's slots for this search,
    /// which the worker holds until its announcement or the end of its
    /// search. `latch` is the one the worker's rounds wait on: a joining
    /// worker is never capped, and neither is a pool that the default
    /// policy finds has more workers than CPUs ([`IdlePolicy`]).
    ///
    /// The default answers `true` (a protocol without a cap).
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{CoreLatch, IdlePolicy, JecSleep, SleepProtocol};
    ///
    /// // 2 searchers at most, even where 4 workers outnumber the CPUs.
    /// let sleep = JecSleep::try_new(4, IdlePolicy::tokio(), None).unwrap();
    /// let latch = CoreLatch::idle_loop();
    /// let mut a = sleep.start_looking(0);
    /// let mut b = sleep.start_looking(1);
    /// let mut c = sleep.start_looking(2);
    /// assert!(sleep.may_search(&mut a, &latch));
    /// assert!(sleep.may_search(&mut b, &latch));
    /// assert!(!sleep.may_search(&mut c, &latch)); // capped
    /// sleep.work_found(a);
    /// assert!(sleep.may_search(&mut c, &latch)); // a slot came free
    /// # sleep.work_found(b);
    /// # sleep.work_found(c);
    /// ```
    fn may_search(&self, idle: &mut Self::Idle<'_>, latch: &CoreLatch) -> bool {
        let _ = (idle, latch);
        true
    }

    /// The worker's search found work (or its latch was set): it is no
    /// longer idle. Takes the search's state, so each `start_looking` ends
    /// exactly once; the policy learns from how the search went. Dropping
    /// the state also ends the search, without learning: a loop that
    /// unwinds while idle leaves the protocol's counts right.
    fn work_found(&self, idle: Self::Idle<'_>);

    /// `n` jobs were pushed to the calling worker's own queue.
    fn new_internal_jobs(&self, n: usize, queue_was_empty: bool);

    /// `n` jobs were pushed to a queue fed from outside the pool.
    fn new_injected_jobs(&self, n: usize, queue_was_empty: bool);

    /// The latch worker `worker` sleeps against was set, and
    /// [`CoreLatch::set`] said the worker was asleep: wake it.
    fn notify_worker_latch_is_set(&self, worker: usize);

    /// Set `latch`, owned by worker `owner`, and wake the owner if it
    /// sleeps on it: [`CoreLatch::set`], then
    /// [`notify_worker_latch_is_set`](SleepProtocol::notify_worker_latch_is_set)
    /// only if `set` said so.
    ///
    /// # Panics
    ///
    /// If `owner` is out of range, or if another worker is asleep or about
    /// to sleep on `latch` (this crate's protocols record who steps a
    /// latch): a latch is set with the index of the worker that waits on
    /// it, and a wake sent to another worker would leave the sleeper asleep
    /// for good. The latch is then left as it was, and its sleeper asleep.
    #[track_caller]
    fn set_latch(&self, latch: &CoreLatch, owner: usize) {
        let capacity = self.capacity();
        assert!(
            owner < capacity,
            "set_latch: worker index {owner} is out of range for a {} of {}",
            short_type_name::<Self>(),
            Count(capacity, "worker")
        );
        if latch.set_owned_by(owner, "set_latch") {
            self.notify_worker_latch_is_set(owner);
        }
    }

    /// Wake every worker (shutdown).
    fn wake_all(&self);

    /// Sleeps and wake syscalls so far, and what the workers' idle periods
    /// cost (see [`SleepStats`]).
    #[must_use]
    fn stats(&self) -> SleepStats;

    /// Worker `worker`'s share of [`stats`](SleepProtocol::stats): its
    /// sleeps, the wakes made to it, and its idle periods. The default body
    /// returns zeros, for an implementation that does not count per
    /// worker; both protocols of this crate count.
    ///
    /// # Panics
    ///
    /// This crate's protocols panic if `worker` is out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{JecSleep, SleepProtocol};
    ///
    /// let sleep = JecSleep::new(4);
    /// let total: u64 = (0..4).map(|w| sleep.worker_stats(w).waits).sum();
    /// assert_eq!(total, sleep.stats().waits);
    /// ```
    #[must_use]
    fn worker_stats(&self, worker: usize) -> SleepStats {
        let _ = worker;
        SleepStats::default()
    }

    /// Workers asleep right now (a snapshot, for tests and monitoring).
    #[must_use]
    fn num_sleeping(&self) -> usize;
}

/// A round's sleep ended with no wake: [`Round::TimedOut`] if the deadline
/// passed or the sleep was the protocol's own (which returns early only at
/// its deadline), [`Round::ParkReturned`] if the caller's `park` returned
/// before it.
pub(crate) fn withdrew(external: bool, deadline: Option<Instant>) -> Round {
    if external && deadline.is_none_or(|deadline| Instant::now() < deadline) {
        Round::ParkReturned
    } else {
        Round::TimedOut
    }
}

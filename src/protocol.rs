//! [`SleepProtocol`]: the one interface a worker loop needs. It stands
//! below its implementations, [`JecSleep`](crate::JecSleep) (`src/jec/`)
//! and [`NotifierSleep`](crate::NotifierSleep) (`src/notifier/sleep.rs`).

use std::time::Instant;

use crate::error::{short_type_name, CapacityError, Count};
use crate::idle::IdlePolicy;
use crate::latch::CoreLatch;
use crate::outcome::WaitOutcome;
use crate::round::Round;
use crate::stats::SleepStats;
use crate::unpark::Unpark;

/// A round's `park` for the rounds that sleep on the protocol's own parker.
const NO_PARK: Option<fn(Option<Instant>)> = None;

/// The one idle round that every `no_work_found` variant runs, each
/// protocol's own. Public, as `eventcount::Rounds`, only with `internals`
/// (see "Sealed, unless `internals`" on [`SleepProtocol`]).
pub trait Rounds<Idle> {
    /// One empty round of the call `operation` (named in panics), as
    /// [`SleepProtocol::no_work_found`] describes, sleeping until `deadline`
    /// at the latest, in `park` if given.
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
/// A worker calls [`start_looking`](SleepProtocol::start_looking) when it
/// runs out of work, [`no_work_found`](SleepProtocol::no_work_found) after
/// each empty search round, and [`work_found`](SleepProtocol::work_found)
/// when it finds work (see the example). The latch it waits on tells its
/// top-level idle loop from a wait for a job in flight (see [`CoreLatch`],
/// "Two kinds of wait"). Each round returns a [`Round`] saying what it did.
///
/// Posting work: push first, then `new_internal_jobs` (the worker's own
/// queue) or `new_injected_jobs` (a queue fed from outside the pool). A
/// latch owned by a worker is set with [`set_latch`](SleepProtocol::set_latch).
/// Shutdown: make the stop condition visible to `has_work`, then `wake_all`.
///
/// Bring the trait into scope to call [`JecSleep`](crate::JecSleep) or
/// [`NotifierSleep`](crate::NotifierSleep). It is generic, never a trait object.
///
/// # Sealed, unless `internals`
///
/// Only this crate implements the trait: its bound `Rounds`, the latch's
/// sleep steps and the [`CapacityError`] constructor that an implementation
/// needs are public only with the `internals` feature. With it, a protocol
/// from outside plugs in (the benchmarks' Eigen-style event count does),
/// outside semantic versioning: it must keep the latch protocol and the
/// no-lost-wakeup argument of docs/jec-sleep.md on its own. Sealed, the
/// trait can grow methods without breaking anyone.
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
    /// protocol can hold (65,535 for both of this crate's). `unpark`, if
    /// given, wakes a worker parked through
    /// [`no_work_found_parked`](SleepProtocol::no_work_found_parked) in
    /// place of the protocol's own futex wake.
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

    /// One search round found nothing: the protocol may spin, yield, or
    /// sleep. It calls `has_work` after announcing the worker and before it
    /// sleeps; `has_work` must report any work this worker would run (at
    /// least all work announced with `new_injected_jobs`), and only work its
    /// next pass would take, or the worker would announce itself and
    /// withdraw ([`Round::Withdrew`]) without ever blocking. `latch` is what
    /// the worker waits on; its kind is read at the first round.
    ///
    /// # Panics
    ///
    /// Both protocols in this crate panic, naming this call and the
    /// workers, if another thread sleeps or is about to with the same worker
    /// index, or another worker is on `latch` (see [`CoreLatch`], "Panics").
    /// That thread's sleep, the protocol's counts and `latch` are left intact.
    #[track_caller]
    fn no_work_found(
        &self,
        idle: &mut Self::Idle<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
    ) -> Round {
        self.round("no_work_found", idle, latch, has_work, None, NO_PARK)
    }

    /// [`no_work_found`](SleepProtocol::no_work_found) with a deadline: a
    /// sleep the round starts ends at `deadline` at the latest. Returns
    /// [`WaitOutcome::TimedOut`] if the deadline ended the sleep, or at once,
    /// without searching or sleeping, for a round that starts after it
    /// ([`Round::TimedOut`] or [`Round::PastDeadline`]); otherwise
    /// [`WaitOutcome::Notified`]. No wake is lost either way: after
    /// `TimedOut`, as after any round, the caller searches again or ends the
    /// search (docs/jec-sleep.md and docs/notifier.md give each protocol's
    /// steps).
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
    /// own parker: in an I/O driver's poll, for one. A pool may mix such
    /// rounds with ordinary ones. A round that starts after `deadline`
    /// returns [`Round::PastDeadline`] at once.
    ///
    /// The protocol calls `park(deadline)` after its final check; a wake that
    /// picks the worker then calls the [`Unpark`] hook given to
    /// [`try_new`](SleepProtocol::try_new). `park` must return at once after
    /// an unpark that came before the call, and by `deadline` (if given); it
    /// may return at any other time. A return with no wake ends the round as
    /// [`Round::TimedOut`] past the deadline, else [`Round::ParkReturned`],
    /// and takes the worker out of its idle period: it has work of its own.
    /// Keep the state and call the next round, or end the search with
    /// `work_found`: either is right.
    ///
    /// # Panics
    ///
    /// As [`no_work_found`](SleepProtocol::no_work_found); and, for the
    /// protocols in this crate, if the protocol has no [`Unpark`] hook, when
    /// the worker would park (before anything is written).
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

    /// Whether the searching worker may steal now, under the policy's
    /// searcher cap: a worker told `false` skips its steal pass and goes on
    /// with its rounds. A `true` may take a slot of the cap until the
    /// worker's announcement or the end of its search. A joining worker
    /// (per `latch`) is never capped. The default answers `true`.
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
    /// longer idle, and the policy learns from the search. Dropping the
    /// state also ends the search, without learning.
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
    /// if needed.
    ///
    /// # Panics
    ///
    /// If `owner` is out of range, or if another worker is asleep or about
    /// to sleep on `latch`: a wake sent to it would leave the sleeper asleep
    /// for good. The latch is then left as it was.
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

    /// Worker `worker`'s share of [`stats`](SleepProtocol::stats). The
    /// default returns zeros, for an implementation that does not count per
    /// worker.
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

/// A round's sleep ended with no wake: [`Round::ParkReturned`] if the
/// caller's `park` returned before the deadline, else [`Round::TimedOut`].
pub(crate) fn withdrew(external: bool, deadline: Option<Instant>) -> Round {
    if external && deadline.is_none_or(|deadline| Instant::now() < deadline) {
        Round::ParkReturned
    } else {
        Round::TimedOut
    }
}

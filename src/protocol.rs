//! [`SleepProtocol`]: the one interface a worker loop needs, implemented by
//! both protocols, so a scheduler can plug in either.

use crate::error::CapacityError;
use crate::idle::IdlePolicy;
use crate::jec::{CoreLatch, IdleState, JecSleep};

/// How a pool of worker threads puts idle workers to sleep and wakes them.
///
/// The methods follow a worker loop:
///
/// ```text
/// let mut idle = sleep.start_looking(me);
/// loop {
///     if let Some(job) = find_work() { sleep.work_found(); run(job); break; }
///     sleep.no_work_found(&mut idle, &latch, || any_work_visible());
/// }
/// ```
///
/// Posting work: push first, then `new_internal_jobs` (the worker's own
/// queue) or `new_injected_jobs` (a queue fed from outside the pool). A
/// latch owned by a worker is set with [`CoreLatch::set`], followed by
/// `notify_worker_latch_is_set(owner)` when `set` says the owner sleeps.
/// Shutdown: make the stop condition visible to `has_work`, then `wake_all`.
///
/// Implemented by [`JecSleep`] (Rayon's protocol) and [`NotifierSleep`]
/// (the [`Notifier`](crate::Notifier) event count with an idle policy).
/// Calls through the trait compile to the same code as direct calls: it is
/// generic, never a trait object.
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
///     let latch = CoreLatch::new();
///     let mut idle = sleep.start_looking(0);
///     loop {
///         if jobs.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok() {
///             sleep.work_found();
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
pub trait SleepProtocol: Send + Sync + Sized {
    /// What an idle worker carries between rounds.
    type Idle<'a>
    where
        Self: 'a;

    /// The most workers this protocol can manage.
    const MAX_WORKERS: usize;

    /// A protocol for `workers` workers, indices `0..workers`, or an error
    /// if that is more than [`MAX_WORKERS`](SleepProtocol::MAX_WORKERS).
    /// A scheduler generic over the protocol builds it with this.
    fn try_with_policy(workers: usize, policy: IdlePolicy) -> Result<Self, CapacityError>;

    /// Worker `worker` ran out of local work and starts searching.
    fn start_looking(&self, worker: usize) -> Self::Idle<'_>;

    /// One search round found nothing. May spin, yield, or sleep. The
    /// protocol calls `has_work` after announcing itself and before it
    /// sleeps; it must report any work this worker would run (at least all
    /// work announced with `new_injected_jobs`).
    fn no_work_found(
        &self,
        idle: &mut Self::Idle<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
    );

    /// The calling worker's search found work (or its latch was set): it
    /// is no longer idle. Exactly once per `start_looking`. It takes no idle
    /// state: idle workers are counted anonymously, and a loop such as
    /// rayon-core's calls it while the state is still in scope.
    fn work_found(&self);

    /// `n` jobs were pushed to the calling worker's own queue.
    fn new_internal_jobs(&self, n: u32, queue_was_empty: bool);

    /// `n` jobs were pushed to a queue fed from outside the pool.
    fn new_injected_jobs(&self, n: u32, queue_was_empty: bool);

    /// The latch worker `worker` sleeps against was set while it slept.
    fn notify_worker_latch_is_set(&self, worker: usize);

    /// Wake every worker (shutdown).
    fn wake_all(&self);

    /// A short name for tables and logs.
    fn name(&self) -> &'static str;

    /// Sleeps and wake syscalls so far.
    fn stats(&self) -> crate::SleepStats;

    /// Workers asleep right now (a snapshot, for tests and monitoring).
    fn sleeping_workers(&self) -> usize;
}

impl SleepProtocol for JecSleep {
    type Idle<'a> = IdleState<'a>;

    const MAX_WORKERS: usize = JecSleep::max_workers();

    fn try_with_policy(workers: usize, policy: IdlePolicy) -> Result<Self, CapacityError> {
        JecSleep::try_with_policy(workers, policy)
    }

    #[inline]
    fn start_looking(&self, worker: usize) -> IdleState<'_> {
        JecSleep::start_looking(self, worker)
    }

    #[inline]
    fn no_work_found(
        &self,
        idle: &mut IdleState<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
    ) {
        JecSleep::no_work_found(self, idle, latch, has_work)
    }

    #[inline]
    fn work_found(&self) {
        JecSleep::work_found(self)
    }

    #[inline]
    fn new_internal_jobs(&self, n: u32, queue_was_empty: bool) {
        JecSleep::new_internal_jobs(self, n, queue_was_empty)
    }

    #[inline]
    fn new_injected_jobs(&self, n: u32, queue_was_empty: bool) {
        JecSleep::new_injected_jobs(self, n, queue_was_empty)
    }

    #[inline]
    fn notify_worker_latch_is_set(&self, worker: usize) {
        JecSleep::notify_worker_latch_is_set(self, worker)
    }

    #[inline]
    fn wake_all(&self) {
        JecSleep::wake_all(self)
    }

    fn name(&self) -> &'static str {
        "jec"
    }

    fn stats(&self) -> crate::SleepStats {
        JecSleep::stats(self)
    }

    fn sleeping_workers(&self) -> usize {
        JecSleep::sleeping_workers(self)
    }
}

pub use crate::notifier_sleep::{NotifierIdle, NotifierSleep};

#[cfg(all(test, loom))]
#[path = "protocol_loom_tests.rs"]
mod loom_tests;

//! [`SleepProtocol`]: the one interface a worker loop needs, implemented by
//! both protocols, so a scheduler can plug in either.

use crate::jec::{CoreLatch, IdleState, JecSleep};

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
pub trait SleepProtocol: Send + Sync {
    /// What an idle worker carries between rounds.
    type Idle<'a>
    where
        Self: 'a;

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

    /// The search found work.
    fn work_found(&self, idle: Self::Idle<'_>);

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
    fn work_found(&self, idle: IdleState<'_>) {
        JecSleep::work_found(self, idle)
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

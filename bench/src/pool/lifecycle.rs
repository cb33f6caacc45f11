//! [`Pool`]: starting the workers, handing them jobs from outside, and
//! stopping them.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};

use crossbeam_deque::{Injector, Stealer, Worker as Deque};
use eventcount::{CoreLatch, SleepProtocol};

use crate::pool::job::JobRef;
use crate::pool::worker::WorkerCtx;

/// Everything the workers share.
pub(crate) struct Shared<S: SleepProtocol + 'static> {
    pub(crate) sleep: S,
    pub(crate) injector: Injector<JobRef<S>>,
    pub(crate) stealers: Vec<Stealer<JobRef<S>>>,
    /// One per worker; set at shutdown. A latch rather than a flag, so that
    /// a sleeping worker is woken through the protocol's targeted wake; an
    /// idle-loop latch, so that the policy knows a wait on it is for new
    /// work (every other latch the workers wait on is a job's).
    pub(crate) terminate: Vec<CoreLatch>,
    pub(crate) jobs_run: AtomicU64,
    pub(crate) steals: AtomicU64,
}

impl<S: SleepProtocol + 'static> Shared<S> {
    fn inject(&self, job: JobRef<S>) {
        let was_empty = self.injector.is_empty();
        self.injector.push(job);
        self.sleep.new_injected_jobs(1, was_empty);
    }

    /// Any work visible anywhere: the check a worker makes after announcing
    /// it may sleep.
    pub(crate) fn has_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }
}

/// A running work-stealing pool whose workers sleep through `S`.
pub struct Pool<S: SleepProtocol + 'static> {
    shared: Arc<Shared<S>>,
    threads: Vec<JoinHandle<()>>,
}

impl<S: SleepProtocol + 'static> Pool<S> {
    /// Start `threads` workers sleeping through `sleep` (built for exactly
    /// that many workers).
    pub fn new(threads: usize, sleep: S) -> Self {
        assert!(threads > 0, "Pool::new: a pool needs at least one worker");
        let deques: Vec<Deque<JobRef<S>>> = (0..threads).map(|_| Deque::new_lifo()).collect();
        let shared = Arc::new(Shared {
            sleep,
            injector: Injector::new(),
            stealers: deques.iter().map(Deque::stealer).collect(),
            terminate: (0..threads).map(|_| CoreLatch::idle_loop()).collect(),
            jobs_run: AtomicU64::new(0),
            steals: AtomicU64::new(0),
        });
        let threads = deques
            .into_iter()
            .enumerate()
            .map(|(index, deque)| {
                let shared = shared.clone();
                thread::Builder::new()
                    .name(format!("pool-worker-{index}"))
                    .spawn(move || WorkerCtx::new(index, deque, shared).main_loop())
                    .expect("Pool::new: could not spawn a worker thread")
            })
            .collect();
        Pool { shared, threads }
    }

    /// The sleep protocol (for its counters).
    pub fn sleep(&self) -> &S {
        &self.shared.sleep
    }

    /// How many workers the pool has.
    pub fn num_threads(&self) -> usize {
        self.shared.stealers.len()
    }

    /// Jobs run and successful steals so far.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.shared.jobs_run.load(Ordering::Relaxed),
            self.shared.steals.load(Ordering::Relaxed),
        )
    }

    /// Run `f` on a worker and wait for its result (re-raising its panic).
    pub fn install<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&WorkerCtx<S>) -> R + Send + 'static,
        R: Send + 'static,
    {
        let (tx, rx) = mpsc::sync_channel(1);
        self.shared.inject(JobRef::heap(Box::new(move |ctx| {
            let result = panic::catch_unwind(AssertUnwindSafe(|| f(ctx)));
            let _ = tx.send(result);
        })));
        match rx
            .recv()
            .expect("install: the pool shut down before the job ran")
        {
            Ok(value) => value,
            Err(payload) => panic::resume_unwind(payload),
        }
    }

    /// Run `f` on some worker, without waiting.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&WorkerCtx<S>) + Send + 'static,
    {
        self.shared.inject(JobRef::heap(Box::new(move |ctx| {
            if panic::catch_unwind(AssertUnwindSafe(|| f(ctx))).is_err() {
                eprintln!("pool: a spawned job panicked");
            }
        })));
    }

    /// Stop: every worker finishes the work it can see, then exits.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let shared = &self.shared;
        for (index, latch) in shared.terminate.iter().enumerate() {
            if latch.set() {
                shared.sleep.notify_worker_latch_is_set(index);
            }
        }
        shared.sleep.wake_all();
        for handle in self.threads.drain(..) {
            handle.join().expect("pool: a worker thread panicked");
        }
    }
}

impl<S: SleepProtocol + 'static> Drop for Pool<S> {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.stop();
        }
    }
}

//! A small work-stealing thread pool, generic over the sleep protocol.
//!
//! One copy of this file serves the `pool` example, the tests and the
//! benchmarks (they include it with `#[path]`). It is deliberately plain:
//! one crossbeam deque per worker, stealing from a random victim, an
//! injector for jobs from outside, `join` with a latch that wakes a
//! sleeping owner, `install` and `spawn`, and a shutdown that wakes and
//! joins every worker. All sleeping and waking goes through
//! [`SleepProtocol`], so the same pool runs on `JecSleep` and on
//! `NotifierSleep`.
//!
//! No unsafe: `join`'s second closure must be `'static` (it may run on
//! another worker), so each join costs one small allocation.

#![allow(dead_code)] // each includer uses a different part

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::{self, JoinHandle};

use crossbeam_deque::{Injector, Steal, Stealer, Worker as Deque};
use eventcount::{CoreLatch, SleepProtocol};

type Job<S> = Box<dyn FnOnce(&WorkerCtx<S>) + Send>;

/// Everything the workers share.
struct Shared<S: SleepProtocol + 'static> {
    sleep: S,
    injector: Injector<Job<S>>,
    stealers: Vec<Stealer<Job<S>>>,
    /// One per worker; set at shutdown (a latch, so a sleeping worker is
    /// woken through the protocol's targeted wake).
    terminate: Vec<CoreLatch>,
    stopping: AtomicBool,
    jobs_run: AtomicU64,
    steals: AtomicU64,
}

/// A running pool.
pub struct Pool<S: SleepProtocol + 'static> {
    shared: Arc<Shared<S>>,
    threads: Vec<JoinHandle<()>>,
}

/// What a job sees: the worker running it. `join` lives here.
pub struct WorkerCtx<S: SleepProtocol + 'static> {
    index: usize,
    deque: Deque<Job<S>>,
    shared: Arc<Shared<S>>,
    rng: Cell<u64>,
}

impl<S: SleepProtocol + 'static> Pool<S> {
    /// Start `threads` workers sleeping through `sleep` (built for exactly
    /// that many workers).
    pub fn new(threads: usize, sleep: S) -> Self {
        assert!(threads > 0, "Pool::new: a pool needs at least one worker");
        let deques: Vec<Deque<Job<S>>> = (0..threads).map(|_| Deque::new_lifo()).collect();
        let shared = Arc::new(Shared {
            sleep,
            injector: Injector::new(),
            stealers: deques.iter().map(Deque::stealer).collect(),
            terminate: (0..threads).map(|_| CoreLatch::new()).collect(),
            stopping: AtomicBool::new(false),
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
                    .spawn(move || {
                        let ctx = WorkerCtx {
                            index,
                            deque,
                            shared,
                            rng: Cell::new(0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1)),
                        };
                        ctx.main_loop();
                    })
                    .expect("Pool::new: could not spawn a worker thread")
            })
            .collect();
        Pool { shared, threads }
    }

    /// The sleep protocol (for its counters).
    pub fn sleep(&self) -> &S {
        &self.shared.sleep
    }

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
        self.shared.inject(Box::new(move |ctx| {
            let result = panic::catch_unwind(AssertUnwindSafe(|| f(ctx)));
            let _ = tx.send(result);
        }));
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
        self.shared.inject(Box::new(move |ctx| {
            if panic::catch_unwind(AssertUnwindSafe(|| f(ctx))).is_err() {
                eprintln!("pool: a spawned job panicked");
            }
        }));
    }

    /// Stop: every worker finishes the work it can see, then exits.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let shared = &self.shared;
        shared.stopping.store(true, Ordering::Release);
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

impl<S: SleepProtocol + 'static> Shared<S> {
    fn inject(&self, job: Job<S>) {
        let was_empty = self.injector.is_empty();
        self.injector.push(job);
        self.sleep.new_injected_jobs(1, was_empty);
    }

    /// Any work visible anywhere: the check a worker makes after announcing
    /// it may sleep.
    fn has_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }
}

impl<S: SleepProtocol + 'static> WorkerCtx<S> {
    pub fn index(&self) -> usize {
        self.index
    }

    pub fn num_threads(&self) -> usize {
        self.shared.stealers.len()
    }

    fn main_loop(&self) {
        let terminate = &self.shared.terminate[self.index];
        self.wait_until(terminate);
        // Finish what is still visible before leaving.
        while let Some(job) = self.find_work() {
            self.run(job);
        }
    }

    fn run(&self, job: Job<S>) {
        self.shared.jobs_run.fetch_add(1, Ordering::Relaxed);
        job(self);
    }

    /// Run other work until `latch` is set, sleeping through the protocol
    /// when there is none.
    fn wait_until(&self, latch: &CoreLatch) {
        let sleep = &self.shared.sleep;
        while !latch.probe() {
            // Local work first, without idle bookkeeping (as rayon-core does).
            if let Some(job) = self.deque.pop() {
                self.run(job);
                continue;
            }
            let mut idle = sleep.start_looking(self.index);
            loop {
                if latch.probe() {
                    sleep.work_found(idle);
                    return;
                }
                if let Some(job) = self.find_work() {
                    sleep.work_found(idle);
                    self.run(job);
                    break;
                }
                sleep.no_work_found(&mut idle, latch, || self.shared.has_work());
            }
        }
    }

    fn find_work(&self) -> Option<Job<S>> {
        self.deque
            .pop()
            .or_else(|| self.steal())
            .or_else(|| self.steal_injected())
    }

    fn next_random(&self) -> u64 {
        // xorshift64*: plenty for picking a victim.
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// One sweep over the other workers, starting at a random victim.
    fn steal(&self) -> Option<Job<S>> {
        let stealers = &self.shared.stealers;
        let n = stealers.len();
        if n <= 1 {
            return None;
        }
        let start = (self.next_random() % n as u64) as usize;
        loop {
            let mut retry = false;
            for offset in 0..n {
                let victim = (start + offset) % n;
                if victim == self.index {
                    continue;
                }
                match stealers[victim].steal() {
                    Steal::Success(job) => {
                        self.shared.steals.fetch_add(1, Ordering::Relaxed);
                        return Some(job);
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
            std::hint::spin_loop();
        }
    }

    fn steal_injected(&self) -> Option<Job<S>> {
        loop {
            match self.shared.injector.steal_batch_and_pop(&self.deque) {
                Steal::Success(job) => return Some(job),
                Steal::Retry => std::hint::spin_loop(),
                Steal::Empty => return None,
            }
        }
    }

    /// Run `a` here and `b` possibly on another worker; return both results.
    /// A panic in either is re-raised here after both finished.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&WorkerCtx<S>) -> RA,
        B: FnOnce(&WorkerCtx<S>) -> RB + Send + 'static,
        RB: Send + 'static,
    {
        let slot = Arc::new(JoinSlot::<RB> {
            result: Mutex::new(None),
            latch: CoreLatch::new(),
        });
        let owner = self.index;
        let remote = slot.clone();
        let job: Job<S> = Box::new(move |ctx| {
            let result = panic::catch_unwind(AssertUnwindSafe(|| b(ctx)));
            *remote.result.lock().unwrap() = Some(result);
            // Set after the result is stored; wake the owner if it sleeps.
            if remote.latch.set() {
                ctx.shared.sleep.notify_worker_latch_is_set(owner);
            }
        });
        let was_empty = self.deque.is_empty();
        self.deque.push(job);
        self.shared.sleep.new_internal_jobs(1, was_empty);

        let ra = panic::catch_unwind(AssertUnwindSafe(|| a(self)));

        // Most of the time `b` is still on our deque: run it (or whatever
        // `a` left above it) here. Otherwise someone stole it: wait,
        // running other work meanwhile.
        while !slot.latch.probe() {
            match self.deque.pop() {
                Some(job) => self.run(job),
                None => break,
            }
        }
        self.wait_until(&slot.latch);

        let rb = slot
            .result
            .lock()
            .unwrap()
            .take()
            .expect("join: latch set without a result");
        match (ra, rb) {
            (Ok(ra), Ok(rb)) => (ra, rb),
            (Err(payload), _) | (_, Err(payload)) => panic::resume_unwind(payload),
        }
    }
}

struct JoinSlot<R> {
    result: Mutex<Option<Result<R, Box<dyn Any + Send>>>>,
    latch: CoreLatch,
}

// ---------------------------------------------------------------------------
// Workloads, shared by the example, the tests and the benchmarks.

/// Plain recursive Fibonacci (the sequential baseline and the leaves).
pub fn fib_seq(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// Fork-join Fibonacci: `join` down to `cutoff`, sequential below.
pub fn fib<S: SleepProtocol + 'static>(ctx: &WorkerCtx<S>, n: u32, cutoff: u32) -> u64 {
    if n <= cutoff || n < 2 {
        return fib_seq(n);
    }
    let (a, b) = ctx.join(
        move |ctx| fib(ctx, n - 1, cutoff),
        move |ctx| fib(ctx, n - 2, cutoff),
    );
    a + b
}

/// A complete binary tree of `nodes` values stored as an implicit heap
/// (children of i are 2i+1 and 2i+2): the tree-sum workload.
pub fn make_tree(nodes: usize) -> Arc<Vec<u64>> {
    Arc::new(
        (0..nodes as u64)
            .map(|i| i.wrapping_mul(2654435761) % 1000)
            .collect(),
    )
}

/// Sequential sum of the subtree rooted at `root`.
pub fn tree_sum_seq(tree: &[u64], root: usize) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    tree[root] + tree_sum_seq(tree, 2 * root + 1) + tree_sum_seq(tree, 2 * root + 2)
}

/// Fork-join sum: `join` over the two subtrees down to `seq_depth` levels
/// above the leaves.
pub fn tree_sum<S: SleepProtocol + 'static>(
    ctx: &WorkerCtx<S>,
    tree: &Arc<Vec<u64>>,
    root: usize,
    depth: u32,
) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    if depth == 0 {
        return tree_sum_seq(tree, root);
    }
    let right = tree.clone();
    let (l, r) = ctx.join(
        |ctx| tree_sum(ctx, tree, 2 * root + 1, depth - 1),
        move |ctx| tree_sum(ctx, &right, 2 * root + 2, depth - 1),
    );
    tree[root] + l + r
}

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
//! `join` allocates nothing: its second half is a job on the joining
//! thread's stack, as in rayon. That needs `unsafe` (a type-erased pointer
//! to the stack job travels through the deques), kept to the `job` module
//! below with a `// SAFETY:` argument on every block. The measured need: the
//! first, safe version boxed each job and its result slot, and spent 657
//! instructions per join against rayon's 190 (docs/benchmarks.md, B5).

#![allow(dead_code)] // each includer uses a different part

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};

use crossbeam_deque::{Injector, Steal, Stealer, Worker as Deque};
use eventcount::{CoreLatch, SleepProtocol};

type Job<S> = job::JobRef<S>;

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
        self.shared.inject(job::JobRef::heap(Box::new(move |ctx| {
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
        self.shared.inject(job::JobRef::heap(Box::new(move |ctx| {
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

    /// The pool's sleep protocol.
    pub fn sleep(&self) -> &S {
        &self.shared.sleep
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
        job.execute(self);
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
                    sleep.work_found();
                    return;
                }
                if let Some(job) = self.find_work() {
                    sleep.work_found();
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
        B: FnOnce(&WorkerCtx<S>) -> RB + Send,
        RB: Send,
    {
        let job_b = job::StackJob::new(b, self.index);
        // SAFETY: `job_b` lives on this frame, and this function neither
        // returns nor unwinds until `job_b` has run: `a` and every job run
        // here are behind catch_unwind, and we leave only after running
        // `b` ourselves or seeing its latch set by whoever ran it.
        let job_ref = unsafe { job_b.as_job_ref() };
        let id = job_ref.id();
        let was_empty = self.deque.is_empty();
        self.deque.push(job_ref);
        self.shared.sleep.new_internal_jobs(1, was_empty);

        let ra = panic::catch_unwind(AssertUnwindSafe(|| a(self)));

        // Most of the time `b` is still on our deque: pop it back and run it
        // inline. Otherwise someone stole it: run other work until its latch
        // is set, sleeping through the protocol if there is none.
        let rb = loop {
            if job_b.latch().probe() {
                // SAFETY: the latch is set, so its runner has stored the
                // result and touches the job no more.
                break unsafe { job_b.take_result() };
            }
            match self.deque.pop() {
                Some(popped) if popped.id() == id => {
                    // SAFETY: we popped the only reference to `job_b`, so
                    // no other thread has it or ever will.
                    break unsafe { job_b.run_inline(self) };
                }
                Some(other) => self.run(other),
                None => {
                    self.wait_until(job_b.latch());
                    // SAFETY: as above, the latch is set.
                    break unsafe { job_b.take_result() };
                }
            }
        };
        match (ra, rb) {
            (Ok(ra), Ok(rb)) => (ra, rb),
            (Err(payload), _) | (_, Err(payload)) => panic::resume_unwind(payload),
        }
    }
}

/// Jobs as type-erased pointers: the pool's only `unsafe` code.
mod job {
    use std::cell::UnsafeCell;
    use std::marker::PhantomData;
    use std::panic::{self, AssertUnwindSafe};
    use std::thread;

    use eventcount::{CoreLatch, SleepProtocol};

    use super::WorkerCtx;

    /// A job the heap owns: spawned or installed from outside.
    pub type HeapJob<S> = Box<dyn FnOnce(&WorkerCtx<S>) + Send>;

    /// A job in a deque: a pointer to its data and the function that runs
    /// it. Every `JobRef` is created by this module, pushed to exactly one
    /// queue, and so executed at most once.
    pub struct JobRef<S: SleepProtocol + 'static> {
        data: *const (),
        run: unsafe fn(*const (), &WorkerCtx<S>),
    }

    // SAFETY: a JobRef is built only from jobs whose closure and result are
    // `Send` (`heap` takes a `Send` box; `StackJob::as_job_ref` requires
    // `F: Send, R: Send`), so moving it to the thread that runs it is sound.
    unsafe impl<S: SleepProtocol + 'static> Send for JobRef<S> {}

    impl<S: SleepProtocol + 'static> JobRef<S> {
        /// A job owned by the heap (spawn, install).
        pub fn heap(f: HeapJob<S>) -> Self {
            JobRef {
                data: Box::into_raw(Box::new(f)) as *const (),
                run: run_heap::<S>,
            }
        }

        /// Identity, to recognise a job popped back by its owner.
        pub fn id(&self) -> *const () {
            self.data
        }

        /// Run the job (consumes the only reference to it).
        pub fn execute(self, ctx: &WorkerCtx<S>) {
            // SAFETY: `run` matches `data` (both set by one constructor),
            // and `self` is the job's only reference, consumed here, so the
            // job runs once: what `run_heap` and `run_stack` require.
            unsafe { (self.run)(self.data, ctx) }
        }
    }

    /// # Safety
    /// `data` must come from `JobRef::heap` and be run only once.
    unsafe fn run_heap<S: SleepProtocol + 'static>(data: *const (), ctx: &WorkerCtx<S>) {
        // SAFETY: `data` is the `Box::into_raw` of `heap`, reclaimed once.
        let f = unsafe { Box::from_raw(data as *mut HeapJob<S>) };
        f(ctx);
    }

    /// The second half of a `join`, living on the joining thread's stack.
    pub struct StackJob<S, F, R> {
        func: UnsafeCell<Option<F>>,
        result: UnsafeCell<Option<thread::Result<R>>>,
        latch: CoreLatch,
        owner: usize,
        protocol: PhantomData<fn(&S)>,
    }

    impl<S, F, R> StackJob<S, F, R>
    where
        S: SleepProtocol + 'static,
        F: FnOnce(&WorkerCtx<S>) -> R + Send,
        R: Send,
    {
        pub fn new(func: F, owner: usize) -> Self {
            StackJob {
                func: UnsafeCell::new(Some(func)),
                result: UnsafeCell::new(None),
                latch: CoreLatch::new(),
                owner,
                protocol: PhantomData,
            }
        }

        pub fn latch(&self) -> &CoreLatch {
            &self.latch
        }

        /// # Safety
        /// The job must outlive its execution: the caller may not free it
        /// before running it itself (`run_inline`) or seeing its latch set.
        pub unsafe fn as_job_ref(&self) -> JobRef<S> {
            JobRef {
                data: self as *const Self as *const (),
                run: run_stack::<S, F, R>,
            }
        }

        /// Run the job on the owner, which popped its `JobRef` back.
        ///
        /// # Safety
        /// No other thread may hold a `JobRef` to this job.
        pub unsafe fn run_inline(&self, ctx: &WorkerCtx<S>) -> thread::Result<R> {
            // SAFETY: no one else can reach `func` (the caller's promise).
            let func = unsafe { (*self.func.get()).take() }.expect("join: job ran twice");
            panic::catch_unwind(AssertUnwindSafe(|| func(ctx)))
        }

        /// The result stored by whoever ran the job.
        ///
        /// # Safety
        /// Only after the latch is set (Acquire in `probe`), when the runner
        /// has written the result and touches the job no more.
        pub unsafe fn take_result(&self) -> thread::Result<R> {
            // SAFETY: the runner's write happened before its latch set
            // (Release), which our probe saw (Acquire); nobody writes after.
            unsafe { (*self.result.get()).take() }.expect("join: latch set without a result")
        }
    }

    /// # Safety
    /// `data` must point to a live `StackJob<S, F, R>` run only once.
    unsafe fn run_stack<S, F, R>(data: *const (), ctx: &WorkerCtx<S>)
    where
        S: SleepProtocol + 'static,
        F: FnOnce(&WorkerCtx<S>) -> R + Send,
        R: Send,
    {
        // SAFETY: the owner keeps the job alive until its latch is set, which
        // is the last thing we do with it (`as_job_ref`'s contract).
        let job = unsafe { &*(data as *const StackJob<S, F, R>) };
        // SAFETY: the stealer holds the only JobRef: `func` is ours alone.
        let func = unsafe { (*job.func.get()).take() }.expect("join: job ran twice");
        let result = panic::catch_unwind(AssertUnwindSafe(|| func(ctx)));
        // SAFETY: the owner reads `result` only after the latch is set below.
        unsafe { *job.result.get() = Some(result) };
        let owner = job.owner;
        let sleep = ctx.sleep();
        // The swap in `set` is our last access to `job`: the owner may free
        // it the moment it sees SET (as `Arc::drop` relies on for its
        // count, an atomic may be freed right after its last operation).
        if job.latch.set() {
            sleep.notify_worker_latch_is_set(owner);
        }
    }
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
/// above the leaves. Both halves borrow the tree (no refcount traffic).
pub fn tree_sum<S: SleepProtocol + 'static>(
    ctx: &WorkerCtx<S>,
    tree: &[u64],
    root: usize,
    depth: u32,
) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    if depth == 0 {
        return tree_sum_seq(tree, root);
    }
    let (l, r) = ctx.join(
        |ctx| tree_sum(ctx, tree, 2 * root + 1, depth - 1),
        |ctx| tree_sum(ctx, tree, 2 * root + 2, depth - 1),
    );
    tree[root] + l + r
}

//! Jobs as type-erased pointers: the pool's only `unsafe` code.
//!
//! `join` keeps its second half on the joining thread's stack and sends a
//! pointer to it through the deques, as rayon does; a boxed job per join
//! cost the pool 3.5 times rayon's instructions per join.

use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::thread;

use eventcount::{CoreLatch, SleepProtocol};

use crate::pool::worker::WorkerCtx;

/// A job the heap owns: spawned or installed from outside.
pub(crate) type HeapJob<S> = Box<dyn FnOnce(&WorkerCtx<S>) + Send>;

/// A job in a deque: a pointer to its data and the function that runs
/// it. Every `JobRef` is created by this module, pushed to exactly one
/// queue, and so executed at most once.
pub(crate) struct JobRef<S: SleepProtocol + 'static> {
    data: *const (),
    run: unsafe fn(*const (), &WorkerCtx<S>),
}

// SAFETY: a JobRef is built only from jobs whose closure and result are
// `Send` (`heap` takes a `Send` box; `StackJob::as_job_ref` requires
// `F: Send, R: Send`), so moving it to the thread that runs it is sound.
unsafe impl<S: SleepProtocol + 'static> Send for JobRef<S> {}

impl<S: SleepProtocol + 'static> JobRef<S> {
    /// A job owned by the heap (spawn, install).
    pub(crate) fn heap(f: HeapJob<S>) -> Self {
        JobRef {
            data: Box::into_raw(Box::new(f)) as *const (),
            run: run_heap::<S>,
        }
    }

    /// Identity, to recognise a job popped back by its owner.
    pub(crate) fn id(&self) -> *const () {
        self.data
    }

    /// Run the job (consumes the only reference to it).
    pub(crate) fn execute(self, ctx: &WorkerCtx<S>) {
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
pub(crate) struct StackJob<S, F, R> {
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
    /// `func` as a job of worker `owner`, which waits for it in `join`.
    pub(crate) fn new(func: F, owner: usize) -> Self {
        StackJob {
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(None),
            latch: CoreLatch::new(),
            owner,
            protocol: PhantomData,
        }
    }

    /// Set once whoever ran the job has stored its result.
    pub(crate) fn latch(&self) -> &CoreLatch {
        &self.latch
    }

    /// # Safety
    /// The job must outlive its execution: the caller may not free it
    /// before running it itself (`run_inline`) or seeing its latch set.
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef<S> {
        JobRef {
            data: self as *const Self as *const (),
            run: run_stack::<S, F, R>,
        }
    }

    /// Run the job on the owner, which popped its `JobRef` back.
    ///
    /// # Safety
    /// No other thread may hold a `JobRef` to this job.
    pub(crate) unsafe fn run_inline(&self, ctx: &WorkerCtx<S>) -> thread::Result<R> {
        // SAFETY: no one else can reach `func` (the caller's promise).
        let func = unsafe { (*self.func.get()).take() }.expect("join: job ran twice");
        panic::catch_unwind(AssertUnwindSafe(|| func(ctx)))
    }

    /// The result stored by whoever ran the job.
    ///
    /// # Safety
    /// Only after the latch is set (Acquire in `probe`), when the runner
    /// has written the result and touches the job no more.
    pub(crate) unsafe fn take_result(&self) -> thread::Result<R> {
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

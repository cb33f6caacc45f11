//! [`WorkerCtx`]: one worker's loop, its stealing, and `join`.

use std::cell::Cell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::workload::Join;
use crossbeam_deque::{Steal, Worker as Deque};
use eventcount::{CoreLatch, SleepProtocol};

use crate::pool::job::{JobRef, StackJob};
use crate::pool::lifecycle::Shared;

/// What a job sees: the worker running it. `join` lives here.
pub struct WorkerCtx<S: SleepProtocol + 'static> {
    index: usize,
    deque: Deque<JobRef<S>>,
    shared: Arc<Shared<S>>,
    rng: Cell<u64>,
}

impl<S: SleepProtocol + 'static> WorkerCtx<S> {
    pub(crate) fn new(index: usize, deque: Deque<JobRef<S>>, shared: Arc<Shared<S>>) -> Self {
        WorkerCtx {
            index,
            deque,
            shared,
            rng: Cell::new(0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1)),
        }
    }

    /// This worker's index, `0..num_threads()`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many workers the pool has.
    pub fn num_threads(&self) -> usize {
        self.shared.stealers.len()
    }

    /// The pool's sleep protocol.
    pub fn sleep(&self) -> &S {
        &self.shared.sleep
    }

    /// The worker thread's body: work and sleep until shutdown.
    pub(crate) fn main_loop(&self) {
        let terminate = &self.shared.terminate[self.index];
        self.wait_until(terminate);
        // Finish what is still visible before leaving.
        while let Some(job) = self.find_work() {
            self.run(job);
        }
    }

    fn run(&self, job: JobRef<S>) {
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

    fn find_work(&self) -> Option<JobRef<S>> {
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
    fn steal(&self) -> Option<JobRef<S>> {
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

    fn steal_injected(&self) -> Option<JobRef<S>> {
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
    ///
    /// Allocates nothing: `b` waits on this thread's stack. The first, safe
    /// version boxed each job and its result slot, and spent 657
    /// instructions per join against rayon's 190 (docs/benchmarks.md, B5).
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&WorkerCtx<S>) -> RA,
        B: FnOnce(&WorkerCtx<S>) -> RB + Send,
        RB: Send,
    {
        let job_b = StackJob::new(b, self.index);
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

/// The workloads' view of a worker: [`WorkerCtx::join`].
impl<S: SleepProtocol + 'static> Join for WorkerCtx<S> {
    fn join<RA: Send, RB: Send>(
        &self,
        a: impl FnOnce(&Self) -> RA + Send,
        b: impl FnOnce(&Self) -> RB + Send,
    ) -> (RA, RB) {
        WorkerCtx::join(self, a, b)
    }
}

impl<S: SleepProtocol + 'static> fmt::Debug for WorkerCtx<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerCtx")
            .field("index", &self.index)
            .field("threads", &self.num_threads())
            .finish_non_exhaustive()
    }
}

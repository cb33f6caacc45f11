//! A client of `eventcount` the way a scheduler is one: an injected job
//! count, workers that sleep on a [`SleepProtocol`] until a job comes, some
//! of them in a park of the client's own (a poller, here a token), and a
//! poster. Its loom models (`tests/model.rs`) run with
//! `--cfg loom --cfg eventcount_loom`, so that loom sees the protocol's
//! atomics and sleeps as well as the client's.

#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use eventcount::{CoreLatch, SleepProtocol, Unpark};
use std::sync::Arc;

/// A token per worker, as a poller's wake-up descriptor keeps one: an
/// unpark sets it, a park takes it, and a park that finds it set returns at
/// once. Relaxed: a token carries no data, as an event fd's write carries
/// none to the thread whose poll it ends.
pub struct Tokens {
    set: Vec<AtomicBool>,
}

impl Tokens {
    /// One token per worker, none set.
    pub fn new(workers: usize) -> Arc<Tokens> {
        Arc::new(Tokens {
            set: (0..workers).map(|_| AtomicBool::new(false)).collect(),
        })
    }

    /// The hook the protocol calls to wake a worker parked here.
    pub fn hook(self: &Arc<Tokens>) -> Unpark {
        let tokens = self.clone();
        Arc::new(move |worker| tokens.set[worker].store(true, Ordering::Relaxed))
    }

    /// Park worker `worker` until its token is set, and take the token.
    /// Under loom, a wait is a yield loop: loom runs the thread again only
    /// once another has moved. The token is taken with a compare-exchange,
    /// not a swap: a failed one writes nothing, so once the hook's store
    /// exists it is the newest store a read-modify-write can read. A swap
    /// would write `false` on every turn, and loom, whose modification
    /// order leaves those writes unordered with the hook's, may let each
    /// turn read the loop's own `false` for ever.
    pub fn park(&self, worker: usize) {
        while self.set[worker]
            .compare_exchange(true, false, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            #[cfg(loom)]
            loom::thread::yield_now();
            #[cfg(not(loom))]
            std::thread::yield_now();
        }
    }
}

/// Run one injected job as worker `me`: search, and sleep between rounds,
/// in `tokens`' park if given, else on the protocol's own parker.
pub fn run_one_job<S: SleepProtocol>(
    sleep: &S,
    me: usize,
    jobs: &AtomicUsize,
    tokens: Option<&Tokens>,
) {
    let latch = CoreLatch::idle_loop();
    let mut idle = sleep.start_looking(me);
    loop {
        let took = jobs
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok();
        if took {
            sleep.work_found(idle);
            return;
        }
        let has_work = || jobs.load(Ordering::Acquire) > 0;
        let _ = match tokens {
            Some(tokens) => {
                sleep.no_work_found_parked(&mut idle, &latch, has_work, None, |_| tokens.park(me))
            }
            None => sleep.no_work_found(&mut idle, &latch, has_work),
        };
    }
}

/// Inject one job and tell the protocol.
pub fn post_one<S: SleepProtocol>(sleep: &S, jobs: &AtomicUsize) {
    let was_empty = jobs.fetch_add(1, Ordering::Release) == 0;
    sleep.new_injected_jobs(1, was_empty);
}

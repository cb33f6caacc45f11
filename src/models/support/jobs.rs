//! The steps of a worker's idle loop and of a poster, through
//! [`SleepProtocol`], so that the models of both protocols share them. A job
//! queue is a count of jobs.

use loom::sync::atomic::{AtomicUsize, Ordering};

use crate::latch::CoreLatch;
use crate::protocol::SleepProtocol;

/// Take one job from `queue`, if any.
pub(crate) fn take(queue: &AtomicUsize) -> bool {
    let mut n = queue.load(Ordering::Acquire);
    while n > 0 {
        match queue.compare_exchange(n, n - 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(now) => n = now,
        }
    }
    false
}

/// Post one job to the injector: push, then announce (PushFence inside).
pub(crate) fn inject_one<S: SleepProtocol>(sleep: &S, injector: &AtomicUsize) {
    let was_empty = injector.fetch_add(1, Ordering::Release) == 0;
    sleep.new_injected_jobs(1, was_empty);
}

/// Idle rounds until `found` reports work (it is asked before each round),
/// then the search ends. `has_work` is each round's final check.
pub(crate) fn search_until<S: SleepProtocol>(
    sleep: &S,
    mut idle: S::Idle<'_>,
    latch: &CoreLatch,
    mut found: impl FnMut() -> bool,
    has_work: impl Fn() -> bool,
) {
    while !found() {
        sleep.no_work_found(&mut idle, latch, &has_work);
    }
    sleep.work_found(idle);
}

/// Worker `me`'s top-level idle loop until it has taken one job from
/// `injector`; its final check looks at the injector too.
pub(crate) fn run_one_job<S: SleepProtocol>(sleep: &S, me: usize, injector: &AtomicUsize) {
    let latch = CoreLatch::idle_loop();
    let idle = sleep.start_looking(me);
    search_until(
        sleep,
        idle,
        &latch,
        || take(injector),
        || injector.load(Ordering::Acquire) > 0,
    );
}

/// Worker `me` sleeps against `latch` (no other work exists) until it sees
/// the latch set.
pub(crate) fn sleep_until_set<S: SleepProtocol>(sleep: &S, me: usize, latch: &CoreLatch) {
    let idle = sleep.start_looking(me);
    search_until(sleep, idle, latch, || latch.probe(), || false);
}

//! Loom models run through the [`SleepProtocol`] trait, on both protocols:
//! the `NotifierSleep` adapter's latch steps and the trait's post and wake
//! paths. Every actor is a spawned thread (see `jec/loom_tests.rs`).

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

use crate::jec::JecSleep;
use crate::latch::CoreLatch;
use crate::policy::IdlePolicy;
use crate::protocol::NotifierSleep;
use crate::protocol::SleepProtocol;

fn check(preemptions: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemptions);
    builder.check(model);
}

fn no_rounds() -> IdlePolicy {
    IdlePolicy::new().yield_rounds(0)
}

/// The owner sleeps against its latch; another thread sets it and wakes the
/// owner only if `set` says it sleeps.
fn latch_wakes_owner<S: SleepProtocol + 'static>(make: fn() -> S) {
    check(3, move || {
        let sleep = Arc::new(make());
        let latch = Arc::new(CoreLatch::new());
        let owner = {
            let (sleep, latch) = (sleep.clone(), latch.clone());
            thread::spawn(move || {
                let mut idle = sleep.start_looking(0);
                while !latch.probe() {
                    sleep.no_work_found(&mut idle, &latch, || false);
                }
                sleep.work_found();
            })
        };
        let setter = {
            let (sleep, latch) = (sleep.clone(), latch.clone());
            thread::spawn(move || {
                if latch.set() {
                    sleep.notify_worker_latch_is_set(0);
                }
            })
        };
        setter.join().unwrap();
        owner.join().unwrap();
    });
}

/// The latch publishes what its setter wrote before `set`: a scheduler reads
/// a job's result as soon as `probe` sees the job's latch set. The owner may
/// see the latch set before it ever sleeps, or sleep on it and be woken by
/// the setter; the payload must be visible on every path. The payload is a
/// Relaxed atomic, so only the latch orders it: loom lets a Relaxed load
/// return a stale value that nothing orders before it.
fn latch_publishes_the_setters_writes<S: SleepProtocol + 'static>(make: fn() -> S) {
    check(3, move || {
        let sleep = Arc::new(make());
        let latch = Arc::new(CoreLatch::new());
        let result = Arc::new(AtomicUsize::new(0));
        let owner = {
            let (sleep, latch, result) = (sleep.clone(), latch.clone(), result.clone());
            thread::spawn(move || {
                let mut idle = sleep.start_looking(0);
                while !latch.probe() {
                    sleep.no_work_found(&mut idle, &latch, || false);
                }
                sleep.work_found();
                assert_eq!(
                    result.load(Ordering::Relaxed),
                    42,
                    "probe() saw the latch set but not the result written before set()"
                );
            })
        };
        let setter = {
            let (sleep, latch, result) = (sleep.clone(), latch.clone(), result.clone());
            thread::spawn(move || {
                result.store(42, Ordering::Relaxed);
                if latch.set() {
                    sleep.notify_worker_latch_is_set(0);
                }
            })
        };
        setter.join().unwrap();
        owner.join().unwrap();
    });
}

/// A job injected from outside reaches a worker in any phase of its sleep.
fn injected_job_runs<S: SleepProtocol + 'static>(make: fn() -> S) {
    check(2, move || {
        let sleep = Arc::new(make());
        let jobs = Arc::new(AtomicUsize::new(0));
        let worker = {
            let (sleep, jobs) = (sleep.clone(), jobs.clone());
            thread::spawn(move || {
                let latch = CoreLatch::new();
                let mut idle = sleep.start_looking(0);
                loop {
                    let n = jobs.load(Ordering::Acquire);
                    if n > 0
                        && jobs
                            .compare_exchange(n, n - 1, Ordering::AcqRel, Ordering::Acquire)
                            .is_ok()
                    {
                        sleep.work_found();
                        return;
                    }
                    sleep.no_work_found(&mut idle, &latch, || jobs.load(Ordering::Acquire) > 0);
                }
            })
        };
        let poster = {
            let (sleep, jobs) = (sleep.clone(), jobs.clone());
            thread::spawn(move || {
                let was_empty = jobs.fetch_add(1, Ordering::Release) == 0;
                sleep.new_injected_jobs(1, was_empty);
            })
        };
        poster.join().unwrap();
        worker.join().unwrap();
    });
}

#[test]
fn notifier_sleep_latch_wakes_owner() {
    latch_wakes_owner(|| NotifierSleep::with_policy(1, no_rounds()));
}

#[test]
fn jec_sleep_latch_wakes_owner() {
    latch_wakes_owner(|| JecSleep::with_policy(1, no_rounds()));
}

#[test]
fn notifier_sleep_latch_publishes_the_setters_writes() {
    latch_publishes_the_setters_writes(|| NotifierSleep::with_policy(1, no_rounds()));
}

#[test]
fn jec_sleep_latch_publishes_the_setters_writes() {
    latch_publishes_the_setters_writes(|| JecSleep::with_policy(1, no_rounds()));
}

#[test]
fn notifier_sleep_injected_job_runs() {
    injected_job_runs(|| NotifierSleep::with_policy(1, no_rounds()));
}

#[test]
fn jec_sleep_injected_job_runs() {
    injected_job_runs(|| JecSleep::with_policy(1, no_rounds()));
}

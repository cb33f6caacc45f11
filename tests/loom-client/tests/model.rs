//! The client's loom models: a worker and a poster, through eventcount.
//! With `--cfg eventcount_loom` the protocol's atomics, fences and sleeps
//! are loom's, so a lost wake shows up here as a deadlock or loom's branch
//! limit; without it, the worker would block in a real futex.

#![cfg(loom)]

use eventcount::{IdlePolicy, JecSleep, NotifierSleep, SleepProtocol};
use eventcount_loom_client::{post_one, run_one_job, Tokens};
use loom::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Sleepy at the first empty round: no search rounds to explore.
fn eager() -> IdlePolicy {
    IdlePolicy::fixed_budget(std::time::Duration::ZERO)
}

fn worker_and_poster<S: SleepProtocol + 'static>(external: bool) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(move || {
        let tokens = Tokens::new(1);
        let sleep = Arc::new(S::try_new(1, eager(), Some(tokens.hook())).unwrap());
        let jobs = Arc::new(AtomicUsize::new(0));
        let worker = {
            let (sleep, jobs, tokens) = (sleep.clone(), jobs.clone(), tokens.clone());
            loom::thread::spawn(move || {
                run_one_job(&*sleep, 0, &jobs, external.then_some(&*tokens));
            })
        };
        post_one(&*sleep, &jobs);
        worker.join().unwrap();
    });
}

#[test]
fn notifier_sleep_worker_takes_the_posted_job() {
    worker_and_poster::<NotifierSleep>(false);
}

#[test]
fn jec_sleep_worker_takes_the_posted_job() {
    worker_and_poster::<JecSleep>(false);
}

#[test]
fn notifier_sleep_worker_parked_in_the_client_takes_the_posted_job() {
    worker_and_poster::<NotifierSleep>(true);
}

#[test]
fn jec_sleep_worker_parked_in_the_client_takes_the_posted_job() {
    worker_and_poster::<JecSleep>(true);
}

//! The example pool (eventcount-bench's `pool`) on both sleep protocols:
//! fork-join correctness with more threads than cores, jobs injected from
//! many outside threads, nested joins, shutdown idle and busy, and every
//! worker asleep once the work ends.
//!
//! Watchdogs (30 s) only catch hangs; nothing here asserts a duration.

#![cfg(not(loom))]

use eventcount_bench::pool;

mod common;
use common::{with_watchdog, WATCHDOG};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use eventcount::{IdlePolicy, JecSleep, NotifierSleep, SleepProtocol};
use pool::Pool;

/// More workers than the machine's 2 cores.
const THREADS: usize = 8;

/// Builds a protocol for a pool of n workers.
type MakeProtocol = Box<dyn Fn(usize) -> Protocol + Send + Sync>;

/// Both protocols, each with the default policy, a short one, the
/// searcher cap (one searcher at a time, the tightest cap), and rayon's
/// (what the default becomes in a pool with more workers than CPUs,
/// whatever this machine's CPU count).
fn protocols() -> Vec<(&'static str, MakeProtocol)> {
    let capped = IdlePolicy::rounds(2).max_searching(1);
    let rayon = IdlePolicy::rayon();
    vec![
        (
            "jec-rayon",
            Box::new(move |n| Protocol::Jec(JecSleep::try_new(n, rayon, None).unwrap())),
        ),
        (
            "notifier-rayon",
            Box::new(move |n| Protocol::Notifier(NotifierSleep::try_new(n, rayon, None).unwrap())),
        ),
        (
            "jec-cap",
            Box::new(move |n| Protocol::Jec(JecSleep::try_new(n, capped, None).unwrap())),
        ),
        (
            "notifier-cap",
            Box::new(move |n| Protocol::Notifier(NotifierSleep::try_new(n, capped, None).unwrap())),
        ),
        ("jec", Box::new(|n| Protocol::Jec(JecSleep::new(n)))),
        (
            "jec-short",
            Box::new(|n| Protocol::Jec(JecSleep::try_new(n, IdlePolicy::rounds(2), None).unwrap())),
        ),
        (
            "notifier",
            Box::new(|n| Protocol::Notifier(NotifierSleep::new(n))),
        ),
        (
            "notifier-short",
            Box::new(|n| {
                Protocol::Notifier(NotifierSleep::try_new(n, IdlePolicy::rounds(2), None).unwrap())
            }),
        ),
    ]
}

// Built once per test and moved into its pool at once: the size of the
// larger variant costs nothing.
#[allow(clippy::large_enum_variant)]
enum Protocol {
    Jec(JecSleep),
    Notifier(NotifierSleep),
}

/// Run `check` on a pool of `threads` workers for every protocol.
fn for_each_protocol(
    name: &str,
    threads: usize,
    check: impl Fn(&str, Dispatch) + Send + Sync + Clone + 'static,
) {
    for (label, make) in protocols() {
        let check = check.clone();
        let test = format!("{name} [{label}]");
        with_watchdog(&test.clone(), move || match make(threads) {
            Protocol::Jec(sleep) => check(&test, Dispatch::Jec(Pool::new(threads, sleep))),
            Protocol::Notifier(sleep) => {
                check(&test, Dispatch::Notifier(Pool::new(threads, sleep)))
            }
        });
    }
}

enum Dispatch {
    Jec(Pool<JecSleep>),
    Notifier(Pool<NotifierSleep>),
}

/// Call a generic body on whichever pool this is.
macro_rules! with_pool {
    ($dispatch:expr, |$pool:ident| $body:expr) => {
        match $dispatch {
            Dispatch::Jec($pool) => $body,
            Dispatch::Notifier($pool) => $body,
        }
    };
}

fn fib_result<S: SleepProtocol + 'static>(pool: &Pool<S>, n: u32, cutoff: u32) -> u64 {
    pool.install(move |ctx| pool::fib(ctx, n, cutoff))
}

#[test]
fn fork_join_fib_and_tree_sum() {
    for_each_protocol("fork_join_fib_and_tree_sum", THREADS, |test, dispatch| {
        with_pool!(dispatch, |pool| {
            // cutoff 0: every level joins (deep nesting, tiny jobs).
            assert_eq!(fib_result(&pool, 20, 0), pool::fib_seq(20), "{test}");
            assert_eq!(fib_result(&pool, 27, 10), pool::fib_seq(27), "{test}");
            let tree = pool::make_tree((1 << 16) - 1);
            let expected = pool::tree_sum_seq(&tree, 0);
            for depth in [0, 4, 15] {
                let tree = tree.clone();
                let got = pool.install(move |ctx| pool::tree_sum(ctx, &tree, 0, depth));
                assert_eq!(got, expected, "{test}: tree sum with join depth {depth}");
            }
            pool.shutdown();
        })
    });
}

#[test]
fn jobs_injected_from_many_outside_threads() {
    for_each_protocol(
        "jobs_injected_from_many_outside_threads",
        THREADS,
        |test, dispatch| {
            with_pool!(dispatch, |pool| {
                let pool = Arc::new(pool);
                let sum = Arc::new(AtomicU64::new(0));
                let done = Arc::new(AtomicU64::new(0));
                const INJECTORS: u64 = 8;
                const PER_INJECTOR: u64 = 500;
                let injectors: Vec<_> = (0..INJECTORS)
                    .map(|i| {
                        let (pool, sum, done) = (pool.clone(), sum.clone(), done.clone());
                        thread::spawn(move || {
                            for j in 0..PER_INJECTOR {
                                let (sum, done) = (sum.clone(), done.clone());
                                let value = i * PER_INJECTOR + j;
                                pool.spawn(move |ctx| {
                                    // Some jobs fork, so injected and internal work mix.
                                    let (a, b) = ctx.join(move |_| value, move |_| 0);
                                    sum.fetch_add(a + b, Ordering::Relaxed);
                                    done.fetch_add(1, Ordering::Release);
                                });
                                if j % 64 == 0 {
                                    thread::yield_now();
                                }
                            }
                        })
                    })
                    .collect();
                for injector in injectors {
                    injector.join().unwrap();
                }
                // Every injected job must run; the pool wakes for them itself.
                let total = INJECTORS * PER_INJECTOR;
                while done.load(Ordering::Acquire) < total {
                    thread::sleep(Duration::from_millis(1));
                }
                assert_eq!(
                    sum.load(Ordering::Relaxed),
                    (0..total).sum::<u64>(),
                    "{test}: a job ran twice or not at all"
                );
                Arc::try_unwrap(pool)
                    .ok()
                    .expect("pool still shared")
                    .shutdown();
            })
        },
    );
}

#[test]
fn shutdown_while_idle() {
    for_each_protocol("shutdown_while_idle", THREADS, |test, dispatch| {
        with_pool!(dispatch, |pool| {
            assert_eq!(fib_result(&pool, 15, 5), pool::fib_seq(15), "{test}");
            wait_until_all_asleep(test, &pool);
            pool.shutdown(); // must wake and join every sleeping worker
        })
    });
}

#[test]
fn shutdown_while_busy() {
    for_each_protocol("shutdown_while_busy", THREADS, |test, dispatch| {
        with_pool!(dispatch, |pool| {
            let ran = Arc::new(AtomicU64::new(0));
            for _ in 0..200 {
                let ran = ran.clone();
                pool.spawn(move |ctx| {
                    ran.fetch_add(pool::fib(ctx, 12, 4), Ordering::Relaxed);
                });
            }
            // Shut down with jobs still queued: workers finish what they see.
            pool.shutdown();
            assert_eq!(
                ran.load(Ordering::Relaxed),
                200 * pool::fib_seq(12),
                "{test}: queued jobs were lost at shutdown"
            );
        })
    });
}

#[test]
fn every_worker_sleeps_once_work_ends() {
    for_each_protocol(
        "every_worker_sleeps_once_work_ends",
        THREADS,
        |test, dispatch| {
            with_pool!(dispatch, |pool| {
                for round in 0..3 {
                    assert_eq!(
                        fib_result(&pool, 22, 8),
                        pool::fib_seq(22),
                        "{test} round {round}"
                    );
                    wait_until_all_asleep(test, &pool);
                    // Asleep means asleep: the count stays put while nothing happens.
                    let waits = pool.sleep().stats().waits;
                    thread::sleep(Duration::from_millis(20));
                    assert_eq!(
                        pool.sleep().num_sleeping(),
                        THREADS,
                        "{test}: a worker woke up idle"
                    );
                    assert_eq!(
                        pool.sleep().stats().waits,
                        waits,
                        "{test}: idle workers slept again (spurious wakes)"
                    );
                }
                pool.shutdown();
            })
        },
    );
}

/// Poll until every worker is asleep; the watchdog catches a pool that never
/// gets there.
fn wait_until_all_asleep<S: SleepProtocol + 'static>(test: &str, pool: &Pool<S>) {
    let start = Instant::now();
    while pool.sleep().num_sleeping() < pool.num_threads() {
        assert!(
            start.elapsed() < WATCHDOG,
            "{test}: only {} of {} workers asleep after {WATCHDOG:?}",
            pool.sleep().num_sleeping(),
            pool.num_threads()
        );
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_panicking_job_is_reraised_by_install() {
    for_each_protocol(
        "a_panicking_job_is_reraised_by_install",
        4,
        |test, dispatch| {
            with_pool!(dispatch, |pool| {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    pool.install(|ctx| {
                        ctx.join(|_| 1, |_| -> u32 { panic!("job failed on purpose") })
                    })
                }));
                assert!(result.is_err(), "{test}: the panic was swallowed");
                // The pool still works afterwards.
                assert_eq!(fib_result(&pool, 15, 5), pool::fib_seq(15), "{test}");
                pool.shutdown();
            })
        },
    );
}

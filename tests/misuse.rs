#![cfg(not(loom))]
//! Protocol misuse that only shows with more than one thread, on both
//! protocols: the misuse panics with a message naming the call the user
//! made, and whatever the other threads were doing goes on as if it had
//! not happened.

mod common;
use common::{try_panic_message, wait_until, with_watchdog, WATCHDOG};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use eventcount::{CoreLatch, IdlePolicy, JecSleep, NotifierSleep, SleepProtocol};

/// How many rounds a misusing thread gets to be caught in. Every misuse
/// below is caught within the first few; the bound only turns a miss into
/// a failure instead of a busy loop.
const ROUNDS: usize = 1_000;

/// A protocol of `workers` workers that gets sleepy at the first empty
/// round and tries to sleep at the second.
fn eager<S: SleepProtocol>(workers: usize) -> S {
    S::try_with_policy(workers, IdlePolicy::rayon().yield_rounds(0)).unwrap()
}

/// One empty round, timed (with a deadline only a hang reaches) or not.
fn round<S: SleepProtocol>(
    sleep: &S,
    idle: &mut S::Idle<'_>,
    latch: &CoreLatch,
    has_work: impl FnOnce() -> bool,
    timed: bool,
) {
    if timed {
        let far = Instant::now() + 2 * WATCHDOG;
        let _ = sleep.no_work_found_until(idle, latch, has_work, far);
    } else {
        sleep.no_work_found(idle, latch, has_work);
    }
}

/// Rounds of `idle` until one panics, at most [`ROUNDS`]; the panic's
/// message.
fn rounds_until_panic<S: SleepProtocol>(
    sleep: &S,
    idle: &mut S::Idle<'_>,
    latch: &CoreLatch,
    timed: bool,
) -> Option<String> {
    // The final check reports work, so a round that is not stopped never
    // sleeps: a miss fails the test instead of hanging it.
    (0..ROUNDS).find_map(|_| try_panic_message(|| round(sleep, idle, latch, || true, timed)))
}

/// The latch's state, as its `Debug` shows it.
fn latch_state(latch: &CoreLatch) -> String {
    let debug = format!("{latch:?}");
    let start = debug.find("state: \"").expect("a state") + "state: \"".len();
    debug[start..start + debug[start..].find('"').unwrap()].to_string()
}

/// Worker 0 sleeps on one thread while the test thread uses index 0 too,
/// with a latch of its own. The second thread's sleep attempt must panic,
/// naming the call and the index, and leave the sleeper, its counts and
/// the second thread's latch as they were; then `check` looks at the
/// protocol, and the sleeper must still be woken by `wake_all`.
fn two_threads_on_one_worker_index<S: SleepProtocol + 'static>(
    name: &'static str,
    timed: bool,
    check: fn(&S),
) {
    with_watchdog(name, move || {
        let sleep = Arc::new(eager::<S>(2));
        let stop = Arc::new(AtomicBool::new(false));
        let sleeper = {
            let (sleep, stop) = (sleep.clone(), stop.clone());
            thread::spawn(move || {
                let latch = CoreLatch::idle_loop();
                let mut idle = sleep.start_looking(0);
                while !stop.load(Ordering::Acquire) {
                    sleep.no_work_found(&mut idle, &latch, || stop.load(Ordering::Acquire));
                }
                sleep.work_found(idle);
            })
        };
        wait_until(|| sleep.num_sleeping() == 1);

        let latch = CoreLatch::idle_loop();
        let mut idle = sleep.start_looking(0);
        let message = rounds_until_panic(&*sleep, &mut idle, &latch, timed)
            .expect("a second thread on a sleeping worker's index was never stopped");
        let operation = if timed {
            "no_work_found_until"
        } else {
            "no_work_found"
        };
        let expected =
            format!("{operation}: worker 0 is already asleep or registering on another thread");
        assert!(message.starts_with(&expected), "{message}");
        assert!(
            message.contains("two threads use one worker index"),
            "{message}"
        );
        assert_eq!(latch_state(&latch), "unset", "the second thread's latch");
        assert_eq!(sleep.num_sleeping(), 1, "the sleeper was disturbed");
        check(&sleep);
        drop(idle);

        stop.store(true, Ordering::Release);
        sleep.wake_all();
        sleeper.join().unwrap();
        assert_eq!(sleep.num_sleeping(), 0);
    });
}

/// What the counters say while the sleeper sleeps and the second thread
/// still holds its search.
fn jec_one_sleeping_two_inactive(sleep: &JecSleep) {
    let c = sleep.counters();
    assert_eq!((c.sleeping(), c.inactive()), (1, 2), "{c:?}");
}

#[test]
fn jec_sleep_two_threads_on_one_worker_index() {
    two_threads_on_one_worker_index::<JecSleep>(
        "jec_sleep_two_threads_on_one_worker_index",
        false,
        jec_one_sleeping_two_inactive,
    );
}

#[test]
fn jec_sleep_two_threads_on_one_worker_index_timed() {
    two_threads_on_one_worker_index::<JecSleep>(
        "jec_sleep_two_threads_on_one_worker_index_timed",
        true,
        jec_one_sleeping_two_inactive,
    );
}

#[test]
fn notifier_sleep_two_threads_on_one_worker_index() {
    two_threads_on_one_worker_index::<NotifierSleep>(
        "notifier_sleep_two_threads_on_one_worker_index",
        false,
        |_| {},
    );
}

#[test]
fn notifier_sleep_two_threads_on_one_worker_index_timed() {
    two_threads_on_one_worker_index::<NotifierSleep>(
        "notifier_sleep_two_threads_on_one_worker_index_timed",
        true,
        |_| {},
    );
}

/// A round of `NotifierSleep` whose announcement finds the worker's waiter
/// slot in use (here by the test itself, through the notifier inside):
/// the panic names the call the user made, the latch stays UNSET and the
/// awake idle count stays as it was. Once the slot is free, the worker's
/// rounds reach their final check again: a latch left SLEEPY would make
/// every later sleep attempt fail at once, and the worker spin.
#[test]
fn notifier_sleep_round_on_a_slot_in_use_leaves_latch_and_count() {
    for timed in [false, true] {
        let sleep = eager::<NotifierSleep>(1);
        let latch = CoreLatch::idle_loop();
        let wait = sleep.notifier().prepare_wait(0);
        let mut idle = sleep.start_looking(0);
        let message = rounds_until_panic(&sleep, &mut idle, &latch, timed)
            .expect("a round on a slot in use did not panic");
        let operation = if timed {
            "no_work_found_until"
        } else {
            "no_work_found"
        };
        assert!(
            message.starts_with(&format!("{operation}: worker 0 is already asleep")),
            "{message}"
        );
        assert!(message.contains("its waiter slot is prepared"), "{message}");
        assert_eq!(latch_state(&latch), "unset");
        assert_eq!(sleep.awake_idle(), 1, "the count of awake idle workers");
        sleep.notifier().cancel_wait(wait);

        let checks = std::cell::Cell::new(0);
        for _ in 0..3 {
            round(
                &sleep,
                &mut idle,
                &latch,
                || {
                    checks.set(checks.get() + 1);
                    true
                },
                timed,
            );
        }
        assert_eq!(checks.get(), 1, "the final check after the announcement");
        assert_eq!(latch_state(&latch), "unset");
        sleep.work_found(idle);
        assert_eq!(sleep.awake_idle(), 0);
    }
}

/// Worker 0 sleeps against a latch, and worker 1 waits on that same latch:
/// its sleep attempt must panic, naming both workers (the sleeper only in
/// a debug build, which records who holds a latch), and leave the latch to
/// its sleeper, whom `set_latch` then wakes. A miss shows as worker 1
/// running all its rounds: it finds the latch neither unset nor set at
/// every attempt.
fn two_workers_share_one_latch<S: SleepProtocol + 'static>(name: &'static str, timed: bool) {
    with_watchdog(name, move || {
        let sleep = Arc::new(eager::<S>(2));
        let latch = Arc::new(CoreLatch::new());
        let sleeper = {
            let (sleep, latch) = (sleep.clone(), latch.clone());
            thread::spawn(move || {
                let mut idle = sleep.start_looking(0);
                while !latch.probe() {
                    sleep.no_work_found(&mut idle, &latch, || false);
                }
                sleep.work_found(idle);
            })
        };
        wait_until(|| sleep.num_sleeping() == 1);

        let mut idle = sleep.start_looking(1);
        let message = rounds_until_panic(&*sleep, &mut idle, &latch, timed)
            .expect("a worker waiting on another worker's latch was never stopped");
        let operation = if timed {
            "no_work_found_until"
        } else {
            "no_work_found"
        };
        let holder = if cfg!(debug_assertions) {
            "worker 0"
        } else {
            "another worker"
        };
        assert_eq!(
            message,
            format!(
                "{operation}: worker 1 waits on a CoreLatch that {holder} is asleep on: \
                 two workers share one latch, and each CoreLatch belongs to one worker"
            )
        );
        assert_eq!(latch_state(&latch), "sleeping", "the sleeper's latch");
        assert_eq!(sleep.num_sleeping(), 1, "the sleeper was disturbed");
        drop(idle);

        sleep.set_latch(&latch, 0);
        sleeper.join().unwrap();
        assert_eq!(sleep.num_sleeping(), 0);
    });
}

#[test]
fn jec_sleep_two_workers_share_one_latch() {
    two_workers_share_one_latch::<JecSleep>("jec_sleep_two_workers_share_one_latch", false);
}

#[test]
fn jec_sleep_two_workers_share_one_latch_timed() {
    two_workers_share_one_latch::<JecSleep>("jec_sleep_two_workers_share_one_latch_timed", true);
}

#[test]
fn notifier_sleep_two_workers_share_one_latch() {
    two_workers_share_one_latch::<NotifierSleep>(
        "notifier_sleep_two_workers_share_one_latch",
        false,
    );
}

#[test]
fn notifier_sleep_two_workers_share_one_latch_timed() {
    two_workers_share_one_latch::<NotifierSleep>(
        "notifier_sleep_two_workers_share_one_latch_timed",
        true,
    );
}

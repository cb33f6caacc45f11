#![cfg(not(loom))]
//! Protocol misuse that only shows with more than one thread, on both
//! protocols: the misuse panics with a message naming the call the user
//! made, and whatever the other threads were doing goes on as if it had
//! not happened. And the misuse a first program makes at once: a primitive
//! built for zero waiters.

mod common;
use common::{panic_message, try_panic_message, wait_until, with_watchdog, WATCHDOG};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use eventcount::{
    CapacityError, CoreLatch, IdlePolicy, JecSleep, Notifier, NotifierSleep, SleepProtocol,
    WaiterIds,
};

/// How many rounds a misusing thread gets to be caught in. Every misuse
/// below is caught within the first few; the bound only turns a miss into
/// a failure instead of a busy loop.
const ROUNDS: usize = 1_000;

/// A protocol of `workers` workers that gets sleepy at the first empty
/// round and tries to sleep at the second.
fn eager<S: SleepProtocol>(workers: usize) -> S {
    S::try_new(workers, IdlePolicy::rounds(0), None).unwrap()
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
/// slot in use (here by a second search as the same worker, announced):
/// the panic names the call the user made, the latch stays UNSET and the
/// awake idle count stays as it was. Once the slot is free, the worker's
/// rounds reach their final check again: a latch left SLEEPY would make
/// every later sleep attempt fail at once, and the worker spin.
#[test]
fn notifier_sleep_round_on_a_slot_in_use_leaves_latch_and_count() {
    for timed in [false, true] {
        // A second search as worker 0, announced, holds the slot.
        let sleep = eager::<NotifierSleep>(2);
        let latch = CoreLatch::idle_loop();
        let holder_latch = CoreLatch::idle_loop();
        let mut holder = sleep.start_looking(0);
        sleep.no_work_found(&mut holder, &holder_latch, || true);
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
        sleep.work_found(holder);

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
/// its sleep attempt must panic, naming both workers (the protocols record
/// who holds a latch), and leave the latch to
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
        assert_eq!(
            message,
            format!(
                "{operation}: worker 1 waits on a CoreLatch that worker 0 is asleep on: \
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

/// Worker 0 sleeps against its latch, over and over, while the test thread
/// sets that latch naming worker 1 as its owner. Each call that finds
/// worker 0 asleep (or about to sleep) must panic naming both workers and
/// write nothing: the latch stays unset and worker 0 asleep, so the right
/// `set_latch` still wakes it. Each call that finds worker 0 awake sets the
/// latch, which is then no misuse anyone can see: worker 0 returns, and
/// sleeps again on a fresh latch. Without the check the wake goes to
/// worker 1, and worker 0 sleeps for good (the watchdog fails the test).
fn set_latch_with_the_wrong_owner<S: SleepProtocol + 'static>(name: &'static str) {
    const SLEEPS: usize = 20;
    with_watchdog(name, move || {
        let sleep = Arc::new(eager::<S>(2));
        let latches: Arc<Vec<CoreLatch>> =
            Arc::new((0..SLEEPS).map(|_| CoreLatch::new()).collect());
        let owner = {
            let (sleep, latches) = (sleep.clone(), latches.clone());
            thread::spawn(move || {
                for latch in latches.iter() {
                    let mut idle = sleep.start_looking(0);
                    while !latch.probe() {
                        sleep.no_work_found(&mut idle, latch, || false);
                    }
                    sleep.work_found(idle);
                }
            })
        };
        let mut refused = 0;
        for latch in latches.iter() {
            // Race the wrong call against the owner's way into its sleep,
            // and at least once against the sleep itself.
            if refused == 0 {
                wait_until(|| latch_state(latch) == "sleeping");
            }
            match try_panic_message(|| sleep.set_latch(latch, 1)) {
                Some(message) => {
                    refused += 1;
                    let how = if message.contains("about to sleep on") {
                        "about to sleep on"
                    } else {
                        "asleep on"
                    };
                    assert_eq!(
                        message,
                        format!(
                            "set_latch: the CoreLatch is set for worker 1, but worker 0 is {how} \
                             it: a latch is set with the index of the worker that waits on it \
                             (nothing was written, so worker 0 still waits)"
                        )
                    );
                    assert!(!latch.probe(), "a refused set_latch set the latch");
                    sleep.set_latch(latch, 0);
                }
                None => assert!(latch.probe()),
            }
        }
        owner.join().unwrap();
        assert!(refused >= 1);
        assert_eq!(sleep.num_sleeping(), 0);
    });
}

#[test]
fn jec_sleep_set_latch_with_the_wrong_owner() {
    set_latch_with_the_wrong_owner::<JecSleep>("jec_sleep_set_latch_with_the_wrong_owner");
}

#[test]
fn notifier_sleep_set_latch_with_the_wrong_owner() {
    set_latch_with_the_wrong_owner::<NotifierSleep>(
        "notifier_sleep_set_latch_with_the_wrong_owner",
    );
}

/// A primitive for zero waiters could never be used: `new(0)` panics and
/// `try_new(0)` errs, each with a message that says so, where the first
/// call on the primitive used to panic with an index out of range.
#[test]
fn zero_capacity_is_refused_by_every_constructor() {
    fn refused(err: CapacityError, what: &str, unit: &str) {
        assert_eq!(err.requested(), 0);
        assert_eq!(
            err.to_string(),
            format!("{what} cannot have 0 {unit}: it needs at least 1")
        );
    }
    refused(
        Notifier::try_new(0).unwrap_err(),
        "Notifier",
        "waiter slots",
    );
    let policy = IdlePolicy::rayon();
    refused(
        JecSleep::try_new(0, policy, None).unwrap_err(),
        "JecSleep",
        "workers",
    );
    refused(
        NotifierSleep::try_new(0, policy, None).unwrap_err(),
        "NotifierSleep",
        "workers",
    );

    assert_eq!(
        panic_message(|| drop(Notifier::new(0))),
        "Notifier::new: Notifier cannot have 0 waiter slots: it needs at least 1"
    );
    assert_eq!(
        panic_message(|| drop(JecSleep::new(0))),
        "JecSleep::new: JecSleep cannot have 0 workers: it needs at least 1"
    );
    assert_eq!(
        panic_message(|| drop(NotifierSleep::new(0))),
        "NotifierSleep::new: NotifierSleep cannot have 0 workers: it needs at least 1"
    );
    assert_eq!(
        panic_message(|| drop(WaiterIds::new(0))),
        "WaiterIds::new(0): a set of ids needs at least 1, or no waiter could ever take one"
    );
    // One is enough.
    assert_eq!(Notifier::new(1).capacity(), 1);
    assert_eq!(JecSleep::new(1).capacity(), 1);
    assert!(WaiterIds::new(1).acquire().is_some());
}

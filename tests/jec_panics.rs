#![cfg(not(loom))]
//! Every documented panic of `JecSleep`, each checked against a substring of
//! its real message, plus the non-panicking counterparts (`try_with_policy`,
//! an `IdleState` dropped by unwinding).

use std::panic::{self, AssertUnwindSafe};

use eventcount::{CoreLatch, IdlePolicy, JecSleep};

#[test]
#[should_panic(expected = "supports at most 65535 workers")]
fn new_with_too_many_workers_panics() {
    let _ = JecSleep::new(65_536);
}

#[test]
#[should_panic(expected = "supports at most 65535 workers")]
fn with_policy_with_too_many_workers_panics() {
    let _ = JecSleep::with_policy(100_000, IdlePolicy::new().yield_rounds(1));
}

#[test]
#[should_panic(expected = "out of range")]
fn start_looking_out_of_range_panics() {
    let sleep = JecSleep::new(2);
    let _idle = sleep.start_looking(2);
}

#[test]
#[should_panic(expected = "already looking")]
fn start_looking_twice_panics() {
    let sleep = JecSleep::new(2);
    let _first = sleep.start_looking(1);
    let _second = sleep.start_looking(1);
}

#[test]
#[should_panic(expected = "out of range")]
fn notify_worker_latch_is_set_out_of_range_panics() {
    let sleep = JecSleep::new(3);
    sleep.notify_worker_latch_is_set(3);
}

#[test]
#[should_panic(expected = "out of range")]
fn set_latch_out_of_range_panics() {
    let sleep = JecSleep::new(3);
    let latch = CoreLatch::new();
    sleep.set_latch(&latch, 7);
}

#[test]
fn set_latch_out_of_range_leaves_the_latch_unset() {
    let sleep = JecSleep::new(1);
    let latch = CoreLatch::new();
    let result = panic::catch_unwind(AssertUnwindSafe(|| sleep.set_latch(&latch, 1)));
    assert!(result.is_err());
    assert!(
        !latch.probe(),
        "a rejected set_latch must not set the latch"
    );
}

#[test]
#[should_panic(expected = "different JecSleep")]
fn work_found_with_a_foreign_idle_state_panics() {
    let mine = JecSleep::new(1);
    let theirs = JecSleep::new(1);
    let idle = theirs.start_looking(0);
    mine.work_found(idle);
}

#[test]
#[should_panic(expected = "different JecSleep")]
fn no_work_found_with_a_foreign_idle_state_panics() {
    let mine = JecSleep::new(1);
    let theirs = JecSleep::new(1);
    let latch = CoreLatch::new();
    let mut idle = theirs.start_looking(0);
    mine.no_work_found(&mut idle, &latch, || false);
}

#[test]
fn foreign_idle_state_panic_leaves_both_counters_right() {
    let mine = JecSleep::new(1);
    let theirs = JecSleep::new(1);
    let latch = CoreLatch::new();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut idle = theirs.start_looking(0);
        mine.no_work_found(&mut idle, &latch, || false);
    }));
    assert!(result.is_err());
    assert_eq!(theirs.counters().inactive(), 0);
    assert_eq!(mine.counters().inactive(), 0);
    assert_eq!(
        mine.counters(),
        JecSleep::new(1).counters(),
        "the panic touched mine"
    );
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let idle = theirs.start_looking(0);
        mine.work_found(idle);
    }));
    assert!(result.is_err());
    assert_eq!(theirs.counters().inactive(), 0);
    assert_eq!(mine.counters().inactive(), 0);
}

#[test]
fn try_with_policy_too_many_is_an_error_naming_both_numbers() {
    let err = JecSleep::try_with_policy(65_536, IdlePolicy::default()).unwrap_err();
    assert_eq!(err.requested(), 65_536);
    assert_eq!(err.capacity(), 65_535);
    assert_eq!(err.capacity(), JecSleep::max_workers());
    let message = err.to_string();
    assert!(message.contains("65536"), "{message}");
    assert!(message.contains("65535"), "{message}");
    assert!(message.contains("JecSleep"), "{message}");
}

#[test]
fn try_with_policy_at_the_limit_is_ok() {
    let sleep = JecSleep::try_with_policy(JecSleep::max_workers(), IdlePolicy::default())
        .expect("max_workers() workers must fit");
    assert_eq!(sleep.num_workers(), 65_535);
    // The last index works.
    let idle = sleep.start_looking(65_534);
    assert_eq!(sleep.counters().inactive(), 1);
    sleep.work_found(idle);
    assert_eq!(sleep.counters().inactive(), 0);
}

#[test]
fn idle_state_dropped_by_a_panic_stops_looking() {
    let sleep = JecSleep::with_policy(2, IdlePolicy::new().yield_rounds(0));
    let latch = CoreLatch::new();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut idle = sleep.start_looking(0);
        sleep.no_work_found(&mut idle, &latch, || true); // sleepy: no final check
        assert_eq!(sleep.counters().inactive(), 1);
        panic!("job panicked");
    }));
    assert!(result.is_err());
    let c = sleep.counters();
    assert_eq!((c.sleeping(), c.inactive()), (0, 0), "{c:?}");
    // And the worker may start looking again.
    let idle = sleep.start_looking(0);
    assert_eq!(sleep.counters().inactive(), 1);
    sleep.work_found(idle);
    assert_eq!(sleep.counters().inactive(), 0);
}

#[test]
fn start_looking_twice_panic_leaves_counters_right() {
    let sleep = JecSleep::new(1);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let _first = sleep.start_looking(0);
        let _second = sleep.start_looking(0);
    }));
    assert!(result.is_err());
    assert_eq!(sleep.counters().inactive(), 0);
    let idle = sleep.start_looking(0);
    sleep.work_found(idle);
    assert_eq!(sleep.counters().inactive(), 0);
}

/// The final check is the caller's code and runs while the worker is counted
/// asleep: if it panics, the worker must not stay counted, and its latch
/// must not stay SLEEPING (so a later `set` does not report a sleeper).
#[test]
fn a_panicking_final_check_leaves_no_phantom_sleeper() {
    use eventcount::{CoreLatch, IdlePolicy, JecSleep};
    let sleep = JecSleep::with_policy(1, IdlePolicy::new().yield_rounds(0));
    let latch = CoreLatch::new();
    let mut idle = sleep.start_looking(0);
    sleep.no_work_found(&mut idle, &latch, || false); // sleepy round
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sleep.no_work_found(&mut idle, &latch, || panic!("final check failed"));
    }));
    assert!(result.is_err());
    assert_eq!(sleep.counters().sleeping(), 0, "{:?}", sleep.counters());
    assert_eq!(sleep.sleeping_workers(), 0);
    sleep.work_found(idle);
    assert_eq!(sleep.counters().inactive(), 0);
    assert!(!latch.set(), "the latch was left SLEEPING by the panic");
}

/// The same for `NotifierSleep`: a panicking re-check cancels the wait and
/// puts the latch back.
#[test]
fn a_panicking_recheck_in_notifier_sleep_leaves_nothing_behind() {
    use eventcount::{CoreLatch, IdlePolicy, NotifierSleep, SleepProtocol};
    let sleep = NotifierSleep::with_policy(1, IdlePolicy::new().yield_rounds(0));
    let latch = CoreLatch::new();
    let mut idle = sleep.start_looking(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sleep.no_work_found(&mut idle, &latch, || panic!("re-check failed"));
    }));
    assert!(result.is_err());
    assert!(!sleep.notifier().notify_one(), "a waiter was left behind");
    sleep.work_found(idle);
    assert!(!latch.set(), "the latch was left SLEEPING by the panic");
}

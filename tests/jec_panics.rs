#![cfg(not(loom))]
//! Every documented panic of `JecSleep`, each checked against a substring of
//! its real message, plus the non-panicking counterparts (`try_with_policy`,
//! a search ended by its state's drop while unwinding).

mod common;
use common::{assert_counts, end_search, panic_message};
use std::panic::{self, AssertUnwindSafe};

use eventcount::{CoreLatch, IdlePolicy, JecSleep, NotifierSleep, Round, SleepProtocol};

/// The most workers either protocol takes (`SleepProtocol::try_new`).
const MAX_WORKERS: usize = 65_535;

/// Worker `me` starts a search and ends it: counted idle while it looks,
/// and nobody is idle after (`sleep` had no other search open).
fn search_once(sleep: &JecSleep, me: usize, what: &str) {
    let idle = sleep.start_looking(me);
    assert_eq!(sleep.counters().inactive(), 1, "{what}");
    end_search(sleep, idle, what);
}

#[test]
#[should_panic(expected = "supports at most 65535 workers")]
fn new_with_too_many_workers_panics() {
    let _ = JecSleep::new(65_536);
}

#[test]
#[should_panic(expected = "out of range")]
fn start_looking_out_of_range_panics() {
    let sleep = JecSleep::new(2);
    let _idle = sleep.start_looking(2);
}

#[test]
#[should_panic(expected = "would be looking for work while all 2 workers already are")]
fn start_looking_beyond_the_worker_count_panics() {
    let sleep = JecSleep::new(2);
    let _first = sleep.start_looking(1);
    let _second = sleep.start_looking(1); // no work_found in between
    let _third = sleep.start_looking(0);
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
#[should_panic(expected = "work_found: the idle state of worker 0 belongs to a different JecSleep")]
fn work_found_with_a_foreign_idle_state_panics() {
    let mine = JecSleep::new(1);
    let theirs = JecSleep::new(1);
    let idle = theirs.start_looking(0);
    mine.work_found(idle);
}

#[test]
fn work_found_with_a_foreign_idle_state_leaves_both_counters_right() {
    let mine = JecSleep::new(2);
    let theirs = JecSleep::new(1);
    let before = mine.counters();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let idle = theirs.start_looking(0);
        mine.work_found(idle);
    }));
    assert!(result.is_err());
    assert_eq!(
        mine.counters(),
        before,
        "the rejected work_found moved mine"
    );
    // Their state ended their search as it unwound.
    assert_counts(&theirs, (0, 0), "theirs, after the unwinding");
    search_once(&mine, 1, "mine still works");
}

#[test]
fn dropping_the_idle_state_ends_the_search() {
    let sleep = JecSleep::new(1);
    drop(sleep.start_looking(0));
    assert_counts(&sleep, (0, 0), "after the drop");
    search_once(&sleep, 0, "a new search");
}

#[test]
#[should_panic(expected = "the only worker already is")]
fn a_leaked_search_is_caught_when_the_counters_are_full() {
    let sleep = JecSleep::new(1);
    std::mem::forget(sleep.start_looking(0)); // the search never ends
    let _again = sleep.start_looking(0);
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
    // Their state ended their search as it unwound.
    assert_counts(&theirs, (0, 0), "theirs, after the unwinding");
    assert_eq!(
        mine.counters(),
        JecSleep::new(1).counters(),
        "the panic touched mine"
    );
}

#[test]
fn try_with_policy_too_many_is_an_error_naming_both_numbers() {
    let err = JecSleep::try_new(65_536, IdlePolicy::default(), None).unwrap_err();
    assert_eq!(err.requested(), 65_536);
    assert_eq!(err.max_capacity(), 65_535);
    assert_eq!(err.max_capacity(), MAX_WORKERS);
    let message = err.to_string();
    assert!(message.contains("65536"), "{message}");
    assert!(message.contains("65535"), "{message}");
    assert!(message.contains("JecSleep"), "{message}");
}

#[test]
fn try_with_policy_at_the_limit_is_ok() {
    let sleep = JecSleep::try_new(MAX_WORKERS, IdlePolicy::default(), None)
        .expect("max_workers() workers must fit");
    assert_eq!(sleep.capacity(), 65_535);
    // The last index works.
    search_once(&sleep, 65_534, "the last index");
}

/// A loop that unwinds while idle: the `JecIdle`'s drop ends the search on
/// the way out.
#[test]
fn a_worker_unwinding_while_idle_ends_its_search() {
    let sleep = JecSleep::try_new(2, IdlePolicy::rounds(0), None).unwrap();
    let latch = CoreLatch::new();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut idle = sleep.start_looking(0);
        sleep.no_work_found(&mut idle, &latch, || true); // sleepy: no final check
        assert_eq!(sleep.counters().inactive(), 1);
        panic!("job panicked");
    }));
    assert!(result.is_err());
    assert_counts(&sleep, (0, 0), "the drop ended the search");
    // And the worker may start looking again.
    search_once(&sleep, 0, "after the unwinding");
}

#[test]
fn start_looking_beyond_the_worker_count_leaves_counters_right() {
    let sleep = JecSleep::new(1);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let _first = sleep.start_looking(0);
        let _second = sleep.start_looking(0);
    }));
    assert!(result.is_err());
    // The second call counted nothing, and the first search ended as its
    // state unwound.
    assert_counts(&sleep, (0, 0), "after the panic");
    search_once(&sleep, 0, "a new search after the panic");
}

/// The final check is the caller's code and runs while the worker is counted
/// asleep: if it panics, the worker must not stay counted, and its latch
/// must not stay SLEEPING (so a later `set` does not report a sleeper).
#[test]
fn a_panicking_final_check_leaves_no_phantom_sleeper() {
    let sleep = JecSleep::try_new(1, IdlePolicy::rounds(0), None).unwrap();
    let latch = CoreLatch::new();
    let mut idle = sleep.start_looking(0);
    sleep.no_work_found(&mut idle, &latch, || false); // sleepy round
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        sleep.no_work_found(&mut idle, &latch, || panic!("final check failed"));
    }));
    assert!(result.is_err());
    assert_eq!(sleep.counters().sleeping(), 0, "{:?}", sleep.counters());
    assert_eq!(sleep.num_sleeping(), 0);
    end_search(&sleep, idle, "after the panicking final check");
    assert!(!latch.set(), "the latch was left SLEEPING by the panic");
}

/// The same for `NotifierSleep`: a panicking re-check cancels the wait and
/// puts the latch back.
#[test]
fn a_panicking_recheck_in_notifier_sleep_leaves_nothing_behind() {
    let sleep = NotifierSleep::try_new(1, IdlePolicy::rounds(0), None).unwrap();
    let latch = CoreLatch::new();
    let mut idle = sleep.start_looking(0);
    // The announcement round: on the waiter stack, no check yet.
    sleep.no_work_found(&mut idle, &latch, || panic!("checked too early"));
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        sleep.no_work_found(&mut idle, &latch, || panic!("re-check failed"));
    }));
    assert!(result.is_err());
    // The slot was withdrawn: the next round announces the worker again
    // (a slot left on the waiter stack would make it panic).
    assert_eq!(
        sleep.no_work_found(&mut idle, &latch, || true),
        Round::Announced
    );
    sleep.work_found(idle);
    assert!(!latch.set(), "the latch was left SLEEPING by the panic");
}

// ---------------------------------------------------------------------------
// Messages name the type and count its workers in words
// ---------------------------------------------------------------------------

#[test]
fn set_latch_out_of_range_names_the_protocol_and_its_one_worker() {
    let latch = CoreLatch::new();
    let message = panic_message(|| NotifierSleep::new(1).set_latch(&latch, 1));
    assert_eq!(
        message,
        "set_latch: worker index 1 is out of range for a NotifierSleep of 1 worker"
    );
    let message = panic_message(|| JecSleep::new(1).set_latch(&latch, 1));
    assert_eq!(
        message,
        "set_latch: worker index 1 is out of range for a JecSleep of 1 worker"
    );
    let message = panic_message(|| SleepProtocol::set_latch(&JecSleep::new(2), &latch, 2));
    assert_eq!(
        message,
        "set_latch: worker index 2 is out of range for a JecSleep of 2 workers"
    );
}

#[test]
fn notifier_sleep_capacity_error_names_notifier_sleep() {
    let err = NotifierSleep::try_new(MAX_WORKERS + 1, IdlePolicy::default(), None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "NotifierSleep supports at most 65535 workers, but 65536 were requested"
    );
    let message = panic_message(|| drop(NotifierSleep::new(MAX_WORKERS + 1)));
    assert!(
        message.contains("NotifierSleep supports at most 65535 workers"),
        "{message}"
    );
}

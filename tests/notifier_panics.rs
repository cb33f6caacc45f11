#![cfg(not(loom))]
//! The documented `# Panics` cases of `Notifier`, and the edge cases next to
//! them that must *not* panic.

mod common;
use common::{assert_stack_empty, wait_until, with_watchdog};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::thread;

use eventcount::{Notifier, PreparedWait};

/// Hand `misuse` another notifier and a token prepared on a first one.
fn with_a_foreign_token(misuse: impl FnOnce(&Notifier, PreparedWait<'_>)) {
    let (mine, theirs) = (Notifier::new(1), Notifier::new(1));
    misuse(&theirs, mine.prepare_wait(0));
}

/// Slot `wid` of `n` is free: it can be prepared (and cancelled) again, and
/// then nobody is left waiting.
fn assert_slot_free(n: &Notifier, wid: usize) {
    n.cancel_wait(n.prepare_wait(wid));
    assert!(!n.notify_one(), "a waiter was left in slot {wid}");
}

// ---------------------------------------------------------------------------
// # Panics
// ---------------------------------------------------------------------------

#[test]
#[should_panic(expected = "supports at most 65535")]
fn new_above_capacity_panics() {
    let _ = Notifier::new(Notifier::MAX_CAPACITY + 1);
}

#[test]
#[should_panic(expected = "out of range")]
fn prepare_wait_out_of_range_panics() {
    let n = Notifier::new(2);
    let _wait = n.prepare_wait(2);
}

#[test]
#[should_panic(expected = "already has a wait in progress")]
fn prepare_wait_twice_on_one_slot_panics() {
    let n = Notifier::new(2);
    let _first = n.prepare_wait(1);
    let _second = n.prepare_wait(1);
}

#[test]
#[should_panic(expected = "different Notifier")]
fn commit_wait_with_foreign_token_panics() {
    with_a_foreign_token(|other, wait| other.commit_wait(wait));
}

#[test]
#[should_panic(expected = "different Notifier")]
fn cancel_wait_with_foreign_token_panics() {
    with_a_foreign_token(|other, wait| other.cancel_wait(wait));
}

// ---------------------------------------------------------------------------
// Misuse leaves both notifiers consistent
// ---------------------------------------------------------------------------

/// The foreign-token panic cancels the token on its own notifier, and leaves
/// the other one untouched.
#[test]
fn foreign_token_panic_leaves_both_notifiers_idle() {
    let a = Notifier::new(1);
    let b = Notifier::new(1);
    for commit in [true, false] {
        let result = catch_unwind(AssertUnwindSafe(|| {
            let wait = a.prepare_wait(0);
            if commit {
                b.commit_wait(wait);
            } else {
                b.cancel_wait(wait);
            }
        }));
        assert!(
            result.is_err(),
            "foreign token must panic (commit: {commit})"
        );
        for n in [&a, &b] {
            assert_stack_empty(n, "after the foreign token");
            assert!(!n.notify_one(), "{n:?}");
        }
        // Slot 0 of `a` is free again.
        a.cancel_wait(a.prepare_wait(0));
    }
}

/// A second prepare on a busy slot panics before touching the state: the
/// first token is still valid and can be committed normally.
#[test]
fn prepare_twice_panic_keeps_first_token_valid() {
    let n = Notifier::new(1);
    let first = n.prepare_wait(0);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let _second = n.prepare_wait(0);
    }));
    assert!(result.is_err());
    let dbg = format!("{n:?}");
    assert!(
        dbg.contains("top: 0"),
        "the first wait is still stacked: {dbg}"
    );
    assert!(n.notify_one(), "the first token's waiter is still there");
    n.commit_wait(first); // holds the signal: returns at once
    assert!(!n.notify_one());
}

// ---------------------------------------------------------------------------
// Constructors
// ---------------------------------------------------------------------------

#[test]
fn try_new_above_capacity_is_an_error_naming_both_numbers() {
    let requested = Notifier::MAX_CAPACITY + 1;
    let err = Notifier::try_new(requested).unwrap_err();
    assert_eq!(err.requested(), requested);
    assert_eq!(err.max_capacity(), Notifier::MAX_CAPACITY);
    let msg = err.to_string();
    assert!(msg.contains(&requested.to_string()), "{msg}");
    assert!(msg.contains(&Notifier::MAX_CAPACITY.to_string()), "{msg}");

    let far = Notifier::try_new(usize::MAX).unwrap_err();
    assert!(far.to_string().contains(&usize::MAX.to_string()));
}

#[test]
fn try_new_at_capacity_is_ok() {
    let n = Notifier::try_new(Notifier::MAX_CAPACITY).expect("capacity() slots must fit");
    assert_eq!(n.capacity(), Notifier::MAX_CAPACITY);
    // The highest slot works.
    let last = Notifier::MAX_CAPACITY - 1;
    let wait = n.prepare_wait(last);
    assert_eq!(wait.wid(), last);
    assert!(n.notify_one());
    n.commit_wait(wait);
    assert!(!n.notify_one());
}

#[test]
#[should_panic(
    expected = "Notifier::new: Notifier cannot have 0 waiter slots: it needs at least 1"
)]
fn new_with_zero_slots_panics() {
    let _ = Notifier::new(0);
}

#[test]
fn notifies_with_nobody_waiting_do_nothing() {
    let n = Notifier::new(1);
    assert_eq!(n.num_sleeping(), 0);
    assert!(!n.notify_one());
    assert_eq!(n.notify_n(0), 0);
    assert_eq!(n.notify_n(5), 0);
    assert_eq!(n.notify_all(), 0);
}

#[test]
fn notify_n_zero_does_nothing() {
    let n = Notifier::new(1);
    let wait = n.prepare_wait(0);
    assert_eq!(n.notify_n(0), 0);
    assert!(
        n.notify_one(),
        "notify_n(0) must not have used up the waiter"
    );
    n.commit_wait(wait);
}

// ---------------------------------------------------------------------------
// Slot reuse
// ---------------------------------------------------------------------------

#[test]
fn slot_can_be_prepared_again_after_cancel() {
    let n = Notifier::new(1);
    for _ in 0..3 {
        let wait = n.prepare_wait(0);
        n.cancel_wait(wait);
    }
    assert!(!n.notify_one());
}

#[test]
fn slot_can_be_prepared_again_after_drop() {
    let n = Notifier::new(1);
    for _ in 0..3 {
        drop(n.prepare_wait(0));
    }
    assert_slot_free(&n, 0);
}

#[test]
fn slot_can_be_prepared_again_after_signalled_commit() {
    let n = Notifier::new(1);
    for _ in 0..3 {
        let wait = n.prepare_wait(0);
        assert!(n.notify_one());
        n.commit_wait(wait); // returns at once
    }
    assert_slot_free(&n, 0);
}

/// After a commit that really slept and was woken, the owner can prepare
/// the same slot again at once.
#[test]
fn slot_can_be_prepared_again_after_woken_commit() {
    with_watchdog("slot_can_be_prepared_again_after_woken_commit", || {
        let n = Arc::new(Notifier::new(1));
        let waiter = {
            let n = n.clone();
            thread::spawn(move || {
                let wait = n.prepare_wait(0);
                n.commit_wait(wait);
                // Right after commit_wait returns:
                let again = n.prepare_wait(0);
                n.cancel_wait(again);
            })
        };
        wait_until(|| n.num_sleeping() != 0);
        assert!(n.notify_one());
        waiter.join().unwrap();
        assert!(!n.notify_one());
    });
}

// ---------------------------------------------------------------------------
// Drop during a panic
// ---------------------------------------------------------------------------

/// A token dropped while unwinding cancels its wait: no pre-waiter is left
/// behind to absorb later notifications.
#[test]
fn token_dropped_during_panic_leaves_no_pre_waiter() {
    let n = Notifier::new(2);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let _wait = n.prepare_wait(1);
        panic!("re-check blew up");
    }));
    assert!(result.is_err());
    assert_stack_empty(&n, "no waiter may be left behind");
    assert!(!n.notify_one(), "no waiter may be left behind");
    assert_eq!(n.num_sleeping(), 0);
    // And the slot is free again.
    n.cancel_wait(n.prepare_wait(1));
}

/// The same with a notification already delivered to the token: the drop
/// ends the wait (and would forward the notification if anyone else
/// waited), leaving nothing behind.
#[test]
fn signalled_token_dropped_during_panic_leaves_nothing() {
    let n = Notifier::new(1);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let _wait = n.prepare_wait(0);
        assert!(n.notify_one());
        panic!("re-check blew up after the notify");
    }));
    assert!(result.is_err());
    assert_stack_empty(&n, "after the unwinding");
    assert!(!n.notify_one());
}

// ---------------------------------------------------------------------------
// Messages name the call the user made
// ---------------------------------------------------------------------------

#[test]
#[should_panic(
    expected = "commit_wait_until: the PreparedWait for slot 0 was issued by a different Notifier"
)]
fn commit_wait_until_with_foreign_token_names_itself() {
    with_a_foreign_token(|other, wait| {
        let _ = other.commit_wait_until(wait, std::time::Instant::now());
    });
}

// ---------------------------------------------------------------------------
// A leaked token
// ---------------------------------------------------------------------------

/// Set in the child process of `a_leaked_token_and_an_unwind_do_not_abort`.
const CHILD: &str = "EVENTCOUNT_LEAKED_TOKEN_CHILD";

/// A leaked `PreparedWait` leaves its slot on the stack. A notifier dropped
/// while the thread unwinds must not panic about it: a second panic during
/// unwinding aborts the process. An abort would take this test binary down
/// with it, so the test runs itself again in a child process and checks
/// how that ended.
#[test]
fn a_leaked_token_and_an_unwind_do_not_abort() {
    if std::env::var_os(CHILD).is_some() {
        let result = catch_unwind(|| {
            let n = Notifier::new(1);
            std::mem::forget(n.prepare_wait(0));
            panic!("the caller's own panic");
        });
        assert!(result.is_err());
        return;
    }
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_leaked_token_and_an_unwind_do_not_abort",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .expect("run the test binary again");
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(
        child.status.success(),
        "the child ended with {}; its stderr:\n{stderr}",
        child.status
    );
    assert!(stderr.contains("the caller's own panic"), "{stderr}");
}

/// Outside an unwind, a debug build names the leaked slot's state in words.
#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "slot 1 is still prepared: was a PreparedWait leaked?")]
fn a_leaked_token_is_named_when_the_notifier_drops() {
    let n = Notifier::new(2);
    std::mem::forget(n.prepare_wait(1));
    drop(n);
}

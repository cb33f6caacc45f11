//! The waiter's side of the `Notifier` pattern, and what tests assert about
//! a notifier at rest.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use eventcount::Notifier;

/// Take one permit from `permits`, if any.
pub fn try_take(permits: &AtomicUsize) -> bool {
    permits
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| p.checked_sub(1))
        .is_ok()
}

/// The waiter side of the pattern for a permit counter: returns once it has
/// taken one permit, sleeping while none is available. Spurious returns from
/// `commit_wait` just loop.
pub fn take_permit(notifier: &Notifier, wid: usize, permits: &AtomicUsize) {
    loop {
        if try_take(permits) {
            return;
        }
        let wait = notifier.prepare_wait(wid);
        if permits.load(Ordering::Acquire) > 0 {
            notifier.cancel_wait(wait);
        } else {
            notifier.commit_wait(wait);
        }
    }
}

/// The waiter side of the pattern for a flag: returns once `flag` is set,
/// sleeping in slot `wid` while it is not.
pub fn wait_for_flag(notifier: &Notifier, wid: usize, flag: &AtomicBool) {
    while !flag.load(Ordering::Acquire) {
        let wait = notifier.prepare_wait(wid);
        if flag.load(Ordering::Acquire) {
            notifier.cancel_wait(wait);
        } else {
            notifier.commit_wait(wait);
        }
    }
}

/// Nobody is committed, and a notify finds nobody to release.
pub fn assert_nobody_waits(notifier: &Notifier) {
    assert_eq!(notifier.num_sleeping(), 0, "{notifier:?}");
    assert!(!notifier.notify_one(), "a waiter was left: {notifier:?}");
}

/// No waiter is left on the stack, cancelled or not (as `Debug` shows it).
pub fn assert_stack_empty(notifier: &Notifier, what: &str) {
    let dbg = format!("{notifier:?}");
    assert!(dbg.contains("top: empty"), "{what}: {dbg}");
}

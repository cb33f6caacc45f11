//! What tests assert about a `Notifier` once its waiters are done.

use eventcount::Notifier;

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

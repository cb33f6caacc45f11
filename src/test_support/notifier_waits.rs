//! The waiter's side of the `Notifier` pattern: check, prepare, check
//! again, then cancel or commit.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::Notifier;

/// Take one permit from `permits`, if any.
pub fn try_take(permits: &AtomicUsize) -> bool {
    permits
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| p.checked_sub(1))
        .is_ok()
}

/// Take one permit from `permits`, sleeping in slot `wid` while none is
/// available; a spurious return from `commit_wait` just loops. Returns how
/// many times it committed.
pub fn take_permit(notifier: &Notifier, wid: usize, permits: &AtomicUsize) -> usize {
    let mut commits = 0;
    while !try_take(permits) {
        let wait = notifier.prepare_wait(wid);
        if permits.load(Ordering::Acquire) > 0 {
            notifier.cancel_wait(wait);
        } else {
            notifier.commit_wait(wait);
            commits += 1;
        }
    }
    commits
}

/// Return once `ready` holds, sleeping in slot `wid` while it does not.
pub fn sleep_until(notifier: &Notifier, wid: usize, ready: impl Fn() -> bool) {
    while !ready() {
        let wait = notifier.prepare_wait(wid);
        if ready() {
            notifier.cancel_wait(wait);
        } else {
            notifier.commit_wait(wait);
        }
    }
}

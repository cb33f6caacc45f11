//! The waiter's side of the `Notifier` pattern: check, prepare, check
//! again, then cancel or commit.
//!
//! [`wait_unless`] and [`sleep_until`] serve the loom models too, so they
//! take the condition as a closure: a model's closure reads loom's atomics,
//! a test's reads std's. [`wait_unless`] also takes the commit, since the
//! models commit their own ways (`commit_wait`, or a parked commit).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Notifier, PreparedWait};

/// The waiter's steps once its check found nothing: announce in slot `wid`,
/// check `ready` again, and cancel if it now holds; otherwise sleep through
/// `commit` (`commit_wait`, or a parked commit). Returns whether it
/// committed. The re-check after the announcement is what keeps a notify
/// from falling between the check and the sleep: the waiter loops here and
/// in the loom models take the steps from this one place, each with its
/// own check and commit.
pub fn wait_unless<'n>(
    notifier: &'n Notifier,
    wid: usize,
    ready: impl FnOnce() -> bool,
    commit: impl FnOnce(PreparedWait<'n>),
) -> bool {
    let wait = notifier.prepare_wait(wid);
    if ready() {
        notifier.cancel_wait(wait);
        false
    } else {
        commit(wait);
        true
    }
}

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
        let available = || permits.load(Ordering::Acquire) > 0;
        if wait_unless(notifier, wid, available, |wait| notifier.commit_wait(wait)) {
            commits += 1;
        }
    }
    commits
}

/// Return once `ready` holds, sleeping in slot `wid` while it does not.
pub fn sleep_until(notifier: &Notifier, wid: usize, ready: impl Fn() -> bool) {
    while !ready() {
        wait_unless(notifier, wid, &ready, |wait| notifier.commit_wait(wait));
    }
}

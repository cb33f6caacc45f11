//! The loom model of [`WaiterWaker`]: a wake from another thread reaches
//! a thread that waits on a `Notifier`, in any phase of its wait.

use loom::sync::atomic::AtomicBool;

use super::support::{check, join_all, spawn_with};
use crate::notifier::Notifier;
use crate::sync::Ordering;
use crate::waker::WaiterWaker;

/// A `block_on`-style waiter: it polls (reads `ready`), prepares, takes the
/// waker's flag, and commits only if no wake came. Another thread makes
/// `ready` true and wakes it through the `Waker`. The waiter must finish in
/// every interleaving: a wake before its check is seen by the check, and
/// one after finds it prepared.
#[test]
fn a_wake_reaches_the_waiter_in_any_phase() {
    check(3, || {
        let notifier = std::sync::Arc::new(Notifier::new(1));
        let wake = WaiterWaker::for_waiter(notifier.clone(), 0);
        let waker = std::sync::Arc::new(wake.waker());
        let ready = loom::sync::Arc::new(AtomicBool::new(false));
        let waiter = spawn_with!(notifier, ready => {
            while !ready.load(Ordering::Acquire) {
                let wait = notifier.prepare_wait(0);
                if wake.take_woken() {
                    notifier.cancel_wait(wait);
                } else {
                    notifier.commit_wait(wait);
                }
            }
        });
        let waking = spawn_with!(ready, waker => {
            ready.store(true, Ordering::Release);
            waker.wake_by_ref();
        });
        join_all([waking, waiter]);
    });
}

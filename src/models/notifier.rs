//! Loom models of the Notifier protocol.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test`. Every model is bounded in
//! code (2-4 threads, preemption bound set below) so the suite runs as
//! written, with no environment variables.
//!
//! A lost wakeup shows up as a waiter asleep on its futex word with nobody
//! left to wake it: loom reports "Model exceeded maximum number of
//! branches" (the sleeper yields for ever, `src/sync/loom.rs`) or
//! "deadlock" (every thread blocked). How each model was checked to fail
//! with the protocol broken is in docs/notifier.md ("Checking the checker")
//! and scripts/planted_bugs.py.
//!
//! Most models notify from the main thread. loom does run the spawned
//! waiters ahead of it here: the planted `notify_n` bug shows only when
//! both waiters pushed themselves before the main thread's `notify_n(1)`,
//! and `notify_n_releases_at_most_n` catches it (docs/notifier.md,
//! "Checking the checker").

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread::JoinHandle;

use super::support::{check, join_all, spawn_with};
use crate::notifier::Notifier;
use crate::test_support::{sleep_until, wait_unless};

/// The waiter side of the pattern: take one permit, sleeping while none is
/// available. Returns how many times `commit_wait` returned (woken or
/// signalled), so models can bound wakeups.
fn take_permit(notifier: &Notifier, wid: usize, permits: &AtomicUsize) -> usize {
    let mut wakeups = 0;
    loop {
        let available = permits.load(Ordering::Acquire);
        if available > 0 {
            if permits
                .compare_exchange(
                    available,
                    available - 1,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                return wakeups;
            }
            continue;
        }
        let available = || permits.load(Ordering::Acquire) > 0;
        if wait_unless(notifier, wid, available, |wait| notifier.commit_wait(wait)) {
            wakeups += 1;
        }
    }
}

/// Wait until `flag` is set: the check / prepare / re-check / commit loop.
fn wait_for(notifier: &Notifier, wid: usize, flag: &AtomicBool) {
    sleep_until(notifier, wid, || flag.load(Ordering::Acquire));
}

/// Make a permit available, then notify: the notifier side of the pattern.
fn post_permit(notifier: &Notifier, permits: &AtomicUsize) {
    permits.fetch_add(1, Ordering::Release);
    notifier.notify_one();
}

/// One thread per slot in `wids`, each taking one permit: the usual waiters.
/// Each returns its wakeups (see [`take_permit`]).
fn spawn_permit_takers(
    notifier: &Arc<Notifier>,
    permits: &Arc<AtomicUsize>,
    wids: std::ops::Range<usize>,
) -> Vec<JoinHandle<usize>> {
    wids.map(|wid| spawn_with!(notifier, permits => take_permit(&notifier, wid, &permits)))
        .collect()
}

/// The lost-wakeup window: the notify can land anywhere in the waiter's
/// check / prepare / re-check / commit sequence. The waiter must never sleep
/// through it.
#[test]
fn notify_races_prepare_and_commit() {
    check(3, || {
        let notifier = Arc::new(Notifier::new(1));
        let permits = Arc::new(AtomicUsize::new(0));
        let waiter = spawn_with!(notifier, permits => take_permit(&notifier, 0, &permits));
        post_permit(&notifier, &permits);
        let wakeups = waiter.join().unwrap();
        // One notify, so at most one wakeup.
        assert!(wakeups <= 1, "one notify produced {wakeups} wakeups");
    });
}

/// Two waiters, two notify_one: both wake, whatever the interleaving.
#[test]
fn two_waiters_two_notify_one() {
    check(2, || {
        let notifier = Arc::new(Notifier::new(2));
        let permits = Arc::new(AtomicUsize::new(0));
        let waiters = spawn_permit_takers(&notifier, &permits, 0..2);
        post_permit(&notifier, &permits);
        post_permit(&notifier, &permits);
        join_all(waiters);
        assert_eq!(notifier.num_sleeping(), 0);
    });
}

/// notify_all reaches pre-waiters and committed waiters alike.
#[test]
fn notify_all_reaches_pre_waiters_and_committed() {
    check(2, || {
        let notifier = Arc::new(Notifier::new(2));
        let go = Arc::new(AtomicBool::new(false));
        let waiters: Vec<_> = (0..2)
            .map(|wid| spawn_with!(notifier, go => wait_for(&notifier, wid, &go)))
            .collect();
        go.store(true, Ordering::Release);
        let released = notifier.notify_all();
        assert!(released <= 2, "notify_all released {released} of 2 waiters");
        join_all(waiters);
    });
}

/// A waiter that cancels must not consume the signal another waiter needs
/// (Eigen's 2019 regression b). The canceller always finds its condition
/// true on the re-check; the sleeper needs the one notification.
#[test]
fn cancel_racing_notify_keeps_signal_for_other_waiter() {
    check(3, || {
        let notifier = Arc::new(Notifier::new(2));
        let permits = Arc::new(AtomicUsize::new(0));
        let canceller = spawn_with!(notifier => {
            let wait = notifier.prepare_wait(1);
            // "Found other work": cancel regardless of the permit.
            notifier.cancel_wait(wait);
        });
        let sleeper = spawn_with!(notifier, permits => take_permit(&notifier, 0, &permits));
        post_permit(&notifier, &permits);
        canceller.join().unwrap();
        sleeper.join().unwrap();
    });
}

/// notify_n(k) never releases more than k waiters, and every wakeup is
/// accounted for by a release. Bound 3: both waiters must be stopped between
/// their re-check and their commit while main notifies, which takes three
/// preemptions.
#[test]
fn notify_n_releases_at_most_n() {
    check(3, || {
        let notifier = Arc::new(Notifier::new(2));
        let permits = Arc::new(AtomicUsize::new(0));
        let waiters = spawn_permit_takers(&notifier, &permits, 0..2);
        let mut released = 0;
        for _ in 0..2 {
            permits.fetch_add(1, Ordering::Release);
            let r = notifier.notify_n(1);
            assert!(r <= 1, "notify_n(1) released {r}");
            released += r;
        }
        let wakeups: usize = join_all(waiters).into_iter().sum();
        assert!(
            wakeups <= released,
            "{wakeups} wakeups but only {released} releases"
        );
    });
}

/// ABA on the waiter stack. Main owns slots A (0), B (1) and C (2) and
/// prepares B then A, so the stack is A → B. Notifier N1 loads the state,
/// reads A's link (B) and stalls. N2's notify_all takes both; main cancels
/// them, then prepares C and A again: the stack is A → C, with the same
/// waiting count as N1 saw. Only A's epoch tells N1's snapshot from the new
/// state: if N1's CAS succeeded it would install the stale link to B (a slot
/// no longer stacked) and lose C. Epochs start two pushes below the wrap.
/// N1 runs `notify_one` here and `notify_n(1)` in the model below: each has
/// its own state load, and this race is what needs their Acquire.
#[test]
fn aba_stale_pop_after_repush() {
    stale_pop_after_repush(|notifier| {
        notifier.notify_one();
    });
}

/// [`aba_stale_pop_after_repush`] with N1 calling `notify_n(1)`.
#[test]
fn aba_stale_pop_after_repush_notify_n() {
    stale_pop_after_repush(|notifier| {
        notifier.notify_n(1);
    });
}

fn stale_pop_after_repush(stalled_notify: fn(&Notifier)) {
    check(2, move || {
        let notifier = Arc::new(Notifier::with_epoch_near_wrap(3));
        let stalled = spawn_with!(notifier => {
            stalled_notify(&notifier);
        });
        let takes_all = spawn_with!(notifier => {
            notifier.notify_all();
        });
        let b = notifier.prepare_wait(1);
        let a = notifier.prepare_wait(0);
        notifier.cancel_wait(a);
        notifier.cancel_wait(b);
        let c = notifier.prepare_wait(2);
        let a = notifier.prepare_wait(0);
        // Block (not spin) so the stalled notifier can finish its CAS while
        // A and C are stacked.
        stalled.join().unwrap();
        takes_all.join().unwrap();
        notifier.cancel_wait(a);
        notifier.cancel_wait(c);
    });
}

/// Cancelled slots left below the top of the stack: a notify must skip them
/// (they are not waiting) and keep popping until it reaches a real waiter,
/// and their owner's next prepare revives them in place (or pushes afresh if
/// a notifier popped them meanwhile). One thread owns slots 1 and 2: it
/// prepares both, cancels 1 (below 2: left on the stack as cancelled), then
/// 2 (on top: pops itself), then prepares and cancels 1 again.
#[test]
fn cancelled_slots_are_skipped_and_revived() {
    check(2, || {
        let notifier = Arc::new(Notifier::new(3));
        let permits = Arc::new(AtomicUsize::new(0));
        let sleeper = spawn_with!(notifier, permits => take_permit(&notifier, 0, &permits));
        let canceller = spawn_with!(notifier => {
            let below = notifier.prepare_wait(1);
            let above = notifier.prepare_wait(2);
            notifier.cancel_wait(below);
            notifier.cancel_wait(above);
            let again = notifier.prepare_wait(1);
            notifier.cancel_wait(again);
        });
        post_permit(&notifier, &permits);
        canceller.join().unwrap();
        sleeper.join().unwrap();
    });
}

/// A timed wait racing a notify (under loom every timed wait times out at
/// once, so the timeout path meets the notify in every interleaving). The
/// timed waiter must either report the notification it received, or leave
/// without having taken it, in which case the notify moves on to the other
/// waiter. A waiter that was notified but leaves without acting passes the
/// notification on: that is the caller's side of the contract.
#[test]
fn timed_wait_never_swallows_a_notification() {
    check(2, || {
        let notifier = Arc::new(Notifier::new(2));
        let flag = Arc::new(AtomicBool::new(false));
        let timed = spawn_with!(notifier, flag => {
            let wait = notifier.prepare_wait(0);
            if flag.load(Ordering::Acquire) {
                notifier.cancel_wait(wait);
                return;
            }
            let deadline = std::time::Instant::now();
            if notifier.commit_wait_until(wait, deadline) == crate::outcome::WaitOutcome::Notified {
                notifier.notify_one();
            }
        });
        let plain = spawn_with!(notifier, flag => wait_for(&notifier, 1, &flag));
        let setter = spawn_with!(notifier, flag => {
            flag.store(true, Ordering::Release);
            notifier.notify_one();
        });
        join_all([setter, timed, plain]);
    });
}

/// A targeted wake reaches its waiter wherever it sits in the stack, and a
/// later notify skips the targeted slot (never counting it as a delivery)
/// to reach the other waiter.
#[test]
fn targeted_wake_reaches_only_its_waiter() {
    check(2, || {
        let notifier = Arc::new(Notifier::new(2));
        let mine = Arc::new(AtomicBool::new(false));
        let other = Arc::new(AtomicBool::new(false));
        let waiters: Vec<_> = [(0, mine.clone()), (1, other.clone())]
            .into_iter()
            .map(|(wid, flag)| spawn_with!(notifier => wait_for(&notifier, wid, &flag)))
            .collect();
        let waker = spawn_with!(notifier, mine, other => {
            mine.store(true, Ordering::Release);
            notifier.notify_waiter(0);
            other.store(true, Ordering::Release);
            notifier.notify_one();
        });
        waker.join().unwrap();
        join_all(waiters);
    });
}

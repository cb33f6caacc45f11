//! Loom models of the Notifier protocol.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test`. Every model is bounded in
//! code (2-4 threads, preemption bound set below) so the suite runs as
//! written, with no environment variables.
//!
//! A lost wakeup shows up as loom's "deadlock" panic: every thread blocked
//! on a futex (a loom Condvar) with nobody left to wake it. How each model
//! was checked to fail with the protocol broken is in docs/notifier.md
//! ("Checking the checker") and scripts/planted-bugs.sh.

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

use super::Notifier;

/// Explore every interleaving with at most `preemptions` forced switches.
fn check(preemptions: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemptions);
    builder.check(model);
}

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
        let wait = notifier.prepare_wait(wid);
        if permits.load(Ordering::Acquire) > 0 {
            notifier.cancel_wait(wait);
        } else {
            notifier.commit_wait(wait);
            wakeups += 1;
        }
    }
}

/// Make a permit available, then notify: the notifier side of the pattern.
fn post_permit(notifier: &Notifier, permits: &AtomicUsize) {
    permits.fetch_add(1, Ordering::Release);
    notifier.notify_one();
}

/// The lost-wakeup window: the notify can land anywhere in the waiter's
/// check / prepare / re-check / commit sequence. The waiter must never sleep
/// through it.
#[test]
fn notify_races_prepare_and_commit() {
    check(3, || {
        let notifier = Arc::new(Notifier::new(1));
        let permits = Arc::new(AtomicUsize::new(0));
        let waiter = {
            let (notifier, permits) = (notifier.clone(), permits.clone());
            thread::spawn(move || take_permit(&notifier, 0, &permits))
        };
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
        let waiters: Vec<_> = (0..2)
            .map(|wid| {
                let (notifier, permits) = (notifier.clone(), permits.clone());
                thread::spawn(move || take_permit(&notifier, wid, &permits))
            })
            .collect();
        post_permit(&notifier, &permits);
        post_permit(&notifier, &permits);
        for waiter in waiters {
            waiter.join().unwrap();
        }
        assert_eq!(notifier.num_waiters(), 0);
    });
}

/// notify_all reaches pre-waiters and committed waiters alike.
#[test]
fn notify_all_reaches_pre_waiters_and_committed() {
    check(2, || {
        let notifier = Arc::new(Notifier::new(2));
        let go = Arc::new(AtomicBool::new(false));
        let waiters: Vec<_> = (0..2)
            .map(|wid| {
                let (notifier, go) = (notifier.clone(), go.clone());
                thread::spawn(move || loop {
                    if go.load(Ordering::Acquire) {
                        return;
                    }
                    let wait = notifier.prepare_wait(wid);
                    if go.load(Ordering::Acquire) {
                        notifier.cancel_wait(wait);
                    } else {
                        notifier.commit_wait(wait);
                    }
                })
            })
            .collect();
        go.store(true, Ordering::Release);
        let released = notifier.notify_all();
        assert!(released <= 2, "notify_all released {released} of 2 waiters");
        for waiter in waiters {
            waiter.join().unwrap();
        }
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
        let canceller = {
            let notifier = notifier.clone();
            thread::spawn(move || {
                let wait = notifier.prepare_wait(1);
                // "Found other work": cancel regardless of the permit.
                notifier.cancel_wait(wait);
            })
        };
        let sleeper = {
            let (notifier, permits) = (notifier.clone(), permits.clone());
            thread::spawn(move || take_permit(&notifier, 0, &permits))
        };
        post_permit(&notifier, &permits);
        canceller.join().unwrap();
        sleeper.join().unwrap();
    });
}

/// notify_n(k) never releases more than k waiters, and every wakeup is
/// accounted for by a release.
#[test]
fn notify_n_releases_at_most_n() {
    check(2, || {
        let notifier = Arc::new(Notifier::new(2));
        let permits = Arc::new(AtomicUsize::new(0));
        let waiters: Vec<_> = (0..2)
            .map(|wid| {
                let (notifier, permits) = (notifier.clone(), permits.clone());
                thread::spawn(move || take_permit(&notifier, wid, &permits))
            })
            .collect();
        let mut released = 0;
        for _ in 0..2 {
            permits.fetch_add(1, Ordering::Release);
            let r = notifier.notify_n(1);
            assert!(r <= 1, "notify_n(1) released {r}");
            released += r;
        }
        let wakeups: usize = waiters.into_iter().map(|w| w.join().unwrap()).sum();
        assert!(
            wakeups <= released,
            "{wakeups} wakeups but only {released} releases"
        );
    });
}

/// ABA on the waiter stack: notifier A reads top = slot 0 and its link
/// (slot 1), then stalls; notifier B pops both; slot 0 is pushed again onto
/// the empty stack. A's CAS must fail (the epoch changed) rather than
/// install the stale link to slot 1. Starts the epochs at the wrap.
#[test]
fn aba_repush_while_another_notifies() {
    check(2, || {
        let notifier = Arc::new(Notifier::with_epoch_near_wrap(2));
        let permits = Arc::new(AtomicUsize::new(0));
        let twice = {
            let (notifier, permits) = (notifier.clone(), permits.clone());
            thread::spawn(move || {
                take_permit(&notifier, 0, &permits);
                take_permit(&notifier, 0, &permits);
            })
        };
        let once = {
            let (notifier, permits) = (notifier.clone(), permits.clone());
            thread::spawn(move || {
                take_permit(&notifier, 1, &permits);
            })
        };
        let other_notifier = {
            let (notifier, permits) = (notifier.clone(), permits.clone());
            thread::spawn(move || {
                permits.fetch_add(2, Ordering::Release);
                notifier.notify_n(2);
            })
        };
        post_permit(&notifier, &permits);
        other_notifier.join().unwrap();
        once.join().unwrap();
        twice.join().unwrap();
    });
}

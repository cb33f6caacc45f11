//! Unit tests that need the crate-private side of `Notifier`: runs across
//! the wrap of the 48-bit push epoch (`Notifier::with_epoch_near_wrap`), and
//! checks of the raw state and slot words.
//!
//! Watchdogs only detect hangs: a test fails if its body stops reporting
//! progress for `WATCHDOG`. No test asserts on a duration.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::Arc;
use std::thread;

use super::slot::{IDLE, PREPARED, SIGNALED};
use super::*;
use crate::test_support::{sleep_until, take_permit, with_progress_watchdog};

/// The epoch every slot of `with_epoch_near_wrap` starts at.
fn start_epoch() -> u64 {
    Notifier::with_epoch_near_wrap(1).slots[0]
        .epoch
        .load(Ordering::Relaxed)
}

/// How many pushes slot `wid` has made since `with_epoch_near_wrap`
/// (modulo 2^48).
fn pushes(notifier: &Notifier, wid: usize) -> u64 {
    let now = notifier.slots[wid].epoch.load(Ordering::Relaxed);
    now.wrapping_sub(start_epoch()) / ONE_EPOCH
}

/// After all waiters have finished: nobody is committed, every slot still on
/// the stack is a cancelled wait, and a notify (which skips and clears those)
/// releases nobody and leaves the state word exactly empty, every slot idle.
fn assert_quiescent(notifier: &Notifier) {
    assert_eq!(notifier.num_sleeping(), 0, "{notifier:?}");
    let (stacked, link) = notifier.walk_stack();
    for wid in stacked {
        let slot = &notifier.slots[wid];
        assert_eq!(
            slot.state(),
            CANCELLED,
            "slot {wid} still stacked: {slot:?}"
        );
    }
    assert_eq!(
        state::stack_word_top(link),
        None,
        "stack longer than the slots"
    );
    for (wid, slot) in notifier.slots.iter().enumerate() {
        let st = slot.state();
        assert!(
            st == IDLE || st == CANCELLED,
            "slot {wid} has a wait in progress: {slot:?}"
        );
    }
    assert!(!notifier.notify_one(), "nobody may be waiting");
    assert_idle(notifier);
}

/// The state word is exactly the empty stack and every slot is idle.
fn assert_idle(notifier: &Notifier) {
    let state = State(notifier.state.load(Ordering::Relaxed));
    assert_eq!(state, State::EMPTY, "notifier not idle: {notifier:?}");
    assert_eq!(notifier.num_sleeping(), 0);
    for (wid, slot) in notifier.slots.iter().enumerate() {
        assert_eq!(slot.state(), IDLE, "slot {wid} not idle: {slot:?}");
    }
}

/// Pushes a slot needs before its epoch has wrapped to 0.
const PUSHES_TO_WRAP: u64 = 2;

#[test]
fn near_wrap_starts_just_below_the_wrap() {
    let start = start_epoch();
    assert_eq!(start & !state::EPOCH_MASK, 0, "epoch must sit in its field");
    // The first two pushes use the last two epochs; the third pushes at 0.
    assert_ne!(start.wrapping_add(ONE_EPOCH), 0);
    assert_eq!(start.wrapping_add(PUSHES_TO_WRAP * ONE_EPOCH), 0);
    let n = Notifier::with_epoch_near_wrap(4);
    assert_idle(&n);
    for wid in 0..4 {
        assert_eq!(pushes(&n, wid), 0);
    }
}

/// Two threads ping-pong on one slot for many rounds: A sleeps on slot 0,
/// B waits until A is asleep (committed), publishes the next round and
/// notifies. Every wait of A is a fresh push of slot 0, so its epoch crosses
/// the wrap in the first rounds; every wake must still get through.
#[test]
fn ping_pong_across_epoch_wrap() {
    const ROUNDS: u64 = 10_000;
    with_progress_watchdog("ping_pong_across_epoch_wrap", |hb| {
        let n = Arc::new(Notifier::with_epoch_near_wrap(1));
        let posted = Arc::new(AtomicU64::new(0));
        let acked = Arc::new(AtomicU64::new(0));
        let a = {
            let (n, posted, acked) = (n.clone(), posted.clone(), acked.clone());
            thread::spawn(move || {
                for round in 1..=ROUNDS {
                    sleep_until(&n, 0, || posted.load(Ordering::Acquire) >= round);
                    acked.store(round, Ordering::Release);
                }
            })
        };
        for round in 1..=ROUNDS {
            // A is parked before every notify: each round is one push of
            // slot 0 and one pop.
            while n.num_sleeping() != 1 {
                thread::yield_now();
            }
            posted.store(round, Ordering::Release);
            assert!(n.notify_one(), "round {round}: A was waiting");
            while acked.load(Ordering::Acquire) < round {
                thread::yield_now();
            }
            hb.beat();
        }
        a.join().unwrap();
        // At least one prepare (a push: A never cancels) per round.
        assert!(
            pushes(&n, 0) >= ROUNDS,
            "slot 0 made only {} pushes in {ROUNDS} rounds",
            pushes(&n, 0)
        );
        assert_quiescent(&n);
    });
}

/// Symmetric ping-pong on two slots: each thread sleeps until it is its
/// turn, takes it, and notifies the other. Both slots' epochs wrap, with
/// both on and off the stack around the wrap.
#[test]
fn turn_taking_across_epoch_wrap() {
    const TURNS: u64 = 10_000;
    with_progress_watchdog("turn_taking_across_epoch_wrap", |hb| {
        let n = Arc::new(Notifier::with_epoch_near_wrap(2));
        let turn = Arc::new(AtomicU64::new(0));
        let players: Vec<_> = (0..2u64)
            .map(|me| {
                let (n, turn, hb) = (n.clone(), turn.clone(), hb.clone());
                thread::spawn(move || {
                    let wid = me as usize;
                    let mine = |t: u64| t % 2 == me || t >= TURNS;
                    loop {
                        let t = turn.load(Ordering::Acquire);
                        if t >= TURNS {
                            return;
                        }
                        // Taking a turn goes on to a wait, not back to
                        // the turn word: a player that only looked again
                        // could find every turn of its taken already by a
                        // peer spinning on the other CPU, and never push.
                        if t % 2 == me {
                            turn.store(t + 1, Ordering::Release);
                            hb.beat();
                            n.notify_one();
                        }
                        let wait = n.prepare_wait(wid);
                        if mine(turn.load(Ordering::Acquire)) {
                            n.cancel_wait(wait);
                        } else {
                            n.commit_wait(wait);
                        }
                    }
                })
            })
            .collect();
        for player in players {
            player.join().unwrap();
        }
        assert_eq!(turn.load(Ordering::Relaxed), TURNS);
        for wid in 0..2 {
            assert!(
                pushes(&n, wid) > PUSHES_TO_WRAP,
                "slot {wid} made only {} pushes",
                pushes(&n, wid)
            );
        }
        assert_quiescent(&n);
    });
}

/// Eight waiters, each with a quota of items, on a notifier whose epochs
/// start at the wrap; two producers post items one at a time with a
/// `notify_one` each, only while somebody is committed, so the items travel
/// by wakes (pushes and pops), thousands of them. Every waiter must finish
/// its quota, every slot's epoch must have crossed the wrap, and the state
/// must end exactly idle.
#[test]
fn waiters_and_producers_across_epoch_wrap() {
    const WAITERS: usize = 8;
    const PRODUCERS: usize = 2;
    const QUOTA: usize = 400;
    with_progress_watchdog("waiters_and_producers_across_epoch_wrap", |hb| {
        let n = Arc::new(Notifier::with_epoch_near_wrap(WAITERS));
        let items = Arc::new(AtomicUsize::new(0));
        let total = WAITERS * QUOTA;
        let per_producer = total / PRODUCERS;

        let waiters: Vec<_> = (0..WAITERS)
            .map(|wid| {
                let (n, items, hb) = (n.clone(), items.clone(), hb.clone());
                thread::spawn(move || {
                    let mut got = 0;
                    let mut commits = 0usize;
                    while got < QUOTA {
                        commits += take_permit(&n, wid, &items);
                        got += 1;
                        hb.beat();
                    }
                    (got, commits)
                })
            })
            .collect();

        let stop_producing = Arc::new(AtomicBool::new(false));
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|_| {
                let (n, items, stop) = (n.clone(), items.clone(), stop_producing.clone());
                thread::spawn(move || {
                    for _ in 0..per_producer {
                        // Post only to a sleeper (or one about to sleep), so
                        // the item has to travel by a wake.
                        while n.num_sleeping() == 0 && !stop.load(Ordering::Acquire) {
                            thread::yield_now();
                        }
                        items.fetch_add(1, Ordering::AcqRel);
                        n.notify_one();
                    }
                })
            })
            .collect();

        for producer in producers {
            producer.join().unwrap();
        }
        stop_producing.store(true, Ordering::Release);
        let mut total_commits = 0;
        for (wid, waiter) in waiters.into_iter().enumerate() {
            let (got, commits) = waiter.join().unwrap();
            assert_eq!(got, QUOTA, "waiter {wid} did not finish its quota");
            total_commits += commits;
        }
        assert_eq!(items.load(Ordering::Relaxed), 0);
        assert!(total_commits > 0);
        for wid in 0..WAITERS {
            assert!(
                pushes(&n, wid) > PUSHES_TO_WRAP,
                "slot {wid} made only {} pushes: the wrap was not crossed",
                pushes(&n, wid)
            );
        }
        assert_quiescent(&n);
        assert_eq!(n.notify_all(), 0);
    });
}

/// Single-threaded, exact: the stack and slot words through every
/// prepare / notify / cancel / commit pattern, ending empty each time.
#[test]
fn single_thread_patterns_leave_the_stack_empty() {
    let n = Notifier::with_epoch_near_wrap(3);
    let top = |n: &Notifier| State(n.state.load(Ordering::Relaxed)).top();
    let slot_state = |n: &Notifier, wid: usize| n.slots[wid].state();

    // Prepared then cancelled from the top: the waiter pops itself.
    n.cancel_wait(n.prepare_wait(0));
    assert_idle(&n);
    assert_eq!(pushes(&n, 0), 1);

    // Prepared, notified, cancelled: nobody to forward to.
    let w = n.prepare_wait(0);
    assert!(n.notify_one());
    assert_eq!(slot_state(&n, 0), SIGNALED);
    assert_eq!(top(&n), None);
    n.cancel_wait(w);
    assert_idle(&n);

    // A cancel below the top leaves the slot stacked, marked cancelled; a
    // notify reaches the waiter on top, and a later one skips the cancelled
    // slot.
    let (a, b) = (n.prepare_wait(0), n.prepare_wait(1));
    assert_eq!(top(&n), Some(1));
    n.cancel_wait(a);
    assert_eq!(slot_state(&n, 0), CANCELLED);
    assert!(n.notify_one(), "b is waiting");
    n.commit_wait(b);
    assert_eq!(top(&n), Some(0), "the cancelled wait is still stacked");
    assert!(!n.notify_one(), "a cancelled wait is skipped, not notified");
    assert_idle(&n);

    // A cancelled slot prepared again is revived in place (no new push) and
    // notified like any waiter.
    let (a, b) = (n.prepare_wait(0), n.prepare_wait(1));
    n.cancel_wait(a);
    n.cancel_wait(b); // from the top: pops itself
    assert_eq!(top(&n), Some(0));
    let pushes_before = pushes(&n, 0);
    let a = n.prepare_wait(0);
    assert_eq!(slot_state(&n, 0), PREPARED);
    assert_eq!(pushes(&n, 0), pushes_before, "a revive does not push");
    assert!(n.notify_one());
    n.commit_wait(a); // notified: returns at once
    assert_idle(&n);

    // A notified waiter that cancels forwards the notification down the stack.
    let (a, b) = (n.prepare_wait(0), n.prepare_wait(1));
    assert!(n.notify_one()); // reaches b, on top
    assert_eq!(slot_state(&n, 1), SIGNALED);
    n.cancel_wait(b); // forwards to a
    assert_eq!(slot_state(&n, 0), SIGNALED);
    assert!(!n.notify_one(), "a already holds the notification");
    n.commit_wait(a);
    assert_idle(&n);

    // notify_all reaches every stacked waiter and skips cancelled ones.
    let (a, b, c) = (n.prepare_wait(0), n.prepare_wait(1), n.prepare_wait(2));
    n.cancel_wait(b);
    assert_eq!(n.notify_all(), 2);
    n.commit_wait(a);
    n.commit_wait(c);
    assert_idle(&n);

    // Across the wrap, a slot keeps working the same way.
    for _ in 0..=PUSHES_TO_WRAP {
        let w = n.prepare_wait(2);
        assert!(n.notify_one());
        n.commit_wait(w);
    }
    assert_idle(&n);
    // Every slot crossed the epoch wrap along the way.
    for wid in 0..3 {
        assert!(
            pushes(&n, wid) > PUSHES_TO_WRAP,
            "slot {wid}: {}",
            pushes(&n, wid)
        );
    }
}

/// A slot parked in its caller's park decodes as such, counts as asleep,
/// and a notify that pops it calls the hook once.
#[test]
fn an_externally_parked_slot_decodes_and_is_unparked() {
    let unparks = Arc::new(AtomicUsize::new(0));
    let n = Notifier::with_unpark(1, {
        let unparks = unparks.clone();
        Arc::new(move |_| {
            unparks.fetch_add(1, Ordering::Relaxed);
        })
    });
    assert!(format!("{n:?}").contains("unpark_hook: true"), "{n:?}");
    let wait = n.prepare_wait(0);
    let outcome = n.commit_wait_parked(wait, None, |_| {
        assert_eq!(
            format!("{:?}", *n.slots[0]),
            "Slot { state: \"parked externally\", .. }"
        );
        assert_eq!(n.num_sleeping(), 1);
        assert!(n.notify_one());
    });
    assert_eq!(outcome, WaitOutcome::Notified);
    assert_eq!(unparks.load(Ordering::Relaxed), 1);
    assert_idle(&n);
}

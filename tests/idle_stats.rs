#![cfg(not(loom))]
//! The idle counters of `SleepStats` (empty wakes, time searching, time
//! parked), on both protocols through the trait. No test asserts how long
//! anything took: only that a counter moved, or did not.

mod common;
use common::with_watchdog;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use eventcount::{CoreLatch, IdlePolicy, JecSleep, NotifierSleep, SleepProtocol, WaitOutcome};

/// Two search rounds, then sleepy.
const TWO_ROUNDS: IdlePolicy = IdlePolicy::rayon().yield_rounds(2);

/// A worker searches, sleeps until its deadline, and times out: its search
/// and its sleep both count, and nothing counts as an empty wake.
fn a_timed_out_sleep_counts_searching_and_parked<S: SleepProtocol>() {
    let sleep = S::try_with_policy(1, TWO_ROUNDS).unwrap();
    let latch = CoreLatch::idle_loop();
    let before = sleep.stats();
    let mut idle = sleep.start_looking(0);
    // A loaded machine may pass the deadline during the search rounds, and
    // a round past its deadline times out without sleeping: then try again
    // with a new deadline, until a sleep has timed out.
    while sleep.stats().parked == before.parked {
        let deadline = Instant::now() + Duration::from_millis(2);
        let mut outcome = WaitOutcome::Notified;
        while outcome == WaitOutcome::Notified {
            outcome = sleep.no_work_found_until(&mut idle, &latch, || false, deadline);
        }
    }
    sleep.work_found(idle);
    let during = sleep.stats() - before;
    assert!(during.searching > Duration::ZERO, "{during:?}");
    assert!(during.parked > Duration::ZERO, "{during:?}");
    assert_eq!(during.empty_wakes, 0, "{during:?}");
}

#[test]
fn jec_sleep_counts_searching_and_parked() {
    a_timed_out_sleep_counts_searching_and_parked::<JecSleep>();
}

#[test]
fn notifier_sleep_counts_searching_and_parked() {
    a_timed_out_sleep_counts_searching_and_parked::<NotifierSleep>();
}

/// A sleeping worker woken for nothing (`wake_all` with no work) counts an
/// empty wake when its next search finds nothing. The main thread wakes it
/// until the count moves (the watchdog turns a count that never moves into
/// a failure), then stops it.
fn a_wake_for_nothing_counts<S: SleepProtocol + 'static>(name: &'static str) {
    with_watchdog(name, || {
        let sleep = Arc::new(S::try_with_policy(1, IdlePolicy::rayon().yield_rounds(0)).unwrap());
        let stop = Arc::new(CoreLatch::idle_loop());
        let worker = {
            let (sleep, stop) = (sleep.clone(), stop.clone());
            thread::spawn(move || {
                let mut idle = sleep.start_looking(0);
                while !stop.probe() {
                    sleep.no_work_found(&mut idle, &stop, || false);
                }
                sleep.work_found(idle);
            })
        };
        while sleep.stats().empty_wakes == 0 {
            sleep.wake_all();
            thread::yield_now();
        }
        sleep.set_latch(&stop, 0);
        worker.join().unwrap();
        let stats = sleep.stats();
        assert!(stats.parked > Duration::ZERO, "{stats:?}");
    });
}

#[test]
fn jec_sleep_counts_an_empty_wake() {
    a_wake_for_nothing_counts::<JecSleep>("jec_sleep_counts_an_empty_wake");
}

#[test]
fn notifier_sleep_counts_an_empty_wake() {
    a_wake_for_nothing_counts::<NotifierSleep>("notifier_sleep_counts_an_empty_wake");
}

#[test]
fn a_search_that_finds_work_at_once_counts_nothing() {
    let sleep = JecSleep::new(1);
    let before = sleep.stats();
    let idle = sleep.start_looking(0);
    sleep.work_found(idle);
    assert_eq!(sleep.stats() - before, Default::default());
}

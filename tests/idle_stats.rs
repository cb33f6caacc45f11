#![cfg(not(loom))]
//! The idle counters of `SleepStats` (empty wakes, time searching on the
//! wall and CPU clocks, how searches ended, time parked), on both protocols
//! through the trait, for the pool and per worker. No test asserts how long
//! anything took: only that a counter moved, or did not.

mod common;
use common::with_watchdog;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use eventcount::{CoreLatch, IdlePolicy, JecSleep, NotifierSleep, SleepProtocol, WaitOutcome};

/// Two search rounds, then sleepy.
const TWO_ROUNDS: IdlePolicy = IdlePolicy::rounds(2);

/// A worker searches, sleeps until its deadline, and times out: its search
/// and its sleep both count, and nothing counts as an empty wake. On a
/// loaded machine two yields can outlast the deadline, and the round after
/// it returns before any sleep: then the deadline doubles and the worker
/// tries again.
fn a_timed_out_sleep_counts_searching_and_parked<S: SleepProtocol>() {
    let sleep = S::try_new(1, TWO_ROUNDS, None).unwrap();
    let latch = CoreLatch::idle_loop();
    let mut timeout = Duration::from_millis(2);
    loop {
        let before = sleep.stats();
        let mut idle = sleep.start_looking(0);
        let deadline = Instant::now() + timeout;
        let mut outcome = WaitOutcome::Notified;
        while outcome == WaitOutcome::Notified {
            outcome = sleep.no_work_found_until(&mut idle, &latch, || false, deadline);
        }
        sleep.work_found(idle);
        let during = sleep.stats() - before;
        assert!(during.searching > Duration::ZERO, "{during:?}");
        assert_eq!(during.empty_wakes, 0, "{during:?}");
        if during.waits > 0 {
            assert!(during.parked > Duration::ZERO, "{during:?}");
            return;
        }
        timeout *= 2;
    }
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
        let sleep = Arc::new(S::try_new(1, IdlePolicy::rounds(0), None).unwrap());
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
    let zero = before - before; // zeros, with the CPU clock's presence kept
    assert_eq!(sleep.stats() - before, zero);
}

/// Under a policy of no search rounds (tokio's), a sleep attempt counts
/// no search at all: the worker never searched.
fn a_policy_of_no_rounds_counts_no_search<S: SleepProtocol>() {
    let sleep = S::try_new(1, IdlePolicy::tokio(), None).unwrap();
    let latch = CoreLatch::idle_loop();
    let mut idle = sleep.start_looking(0);
    // A round that starts past its deadline (this thread preempted for
    // over 1 ms) times out without a sleep attempt: try again until one
    // was made.
    while sleep.worker_stats(0).waits == 0 {
        let deadline = Instant::now() + Duration::from_millis(1);
        while sleep.no_work_found_until(&mut idle, &latch, || false, deadline)
            == WaitOutcome::Notified
        {}
    }
    sleep.work_found(idle);
    let stats = sleep.stats();
    assert_eq!(stats.searches_gave_up, 0, "{stats}");
    assert_eq!(stats.searches_found_work, 0, "{stats}");
    assert_eq!(stats.searching, Duration::ZERO, "{stats}");
    assert_eq!(
        stats.searching_cpu.unwrap_or_default(),
        Duration::ZERO,
        "{stats}"
    );
}

#[test]
fn jec_sleep_counts_no_search_for_a_policy_of_no_rounds() {
    a_policy_of_no_rounds_counts_no_search::<JecSleep>();
}

#[test]
fn notifier_sleep_counts_no_search_for_a_policy_of_no_rounds() {
    a_policy_of_no_rounds_counts_no_search::<NotifierSleep>();
}

/// The CPU time of searching is read where the platform has a per-thread
/// CPU clock (Linux and Android), and is `None` elsewhere, and always for a
/// bare `Notifier`.
#[test]
fn searching_cpu_is_known_where_the_platform_has_a_thread_clock() {
    let has_clock = cfg!(any(target_os = "linux", target_os = "android"));
    assert_eq!(JecSleep::new(1).stats().searching_cpu.is_some(), has_clock);
    assert_eq!(
        NotifierSleep::new(1).stats().searching_cpu.is_some(),
        has_clock
    );
    assert_eq!(eventcount::Notifier::new(1).stats().searching_cpu, None);
}

/// A search that finds work after empty rounds counts as found; one that
/// spends its budget and sleeps counts as given up. Both count per worker
/// too, and the workers' counts add up to the pool's.
fn searches_count_how_they_ended<S: SleepProtocol>() {
    let sleep = S::try_new(2, TWO_ROUNDS, None).unwrap();
    let latch = CoreLatch::idle_loop();

    let mut idle = sleep.start_looking(1);
    sleep.no_work_found(&mut idle, &latch, || false); // one empty round
    sleep.work_found(idle);
    let found = sleep.worker_stats(1);
    assert_eq!(
        (found.searches_found_work, found.searches_gave_up),
        (1, 0),
        "{found}"
    );

    // A loaded machine may pass the deadline during the search rounds, and
    // a round past its deadline times out without sleeping: then go on
    // with a new deadline, until the worker has slept.
    let mut idle = sleep.start_looking(0);
    while sleep.worker_stats(0).waits == 0 {
        let deadline = Instant::now() + Duration::from_millis(1);
        while sleep.no_work_found_until(&mut idle, &latch, || false, deadline)
            == WaitOutcome::Notified
        {}
    }
    sleep.work_found(idle);
    let gave_up = sleep.worker_stats(0);
    assert!(gave_up.searches_gave_up >= 1, "{gave_up}");
    assert!(gave_up.waits >= 1, "{gave_up}");

    let total = sleep.stats();
    assert_eq!(total.waits, found.waits + gave_up.waits);
    assert_eq!(
        total.searches_found_work,
        found.searches_found_work + gave_up.searches_found_work
    );
    assert_eq!(
        total.searches_gave_up,
        found.searches_gave_up + gave_up.searches_gave_up
    );
}

#[test]
fn jec_sleep_counts_how_searches_ended() {
    searches_count_how_they_ended::<JecSleep>();
}

#[test]
fn notifier_sleep_counts_how_searches_ended() {
    searches_count_how_they_ended::<NotifierSleep>();
}

/// `parked` counts the sleeps in progress: a worker asleep the whole time
/// between two snapshots shows in their difference, before it wakes.
fn parked_counts_a_sleep_in_progress<S: SleepProtocol + 'static>(name: &'static str) {
    with_watchdog(name, || {
        let sleep = Arc::new(S::try_new(1, IdlePolicy::rounds(0), None).unwrap());
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
        common::wait_until(|| sleep.num_sleeping() == 1);
        let first = sleep.stats();
        // Until the clock moves on: the snapshot must grow with it.
        let mut during = sleep.stats() - first;
        while during.parked == Duration::ZERO {
            thread::sleep(Duration::from_millis(1));
            during = sleep.stats() - first;
        }
        assert_eq!(
            during.waits, 0,
            "the worker slept once, before the first snapshot"
        );
        assert!(sleep.worker_stats(0).parked >= during.parked);
        sleep.set_latch(&stop, 0);
        worker.join().unwrap();
    });
}

#[test]
fn jec_sleep_parked_counts_a_sleep_in_progress() {
    parked_counts_a_sleep_in_progress::<JecSleep>("jec_sleep_parked_counts_a_sleep_in_progress");
}

#[test]
fn notifier_sleep_parked_counts_a_sleep_in_progress() {
    parked_counts_a_sleep_in_progress::<NotifierSleep>(
        "notifier_sleep_parked_counts_a_sleep_in_progress",
    );
}

#[test]
fn stats_read_as_one_line() {
    let sleep = JecSleep::new(1);
    let line = sleep.stats().to_string();
    assert!(
        line.starts_with("0 sleeps, 0 wakes (0 empty); searching 0ns wall, "),
        "{line}"
    );
    assert!(
        line.ends_with("in 0 searches (0 found work, 0 gave up); parked 0ns"),
        "{line}"
    );
}

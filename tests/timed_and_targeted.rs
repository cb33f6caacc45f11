//! Timed waits and targeted wakes outside loom, on real threads and real
//! clocks. Deadlines are generous and only bound how long a test waits;
//! nothing asserts how long anything took.

#![cfg(not(loom))]

mod common;
use common::{join_all, sleep_until, spawn_each, wait_until, with_watchdog, WATCHDOG};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use eventcount::{
    CoreLatch, IdlePolicy, JecSleep, Notifier, NotifierSleep, SleepProtocol, WaitOutcome,
};

#[test]
fn a_timed_wait_with_nobody_notifying_times_out_and_leaves() {
    let n = Notifier::new(2);
    let wait = n.prepare_wait(0);
    let outcome = n.commit_wait_until(wait, Instant::now() + Duration::from_millis(5));
    assert_eq!(outcome, WaitOutcome::TimedOut);
    // It left the waiter set: nobody to notify, nobody parked.
    assert_eq!(n.num_sleeping(), 0);
    assert!(!n.notify_one(), "a notify found the timed-out waiter");
    // And the slot is free again at once.
    let again = n.prepare_wait(0);
    n.cancel_wait(again);
}

#[test]
fn a_deadline_in_the_past_times_out_without_sleeping() {
    let n = Notifier::new(1);
    let wait = n.prepare_wait(0);
    let past = Instant::now() - Duration::from_millis(1);
    assert_eq!(n.commit_wait_until(wait, past), WaitOutcome::TimedOut);
    assert_eq!(n.stats().waits, 0, "slept although the deadline had passed");
}

#[test]
fn a_notify_before_the_deadline_is_reported() {
    with_watchdog("a_notify_before_the_deadline_is_reported", || {
        let n = Arc::new(Notifier::new(1));
        let flag = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (n, flag) = (n.clone(), flag.clone());
            thread::spawn(move || loop {
                if flag.load(Ordering::Acquire) {
                    return;
                }
                let wait = n.prepare_wait(0);
                if flag.load(Ordering::Acquire) {
                    n.cancel_wait(wait);
                    return;
                }
                // Far deadline: only the notify can end this wait.
                let outcome = n.commit_wait_until(wait, Instant::now() + Duration::from_secs(20));
                assert_eq!(outcome, WaitOutcome::Notified);
            })
        };
        wait_until(|| n.num_sleeping() != 0 || waiter.is_finished());
        flag.store(true, Ordering::Release);
        n.notify_one();
        waiter.join().unwrap();
    });
}

/// Conservation under contention: every notify_one that reports a release
/// shows up as exactly one `Notified` among timed waiters that time out all
/// the time. A timeout never swallows a delivered notification, and never
/// invents one.
#[test]
fn timed_waiters_and_notifiers_conserve_notifications() {
    with_watchdog("timed_waiters_and_notifiers_conserve_notifications", || {
        const WAITERS: usize = 12;
        const NOTIFIERS: usize = 4;
        const NOTIFIES: u64 = 2_000;
        let n = Arc::new(Notifier::new(WAITERS));
        let stop = Arc::new(AtomicBool::new(false));
        let notified = Arc::new(AtomicU64::new(0));
        let timed_out = Arc::new(AtomicU64::new(0));
        let waiters = spawn_each(WAITERS, {
            let (n, stop, notified, timed_out) =
                (n.clone(), stop.clone(), notified.clone(), timed_out.clone());
            move |wid| {
                let mut i = 0u64;
                while !stop.load(Ordering::Acquire) {
                    let wait = n.prepare_wait(wid);
                    // Short, varied timeouts so timeouts race notifies.
                    let timeout = Duration::from_micros(20 + (i * 37 + wid as u64 * 11) % 400);
                    match n.commit_wait_until(wait, Instant::now() + timeout) {
                        WaitOutcome::Notified => notified.fetch_add(1, Ordering::Relaxed),
                        WaitOutcome::TimedOut => timed_out.fetch_add(1, Ordering::Relaxed),
                    };
                    i += 1;
                }
            }
        });
        let released = Arc::new(AtomicU64::new(0));
        let notifiers = spawn_each(NOTIFIERS, {
            let (n, released) = (n.clone(), released.clone());
            move |_| {
                for i in 0..NOTIFIES {
                    if n.notify_one() {
                        released.fetch_add(1, Ordering::Relaxed);
                    }
                    if i % 16 == 0 {
                        thread::sleep(Duration::from_micros(50));
                    }
                }
            }
        });
        join_all(notifiers);
        stop.store(true, Ordering::Release);
        // Release any waiter still in a long-ish wait, counting those too.
        loop {
            let r = n.notify_all();
            released.fetch_add(r as u64, Ordering::Relaxed);
            if waiters.iter().all(|w| w.is_finished()) {
                break;
            }
            thread::sleep(Duration::from_millis(1));
        }
        join_all(waiters);
        assert_eq!(
            notified.load(Ordering::Relaxed),
            released.load(Ordering::Relaxed),
            "notifications delivered and received differ ({} timeouts)",
            timed_out.load(Ordering::Relaxed)
        );
        assert!(
            timed_out.load(Ordering::Relaxed) > 0,
            "no timeout happened: the race went untested"
        );
    });
}

#[test]
fn notify_waiter_wakes_exactly_that_waiter() {
    with_watchdog("notify_waiter_wakes_exactly_that_waiter", || {
        const WAITERS: usize = 6;
        let n = Arc::new(Notifier::new(WAITERS));
        let go: Arc<Vec<AtomicBool>> =
            Arc::new((0..WAITERS).map(|_| AtomicBool::new(false)).collect());
        let waiters = spawn_each(WAITERS, {
            let (n, go) = (n.clone(), go.clone());
            move |wid| sleep_until(&n, wid, || go[wid].load(Ordering::Acquire))
        });
        // Wake them one by one, from the middle of the stack outwards.
        for (woken, wid) in [3, 1, 5, 0, 4, 2].into_iter().enumerate() {
            wait_until(|| n.num_sleeping() >= WAITERS - woken);
            go[wid].store(true, Ordering::Release);
            assert!(n.notify_waiter(wid), "slot {wid} was not waiting");
            // The woken waiter finishes (the watchdog bounds it).
            wait_until(|| waiters[wid].is_finished());
            // Everyone else is still asleep.
            thread::sleep(Duration::from_millis(5));
            assert_eq!(
                n.num_sleeping(),
                WAITERS - woken - 1,
                "a targeted wake woke someone else"
            );
        }
        join_all(waiters);
        assert!(!n.notify_one(), "a waiter was left on the stack");
    });
}

#[test]
#[should_panic(expected = "waiter id 9 is out of range for a Notifier with 2 slots")]
fn notify_waiter_out_of_range_panics() {
    Notifier::new(2).notify_waiter(9);
}

#[test]
fn a_jec_sleep_with_a_deadline_times_out_and_uncounts_itself() {
    with_watchdog(
        "a_jec_sleep_with_a_deadline_times_out_and_uncounts_itself",
        || {
            let sleep = JecSleep::try_new(1, IdlePolicy::rounds(0), None).unwrap();
            let latch = CoreLatch::new();
            let deadline = Instant::now() + Duration::from_millis(5);
            let mut idle = sleep.start_looking(0);
            let mut outcome = WaitOutcome::Notified;
            while outcome == WaitOutcome::Notified {
                outcome = sleep.no_work_found_until(&mut idle, &latch, || false, deadline);
            }
            assert_eq!(sleep.counters().sleeping(), 0);
            sleep.work_found(idle);
            assert_eq!(sleep.counters().inactive(), 0);
        },
    );
}

/// Timeouts racing posters on a JecSleep pool: the sleeping count stays
/// exact (its debug assertions would fire) and ends at zero.
#[test]
fn jec_timed_sleepers_and_posters_keep_counts_exact() {
    with_watchdog("jec_timed_sleepers_and_posters_keep_counts_exact", || {
        const WORKERS: usize = 12;
        let sleep = Arc::new(JecSleep::try_new(WORKERS, IdlePolicy::rounds(1), None).unwrap());
        let jobs = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let start = Arc::new(Barrier::new(WORKERS + 1));
        let workers = spawn_each(WORKERS, {
            let (sleep, jobs, stop, start) =
                (sleep.clone(), jobs.clone(), stop.clone(), start.clone());
            move |me| {
                start.wait();
                let latch = CoreLatch::new();
                while !stop.load(Ordering::Acquire) {
                    let mut idle = sleep.start_looking(me);
                    loop {
                        if jobs
                            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |j| j.checked_sub(1))
                            .is_ok()
                            || stop.load(Ordering::Acquire)
                        {
                            break;
                        }
                        let deadline = Instant::now() + Duration::from_micros(200);
                        let _ = sleep.no_work_found_until(
                            &mut idle,
                            &latch,
                            || jobs.load(Ordering::Acquire) > 0 || stop.load(Ordering::Acquire),
                            deadline,
                        );
                    }
                    sleep.work_found(idle);
                }
            }
        });
        start.wait();
        for i in 0..3_000u64 {
            let was_empty = jobs.fetch_add(1, Ordering::Release) == 0;
            sleep.new_injected_jobs(1, was_empty);
            if i % 8 == 0 {
                thread::sleep(Duration::from_micros(100));
            }
        }
        wait_until(|| jobs.load(Ordering::Acquire) == 0);
        stop.store(true, Ordering::Release);
        sleep.wake_all();
        join_all(workers);
        let c = sleep.counters();
        assert_eq!((c.sleeping(), c.inactive()), (0, 0), "{c:?}");
    });
}

// ---------------------------------------------------------------------------
// A round that starts after its deadline
// ---------------------------------------------------------------------------

/// What a test can say about how many workers a protocol counts as idle
/// and awake: `JecSleep`'s inactive minus sleeping, `NotifierSleep`'s
/// awake idle count.
trait AwakeIdle: SleepProtocol {
    fn awake_and_idle(&self) -> usize;
}

impl AwakeIdle for JecSleep {
    fn awake_and_idle(&self) -> usize {
        self.counters().awake_but_idle()
    }
}

impl AwakeIdle for NotifierSleep {
    fn awake_and_idle(&self) -> usize {
        self.awake_idle()
    }
}

/// Rounds of `no_work_found_until` with a deadline that has passed, at
/// every step of an idle period (searching, sleepy or announced): each
/// returns `TimedOut` at once, without a search round, a final check or a
/// sleep, and the worker stays counted idle and awake. Rayon's policy of 32
/// yield rounds is the one where a round that ignored its deadline would
/// show most: it would yield through the search.
///
/// `sleep_attempts` is how many of the four rounds before the deadline
/// reach a sleep attempt under `policy`. (None for `NotifierSleep`: the
/// rounds past the deadline withdraw its announcement, so each round before
/// the deadline announces it again.)
fn rounds_after_the_deadline_time_out_at_once<S: AwakeIdle>(
    policy: IdlePolicy,
    sleep_attempts: u32,
) {
    let sleep = S::try_new(1, policy, None).unwrap();
    let latch = CoreLatch::idle_loop();
    let past = Instant::now();
    let far = Instant::now() + WATCHDOG;
    let checks = std::cell::Cell::new(0);
    let check = || {
        checks.set(checks.get() + 1);
        true
    };
    let mut idle = sleep.start_looking(0);
    for step in 0..4 {
        let checked = checks.get();
        for _ in 0..3 {
            let outcome = sleep.no_work_found_until(&mut idle, &latch, check, past);
            assert_eq!(outcome, WaitOutcome::TimedOut, "step {step}");
            assert_eq!(checks.get(), checked, "step {step}: the final check ran");
            assert_eq!(sleep.awake_and_idle(), 1, "step {step}");
            assert_eq!(sleep.num_sleeping(), 0, "step {step}");
        }
        // One round before the deadline moves the idle period on.
        let outcome = sleep.no_work_found_until(&mut idle, &latch, check, far);
        assert_eq!(outcome, WaitOutcome::Notified, "step {step}");
    }
    assert_eq!(
        checks.get(),
        sleep_attempts,
        "the final checks of the sleep attempts"
    );
    assert_eq!(sleep.stats().waits, 0, "slept although nothing let it");
    sleep.work_found(idle);
    assert_eq!(sleep.awake_and_idle(), 0);
}

#[test]
fn jec_sleep_rounds_after_the_deadline_time_out_at_once() {
    rounds_after_the_deadline_time_out_at_once::<JecSleep>(IdlePolicy::rounds(1), 1);
    rounds_after_the_deadline_time_out_at_once::<JecSleep>(IdlePolicy::rayon(), 0);
}

#[test]
fn notifier_sleep_rounds_after_the_deadline_time_out_at_once() {
    rounds_after_the_deadline_time_out_at_once::<NotifierSleep>(IdlePolicy::rounds(1), 0);
    rounds_after_the_deadline_time_out_at_once::<NotifierSleep>(IdlePolicy::rayon(), 0);
}

/// Two `NotifierSleep` workers announced; a post wakes the one on top of
/// the waiter stack, whose next round starts after its deadline. That round
/// withdraws it, and it keeps the notification: it counts as woken, awake
/// and idle, so the other worker is not woken for the same post, and a
/// second post wakes nobody, since the woken worker covers it.
#[test]
fn notifier_sleep_round_after_the_deadline_keeps_its_notification() {
    with_watchdog(
        "notifier_sleep_round_after_the_deadline_keeps_its_notification",
        || {
            let sleep = NotifierSleep::try_new(2, IdlePolicy::rounds(0), None).unwrap();
            let (latch0, latch1) = (CoreLatch::idle_loop(), CoreLatch::idle_loop());
            let far = Instant::now() + 2 * WATCHDOG;
            let mut idle0 = sleep.start_looking(0);
            let mut idle1 = sleep.start_looking(1);
            // The announcements: worker 1 ends up on top of the stack.
            let _ = sleep.no_work_found_until(&mut idle0, &latch0, || false, far);
            let _ = sleep.no_work_found_until(&mut idle1, &latch1, || false, far);
            assert_eq!(sleep.awake_idle(), 0);
            sleep.new_injected_jobs(1, true);
            let outcome = sleep.no_work_found_until(&mut idle1, &latch1, || false, Instant::now());
            assert_eq!(outcome, WaitOutcome::TimedOut);
            assert_eq!(
                sleep.awake_idle(),
                1,
                "the withdrawn worker counts as awake"
            );
            // Worker 1 covers a second post: nobody is woken for it.
            sleep.new_injected_jobs(1, true);
            // Worker 0 holds no notification: its sleep attempt times out
            // (a notification passed on, or a second wake, would end it at
            // once).
            let soon = Instant::now() + Duration::from_millis(5);
            let outcome = sleep.no_work_found_until(&mut idle0, &latch0, || false, soon);
            assert_eq!(outcome, WaitOutcome::TimedOut);
            sleep.work_found(idle0);
            sleep.work_found(idle1);
            assert_eq!(sleep.awake_idle(), 0);
            // Nobody was left on the waiter stack: both announce again.
            for worker in 0..2 {
                let latch = CoreLatch::idle_loop();
                let mut idle = sleep.start_looking(worker);
                let _ = sleep.no_work_found_until(&mut idle, &latch, || false, far);
                sleep.work_found(idle);
            }
        },
    );
}

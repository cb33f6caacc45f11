//! Unit tests of the JEC rollover, which the public API cannot reach in any
//! reasonable time: the counter starts next to `u32::MAX` through the
//! crate-private constructor, and `add_jec_wrapping` stands in for 2^32 - 1
//! posts by other threads. Also what only the crate sees: the decoded
//! state of an externally parked worker, and which sleeper a wake takes.
//!
//! Each test that could block on a regression runs under `with_watchdog`,
//! which turns a hang into a failure naming the test; none asserts on a
//! duration.

use super::{JecIdle, JecSleep, MAX_WORKERS};
use crate::idle::IdlePolicy;
use crate::latch::CoreLatch;
use crate::protocol::SleepProtocol;
use crate::test_support::{
    assert_counts, end_search, registered_round, rounds_until_slept, sleepy_round, sleepy_worker,
    with_watchdog, FinalCheck,
};

/// One worker, sleepy at the first empty round, JEC starting at `jec | 1`.
fn eager_at(jec: u32) -> JecSleep {
    JecSleep::with_initial_jec(1, IdlePolicy::rounds(0), jec, None).expect("one worker fits")
}

/// What only a unit test can see after a sleepy round: the worker
/// remembers the JEC value it made sleepy.
fn assert_remembers_sleepy_jec(sleep: &JecSleep, idle: &JecIdle<'_>, what: &str) {
    assert_eq!(idle.0.announced, Some(sleep.counters().jec()), "{what}");
}

#[test]
fn initial_jec_is_forced_odd() {
    assert_eq!(eager_at(u32::MAX).counters().jec(), u32::MAX);
    assert_eq!(eager_at(u32::MAX - 1).counters().jec(), u32::MAX);
    assert_eq!(eager_at(0).counters().jec(), 1);
    assert!(eager_at(6).counters().jec_is_active());
}

#[test]
fn with_initial_jec_checks_the_capacity() {
    let err = JecSleep::with_initial_jec(MAX_WORKERS + 1, IdlePolicy::default(), u32::MAX, None)
        .unwrap_err();
    assert_eq!(err.requested(), MAX_WORKERS + 1);
}

/// Sleepy / post / failed sleep, over and over, across the wrap of the JEC:
/// u32::MAX (active) -> 0 (sleepy) -> 1 (posted) -> 2 (sleepy) -> ...
#[test]
fn sleepy_post_cycles_across_the_jec_wrap() {
    let sleep = eager_at(u32::MAX);
    let latch = CoreLatch::new();
    let mut idle = sleep.start_looking(0);
    let mut expected = u32::MAX;
    assert_eq!(sleep.counters().jec(), expected);

    for cycle in 0..6 {
        let what = format!("cycle {cycle}");
        // Sleepy round: odd -> even.
        sleepy_round(&sleep, &mut idle, &latch, &what);
        assert_remembers_sleepy_jec(&sleep, &idle, &what);
        expected = expected.wrapping_add(1);
        let sleepy = assert_counts(&sleep, (0, 1), &what);
        assert_eq!(sleepy.jec(), expected, "{what}: {sleepy:?}");

        // A post: even -> odd.
        if cycle % 2 == 0 {
            sleep.new_internal_jobs(1, true);
        } else {
            sleep.new_injected_jobs(1, true);
        }
        expected = expected.wrapping_add(1);
        let posted = assert_counts(&sleep, (0, 1), &what);
        assert_eq!(posted.jec(), expected, "{what}: {posted:?}");
        assert!(posted.jec_is_active(), "{what}: {posted:?}");

        // The sleep attempt sees the JEC moved and returns before the final
        // check (which would report work, so a regression cannot block).
        let check = FinalCheck::new();
        sleep.no_work_found(&mut idle, &latch, check.unreached());
        assert_eq!(
            check.calls(),
            0,
            "{what}: registered as a sleeper although the JEC moved"
        );
        let after = sleep.counters();
        assert_eq!(after, posted, "{what}: a failed sleep changed the counters");
        assert_eq!(sleep.num_sleeping(), 0, "{what}");
        assert_eq!(
            idle.rounds(),
            0,
            "{what}: partly woken = sleepy round again"
        );
        assert_eq!(idle.0.announced, None, "{what}");
        assert_eq!(
            format!("{latch:?}"),
            "CoreLatch { state: \"unset\", waits_for: \"a job\" }",
            "{what}"
        );
    }
    assert_eq!(expected, 11, "the cycles must have crossed the wrap");

    let end = end_search(&sleep, idle, "after the cycles");
    assert_eq!(end.jec(), expected);
}

/// A post, then 2^32 - 1 more JEC increments: the JEC is back at the value
/// the worker remembered when it got sleepy, so its sleeping CAS succeeds
/// although work was posted. The final check must catch it.
fn rollover_caught_by_final_check(name: &'static str, start: u32) {
    with_watchdog(name, move || {
        let sleep = eager_at(start);
        let latch = CoreLatch::new();
        let mut idle = sleepy_worker(&sleep, &latch, name);
        assert_remembers_sleepy_jec(&sleep, &idle, name);
        let sleepy = sleep.counters();

        sleep.new_injected_jobs(1, true);
        assert_eq!(
            sleep.counters().jec(),
            sleepy.jec().wrapping_add(1),
            "{name}"
        );
        sleep.add_jec_wrapping(u32::MAX);
        assert_eq!(
            sleep.counters(),
            sleepy,
            "{name}: the rollover must restore the sleepy word"
        );

        // The sleeping CAS must succeed after the rollover: the worker
        // registers.
        registered_round(&sleep, &mut idle, &latch, name, || {
            assert_eq!(sleep.counters().jec(), sleepy.jec(), "{name}");
            assert_eq!(sleep.num_sleeping(), 1, "{name}");
            true // the injected job is still there
        });
        assert_counts(&sleep, (0, 1), name);
        assert_eq!(sleep.num_sleeping(), 0, "{name}");
        assert!(!latch.probe(), "{name}");
        assert_eq!(
            format!("{latch:?}"),
            "CoreLatch { state: \"unset\", waits_for: \"a job\" }",
            "{name}"
        );
        assert_eq!(idle.rounds(), 0, "{name}: fully woken");

        end_search(&sleep, idle, name);
    });
}

#[test]
fn rollover_across_the_wrap_is_caught_by_the_final_check() {
    // Sleepy at 0 (just wrapped), post to 1, +u32::MAX back to 0.
    rollover_caught_by_final_check("rollover_at_wrap", u32::MAX);
}

#[test]
fn rollover_away_from_the_wrap_is_caught_by_the_final_check() {
    // Sleepy at 2, post to 3, +u32::MAX back to 2 (wrapping through MAX).
    rollover_caught_by_final_check("rollover_from_low", 1);
}

/// After the rollover the worker registered; a post arriving in the final
/// check's window must still claim and wake it.
#[test]
fn rollover_then_post_while_registered_wakes_the_sleeper() {
    with_watchdog("rollover_then_post", || {
        let sleep = eager_at(u32::MAX);
        let latch = CoreLatch::new();
        let what = "rollover_then_post";
        let mut idle = sleepy_worker(&sleep, &latch, what);
        assert_remembers_sleepy_jec(&sleep, &idle, what);
        sleep.new_internal_jobs(1, true);
        sleep.add_jec_wrapping(u32::MAX);
        registered_round(&sleep, &mut idle, &latch, what, || {
            sleep.new_injected_jobs(1, true);
            assert_eq!(
                sleep.counters().sleeping(),
                0,
                "the post must claim the sleeper"
            );
            false
        });
        assert_counts(&sleep, (0, 1), what);
        sleep.work_found(idle);
        assert_counts(&sleep, (0, 0), what);
    });
}

/// A worker asleep in its caller's park decodes as such, counts as
/// asleep, and a wake claims it and calls the hook once.
#[test]
fn an_externally_parked_worker_decodes_and_is_unparked() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let unparks = Arc::new(AtomicUsize::new(0));
    let hook = {
        let unparks = unparks.clone();
        Arc::new(move |_| {
            unparks.fetch_add(1, Ordering::Relaxed);
        })
    };
    let sleep = JecSleep::try_new(1, IdlePolicy::rounds(0), Some(hook)).unwrap();
    assert!(format!("{sleep:?}").contains("unpark_hook: true"));
    let latch = CoreLatch::idle_loop();
    let mut idle = sleep.start_looking(0);
    let round = rounds_until_slept(&sleep, &mut idle, &latch, None, |_| {
        assert_eq!(
            format!("{:?}", sleep.workers[0].sleep),
            "WorkerSleep(\"sleeping externally\")"
        );
        assert_eq!(sleep.num_sleeping(), 1);
        sleep.wake_all();
    });
    assert_eq!(round, crate::round::Round::Woken);
    assert_eq!(unparks.load(Ordering::Relaxed), 1);
    assert_eq!(sleep.counters().sleeping(), 0);
    sleep.work_found(idle);
}

/// A wake takes the newest sleeper first: three workers fall asleep one
/// after another (0, then 2, then 1); a post wakes 1, whose end of search
/// hands off to 2, whose own hands off to 0.
#[test]
fn wakes_go_to_the_newest_sleeper_first() {
    use crate::round::Round;
    use std::sync::Mutex;
    use std::time::Duration;

    with_watchdog("wakes_go_to_the_newest_sleeper_first", || {
        // No search rounds and a searcher cap: the hand-off wakes one
        // sleeper when the last awake idle worker finds work.
        let sleep = JecSleep::try_new(3, IdlePolicy::tokio(), None).unwrap();
        let woken = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for worker in [0, 2, 1] {
                let (sleep, woken) = (&sleep, &woken);
                s.spawn(move || {
                    let latch = CoreLatch::idle_loop();
                    let mut idle = sleep.start_looking(worker);
                    // Until a wake ends a round: it is asleep before the
                    // post, so no round of it is withdrawn or notified.
                    while !matches!(
                        sleep.no_work_found(&mut idle, &latch, || false),
                        Round::Woken | Round::Notified
                    ) {}
                    woken.lock().unwrap().push(worker);
                    sleep.work_found(idle);
                });
                // Asleep and stamped: its sleep in progress counts as parked.
                while sleep.worker_stats(worker).parked == Duration::ZERO {
                    std::thread::yield_now();
                }
            }
            sleep.new_injected_jobs(1, true);
        });
        assert_eq!(*woken.lock().unwrap(), [1, 2, 0]);
    });
}

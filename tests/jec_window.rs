#![cfg(not(loom))]

//! Deterministic, single-threaded tests of the windows of `JecSleep`'s
//! sleep protocol, through its public API only.
//!
//! Every test uses a policy that gets sleepy at the first empty round
//! (`IdlePolicy::rounds(0)`), so round 0 announces sleepiness and round 1 tries to
//! sleep. Work is posted from inside the protocol's windows, either between
//! two `no_work_found` calls or from the `has_work` closure, which
//! runs while the worker is registered as a sleeper. A test that could block
//! forever on a regression runs under `with_watchdog`, which turns a hang
//! into a failure naming the test; no test asserts on a duration.

mod common;
use common::{
    assert_counts, end_search, registered_round, registered_round_until, sleepy_round,
    sleepy_worker, with_watchdog, FinalCheck, WATCHDOG,
};
use std::time::{Duration, Instant};

use eventcount::{
    CoreLatch, IdlePolicy, JecCounters, JecIdle, JecSleep, SleepProtocol, WaitOutcome,
};

const UNSET: &str = "CoreLatch { state: \"unset\", waits_for: \"a job\" }";

/// Sleepy at the first empty round, tries to sleep at the second.
fn eager(workers: usize) -> JecSleep {
    JecSleep::try_new(workers, IdlePolicy::rounds(0), None).unwrap()
}

/// A round that must return before the worker registers as a sleeper: the
/// final check must not run (it would report work, so a regression returns
/// instead of blocking, and shows here).
fn round_stopped_before_registering(
    sleep: &JecSleep,
    idle: &mut JecIdle<'_>,
    latch: &CoreLatch,
    what: &str,
) {
    let check = FinalCheck::new();
    sleep.no_work_found(idle, latch, check.unreached());
    assert_eq!(
        check.calls(),
        0,
        "{what}: the worker registered as a sleeper"
    );
}

/// The timed form of [`round_stopped_before_registering`], with a deadline
/// still to come: it must report `Notified`, as it never slept.
fn timed_round_stopped_before_registering(
    sleep: &JecSleep,
    idle: &mut JecIdle<'_>,
    latch: &CoreLatch,
    deadline: Instant,
    what: &str,
) {
    let check = FinalCheck::new();
    let outcome = sleep.no_work_found_until(idle, latch, check.unreached(), deadline);
    assert_eq!(outcome, WaitOutcome::Notified, "{what}");
    assert_eq!(
        check.calls(),
        0,
        "{what}: the worker registered as a sleeper"
    );
}

/// A round after the sleepy one whose final check finds work: the check
/// runs once and the worker cancels its sleep. Returns the counters after
/// it.
fn final_check_finds_work(
    sleep: &JecSleep,
    idle: &mut JecIdle<'_>,
    latch: &CoreLatch,
) -> JecCounters {
    let check = FinalCheck::new();
    sleep.no_work_found(idle, latch, check.run(|| true));
    assert_eq!(check.calls(), 1, "the final check must run once");
    sleep.counters()
}

/// The latch's state as its `Debug` output names it.
fn latch_state(latch: &CoreLatch) -> String {
    format!("{latch:?}")
}

/// How work is posted from inside a window.
#[derive(Clone, Copy, Debug)]
enum Post {
    Internal,
    Injected,
}

impl Post {
    fn post(self, sleep: &JecSleep, n: usize, queue_was_empty: bool) {
        match self {
            Post::Internal => sleep.new_internal_jobs(n, queue_was_empty),
            Post::Injected => sleep.new_injected_jobs(n, queue_was_empty),
        }
    }
}

// ---------------------------------------------------------------------------
// Window 1: a post between the sleepy announcement and the sleeping CAS.
// ---------------------------------------------------------------------------

fn posted_between_sleepy_and_sleeping_cas(post: Post) {
    let what = format!("{post:?}");
    let sleep = eager(1);
    let latch = CoreLatch::new();
    let mut idle = sleep.start_looking(0);
    let start = sleep.counters();
    assert!(
        start.jec_is_active(),
        "{what}: a new JecSleep starts active: {start:?}"
    );

    // Round 0: the sleepy round.
    sleepy_round(&sleep, &mut idle, &latch, &what);
    let sleepy = assert_counts(&sleep, (0, 1), &what);
    assert_eq!(sleepy.jec(), start.jec().wrapping_add(1), "{what}");

    // The post: the JEC becomes odd again. Nobody sleeps, so nobody is woken.
    post.post(&sleep, 1, true);
    let posted = assert_counts(&sleep, (0, 1), &what);
    assert!(
        posted.jec_is_active(),
        "{what}: a post must make the JEC odd: {posted:?}"
    );
    assert_eq!(posted.jec(), sleepy.jec().wrapping_add(1), "{what}");

    // Round 1 tries to sleep. The JEC moved, so the sleeping CAS must not
    // happen: the call returns before the final check. (Had the worker
    // registered, the final check would report work and the call would
    // still return, with the regression seen in `calls`.)
    round_stopped_before_registering(
        &sleep,
        &mut idle,
        &latch,
        &format!("{what}: the JEC changed"),
    );
    let after = assert_counts(&sleep, (0, 1), &what);
    assert_eq!(
        after.jec(),
        posted.jec(),
        "{what}: a failed sleep attempt moved the JEC"
    );
    assert_eq!(sleep.num_sleeping(), 0, "{what}");
    assert_eq!(
        latch_state(&latch),
        UNSET,
        "{what}: the latch must be back to unset"
    );
    assert!(!latch.probe(), "{what}");

    // Partly woken: the next round is the sleepy round again, with no new
    // search.
    sleepy_round(&sleep, &mut idle, &latch, &format!("{what} again"));
    assert_eq!(
        sleep.counters().jec(),
        posted.jec().wrapping_add(1),
        "{what}"
    );

    end_search(&sleep, idle, &what);
}

#[test]
fn internal_job_between_sleepy_and_sleeping_cas_stops_the_sleep() {
    posted_between_sleepy_and_sleeping_cas(Post::Internal);
}

#[test]
fn injected_job_between_sleepy_and_sleeping_cas_stops_the_sleep() {
    posted_between_sleepy_and_sleeping_cas(Post::Injected);
}

#[test]
fn a_post_while_the_jec_is_already_active_does_not_move_it() {
    let sleep = eager(1);
    let before = sleep.counters();
    assert!(before.jec_is_active());
    sleep.new_internal_jobs(1, true);
    sleep.new_injected_jobs(3, false);
    assert_eq!(sleep.counters(), before);
}

#[test]
fn a_second_sleepy_worker_does_not_move_the_jec() {
    let sleep = eager(2);
    let (latch0, latch1) = (CoreLatch::new(), CoreLatch::new());
    let mut idle0 = sleep.start_looking(0);
    let mut idle1 = sleep.start_looking(1);
    sleepy_round(&sleep, &mut idle0, &latch0, "worker 0");
    let sleepy = sleep.counters();
    sleepy_round(&sleep, &mut idle1, &latch1, "worker 1");
    assert_eq!(
        sleep.counters(),
        sleepy,
        "an already sleepy JEC must stay put"
    );
    assert_eq!(sleepy.inactive(), 2);
    sleep.work_found(idle1);
    end_search(&sleep, idle0, "both workers found work");
}

// ---------------------------------------------------------------------------
// Window 2 (Blitz's): a post after the worker is registered as a sleeper
// and before it blocks. The `has_work` closure runs exactly there.
// ---------------------------------------------------------------------------

/// Worker 0 of `sleep` gets sleepy, then tries to sleep; while it is
/// registered, `in_window` runs inside the final check (with the sleep and
/// the latch) and the check reports no injected work. The call must return
/// without blocking, which means `in_window` woke the worker.
fn post_while_registered(
    name: &'static str,
    workers: usize,
    in_window: impl FnOnce(&JecSleep, &CoreLatch) + Send + 'static,
) {
    with_watchdog(name, move || {
        let sleep = eager(workers);
        let latch = CoreLatch::new();
        let mut idle = sleepy_worker(&sleep, &latch, name);

        registered_round(&sleep, &mut idle, &latch, name, || {
            assert_eq!(sleep.num_sleeping(), 1, "{name}");
            in_window(&sleep, &latch);
            let woken = sleep.counters();
            assert_eq!(
                woken.sleeping(),
                0,
                "{name}: the worker was not claimed: {woken:?}"
            );
            assert_eq!(sleep.num_sleeping(), 0, "{name}");
            false
        });

        assert_counts(&sleep, (0, 1), name);
        assert_eq!(sleep.num_sleeping(), 0, "{name}");
        // Fully woken: a new run of idle rounds.
        assert_eq!(idle.rounds(), 0, "{name}");
        end_search(&sleep, idle, name);
        // The latch is back to unset unless the window set it.
        assert!(
            latch.probe() || latch_state(&latch) == UNSET,
            "{name}: latch left as {latch:?}"
        );
    });
}

/// A post to an empty queue while the worker is registered: the JEC turns
/// odd again, and the post wakes the sleeper.
fn post_to_empty_queue_while_registered(name: &'static str, post: Post) {
    post_while_registered(name, 1, move |sleep, _| {
        let before = sleep.counters();
        post.post(sleep, 1, true);
        assert!(sleep.counters().jec_is_active());
        assert_eq!(sleep.counters().jec(), before.jec().wrapping_add(1));
    });
}

#[test]
fn internal_job_while_registered_wakes_the_sleeper() {
    post_to_empty_queue_while_registered("internal_empty", Post::Internal);
}

#[test]
fn injected_job_while_registered_wakes_the_sleeper() {
    post_to_empty_queue_while_registered("injected_empty", Post::Injected);
}

#[test]
fn post_to_non_empty_queue_while_registered_wakes_the_sleeper() {
    post_while_registered("internal_non_empty", 1, |sleep, _| {
        Post::Internal.post(sleep, 1, false);
    });
    post_while_registered("injected_non_empty", 1, |sleep, _| {
        Post::Injected.post(sleep, 1, false);
    });
}

#[test]
fn post_to_empty_queue_with_an_awake_idle_worker_leaves_the_sleeper() {
    // Worker 1 is idle but awake: it will find one job posted to an empty
    // queue, so the poster wakes nobody. A second post to a non-empty queue
    // must then wake the sleeper.
    post_while_registered("awake_idle_covers_one_job", 2, |sleep, _| {
        let idle1 = sleep.start_looking(1);
        assert_eq!(sleep.counters().awake_but_idle(), 1);
        sleep.new_internal_jobs(1, true);
        assert_eq!(
            sleep.counters().sleeping(),
            1,
            "one job, one awake idle worker: nobody needs waking"
        );
        assert_eq!(sleep.num_sleeping(), 1);
        sleep.new_internal_jobs(1, false);
        sleep.work_found(idle1);
    });
}

#[test]
fn two_jobs_with_one_awake_idle_worker_wake_the_sleeper() {
    post_while_registered("awake_idle_covers_one_of_two", 2, |sleep, _| {
        let idle1 = sleep.start_looking(1);
        sleep.new_injected_jobs(2, true);
        assert_eq!(sleep.counters().sleeping(), 0);
        sleep.work_found(idle1);
    });
}

#[test]
fn work_found_by_another_worker_wakes_the_sleeper() {
    post_while_registered("work_found_wakes", 2, |sleep, _| {
        let idle1 = sleep.start_looking(1);
        sleep.work_found(idle1);
    });
}

#[test]
fn latch_set_while_registered_wakes_the_owner() {
    post_while_registered("set_latch", 1, |sleep, latch| {
        sleep.set_latch(latch, 0);
        assert!(latch.probe());
    });
}

#[test]
fn latch_set_and_notify_while_registered_wakes_the_owner() {
    post_while_registered("set_then_notify", 1, |sleep, latch| {
        assert!(
            latch.set(),
            "the owner sleeps on the latch: set must say so"
        );
        assert_eq!(sleep.counters().sleeping(), 1, "set alone must not wake");
        sleep.notify_worker_latch_is_set(0);
    });
}

#[test]
fn wake_all_while_registered_wakes_the_sleeper() {
    post_while_registered("wake_all", 3, |sleep, _| {
        sleep.wake_all();
    });
}

// ---------------------------------------------------------------------------
// Latches and the final check.
// ---------------------------------------------------------------------------

#[test]
fn latch_set_while_sleepy_stops_the_sleep() {
    let sleep = eager(1);
    let latch = CoreLatch::new();
    let mut idle = sleepy_worker(&sleep, &latch, "latch");

    assert!(
        !latch.set(),
        "the owner is sleepy, not sleeping: set must not ask for a wake"
    );
    assert!(latch.probe());

    round_stopped_before_registering(&sleep, &mut idle, &latch, "a set latch");
    assert!(latch.probe(), "the latch must stay set");
    assert_counts(&sleep, (0, 1), "a set latch");
    assert_eq!(sleep.num_sleeping(), 0);

    // Every further round returns at once too.
    for round in 0..3 {
        let what = format!("a set latch, round {round} after");
        round_stopped_before_registering(&sleep, &mut idle, &latch, &what);
    }
    assert!(latch.probe());
    assert_eq!(sleep.counters().sleeping(), 0);
    end_search(&sleep, idle, "latch");
}

#[test]
fn set_latch_while_sleepy_sets_it_and_wakes_nobody() {
    let sleep = eager(1);
    let latch = CoreLatch::new();
    let mut idle = sleepy_worker(&sleep, &latch, "set_latch");
    sleep.set_latch(&latch, 0);
    assert!(latch.probe());
    round_stopped_before_registering(&sleep, &mut idle, &latch, "set_latch");
    assert_counts(&sleep, (0, 1), "set_latch");
    end_search(&sleep, idle, "set_latch");
}

#[test]
fn final_check_finding_injected_work_stops_the_sleep() {
    let sleep = eager(1);
    let latch = CoreLatch::new();
    let mut idle = sleepy_worker(&sleep, &latch, "first");
    let sleepy = sleep.counters();

    registered_round(&sleep, &mut idle, &latch, "the final check", || {
        assert_eq!(sleep.num_sleeping(), 1);
        true
    });
    let after = assert_counts(&sleep, (0, 1), "found work");
    assert_eq!(
        after.jec(),
        sleepy.jec(),
        "the final check must not move the JEC"
    );
    assert_eq!(sleep.num_sleeping(), 0);
    assert_eq!(latch_state(&latch), UNSET);
    assert_eq!(idle.rounds(), 0, "fully woken: a new run of idle rounds");

    // The worker can go round again: sleepy (the JEC is already even, so it
    // stays), then another final check.
    sleepy_round(&sleep, &mut idle, &latch, "second");
    assert_eq!(sleep.counters(), after);
    let again = final_check_finds_work(&sleep, &mut idle, &latch);
    assert_eq!(again.sleeping(), 0, "{again:?}");

    end_search(&sleep, idle, "found work twice");
}

// ---------------------------------------------------------------------------
// The counters return to zero.
// ---------------------------------------------------------------------------

#[test]
fn counters_return_to_zero_after_work_found() {
    let sleep = eager(3);
    let idles: Vec<_> = (0..3).map(|w| sleep.start_looking(w)).collect();
    let c = sleep.counters();
    assert_eq!((c.sleeping(), c.inactive(), c.awake_but_idle()), (0, 3, 3));
    for idle in idles {
        sleep.work_found(idle);
    }
    assert_counts(&sleep, (0, 0), "every worker found work");
}

#[test]
fn counters_return_to_zero_after_a_final_check_that_found_work() {
    let sleep = eager(2);
    let latch = CoreLatch::new();
    {
        let mut idle = sleep.start_looking(1);
        sleepy_round(&sleep, &mut idle, &latch, "final_check_found");
        let found = final_check_finds_work(&sleep, &mut idle, &latch);
        assert_eq!(found.inactive(), 1, "{found:?}");
        sleep.work_found(idle);
    }
    assert_counts(&sleep, (0, 0), "final_check_found");
    // Dropping a JecIdle ends its search too.
    let idle = sleep.start_looking(1);
    assert_eq!(sleep.counters().inactive(), 1);
    drop(idle);
    assert_counts(&sleep, (0, 0), "after the dropped JecIdle");
}

#[test]
fn rayon_policy_gets_sleepy_after_its_yield_rounds() {
    let sleep = JecSleep::try_new(1, IdlePolicy::rayon(), None).unwrap();
    let latch = CoreLatch::idle_loop();
    let rounds = 32;
    let mut idle = sleep.start_looking(0);
    let check = FinalCheck::new();
    for round in 0..rounds {
        assert_eq!(idle.rounds(), round);
        sleep.no_work_found(&mut idle, &latch, check.unreached());
        assert!(
            sleep.counters().jec_is_active(),
            "sleepy too early, round {round}"
        );
    }
    assert_eq!(check.calls(), 0);
    sleepy_round(&sleep, &mut idle, &latch, "after the yield rounds");
    let found = final_check_finds_work(&sleep, &mut idle, &latch);
    assert_eq!(found.sleeping(), 0, "{found:?}");
    end_search(&sleep, idle, "rayon's policy");
}

/// A fresh worker has not measured what a sleep costs, so its budget is
/// zero: it gets sleepy at its first empty round, and an idle pool sleeps
/// at once.
#[test]
fn default_policy_starts_with_no_search() {
    let sleep = JecSleep::new(1);
    let latch = CoreLatch::idle_loop();
    let mut idle = sleep.start_looking(0);
    sleepy_round(&sleep, &mut idle, &latch, "the first empty round");
    let found = final_check_finds_work(&sleep, &mut idle, &latch);
    assert_eq!(found.sleeping(), 0, "{found:?}");
    end_search(&sleep, idle, "the default policy");
}

// ---------------------------------------------------------------------------
// Timed sleeps: the same windows through `no_work_found_until`.
// ---------------------------------------------------------------------------

/// A sleep that reaches its deadline times out, uncounted. The deadline
/// passes inside the final check, after the round started. (A round that
/// starts after its deadline returns `TimedOut` at once, with no final
/// check and the worker still sleepy: if the test thread stalls that long,
/// the loop tries again with a later deadline.)
#[test]
fn timed_sleep_that_reaches_its_deadline_times_out_uncounted() {
    let sleep = eager(1);
    let latch = CoreLatch::new();
    let mut idle = sleep.start_looking(0);
    let far = Instant::now() + WATCHDOG;
    // The sleepy round does not sleep, so it cannot time out.
    timed_round_stopped_before_registering(&sleep, &mut idle, &latch, far, "sleepy round");
    assert!(!sleep.counters().jec_is_active());

    let mut wait = Duration::from_millis(1);
    let outcome = loop {
        let deadline = Instant::now() + wait;
        let check = FinalCheck::new();
        let has_work = check.run(|| {
            assert_eq!(sleep.counters().sleeping(), 1, "not registered");
            while Instant::now() < deadline {
                std::thread::yield_now();
            }
            false
        });
        let outcome = sleep.no_work_found_until(&mut idle, &latch, has_work, deadline);
        check.rethrow();
        if check.calls() == 1 {
            break outcome;
        }
        assert_eq!(outcome, WaitOutcome::TimedOut, "a round past its deadline");
        assert_counts(&sleep, (0, 1), "a round past its deadline");
        wait *= 2;
    };
    assert_eq!(outcome, WaitOutcome::TimedOut);
    assert_counts(&sleep, (0, 1), "timed out");
    assert_eq!(sleep.num_sleeping(), 0);
    assert_eq!(latch_state(&latch), UNSET);
    assert_eq!(idle.rounds(), 0, "back to searching from scratch");
    end_search(&sleep, idle, "timed out");
}

#[test]
fn timed_sleep_after_a_post_returns_notified_without_registering() {
    let sleep = eager(1);
    let latch = CoreLatch::new();
    let mut idle = sleepy_worker(&sleep, &latch, "timed");
    sleep.new_injected_jobs(1, true);
    let far = Instant::now() + WATCHDOG;
    timed_round_stopped_before_registering(&sleep, &mut idle, &latch, far, "the JEC changed");
    assert_eq!(sleep.counters().sleeping(), 0);
    sleep.work_found(idle);
}

#[test]
fn timed_sleep_woken_in_the_registration_window_is_notified() {
    with_watchdog("timed_registered_post", || {
        let sleep = eager(1);
        let latch = CoreLatch::new();
        let mut idle = sleepy_worker(&sleep, &latch, "timed_registered_post");
        // Far enough that only a hang reaches it; the watchdog fires first.
        let far = Instant::now() + 2 * WATCHDOG;
        let outcome = registered_round_until(&sleep, &mut idle, &latch, far, "timed", || {
            sleep.new_internal_jobs(1, true);
            assert_eq!(sleep.counters().sleeping(), 0, "not claimed");
            false
        });
        assert_eq!(outcome, WaitOutcome::Notified);
        assert_counts(&sleep, (0, 1), "woken");
        end_search(&sleep, idle, "woken");
    });
}

#[test]
fn timed_sleep_with_a_set_latch_returns_notified() {
    let sleep = eager(1);
    let latch = CoreLatch::new();
    let mut idle = sleepy_worker(&sleep, &latch, "timed latch");
    sleep.set_latch(&latch, 0);
    let far = Instant::now() + WATCHDOG;
    timed_round_stopped_before_registering(&sleep, &mut idle, &latch, far, "a set latch");
    assert!(latch.probe());
    sleep.work_found(idle);
}

#![cfg(not(loom))]
//! How many sleepers a `NotifierSleep` post wakes: as many as the awake
//! idle workers cannot cover when the queue was empty before the push, and
//! one per job when it was not (rayon's rule, which `JecSleep` follows
//! too). docs/notifier.md, "How many a post wakes".
//!
//! The sleepers are workers 0..3 that announced themselves, so that the
//! test runs on one thread: an announced worker is on the waiter stack,
//! where a post finds it, and its sleep attempt returns at once if a post
//! reached it, or times out soon after if none did.

use std::time::{Duration, Instant};

use eventcount::{CoreLatch, IdlePolicy, NotifierSleep, Round, SleepProtocol, WaitOutcome};

/// Workers 0..3 announce themselves; `awake` of workers 3.. are awake and
/// idle; then `post` runs. Returns how many of the announced workers it
/// woke.
fn released_by(awake: usize, post: impl FnOnce(&NotifierSleep)) -> usize {
    let sleep = NotifierSleep::try_new(3 + awake, IdlePolicy::rounds(0), None).unwrap();
    let latches: Vec<_> = (0..3).map(|_| CoreLatch::idle_loop()).collect();
    let mut announced: Vec<_> = (0..3).map(|w| sleep.start_looking(w)).collect();
    for (idle, latch) in announced.iter_mut().zip(&latches) {
        assert_eq!(sleep.no_work_found(idle, latch, || false), Round::Announced);
    }
    let idle: Vec<_> = (3..3 + awake).map(|w| sleep.start_looking(w)).collect();
    assert_eq!(sleep.awake_idle(), awake);
    post(&sleep);
    // Each attempt gets its own deadline: a round that starts after it
    // withdraws without looking for a notification. A worker the post
    // passed over sleeps until it; 100 ms is far beyond how long a loaded
    // machine preempts this thread between setting it and the round.
    let released = announced
        .iter_mut()
        .zip(&latches)
        .map(|(idle, latch)| {
            let soon = Instant::now() + Duration::from_millis(100);
            sleep.no_work_found_until(idle, latch, || false, soon)
        })
        .filter(|outcome| *outcome == WaitOutcome::Notified)
        .count();
    // Every worker ends its search: the last one hands off, and nobody is
    // left waiting for it.
    for state in idle.into_iter().chain(announced) {
        sleep.work_found(state);
    }
    assert_eq!(sleep.awake_idle(), 0);
    released
}

#[test]
fn after_an_empty_queue_a_post_wakes_only_what_the_awake_idle_workers_cannot_cover() {
    assert_eq!(released_by(0, |s| s.new_injected_jobs(2, true)), 2);
    assert_eq!(released_by(1, |s| s.new_injected_jobs(2, true)), 1);
    assert_eq!(released_by(2, |s| s.new_injected_jobs(2, true)), 0);
    assert_eq!(released_by(3, |s| s.new_internal_jobs(2, true)), 0);
    assert_eq!(released_by(1, |s| s.new_internal_jobs(3, true)), 2);
}

#[test]
fn after_a_queue_that_had_work_a_post_wakes_one_per_job() {
    // Nobody took the earlier work, so the awake idle workers cover none of
    // the new jobs.
    assert_eq!(released_by(2, |s| s.new_injected_jobs(2, false)), 2);
    assert_eq!(released_by(1, |s| s.new_internal_jobs(1, false)), 1);
    assert_eq!(released_by(0, |s| s.new_internal_jobs(5, false)), 3);
}

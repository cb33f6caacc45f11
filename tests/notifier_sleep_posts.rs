#![cfg(not(loom))]
//! How many sleepers a `NotifierSleep` post wakes: as many as the awake
//! idle workers cannot cover when the queue was empty before the push, and
//! one per job when it was not (rayon's rule, which `JecSleep` follows
//! too). docs/notifier.md, "How many a post wakes".
//!
//! The sleepers are waits prepared on the notifier inside, one per worker
//! index, so that the test runs on one thread: a prepared wait is on the
//! waiter stack, where a post finds it, and committing it with a deadline
//! already past says whether a post released it, without blocking.

use std::time::Instant;

use eventcount::{IdlePolicy, NotifierSleep, SleepProtocol, WaitOutcome};

/// Workers 0..3 wait on the notifier; `awake` of workers 3.. are awake and
/// idle; then `post` runs. Returns how many of the waiters it released.
fn released_by(awake: usize, post: impl FnOnce(&NotifierSleep)) -> usize {
    let sleep = NotifierSleep::with_policy(3 + awake, IdlePolicy::rayon().yield_rounds(0));
    let notifier = sleep.notifier();
    let waits: Vec<_> = (0..3).map(|w| notifier.prepare_wait(w)).collect();
    let idle: Vec<_> = (3..3 + awake).map(|w| sleep.start_looking(w)).collect();
    assert_eq!(sleep.awake_idle(), awake);
    post(&sleep);
    let past = Instant::now();
    let released = waits
        .into_iter()
        .map(|wait| notifier.commit_wait_until(wait, past))
        .filter(|outcome| *outcome == WaitOutcome::Notified)
        .count();
    // The awake idle workers end their searches: the last one hands off,
    // and nobody is left waiting for it.
    for state in idle {
        sleep.work_found(state);
    }
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

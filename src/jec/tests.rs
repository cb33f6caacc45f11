//! Unit tests of the JEC rollover, which the public API cannot reach in any
//! reasonable time: the counter starts next to `u32::MAX` through the
//! crate-private constructor, and `add_jec_wrapping` stands in for 2^32 - 1
//! posts by other threads.
//!
//! Each test that could block on a regression runs under `with_watchdog`,
//! which turns a hang into a failure naming the test; none asserts on a
//! duration.

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use super::{JecIdle, JecSleep};
use crate::latch::CoreLatch;
use crate::policy::IdlePolicy;

/// Generous: only a hang gets anywhere near it.
const LIMIT: Duration = Duration::from_secs(30);

/// Run `body` on its own thread; panic naming `name` if it has not finished
/// within `LIMIT`. A panic inside `body` is propagated as is.
fn with_watchdog<F>(name: &str, body: F)
where
    F: FnOnce() + Send + 'static,
{
    let (done_tx, done_rx) = mpsc::channel();
    let handle = thread::Builder::new()
        .name(format!("{name}-body"))
        .spawn(move || {
            body();
            let _ = done_tx.send(());
        })
        .expect("spawn test body");
    match done_rx.recv_timeout(LIMIT) {
        Ok(()) => handle.join().expect("test body panicked after finishing"),
        Err(RecvTimeoutError::Disconnected) => {
            if let Err(payload) = handle.join() {
                panic::resume_unwind(payload);
            }
            unreachable!("{name}: body ended without reporting");
        }
        Err(RecvTimeoutError::Timeout) => {
            panic!("{name}: watchdog fired: not finished after {LIMIT:?} (the worker blocked?)")
        }
    }
}

/// The `has_injected_jobs` closure of `no_work_found` calls, counting its
/// runs. It runs while the worker is registered as a sleeper, and a panic
/// unwinding from there would leave the worker registered (the `JecIdle`'s
/// drop then trips a debug assertion and the test binary aborts); so a
/// failed assertion inside is caught, the closure returns true, and
/// `rethrow` raises it after `no_work_found` returned.
struct FinalCheck {
    calls: Cell<u32>,
    failure: Cell<Option<Box<dyn Any + Send>>>,
}

impl FinalCheck {
    fn new() -> Self {
        FinalCheck {
            calls: Cell::new(0),
            failure: Cell::new(None),
        }
    }

    fn run<'a>(&'a self, check: impl FnOnce() -> bool + 'a) -> impl FnOnce() -> bool + 'a {
        move || {
            self.calls.set(self.calls.get() + 1);
            match panic::catch_unwind(AssertUnwindSafe(check)) {
                Ok(found) => found,
                Err(payload) => {
                    self.failure.set(Some(payload));
                    true
                }
            }
        }
    }

    /// A final check that should not be reached: it reports work, so a
    /// regression returns instead of blocking, and shows in `calls`.
    fn unreached(&self) -> impl FnOnce() -> bool + '_ {
        self.run(|| true)
    }

    fn calls(&self) -> u32 {
        self.calls.get()
    }

    fn rethrow(&self) {
        if let Some(payload) = self.failure.take() {
            panic::resume_unwind(payload);
        }
    }
}

/// One worker, sleepy at the first empty round, JEC starting at `jec | 1`.
fn eager_at(jec: u32) -> JecSleep {
    JecSleep::with_initial_jec(1, IdlePolicy::new().yield_rounds(0), jec).expect("one worker fits")
}

/// One sleepy round: the JEC must end even and the final check not run.
fn sleepy_round(sleep: &JecSleep, idle: &mut JecIdle<'_>, latch: &CoreLatch, what: &str) {
    let check = FinalCheck::new();
    sleep.no_work_found(idle, latch, check.unreached());
    assert_eq!(
        check.calls(),
        0,
        "{what}: the sleepy round ran the final check"
    );
    let c = sleep.counters();
    assert!(!c.jec_is_active(), "{what}: not sleepy: {c:?}");
    assert_eq!(idle.sleepy_jec, Some(c.jec()), "{what}");
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
    let err =
        JecSleep::with_initial_jec(JecSleep::MAX_CAPACITY + 1, IdlePolicy::default(), u32::MAX)
            .unwrap_err();
    assert_eq!(err.requested(), JecSleep::MAX_CAPACITY + 1);
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
        expected = expected.wrapping_add(1);
        let sleepy = sleep.counters();
        assert_eq!(sleepy.jec(), expected, "{what}: {sleepy:?}");
        assert_eq!((sleepy.sleeping(), sleepy.inactive()), (0, 1), "{what}");

        // A post: even -> odd.
        if cycle % 2 == 0 {
            sleep.new_internal_jobs(1, true);
        } else {
            sleep.new_injected_jobs(1, true);
        }
        expected = expected.wrapping_add(1);
        let posted = sleep.counters();
        assert_eq!(posted.jec(), expected, "{what}: {posted:?}");
        assert!(posted.jec_is_active(), "{what}: {posted:?}");
        assert_eq!((posted.sleeping(), posted.inactive()), (0, 1), "{what}");

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
        assert_eq!(idle.sleepy_jec, None, "{what}");
        assert_eq!(format!("{latch:?}"), "CoreLatch(\"unset\")", "{what}");
    }
    assert_eq!(expected, 11, "the cycles must have crossed the wrap");

    sleep.work_found();
    let end = sleep.counters();
    assert_eq!((end.sleeping(), end.inactive()), (0, 0), "{end:?}");
    assert_eq!(end.jec(), expected);
}

/// A post, then 2^32 - 1 more JEC increments: the JEC is back at the value
/// the worker remembered when it got sleepy, so its sleeping CAS succeeds
/// although work was posted. The final check must catch it.
fn rollover_caught_by_final_check(name: &'static str, start: u32) {
    with_watchdog(name, move || {
        let sleep = eager_at(start);
        let latch = CoreLatch::new();
        let mut idle = sleep.start_looking(0);
        sleepy_round(&sleep, &mut idle, &latch, name);
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

        let check = FinalCheck::new();
        sleep.no_work_found(
            &mut idle,
            &latch,
            check.run(|| {
                let registered = sleep.counters();
                assert_eq!(
                    registered.sleeping(),
                    1,
                    "{name}: the CAS should have succeeded after the rollover: {registered:?}"
                );
                assert_eq!(registered.jec(), sleepy.jec(), "{name}");
                assert_eq!(sleep.num_sleeping(), 1, "{name}");
                true // the injected job is still there
            }),
        );
        check.rethrow();
        assert_eq!(check.calls(), 1, "{name}: the final check must run once");
        let after = sleep.counters();
        assert_eq!(after.sleeping(), 0, "{name}: {after:?}");
        assert_eq!(after.inactive(), 1, "{name}: {after:?}");
        assert_eq!(sleep.num_sleeping(), 0, "{name}");
        assert!(!latch.probe(), "{name}");
        assert_eq!(format!("{latch:?}"), "CoreLatch(\"unset\")", "{name}");
        assert_eq!(idle.rounds(), 0, "{name}: fully woken");

        sleep.work_found();
        let end = sleep.counters();
        assert_eq!((end.sleeping(), end.inactive()), (0, 0), "{name}: {end:?}");
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
        let mut idle = sleep.start_looking(0);
        sleepy_round(&sleep, &mut idle, &latch, "rollover_then_post");
        sleep.new_internal_jobs(1, true);
        sleep.add_jec_wrapping(u32::MAX);
        let check = FinalCheck::new();
        sleep.no_work_found(
            &mut idle,
            &latch,
            check.run(|| {
                assert_eq!(sleep.counters().sleeping(), 1, "not registered");
                sleep.new_injected_jobs(1, true);
                assert_eq!(
                    sleep.counters().sleeping(),
                    0,
                    "the post must claim the sleeper"
                );
                false
            }),
        );
        check.rethrow();
        assert_eq!(check.calls(), 1);
        let c = sleep.counters();
        assert_eq!((c.sleeping(), c.inactive()), (0, 1), "{c:?}");
        sleep.work_found();
        drop(idle);
        assert_eq!(sleep.counters().inactive(), 0);
    });
}

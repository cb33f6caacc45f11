//! Rounds of a `JecSleep` idle loop, driven one `no_work_found` call at a
//! time by a single-threaded test, with the checks every such test makes.

use std::time::Instant;

use super::{CoreLatch, FinalCheck, JecIdle, JecSleep, SleepProtocol, WaitOutcome};

/// One sleepy round of `no_work_found`, on a policy sleepy at this round:
/// the JEC must end even and the final check not run (it would report work,
/// so a regression returns instead of blocking).
pub fn sleepy_round(sleep: &JecSleep, idle: &mut JecIdle<'_>, latch: &CoreLatch, what: &str) {
    let check = FinalCheck::new();
    sleep.no_work_found(idle, latch, check.unreached());
    assert_eq!(
        check.calls(),
        0,
        "{what}: the sleepy round ran the final check"
    );
    let c = sleep.counters();
    assert!(
        !c.jec_is_active(),
        "{what}: not sleepy after the sleepy round: {c:?}"
    );
}

/// Worker 0 of `sleep` starts looking and has its [`sleepy_round`]: where
/// most tests of a window begin.
pub fn sleepy_worker<'s>(sleep: &'s JecSleep, latch: &CoreLatch, what: &str) -> JecIdle<'s> {
    let mut idle = sleep.start_looking(0);
    sleepy_round(sleep, &mut idle, latch, what);
    idle
}

/// A round in which the worker registers as a sleeper: its final check
/// runs exactly once, sees the worker counted asleep, and then runs
/// `in_check`, which says whether injected work exists (and may post or
/// wake, being inside the window).
pub fn registered_round(
    sleep: &JecSleep,
    idle: &mut JecIdle<'_>,
    latch: &CoreLatch,
    what: &str,
    in_check: impl FnOnce() -> bool,
) {
    let check = FinalCheck::new();
    sleep.no_work_found(idle, latch, registered_check(&check, sleep, what, in_check));
    assert_ran_once(&check, what);
}

/// [`registered_round`] as a timed sleep ending at `deadline`.
pub fn registered_round_until(
    sleep: &JecSleep,
    idle: &mut JecIdle<'_>,
    latch: &CoreLatch,
    deadline: Instant,
    what: &str,
    in_check: impl FnOnce() -> bool,
) -> WaitOutcome {
    let check = FinalCheck::new();
    let has_work = registered_check(&check, sleep, what, in_check);
    let outcome = sleep.no_work_found_until(idle, latch, has_work, deadline);
    assert_ran_once(&check, what);
    outcome
}

/// The final check of a [`registered_round`].
fn registered_check<'a>(
    check: &'a FinalCheck,
    sleep: &'a JecSleep,
    what: &'a str,
    in_check: impl FnOnce() -> bool + 'a,
) -> impl FnOnce() -> bool + 'a {
    check.run(move || {
        let registered = sleep.counters();
        assert_eq!(
            registered.sleeping(),
            1,
            "{what}: not registered: {registered:?}"
        );
        in_check()
    })
}

/// Raise what failed inside the final check, then demand it ran once.
fn assert_ran_once(check: &FinalCheck, what: &str) {
    check.rethrow();
    assert_eq!(check.calls(), 1, "{what}: the final check must run once");
}

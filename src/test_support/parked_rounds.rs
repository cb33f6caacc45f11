//! A worker driven into its caller's park: rounds of `no_work_found_parked`
//! with no work anywhere, until one sleeps. It calls nothing but
//! `SleepProtocol`, so the loom models run it as the unit tests do.

use std::time::Instant;

use super::{CoreLatch, Round, SleepProtocol};

/// Rounds of `no_work_found_parked` whose final check finds no work, each
/// with `deadline`, until one slept (in `park`, which every such round
/// calls); returns that round, which says how the sleep ended. The rounds
/// before it search and announce: how many depends on the policy, so the
/// caller does not count them.
pub fn rounds_until_slept<S: SleepProtocol>(
    sleep: &S,
    idle: &mut S::Idle<'_>,
    latch: &CoreLatch,
    deadline: Option<Instant>,
    mut park: impl FnMut(Option<Instant>),
) -> Round {
    let mut round = Round::Searched;
    while !round.slept() {
        round = sleep.no_work_found_parked(idle, latch, || false, deadline, &mut park);
    }
    round
}

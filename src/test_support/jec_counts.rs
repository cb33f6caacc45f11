//! What tests assert about `JecSleep`'s counters.

use super::{JecCounters, JecIdle, JecSleep, SleepProtocol};

/// The counts of sleeping and of inactive workers are `expected`. Returns
/// the counters for further checks.
pub fn assert_counts(sleep: &JecSleep, expected: (usize, usize), what: &str) -> JecCounters {
    let c = sleep.counters();
    assert_eq!((c.sleeping(), c.inactive()), expected, "{what}: {c:?}");
    c
}

/// The last searching worker, whose search `idle` is, finds work: nobody is
/// left sleeping or idle. Returns the counters for further checks.
pub fn end_search(sleep: &JecSleep, idle: JecIdle<'_>, what: &str) -> JecCounters {
    sleep.work_found(idle);
    assert_counts(sleep, (0, 0), what)
}

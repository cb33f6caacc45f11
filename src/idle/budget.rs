//! [`Budgets`]: one worker's learned search budgets, and the rule that
//! learns them ([docs/idle-policy.md](crate::docs::idle_policy)).
//!
//! Only the owning worker reads and writes its budgets, on its idle paths,
//! so they are plain Relaxed cells that the loom models need not see
//! (`sync::unmodeled`): a budget decides how many rounds pass before the
//! worker gets sleepy, and no wake depends on it.

use super::policy::{IdlePolicy, SearchLength};
use crate::latch::WaitKind;
use crate::sync::unmodeled::{AtomicU32, Relaxed};

/// A sleep shorter than this, ended by a wake that found work, would have
/// been cheaper searched through: a futex wait and wake cost a few
/// microseconds of CPU on bare metal, and a wake of a halted vCPU in a VM
/// takes 25–35 µs to run the sleeper ([docs/benchmarks.md](crate::docs::benchmarks), "The machine").
pub(crate) const SHORT_SLEEP_NS: u64 = 50_000;

/// How one search phase ended, as the end of its idle period tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PhaseEnd {
    /// The worker found work (or its latch set) `ns` after the phase began:
    /// during its search, or after a sleep shorter than [`SHORT_SLEEP_NS`].
    /// A search of that long would have caught it.
    Hit { ns: u64 },
    /// It found work after a longer sleep: the search before it was spent
    /// for nothing.
    Miss,
}

/// One worker's budgets, in nanoseconds, for a policy bounded in time.
pub(crate) struct Budgets {
    idle_ns: AtomicU32,
    join_ns: AtomicU32,
}

impl Budgets {
    /// Where a worker starts under `policy`: its top-level search at the
    /// lower bound (an idle pool sleeps at once until it has seen a reason
    /// not to), a join's at a quarter of the upper bound (the stolen half it
    /// waits for usually ends soon).
    pub(crate) fn new(policy: &IdlePolicy) -> Self {
        let (idle, join) = match policy.search {
            SearchLength::Timed { min_ns, max_ns } => (min_ns, (max_ns / 4).max(min_ns)),
            SearchLength::Rounds { .. } => (0, 0),
        };
        Budgets {
            idle_ns: AtomicU32::new(idle),
            join_ns: AtomicU32::new(join),
        }
    }

    fn cell(&self, kind: WaitKind) -> &AtomicU32 {
        match kind {
            WaitKind::Idle => &self.idle_ns,
            WaitKind::Join => &self.join_ns,
        }
    }

    /// The budget a search of `kind` spends now.
    #[inline]
    pub(crate) fn get(&self, kind: WaitKind) -> u32 {
        self.cell(kind).load(Relaxed)
    }

    /// Learn from how a search phase ended. A no-op for fixed rounds.
    pub(crate) fn learn(&self, policy: &IdlePolicy, kind: WaitKind, end: PhaseEnd) {
        if let SearchLength::Timed { min_ns, max_ns } = policy.search {
            let cell = self.cell(kind);
            let next = next_budget(cell.load(Relaxed), min_ns, max_ns, end);
            cell.store(next, Relaxed);
        }
    }
}

/// The learning rule, on its own so the tests can drive it:
/// - a hit after `ns` raises the budget to cover it with a quarter to
///   spare, if it does not already;
/// - a miss lowers it by a quarter, so that a budget nothing needs any more
///   fades within a few idle periods, while one that short idle periods
///   keep using (a pool with short and long gaps alike) stays.
///
/// Always within `min..=max`.
pub(crate) fn next_budget(budget: u32, min: u32, max: u32, end: PhaseEnd) -> u32 {
    let next = match end {
        PhaseEnd::Hit { ns } => ns.saturating_add(ns / 4).max(u64::from(budget)),
        PhaseEnd::Miss => u64::from(budget) - u64::from(budget) / 4,
    };
    u32::try_from(next).unwrap_or(u32::MAX).clamp(min, max)
}

impl std::fmt::Debug for Budgets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgets")
            .field("idle_ns", &self.idle_ns.load(Relaxed))
            .field("join_ns", &self.join_ns.load(Relaxed))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const MAX: u32 = 200_000;

    fn hit(us: u64) -> PhaseEnd {
        PhaseEnd::Hit { ns: us * 1000 }
    }

    #[test]
    fn a_hit_raises_the_budget_to_cover_it() {
        assert_eq!(next_budget(0, 0, MAX, hit(20)), 25_000);
        assert_eq!(next_budget(4_000, 0, MAX, hit(40)), 50_000);
    }

    #[test]
    fn a_hit_inside_the_budget_keeps_it() {
        assert_eq!(next_budget(60_000, 0, MAX, hit(8)), 60_000);
    }

    #[test]
    fn a_miss_takes_a_quarter_off() {
        assert_eq!(next_budget(40_000, 0, MAX, PhaseEnd::Miss), 30_000);
        assert_eq!(next_budget(3, 0, MAX, PhaseEnd::Miss), 3);
        // A budget nobody hits fades within a few dozen misses.
        let mut budget = MAX;
        for _ in 0..60 {
            budget = next_budget(budget, 0, MAX, PhaseEnd::Miss);
        }
        assert!(budget < 1_000, "{budget}");
    }

    #[test]
    fn it_stays_within_the_bounds() {
        assert_eq!(next_budget(MAX, 0, MAX, hit(400)), MAX);
        assert_eq!(next_budget(0, 0, MAX, hit(u64::MAX / 1000)), MAX);
        assert_eq!(next_budget(10_000, 8_000, MAX, PhaseEnd::Miss), 8_000);
        // A fixed budget never moves.
        assert_eq!(next_budget(20_000, 20_000, 20_000, hit(30)), 20_000);
        assert_eq!(next_budget(20_000, 20_000, 20_000, PhaseEnd::Miss), 20_000);
    }
}

//! [`Budgets`]: one worker's learned search budgets, and the rule that
//! learns them ([docs/idle-policy.md](crate::docs::idle_policy)): in time
//! for its own policy, in rounds for its pressured phases.
//!
//! Only the owning worker reads and writes its budgets, on its idle paths,
//! so they are plain Relaxed cells that the loom models need not see
//! (`sync::unmodeled`): a budget decides how many rounds pass before the
//! worker gets sleepy, and no wake depends on it.

use super::policy::{IdlePolicy, SearchLength};
#[cfg(all(test, not(loom)))]
use super::pressure::PRESSURED_FITTING_MIN_ROUNDS;
use super::pressure::{
    PRESSURED_FEWEST_ROUNDS, PRESSURED_MIN_ROUNDS, PRESSURED_MISS_STREAK, PRESSURED_ROUNDS,
};
use crate::latch::WaitKind;
use crate::sync::unmodeled::{AtomicU32, Relaxed};

/// A sleep shorter than this, ended by a wake that found work, would have
/// been cheaper searched through: a futex wait and wake cost a few
/// microseconds of CPU on bare metal, and a wake of a halted vCPU in a VM
/// takes 25–35 µs to run the sleeper ([docs/benchmarks.md](crate::docs::benchmarks), "The machine").
pub(crate) const SHORT_SLEEP_NS: u64 = 50_000;

/// A phase whose rounds took less than this each on average got its CPU
/// back quickly: the threads it yielded to gave it back at once (the pool's
/// own searchers), not CPU-bound ones, whose slices last milliseconds. The
/// same 50 µs as [`SHORT_SLEEP_NS`], since a round that quick is as cheap
/// to repeat as a sleep that short would have been.
pub(crate) const QUICK_ROUND_NS: u64 = 50_000;

/// How one search phase ended, as the end of its idle period tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PhaseEnd {
    /// The worker found work (or its latch set) during its search, or after
    /// a sleep shorter than [`SHORT_SLEEP_NS`]. A search of `needed` would
    /// have caught it: nanoseconds from the phase's start for a budget in
    /// time, rounds for a pressured phase's.
    Hit { needed: u64 },
    /// It found work after a longer sleep: the search before it was spent
    /// for nothing.
    Miss,
}

/// One worker's budgets: in nanoseconds for a policy bounded in time, and
/// in yield rounds (the pool's floor`..=`[`PRESSURED_ROUNDS`], the floor
/// set by the pool's size, `Pressure::floor_rounds`) for the phases that
/// start pressured, whatever the policy. A pressured phase's budget is in
/// rounds because its rounds' length is the other runnable threads':
/// behind CPU-bound threads each yield waits out a time slice, and a budget
/// in time would end the phase after one.
pub(crate) struct Budgets {
    idle_ns: AtomicU32,
    join_ns: AtomicU32,
    pressured_idle_rounds: AtomicU32,
    pressured_join_rounds: AtomicU32,
    /// Pressured phases of each kind in a row that missed, up to
    /// [`PRESSURED_MISS_STREAK`].
    pressured_idle_misses: AtomicU32,
    pressured_join_misses: AtomicU32,
    /// The fewest rounds a pressured budget learns, but during a streak of
    /// misses: the pool's, fixed when it is built.
    floor_rounds: u32,
}

impl Budgets {
    /// Where a worker starts under `policy`: its top-level search at the
    /// lower bound (an idle pool sleeps at once until it has seen a reason
    /// not to), a join's at a quarter of the upper bound (the stolen half it
    /// waits for usually ends soon). Pressured, the same in rounds: the
    /// top-level search at the floor, `floor_rounds`, a join's at rayon's
    /// 32.
    pub(crate) fn new(policy: &IdlePolicy, floor_rounds: u32) -> Self {
        let (idle, join) = match policy.search {
            SearchLength::Timed { min_ns, max_ns } => (min_ns, (max_ns / 4).max(min_ns)),
            SearchLength::Rounds { .. } => (0, 0),
        };
        Budgets {
            idle_ns: AtomicU32::new(idle),
            join_ns: AtomicU32::new(join),
            // The floor: a burst's short gaps are hits within a few rounds,
            // which never lower a budget, so one that started at 32 spent
            // all 32 in every worker when the burst ended (B6 at 8 threads
            // on 2 vCPUs: 0.9-1.3x stock rayon's CPU); gaps that need more
            // rounds raise it within a few idle periods.
            pressured_idle_rounds: AtomicU32::new(floor_rounds),
            pressured_join_rounds: AtomicU32::new(PRESSURED_ROUNDS),
            pressured_idle_misses: AtomicU32::new(0),
            pressured_join_misses: AtomicU32::new(0),
            floor_rounds,
        }
    }

    fn cell(&self, kind: WaitKind, pressured: bool) -> &AtomicU32 {
        match (kind, pressured) {
            (WaitKind::Idle, false) => &self.idle_ns,
            (WaitKind::Join, false) => &self.join_ns,
            (WaitKind::Idle, true) => &self.pressured_idle_rounds,
            (WaitKind::Join, true) => &self.pressured_join_rounds,
        }
    }

    /// The budget in time a search of `kind` spends now.
    #[inline]
    pub(crate) fn get(&self, kind: WaitKind) -> u32 {
        self.cell(kind, false).load(Relaxed)
    }

    /// The yield rounds a pressured phase of `kind` searches now.
    #[inline]
    pub(crate) fn pressured_rounds(&self, kind: WaitKind) -> u32 {
        self.cell(kind, true).load(Relaxed)
    }

    /// Set a budget, for the tests.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn set(&self, kind: WaitKind, pressured: bool, value: u32) {
        self.cell(kind, pressured).store(value, Relaxed);
    }

    /// Whether [`learn`](Budgets::learn) would learn anything: a pressured
    /// phase always does, any other only under a timed policy (the match
    /// in `learn` returns early in exactly the other case).
    pub(crate) fn learns(policy: &IdlePolicy, pressured: bool) -> bool {
        pressured || matches!(policy.search, SearchLength::Timed { .. })
    }

    /// Learn from how a search phase ended: a pressured phase teaches the
    /// pressured budget (in rounds), any other a timed policy's budget (a
    /// no-op for fixed rounds).
    ///
    /// `quick_rounds` says whether the phase's yield rounds came back in
    /// under [`QUICK_ROUND_NS`] each on average: the CPU went to threads
    /// that gave it back at once (the pool's own searchers), not to
    /// CPU-bound ones. Only such misses make a streak, and only after such
    /// rounds does a pool that fits its CPUs keep its lower floor.
    pub(crate) fn learn(
        &self,
        policy: &IdlePolicy,
        kind: WaitKind,
        pressured: bool,
        end: PhaseEnd,
        quick_rounds: bool,
    ) {
        let (min, max) = match (pressured, policy.search) {
            (true, _) => (
                self.pressured_floor(kind, end, quick_rounds),
                PRESSURED_ROUNDS,
            ),
            (false, SearchLength::Timed { min_ns, max_ns }) => (min_ns, max_ns),
            (false, SearchLength::Rounds { .. }) => return,
        };
        let cell = self.cell(kind, pressured);
        cell.store(next_budget(cell.load(Relaxed), min, max, end), Relaxed);
    }

    /// The floor of a pressured budget of `kind` after a phase that ended
    /// as `end`: the pool's floor after quick rounds, [`PRESSURED_MIN_ROUNDS`]
    /// (the larger or the same) after rounds that waited on CPU-bound
    /// threads, or [`PRESSURED_FEWEST_ROUNDS`]
    /// once [`PRESSURED_MISS_STREAK`] phases in a row have missed with
    /// quick rounds. A hit, or a miss whose rounds waited on CPU-bound
    /// threads, ends the streak, and the rule then raises the budget to
    /// the floor again at least. Behind CPU-bound threads a round is a
    /// time slice: few rounds bridge a long gap, and a worker that slept
    /// instead waited long for its wake (B9's hogs, docs/idle-policy.md).
    fn pressured_floor(&self, kind: WaitKind, end: PhaseEnd, quick_rounds: bool) -> u32 {
        let misses = match kind {
            WaitKind::Idle => &self.pressured_idle_misses,
            WaitKind::Join => &self.pressured_join_misses,
        };
        let streak = match end {
            PhaseEnd::Hit { .. } => 0,
            PhaseEnd::Miss if quick_rounds => (misses.load(Relaxed) + 1).min(PRESSURED_MISS_STREAK),
            PhaseEnd::Miss => 0,
        };
        misses.store(streak, Relaxed);
        if streak >= PRESSURED_MISS_STREAK {
            PRESSURED_FEWEST_ROUNDS
        } else if quick_rounds {
            self.floor_rounds
        } else {
            // Each round a time slice: a pool that fits its CPUs needs as
            // many as an oversized one to bridge a gap of a few
            // milliseconds (B9's hogs with the 2 ms gap: 37x stock rayon's
            // p50 on a floor of two).
            self.floor_rounds.max(PRESSURED_MIN_ROUNDS)
        }
    }
}

/// The learning rule, on its own so the tests can drive it:
/// - a hit that needed `needed` raises the budget to cover it with a
///   quarter to spare, if it does not already;
/// - a miss lowers it by a quarter (by one at least, so that a budget of a
///   few rounds still fades), so that a budget nothing needs any more
///   fades within a few idle periods, while one that short idle periods
///   keep using (a pool with short and long gaps alike) stays.
///
/// Always within `min..=max`.
pub(crate) fn next_budget(budget: u32, min: u32, max: u32, end: PhaseEnd) -> u32 {
    let next = match end {
        PhaseEnd::Hit { needed } => needed.saturating_add(needed / 4).max(u64::from(budget)),
        PhaseEnd::Miss => u64::from(budget).saturating_sub((u64::from(budget) / 4).max(1)),
    };
    u32::try_from(next).unwrap_or(u32::MAX).clamp(min, max)
}

impl std::fmt::Debug for Budgets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgets")
            .field("idle_ns", &self.idle_ns.load(Relaxed))
            .field("join_ns", &self.join_ns.load(Relaxed))
            .field(
                "pressured_idle_rounds",
                &self.pressured_idle_rounds.load(Relaxed),
            )
            .field(
                "pressured_join_rounds",
                &self.pressured_join_rounds.load(Relaxed),
            )
            .field(
                "pressured_idle_misses",
                &self.pressured_idle_misses.load(Relaxed),
            )
            .field(
                "pressured_join_misses",
                &self.pressured_join_misses.load(Relaxed),
            )
            .field("floor_rounds", &self.floor_rounds)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const MAX: u32 = 200_000;

    fn hit(us: u64) -> PhaseEnd {
        PhaseEnd::Hit { needed: us * 1000 }
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
        assert_eq!(next_budget(3, 0, MAX, PhaseEnd::Miss), 2);
        // A budget nobody hits fades within a few dozen misses.
        let mut budget = MAX;
        for _ in 0..60 {
            budget = next_budget(budget, 0, MAX, PhaseEnd::Miss);
        }
        assert!(budget < 1_000, "{budget}");
    }

    #[test]
    fn a_pressured_budget_fades_to_its_floor_and_grows_back() {
        let (min, max) = (PRESSURED_MIN_ROUNDS, PRESSURED_ROUNDS);
        let mut rounds = max;
        let mut misses = 0;
        while rounds > min {
            rounds = next_budget(rounds, min, max, PhaseEnd::Miss);
            misses += 1;
        }
        assert_eq!(misses, 6); // 32, 24, 18, 14, 11, 9, 8
        assert_eq!(next_budget(min, min, max, PhaseEnd::Miss), min);
        assert_eq!(next_budget(min, min, max, PhaseEnd::Hit { needed: 12 }), 15);
        assert_eq!(next_budget(15, min, max, PhaseEnd::Hit { needed: 30 }), max);
        // A budget too small for a quarter still loses one.
        assert_eq!(next_budget(3, 1, max, PhaseEnd::Miss), 2);
    }

    #[test]
    fn a_streak_of_misses_lowers_a_pressured_budget_below_the_floor_and_a_hit_restores_it() {
        let budgets = Budgets::new(&IdlePolicy::new(), PRESSURED_MIN_ROUNDS);
        let kind = WaitKind::Idle;
        let learn = |end| budgets.learn(&IdlePolicy::new(), kind, true, end, true);
        assert_eq!(budgets.pressured_rounds(kind), PRESSURED_MIN_ROUNDS);
        // Misses mixed with hits keep the floor.
        for _ in 0..10 {
            learn(PhaseEnd::Miss);
            learn(PhaseEnd::Miss);
            learn(PhaseEnd::Hit { needed: 2 });
            assert_eq!(budgets.pressured_rounds(kind), PRESSURED_MIN_ROUNDS);
        }
        // A streak lowers it, a quarter (one at least) per miss, to one round.
        let mut rounds = vec![];
        for _ in 0..12 {
            learn(PhaseEnd::Miss);
            rounds.push(budgets.pressured_rounds(kind));
        }
        assert_eq!(rounds, [8, 8, 6, 5, 4, 3, 2, 1, 1, 1, 1, 1]);
        // A miss behind CPU-bound threads ends the streak too.
        budgets.learn(&IdlePolicy::new(), kind, true, PhaseEnd::Miss, false);
        assert_eq!(budgets.pressured_rounds(kind), PRESSURED_MIN_ROUNDS);
        for _ in 0..3 {
            learn(PhaseEnd::Miss);
        }
        assert_eq!(budgets.pressured_rounds(kind), 6);
        // The first hit brings the floor back, and a join's budget is its own.
        learn(PhaseEnd::Hit { needed: 1 });
        assert_eq!(budgets.pressured_rounds(kind), PRESSURED_MIN_ROUNDS);
        assert_eq!(budgets.pressured_rounds(WaitKind::Join), PRESSURED_ROUNDS);
    }

    #[test]
    fn a_fitting_pools_floor_is_two_rounds() {
        let budgets = Budgets::new(&IdlePolicy::new(), PRESSURED_FITTING_MIN_ROUNDS);
        let kind = WaitKind::Idle;
        let learn = |end| budgets.learn(&IdlePolicy::new(), kind, true, end, true);
        assert_eq!(budgets.pressured_rounds(kind), 2);
        // Mixed misses keep it; a hit that needed more raises it as anywhere.
        learn(PhaseEnd::Miss);
        learn(PhaseEnd::Miss);
        learn(PhaseEnd::Hit { needed: 1 });
        assert_eq!(budgets.pressured_rounds(kind), 2);
        learn(PhaseEnd::Hit { needed: 12 });
        assert_eq!(budgets.pressured_rounds(kind), 15);
        // A streak takes it down to one round, and a hit brings the floor back.
        for _ in 0..12 {
            learn(PhaseEnd::Miss);
        }
        assert_eq!(budgets.pressured_rounds(kind), PRESSURED_FEWEST_ROUNDS);
        learn(PhaseEnd::Hit { needed: 1 });
        assert_eq!(budgets.pressured_rounds(kind), 2);
        assert_eq!(budgets.pressured_rounds(WaitKind::Join), PRESSURED_ROUNDS);
        // Rounds that waited on CPU-bound threads, hit or miss, bring the
        // oversized pools' floor; quick misses then fade it by a quarter.
        budgets.learn(
            &IdlePolicy::new(),
            kind,
            true,
            PhaseEnd::Hit { needed: 1 },
            false,
        );
        assert_eq!(budgets.pressured_rounds(kind), PRESSURED_MIN_ROUNDS);
        budgets.learn(&IdlePolicy::new(), kind, true, PhaseEnd::Miss, false);
        assert_eq!(budgets.pressured_rounds(kind), PRESSURED_MIN_ROUNDS);
        learn(PhaseEnd::Miss);
        assert_eq!(budgets.pressured_rounds(kind), 6);
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

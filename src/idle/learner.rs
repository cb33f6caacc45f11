//! [`Learner`]: one worker's rule for how long to search before it sleeps
//! ([docs/idle-policy.md](crate::docs::idle_policy), "The rule").
//!
//! Spinning before blocking is ski rental: each idle period the worker
//! either keeps searching, paying CPU for every microsecond, or sleeps,
//! paying once the cost `C` of a sleep and its wake (the CPU the sleep takes
//! and the latency the wake adds). The learner measures `C` on the machine
//! it runs on, and keeps, for each of a grid of budgets between 0 and `C`,
//! what that budget would have cost over the worker's recent idle periods.
//! The next search spends the budget that cost least: the best fixed budget
//! in hindsight, over a discounted window.
//!
//! Pure: no clock and no atomics. The protocols measure; this decides.

use crate::latch::WaitKind;

/// The budgets the rule chooses among: 0, and `C·2^(−k/2)` for
/// `k = 10, 9, …, 0`, from `C/32` to `C`. Budgets above `C` never pay, and
/// a grid √2 apart costs at most 1.21× the best budget between its points
/// (docs/idle-policy.md, "Bound").
const GRID: usize = 12;

/// The budgets of the grid as fractions of `C`, smallest first.
const FRACTIONS: [f32; GRID] = {
    let mut fractions = [0.0; GRID];
    let mut k = GRID - 1;
    let mut fraction = 1.0;
    while k > 0 {
        fractions[k] = fraction;
        fraction *= std::f32::consts::FRAC_1_SQRT_2;
        k -= 1;
    }
    fractions
};

/// How many idle periods the rule remembers: each lesson's weight falls by
/// `1/HORIZON` with every later one, and the estimates of a wake's costs
/// average over as many wakes (docs/idle-policy.md, "Constants").
const HORIZON: f32 = 16.0;

/// How many threads' time a wake's latency costs, against a thread's CPU:
/// the work it delays, and the thread that waits for that work (a joining
/// worker, or the caller of `install` or of a request)
/// (docs/idle-policy.md, "Cost model").
pub const LATENCY_WEIGHT: u64 = 2;

/// One worker's rule: its estimates of a wake's latency and a sleep's CPU,
/// which make `C`, and the discounted cost of each budget of the grid,
/// apart for its two kinds of wait.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Learner {
    /// The means of the logarithms of recent wakes' latency and of their
    /// sleeps' CPU, in nanoseconds; `None` until a wake was measured. Means
    /// of logarithms, so that one wake delayed a thousandfold moves an
    /// estimate by half, not a hundredfold.
    ln_wake: Option<(f32, f32)>,
    idle: Costs,
    join: Costs,
}

/// What each budget of the grid would have cost, in units of `C`, each
/// idle period weighted by `(1 − 1/HORIZON)^age`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Costs([f32; GRID]);

impl Learner {
    /// A wake's latency, in nanoseconds, once measured.
    pub fn wake_ns(&self) -> Option<u64> {
        self.ln_wake
            .map(|(latency, _)| latency.exp().round() as u64)
    }

    /// `C`, the cost of a sleep and its wake, in nanoseconds, once
    /// measured: the sleep's CPU and the wake's weighted latency.
    pub fn sleep_cost_ns(&self) -> Option<u64> {
        self.ln_wake.map(|(latency, cpu)| {
            LATENCY_WEIGHT * latency.exp().round() as u64 + cpu.exp().round() as u64
        })
    }

    /// The search budget of the next idle period of `kind`, in nanoseconds:
    /// the grid's cheapest budget so far (the smallest of equals), and 0
    /// until a wake was measured.
    pub fn budget_ns(&self, kind: WaitKind) -> u64 {
        let Some(cost) = self.sleep_cost_ns() else {
            return 0;
        };
        let costs = &self.costs(kind).0;
        let mut best = 0;
        for k in 1..GRID {
            if costs[k] < costs[best] {
                best = k;
            }
        }
        (FRACTIONS[best] * cost as f32) as u64
    }

    /// The estimates of a wake's latency and a sleep's CPU, as the means of
    /// their logarithms, once measured: for another worker of the pool to
    /// start from.
    pub fn wake_costs(&self) -> Option<(f32, f32)> {
        self.ln_wake
    }

    /// Start from another worker's estimates, if this one has none: a
    /// worker whose sleeps all end without a waker (a poller's events, its
    /// deadlines) measures no wake of its own.
    pub fn adopt_wake_costs(&mut self, costs: (f32, f32)) {
        self.ln_wake.get_or_insert(costs);
    }

    /// A wake took `latency_ns` from the waker's call to the sleeper
    /// running, and the sleep `cpu_ns` of the sleeper's CPU.
    pub fn wake(&mut self, latency_ns: u64, cpu_ns: u64) {
        let ln = |ns: u64| (ns.max(1) as f32).ln();
        let (latency, cpu) = (ln(latency_ns), ln(cpu_ns));
        self.ln_wake = Some(match self.ln_wake {
            None => (latency, cpu),
            Some((l, c)) => (l + (latency - l) / HORIZON, c + (cpu - c) / HORIZON),
        });
    }

    /// An idle period of `kind` ended with work that came `gap_ns` after it
    /// began: charge each budget of the grid what it would have cost, the
    /// gap if the budget covers it, else the budget and a sleep. Nothing is
    /// learned before `C` is known.
    pub fn gap(&mut self, kind: WaitKind, gap_ns: u64) {
        let Some(cost) = self.sleep_cost_ns() else {
            return;
        };
        let gap = gap_ns as f32 / cost.max(1) as f32;
        let costs = match kind {
            WaitKind::Idle => &mut self.idle.0,
            WaitKind::Join => &mut self.join.0,
        };
        for (total, fraction) in costs.iter_mut().zip(FRACTIONS) {
            let this = if gap <= fraction { gap } else { fraction + 1.0 };
            *total = *total * (1.0 - 1.0 / HORIZON) + this;
        }
    }

    fn costs(&self, kind: WaitKind) -> &Costs {
        match kind {
            WaitKind::Idle => &self.idle,
            WaitKind::Join => &self.join,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    /// A learner whose wakes cost `cost` in all: latency alone.
    fn measured(cost: u64) -> Learner {
        let mut learner = Learner::default();
        learner.wake(cost / LATENCY_WEIGHT, 1);
        learner
    }

    #[test]
    fn the_grid_runs_from_zero_and_c_over_32_to_c_root_two_apart() {
        assert_eq!(FRACTIONS[0], 0.0);
        assert!((FRACTIONS[1] - 1.0 / 32.0).abs() < 1e-6);
        assert_eq!(FRACTIONS[GRID - 1], 1.0);
        for k in 2..GRID {
            assert!((FRACTIONS[k] / FRACTIONS[k - 1] - 2f32.sqrt()).abs() < 1e-5);
        }
    }

    #[test]
    fn nothing_is_searched_or_learned_before_a_wake_is_measured() {
        let mut learner = Learner::default();
        learner.gap(WaitKind::Idle, 5 * US);
        assert_eq!(learner, Learner::default());
        assert_eq!(learner.budget_ns(WaitKind::Idle), 0);
    }

    #[test]
    fn short_gaps_buy_the_budget_that_covers_them_and_no_more() {
        let mut learner = measured(30 * US);
        for _ in 0..4 {
            learner.gap(WaitKind::Idle, 10 * US);
        }
        // 10 µs is a third of C: the grid's 0.35·C (10.6 µs) covers it.
        assert_eq!(learner.budget_ns(WaitKind::Idle), 10_606);
        // The join's rule is its own.
        assert_eq!(learner.budget_ns(WaitKind::Join), 0);
    }

    #[test]
    fn long_gaps_and_timer_ticks_bring_the_budget_to_zero() {
        let mut learner = measured(30 * US);
        learner.gap(WaitKind::Idle, 1_000 * US);
        assert_eq!(learner.budget_ns(WaitKind::Idle), 0);
        // After a run of short gaps, ticks undo it budget by budget.
        for _ in 0..40 {
            learner.gap(WaitKind::Idle, 20 * US);
        }
        assert_eq!(learner.budget_ns(WaitKind::Idle), 21_213);
        let mut ticks = 0;
        while learner.budget_ns(WaitKind::Idle) > 0 {
            learner.gap(WaitKind::Idle, 1_000 * US);
            ticks += 1;
        }
        assert!(ticks <= 10, "{ticks}");
    }

    #[test]
    fn a_budget_pays_only_if_enough_gaps_are_short() {
        // A tenth of the gaps at 5 µs, the rest long, C = 30 µs: catching
        // the short ones saves 0.1 · 25 µs a gap, and costs 0.9 · 5.3 µs.
        let mut rare = measured(30 * US);
        // Half of them short: it pays.
        let mut half = measured(30 * US);
        for i in 0..200 {
            rare.gap(WaitKind::Idle, if i % 10 == 0 { 5 * US } else { 900 * US });
            half.gap(WaitKind::Idle, if i % 2 == 0 { 5 * US } else { 900 * US });
        }
        assert_eq!(rare.budget_ns(WaitKind::Idle), 0);
        assert_eq!(half.budget_ns(WaitKind::Idle), 5_303);
    }

    #[test]
    fn the_cost_of_a_sleep_is_its_cpu_and_twice_its_latency_each_a_mean_of_logarithms() {
        let mut learner = Learner::default();
        learner.wake(15 * US, 4 * US);
        assert!(delta(learner.sleep_cost_ns().unwrap(), 34 * US) < 10);
        // One wake delayed to 15 ms moves the latency by half: 15 µs ·
        // 1000^(1/16).
        learner.wake(15_000 * US, 4 * US);
        let moved = learner.wake_ns().unwrap();
        assert!(delta(moved, 23_100) < 200, "{moved}");
        // And it settles back as ordinary wakes come.
        for _ in 0..100 {
            learner.wake(15 * US, 4 * US);
        }
        assert!(delta(learner.sleep_cost_ns().unwrap(), 34 * US) < 100);
    }

    fn delta(a: u64, b: u64) -> u64 {
        a.abs_diff(b)
    }
}

//! [`Learner`]: one worker's rule for how long to search before it sleeps
//! ([docs/idle-policy.md](crate::docs::idle_policy), "The rule").
//!
//! Ski rental: a worker searches, paying CPU as it goes, or sleeps, paying
//! once the cost `C` of a sleep and its wake. The learner measures `C`, and
//! keeps what each budget of a grid between 0 and `C` would have cost over
//! recent gaps; the next search spends the cheapest.

use crate::latch::WaitKind;

/// The budgets the rule chooses among: 0, and `C·2^(−k/2)` for
/// `k = 10, 9, …, 0`, from `C/32` to `C`. Budgets above `C` never pay, and
/// a grid √2 apart costs at most 1.21× the best budget between its points
/// (docs/idle-policy.md, "Bound").
const GRID: usize = 12;

/// The grid's `k`th budget as a fraction of `C`, smallest first.
fn fraction(k: usize) -> f32 {
    if k == 0 {
        0.0
    } else {
        0.5f32.powf((GRID - 1 - k) as f32 / 2.0)
    }
}

/// How many idle periods the rule remembers: each lesson's weight falls by
/// `1/HORIZON` with every later one, and the estimates of a wake's costs
/// average over as many wakes (docs/idle-policy.md, "Constants").
const HORIZON: f32 = 16.0;

/// How many threads' time a wake's latency costs (the work it delays, and
/// the thread waiting for it), against a thread's CPU (docs/idle-policy.md,
/// "Cost model").
pub const LATENCY_WEIGHT: u64 = 2;

/// One worker's rule: its estimates of a wake's latency and a sleep's CPU,
/// which make `C`, and the discounted cost of each budget of the grid,
/// apart for its two kinds of wait.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Learner {
    /// The means of the logarithms of recent wakes' latency and of their
    /// sleeps' CPU, in nanoseconds; `None` until a wake was measured. Means
    /// of logarithms, so that one wake delayed a thousandfold moves an
    /// estimate by half, not a hundredfold. The shell shares them across
    /// the pool: a worker whose sleeps end without a waker (a poller's
    /// events, its deadlines) measures none of its own.
    pub(crate) ln_wake: Option<(f32, f32)>,
    /// Per kind of wait, by `WaitKind as usize`.
    costs: [Costs; 2],
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
        let costs = &self.costs[kind as usize].0;
        let best = (1..GRID).fold(0, |best, k| if costs[k] < costs[best] { k } else { best });
        (fraction(best) * cost as f32) as u64
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
        for (k, total) in self.costs[kind as usize].0.iter_mut().enumerate() {
            let budget = fraction(k);
            let this = if gap <= budget { gap } else { budget + 1.0 };
            *total = *total * (1.0 - 1.0 / HORIZON) + this;
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
        assert_eq!((fraction(0), fraction(GRID - 1)), (0.0, 1.0));
        assert!((fraction(1) - 1.0 / 32.0).abs() < 1e-6);
        assert!((2..GRID).all(|k| (fraction(k) / fraction(k - 1) - 2f32.sqrt()).abs() < 1e-5));
    }

    #[test]
    fn short_gaps_buy_the_budget_that_covers_them_and_long_ones_none() {
        let mut learner = Learner::default();
        learner.gap(WaitKind::Idle, 5 * US);
        assert_eq!(learner, Learner::default(), "nothing learned before a wake");
        let mut learner = measured(30 * US);
        for _ in 0..4 {
            learner.gap(WaitKind::Idle, 10 * US);
        }
        // 10 µs is a third of C: the grid's 0.35·C (10.6 µs) covers it; the
        // join's rule is its own.
        assert_eq!(learner.budget_ns(WaitKind::Idle), 10_606);
        assert_eq!(learner.budget_ns(WaitKind::Join), 0);
        // Timer ticks undo it budget by budget.
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
        assert!(learner.sleep_cost_ns().unwrap().abs_diff(34 * US) < 10);
        // One wake delayed to 15 ms moves the latency by half: 15 µs ·
        // 1000^(1/16).
        learner.wake(15_000 * US, 4 * US);
        assert!(learner.wake_ns().unwrap().abs_diff(23_100) < 200);
    }
}

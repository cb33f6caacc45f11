//! One policy through one trace on one machine: the crate's idle period
//! stepped on a virtual clock, and what it cost.
//!
//! The cost model (docs/idle-policy.md, "Cost model"): an idle period
//! costs the CPU it wastes (its search rounds, the round that announces the
//! worker, and a sleep's CPU on both sides) plus the latency it adds to the
//! work that ends it (a wake's, or the part of a search round that ran past
//! the work's arrival), weighted by `LATENCY_WEIGHT`: the work and the
//! thread that waits for it.

use std::ops::AddAssign;
use std::time::Duration;

use eventcount::policy_tools::{IdlePeriod, IdlePolicy, Learner, Setup, Step, LATENCY_WEIGHT};

use super::traces::{Gap, Trace};
use super::{Machine, Pool};

/// A policy of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// eventcount's default, `IdlePolicy::default()`.
    Default,
    /// A fixed budget, in nanoseconds (`IdlePolicy::fixed_budget`).
    Fixed(u64),
    /// rayon's 32 yield rounds (`IdlePolicy::rayon()`).
    Rayon,
    /// The clairvoyant policy: it knows each gap, searches through one
    /// shorter than what a sleep costs, and sleeps at once otherwise.
    Clairvoyant,
}

/// What a policy cost over a trace, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// CPU spent idle: search rounds, announcements, sleeps and wakes.
    pub waste_ns: u64,
    /// Latency added to the work that ended each period.
    pub latency_ns: u64,
    /// Wall time spent in search rounds.
    pub searched_ns: u64,
    /// Idle periods.
    pub periods: u64,
}

impl Outcome {
    /// The cost on the model: wasted CPU plus weighted added latency.
    pub fn cost_ns(&self) -> u64 {
        self.waste_ns + LATENCY_WEIGHT * self.latency_ns
    }
}

impl AddAssign for Outcome {
    fn add_assign(&mut self, other: Outcome) {
        self.waste_ns += other.waste_ns;
        self.latency_ns += other.latency_ns;
        self.searched_ns += other.searched_ns;
        self.periods += other.periods;
    }
}

/// `policy` through every worker's gaps of `trace`, each worker keeping
/// its rule from one period to the next: what every period cost, and what
/// the periods of the measured stretch did (`Gap::counted`).
pub fn run(policy: Policy, trace: &Trace, machine: &Machine, pool: &Pool) -> (Outcome, Outcome) {
    let (mut all, mut measured) = (Outcome::default(), Outcome::default());
    for gaps in &trace.workers {
        let mut learner = Learner::default();
        for &gap in gaps {
            let (outcome, next) = period(policy, gap, learner, machine, pool);
            learner = next;
            all += outcome;
            if gap.counted {
                measured += outcome;
            }
        }
    }
    (all, measured)
}

/// One idle period of `gap` under `policy`, for a worker whose rule is
/// `learner`: what it cost, and the rule after it.
pub fn period(
    policy: Policy,
    gap: Gap,
    learner: Learner,
    machine: &Machine,
    pool: &Pool,
) -> (Outcome, Learner) {
    let budget = |ns: u64| IdlePolicy::fixed_budget(Duration::from_nanos(ns));
    let idle_policy = match policy {
        Policy::Default => IdlePolicy::default(),
        Policy::Fixed(ns) => budget(ns),
        Policy::Rayon => IdlePolicy::rayon(),
        Policy::Clairvoyant if gap.ns <= machine.sleep_cost_ns() => budget(gap.ns),
        Policy::Clairvoyant => budget(0),
    };
    let setup = Setup::new(&idle_policy, pool.workers, Some(pool.cpus));
    // With more workers than CPUs a yield waits for a peer, and a woken
    // worker waits for a CPU: on average half a peer's round.
    let (round_wall, cpu_wait) = if pool.oversized() {
        (pool.peer_round_ns, pool.peer_round_ns / 2)
    } else {
        (machine.round_ns, 0)
    };
    let mut period = IdlePeriod::new(learner);
    let mut now = 0;
    let mut out = Outcome {
        periods: 1,
        ..Outcome::default()
    };
    loop {
        // The caller searched every queue before this call and found
        // nothing: the work comes later than `now`.
        match period.next_step(now, gap.kind, &setup, |_| true) {
            step @ (Step::Search | Step::Sleepy) => {
                // A search round, or the announcement and the search after
                // it: a round's CPU, and the work found if it came.
                now += round_wall;
                out.waste_ns += machine.round_ns;
                if step == Step::Search {
                    out.searched_ns += round_wall;
                }
                if gap.ns <= now {
                    out.latency_ns += now - gap.ns;
                    period.found(now, &setup);
                    break;
                }
            }
            Step::Sleep => {
                period.sleeping(now);
                let latency = machine.wake_ns + cpu_wait;
                let runs = gap.ns + latency;
                out.waste_ns += machine.sleep_cpu_ns;
                out.latency_ns += latency;
                if gap.timer {
                    period.timed_out();
                } else {
                    out.waste_ns += machine.waker_cpu_ns;
                    // The sleeper's CPU from its announcement to running
                    // again, as the protocols measure it.
                    let sleep_cpu = machine.round_ns + machine.sleep_cpu_ns;
                    period.woken(runs, Some(gap.ns), sleep_cpu, &setup);
                }
                period.found(runs, &setup);
                break;
            }
        }
    }
    (out, period.learner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use eventcount::policy_tools::WaitKind;

    const US: u64 = 1_000;

    fn gap(ns: u64) -> Gap {
        Gap {
            kind: WaitKind::Idle,
            ns,
            timer: false,
            counted: true,
        }
    }

    fn one(policy: Policy, ns: u64) -> Outcome {
        period(
            policy,
            gap(ns),
            Learner::default(),
            &Machine::VM,
            &Pool::FITS,
        )
        .0
    }

    #[test]
    fn a_search_that_covers_the_gap_costs_the_gap() {
        // 10 rounds of 1 µs, the work found at the end of the tenth.
        let out = one(Policy::Fixed(50 * US), 10 * US);
        assert_eq!((out.waste_ns, out.latency_ns), (10 * US, 0));
        assert_eq!(out.searched_ns, 10 * US);
    }

    #[test]
    fn a_sleep_costs_the_search_the_announcement_both_sides_cpu_and_the_wake() {
        let vm = Machine::VM;
        let out = one(Policy::Fixed(5 * US), 500 * US);
        assert_eq!(
            out.waste_ns,
            5 * US + vm.round_ns + vm.sleep_cpu_ns + vm.waker_cpu_ns
        );
        assert_eq!(out.latency_ns, vm.wake_ns);
    }

    #[test]
    fn the_clairvoyant_pays_the_least_of_the_gap_and_a_sleep() {
        let vm = Machine::VM;
        assert_eq!(one(Policy::Clairvoyant, 20 * US).cost_ns(), 20 * US);
        assert_eq!(
            one(Policy::Clairvoyant, 2_000 * US).cost_ns(),
            vm.round_ns + vm.sleep_cost_ns()
        );
        assert_eq!(vm.sleep_cost_ns(), 5_000 + 2_000 + LATENCY_WEIGHT * 30_000);
    }

    #[test]
    fn rayon_searches_32_rounds_before_it_sleeps() {
        let out = one(Policy::Rayon, 500 * US);
        assert_eq!(out.searched_ns, 32 * Machine::VM.round_ns);
    }
}

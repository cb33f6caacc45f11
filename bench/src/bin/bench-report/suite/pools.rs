//! What B5-B9 share: the pools they compare, by the names in the tables,
//! and rayon's pool as the baseline of their ratios.

use std::time::Duration;

use eventcount::IdlePolicy;
use eventcount_bench::pool::{AnyPool, PoolKind};
use eventcount_bench::workload::sweep::Protocol;

use crate::options::Options;
use crate::report::Report;

/// The name of rayon's second run in a round, whose ratio to the first is
/// the stock-vs-stock band of the oracle.
pub const RAYON_AGAIN: &str = "rayon again";

/// One pool a round of B7-B9 runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contender {
    /// One of the pools `--every-pool` picks from, on its usual policy.
    Pool(PoolKind),
    /// A protocol on the default policy with its search budget fixed at
    /// this many µs: a point of the oracle sweep.
    Budget(Protocol, u32),
    /// rayon's pool, run a second time.
    RayonAgain,
}

impl Contender {
    /// The pools of B7-B9: those of B5 and B6, then with `--oracle` each
    /// fixed budget of each protocol named, and rayon a second time.
    pub fn all(opts: &Options) -> Vec<Contender> {
        let mut all: Vec<Contender> = opts.pools().iter().map(|&k| Contender::Pool(k)).collect();
        if let Some(protocols) = &opts.oracle {
            for &protocol in protocols.list() {
                for &us in opts.budgets().us() {
                    all.push(Contender::Budget(protocol, us));
                }
            }
            all.push(Contender::RayonAgain);
        }
        all
    }

    /// The name in the tables: `pool+jec`, `pool+jec@25us`, `rayon again`.
    pub fn label(self) -> String {
        match self {
            Contender::Pool(kind) => label(kind).to_string(),
            Contender::Budget(protocol, us) => format!("pool+{}", protocol.variant(us)),
            Contender::RayonAgain => RAYON_AGAIN.to_string(),
        }
    }

    /// A fresh pool of `threads`.
    pub fn build(self, threads: usize, opts: &Options) -> AnyPool {
        match self {
            Contender::Pool(kind) => AnyPool::new(kind, threads, opts.idle_policy()),
            Contender::Budget(protocol, us) => {
                AnyPool::new(protocol_pool(protocol), threads, fixed_budget(us))
            }
            Contender::RayonAgain => AnyPool::new(PoolKind::Rayon, threads, opts.idle_policy()),
        }
    }
}

/// The example pool on `protocol`.
pub fn protocol_pool(protocol: Protocol) -> PoolKind {
    match protocol {
        Protocol::Jec => PoolKind::Jec,
        Protocol::Notifier => PoolKind::Notifier,
    }
}

/// The oracle's policy: eventcount's default with its search budget fixed
/// at `us` (its searcher cap and its sleep after an empty wake kept).
pub fn fixed_budget(us: u32) -> IdlePolicy {
    IdlePolicy::fixed_budget(Duration::from_micros(u64::from(us)))
}

/// `pool+jec`, `pool+notifier`, ..., or `rayon`.
pub fn label(kind: PoolKind) -> &'static str {
    match kind {
        PoolKind::Jec => "pool+jec",
        PoolKind::Notifier => "pool+notifier",
        PoolKind::JecRayon => "pool+jec-rayon",
        PoolKind::Pr1314Adaptive => "pool+pr1314-adaptive",
        PoolKind::Pr1314Bounded => "pool+pr1314-bounded",
        PoolKind::Eigen => "pool+eigen",
        PoolKind::Rayon => "rayon",
    }
}

/// Judge pool `kind` against rayon round by round, on the ratios
/// `ratio_metric` of `case`: below rayon's if `strict`, else no worse.
pub fn check_against_rayon(
    report: &mut Report,
    (bench, case): (&'static str, &str),
    kind: PoolKind,
    ratio_metric: &str,
    strict: bool,
    target: String,
) {
    let ratios = report.values(bench, case, label(kind), ratio_metric);
    report.check_ratios(bench, target, &ratios, 1.0, strict, "rayon");
}

/// A metric, and the name of its ratio to rayon's.
pub type Metric = (&'static str, &'static str);

/// One round of a case: each pool's value of each metric, and the result
/// each computed, recorded together at the round's end.
pub struct Round {
    /// Each metric with each pool's value.
    metrics: Vec<(Metric, Vec<(String, f64)>)>,
    results: Vec<(String, u64)>,
}

impl Round {
    /// A round of `metrics`.
    pub fn new(metrics: &[Metric]) -> Round {
        Round {
            metrics: metrics.iter().map(|&m| (m, Vec::new())).collect(),
            results: Vec::new(),
        }
    }

    /// Pool `name`'s value of each metric, in the order [`Round::new`]
    /// named them, and what it computed.
    pub fn add(&mut self, name: &str, values: &[f64], result: u64) {
        for ((_, pools), value) in self.metrics.iter_mut().zip(values) {
            pools.push((name.to_string(), *value));
        }
        self.results.push((name.to_string(), result));
    }

    /// Record the round: every pool must have computed the same result, and
    /// each metric goes in with each pool's ratio to rayon's.
    pub fn record(self, report: &mut Report, (bench, case): (&'static str, &str)) {
        report.expect_same(&format!("{bench} {case}"), &self.results);
        for ((metric, ratio), values) in &self.metrics {
            report.add_round(bench, case, metric, values, "rayon", ratio);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn a_fixed_budget_is_the_default_fixed_and_does_not_adapt() {
        let policy = fixed_budget(25);
        assert_eq!(policy, IdlePolicy::fixed_budget(Duration::from_micros(25)));
        assert_eq!(
            policy.searcher_cap(8),
            IdlePolicy::default().searcher_cap(8)
        );
    }

    #[test]
    fn the_oracle_adds_each_budget_of_each_protocol_and_rayon_again() {
        let opts = Options::parse_from(["bench-report", "--oracle", "--budgets", "0,25"]);
        let labels: Vec<String> = Contender::all(&opts).iter().map(|c| c.label()).collect();
        let expected = [
            "pool+jec",
            "pool+notifier",
            "rayon",
            "pool+jec@0us",
            "pool+jec@25us",
            "pool+notifier@0us",
            "pool+notifier@25us",
            RAYON_AGAIN,
        ];
        assert_eq!(labels, expected);
        let plain = Options::parse_from(["bench-report"]);
        assert_eq!(Contender::all(&plain).len(), PoolKind::ALL.len());
    }
}

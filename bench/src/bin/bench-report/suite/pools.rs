//! What B5-B8 share: the pools they compare, by the names in the tables,
//! and rayon's pool as the baseline of their ratios.

use eventcount_pool::PoolKind;

use crate::report::Report;

/// `pool+jec`, `pool+notifier`, ..., or `rayon`.
pub fn label(kind: PoolKind) -> &'static str {
    match kind {
        PoolKind::Jec => "pool+jec",
        PoolKind::JecNoCap => "pool+jec-nocap",
        PoolKind::Notifier => "pool+notifier",
        PoolKind::NotifierNoCap => "pool+notifier-nocap",
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

//! What B5-B7 share: the pools they compare, by the names in the tables.

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

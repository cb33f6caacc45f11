//! What B5-B7 share: the pools they compare, by the names in the tables.

use eventcount_pool::PoolKind;

use crate::report::Report;

/// The two pools with a target against rayon.
pub const OURS: [PoolKind; 2] = [PoolKind::Jec, PoolKind::Notifier];

/// `pool+jec`, `pool+notifier` or `rayon`.
pub fn label(kind: PoolKind) -> &'static str {
    match kind {
        PoolKind::Jec => "pool+jec",
        PoolKind::Notifier => "pool+notifier",
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

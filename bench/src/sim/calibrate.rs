//! The simulator against this VM: for each workload that `rayon-bench
//! --oracle --record` measured with fixed budgets, replay the idle gaps the
//! workload recorded (on the default policy) through each fixed budget at
//! this machine's measured costs, and compare the simulator's ranking of
//! the budgets with the VM's, by Spearman's rank correlation.

use std::fmt::Write as _;
use std::path::Path;

use crate::workload::sweep::gap_trace_name;
use eventcount::policy_tools::LATENCY_WEIGHT;
use serde_json::Value;

use super::run::{run, Policy};
use super::traces;
use super::{Machine, Pool};

/// One workload on one protocol: each fixed budget's cost on the VM and on
/// the simulator, and how well the two rankings agree.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// The bench and case, as rayon-bench names them.
    pub case: String,
    /// `jec` or `notifier`.
    pub protocol: String,
    /// The budgets, in µs.
    pub budgets: Vec<u64>,
    /// The VM's wasted CPU per tick, and its weighted p50 latency, per budget.
    pub vm: Vec<(f64, f64)>,
    /// The simulator's wasted CPU and weighted latency over the trace, per
    /// budget.
    pub sim: Vec<(f64, f64)>,
}

impl Calibration {
    /// Spearman's rho of the two rankings by cost (waste plus weighted
    /// latency).
    pub fn rho_cost(&self) -> f64 {
        let sum = |v: &[(f64, f64)]| v.iter().map(|(w, l)| w + l).collect::<Vec<_>>();
        spearman(&sum(&self.vm), &sum(&self.sim))
    }

    /// Spearman's rho of the two rankings by wasted CPU alone.
    pub fn rho_waste(&self) -> f64 {
        let waste = |v: &[(f64, f64)]| v.iter().map(|(w, _)| *w).collect::<Vec<_>>();
        spearman(&waste(&self.vm), &waste(&self.sim))
    }

    fn best(&self, costs: &[(f64, f64)]) -> u64 {
        let mut best = 0;
        for (i, (w, l)) in costs.iter().enumerate() {
            if w + l < costs[best].0 + costs[best].1 {
                best = i;
            }
        }
        self.budgets[best]
    }
}

/// Ranks, ties sharing their mean rank.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        for k in i..=j {
            ranks[order[k]] = (i + j) as f64 / 2.0;
        }
        i = j + 1;
    }
    ranks
}

/// Spearman's rank correlation: Pearson's on the ranks.
pub fn spearman(a: &[f64], b: &[f64]) -> f64 {
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let (va, vb): (f64, f64) = (
        ra.iter().map(|x| (x - ma).powi(2)).sum(),
        rb.iter().map(|y| (y - mb).powi(2)).sum(),
    );
    if va == 0.0 || vb == 0.0 {
        return if va == vb { 1.0 } else { 0.0 };
    }
    cov / (va * vb).sqrt()
}

/// The latency a case's budgets are ranked by, as rayon-bench names it.
fn latency_metric(bench: &str) -> &'static str {
    if bench == "B7" {
        "p50 latency us"
    } else {
        "tick p50 us"
    }
}

/// Every calibration `report` (rayon-bench's JSON) and the traces in
/// `dir` allow, on `machine`.
pub fn calibrate(
    report: &Value,
    dir: &Path,
    machine: &Machine,
) -> Result<Vec<Calibration>, String> {
    let budgets: Vec<u64> = report["budgets_us"]
        .as_array()
        .ok_or("the report has no budgets_us: run rayon-bench with --oracle")?
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    let cpus = report["vcpus"].as_u64().unwrap_or(2) as usize;
    let rows = report["rows"].as_array().ok_or("the report has no rows")?;
    let find = |bench: &str, case: &str, metric: &str| {
        rows.iter()
            .find(|r| r["bench"] == bench && r["case"] == case && r["metric"] == metric)
    };
    let mut out = Vec::new();
    for row in rows
        .iter()
        .filter(|r| r["metric"] == "wasted cpu us per tick")
    {
        let (bench, case) = (
            row["bench"].as_str().unwrap_or(""),
            row["case"].as_str().unwrap_or(""),
        );
        let Some(latency) = find(bench, case, latency_metric(bench)) else {
            continue;
        };
        let threads = if case.contains("8 threads") { 8 } else { 2 };
        for protocol in ["jec", "notifier"] {
            let path = dir.join(gap_trace_name(bench, case, protocol));
            if !path.exists() {
                continue;
            }
            let (trace, _) = traces::load(&path, false)?;
            let pool = Pool {
                workers: threads,
                cpus,
                peer_round_ns: Pool::OVERSIZED.peer_round_ns,
            };
            let weight = LATENCY_WEIGHT as f64;
            let mut calibration = Calibration {
                case: format!("{bench} {case}"),
                protocol: protocol.to_string(),
                budgets: budgets.clone(),
                vm: Vec::new(),
                sim: Vec::new(),
            };
            for &us in &budgets {
                let variant = format!("{protocol}@{us}us");
                let (Some(waste), Some(lat)) = (
                    row["medians"][&variant].as_f64(),
                    latency["medians"][&variant].as_f64(),
                ) else {
                    return Err(format!("{bench} {case}: no {variant} in the report"));
                };
                calibration.vm.push((waste, weight * lat));
                let (sim, _) = run(Policy::Fixed(us * 1_000), &trace, machine, &pool);
                calibration
                    .sim
                    .push((sim.waste_ns as f64, weight * sim.latency_ns as f64));
            }
            out.push(calibration);
        }
    }
    Ok(out)
}

/// The calibrations as a Markdown table.
pub fn markdown(calibrations: &[Calibration]) -> String {
    let mut out = String::from(
        "| case | protocol | rho, cost | rho, waste | best budget, VM | best budget, simulator |\n|---|---|---|---|---|---|\n",
    );
    for c in calibrations {
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} | {:.2} | {} µs | {} µs |",
            c.case,
            c.protocol,
            c.rho_cost(),
            c.rho_waste(),
            c.best(&c.vm),
            c.best(&c.sim)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_is_one_for_the_same_order_and_minus_one_for_the_reverse() {
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]), 1.0);
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), -1.0);
        assert!((spearman(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]) - 0.8).abs() < 1e-9);
    }
}

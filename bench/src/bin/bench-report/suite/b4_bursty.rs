//! B4: a bursty producer/consumer queue, wall time and CPU per item
//! against std's condvar.

use std::time::Duration;

use eventcount_bench::bursty::{self, BurstConfig};

use crate::options::Options;
use crate::report::Report;
use eventcount_bench::workload::stats::{median, rotated};

/// Runs of each peer per round (their median is the round's value).
const RUNS: usize = 3;

/// Every peer, `opts.rounds()` times in rotated order.
pub fn run(report: &mut Report, opts: &Options) {
    let cfg = BurstConfig::small(if opts.quick { 5 } else { 20 });
    let case = "2P/4C, 32-item bursts, 50 us gaps";
    let per_item = |d: Duration| d.as_nanos() as f64 / cfg.items() as f64;
    for round in 0..opts.rounds() {
        let (mut wall, mut cpu, mut sums) = (Vec::new(), Vec::new(), Vec::new());
        for kind in rotated(&bursty::PEERS, round) {
            let runs: Vec<_> = (0..RUNS).map(|_| bursty::run(kind, &cfg)).collect();
            let name = kind.name().to_string();
            let wall_ns: Vec<f64> = runs.iter().map(|r| per_item(r.elapsed)).collect();
            let cpu_ns: Vec<f64> = runs.iter().map(|r| per_item(r.cpu)).collect();
            wall.push((name.clone(), median(&wall_ns)));
            cpu.push((name.clone(), median(&cpu_ns)));
            let stats: Vec<_> = runs.iter().filter_map(|r| r.stats).collect();
            if !stats.is_empty() {
                let wakes: u64 = stats.iter().map(|s| s.wakes).sum();
                let per_item = wakes as f64 / (cfg.items() * stats.len()) as f64;
                report.add("B4", case, kind.name(), "futex wakes/item", per_item);
            }
            sums.push((name, runs[0].checksum));
        }
        report.expect_same("B4 checksum", &sums);
        report.add_round(
            "B4",
            case,
            "wall ns/item",
            &wall,
            "std_condvar",
            "wall x condvar",
        );
        report.add_round(
            "B4",
            case,
            "cpu ns/item",
            &cpu,
            "std_condvar",
            "cpu x condvar",
        );
    }
}

//! B5: fork-join in the example pool on both protocols against rayon::join
//! in rayon's pool, at 1, 2 and 8 threads, and a saturating fold (every
//! worker busy to the end) at 2 and 8.

use std::hint::black_box;
use std::time::Instant;

use eventcount_bench::pool::{AnyPool, PoolKind};
use eventcount_bench::workload::procstat::ProcUsage;
use eventcount_bench::workload::{make_tree, Workload};

use crate::options::Options;
use crate::report::Report;
use crate::suite::pools::{check_against_rayon, label};
use eventcount_bench::workload::stats::{median, rotated};

/// Each pool, `opts.rounds()` times in rotated order, per workload and
/// thread count; the sequential baseline runs on this thread.
pub fn run(report: &mut Report, opts: &Options) {
    let tree = make_tree((1 << 18) - 1);
    let runs = if opts.quick { 5 } else { 15 };
    // The first two are the targets' inputs; the third, coarser one shows
    // how much of the gap is per-join overhead (it is not a target).
    let workloads = [
        (
            "fib(25) cutoff 10",
            Workload::Fib { n: 25, cutoff: 10 },
            true,
        ),
        (
            "tree 2^18-1 depth 10",
            Workload::TreeSum { tree, depth: 10 },
            true,
        ),
        (
            "fib(30) cutoff 15",
            Workload::Fib { n: 30, cutoff: 15 },
            false,
        ),
        (
            "saturating fold 2^22 items, chunks of 64",
            Workload::Fold {
                items: 1 << 22,
                chunk: 64,
            },
            true,
        ),
    ];
    // 1 thread isolates the pools' per-join overhead (against sequential).
    for threads in [1usize, 2, 8] {
        for (label_of_work, work, is_target) in &workloads {
            let is_fold = matches!(work, Workload::Fold { .. });
            if is_fold && (threads == 1 || opts.quick) {
                continue; // a long run: only where it saturates a pool
            }
            let runs = if is_fold { runs.min(5) } else { runs };
            let plural = if threads == 1 { "" } else { "s" };
            let case = format!("{label_of_work}, {threads} thread{plural}");
            for round in 0..opts.rounds() {
                let mut values = Vec::new();
                let mut results = Vec::new();
                for kind in rotated(opts.pools(), round) {
                    let (ms, check) = time_runs(report, &case, kind, threads, work, runs, opts);
                    values.push((label(kind).to_string(), ms));
                    results.push((label(kind).to_string(), check));
                }
                let sequential: Vec<f64> = (0..runs.min(5))
                    .map(|_| {
                        let start = Instant::now();
                        black_box(black_box(work).run_sequential());
                        start.elapsed().as_nanos() as f64 / 1e6
                    })
                    .collect();
                values.push(("sequential".to_string(), median(&sequential)));
                report.expect_same(&format!("B5 {case}"), &results);
                report.add_round("B5", &case, "ms", &values, "rayon", "x rayon");
            }
            if threads == 1 || !is_target {
                continue; // overhead and scaling only: no target
            }
            for kind in opts.ours() {
                let target = format!("{} no slower than rayon: {case}", label(kind));
                check_against_rayon(report, ("B5", &case), kind, "x rayon", false, target);
            }
        }
    }
}

/// On a fresh pool of `kind`, warm up, then time `runs` runs of `work`;
/// records context switches and futex waits per run. Returns the median
/// ms and the result.
fn time_runs(
    report: &mut Report,
    case: &str,
    kind: PoolKind,
    threads: usize,
    work: &Workload,
    runs: usize,
    opts: &Options,
) -> (f64, u64) {
    let pool = AnyPool::new(kind, threads, opts.idle_policy());
    for _ in 0..3 {
        black_box(pool.run(work));
    }
    let mut times = Vec::new();
    let mut check = 0;
    let stats_before = pool.stats();
    let switches_before = ProcUsage::now().voluntary_switches;
    for _ in 0..runs {
        let start = Instant::now();
        check = pool.run(work);
        times.push(start.elapsed().as_nanos() as f64 / 1e6);
    }
    // Every thread's voluntary switches, the caller's wait for the result
    // included.
    let switches = ProcUsage::now().voluntary_switches - switches_before;
    let per_run = |count: u64| count as f64 / runs as f64;
    report.add(
        "B5",
        case,
        label(kind),
        "ctx switches/run",
        per_run(switches),
    );
    if let Some(during) = stats_before.zip(pool.stats()).map(|(b, a)| a - b) {
        report.add(
            "B5",
            case,
            label(kind),
            "futex waits/run",
            per_run(during.waits),
        );
    }
    pool.shutdown();
    (median(&times), check)
}

//! B7: ticks of small jobs with gaps between them, as a game or a server
//! loop would submit them: pool CPU per tick and latency per tick. The loop
//! is `eventcount_bench::workload::ticks`, which rayon-bench runs too.

use std::time::Duration;

use eventcount_bench::workload::stats::{median, percentile, rotated};
use eventcount_bench::workload::{calibrate_busy_work, ticks};

use crate::options::Options;
use crate::report::Report;
use crate::suite::pools::{check_against_rayon, label, Contender, Metric, Round};

/// What each round records of each pool, against rayon's.
const ROUND: [Metric; 3] = [
    ("cpu us/tick", "cpu x rayon"),
    ("wasted us/tick", "wasted x rayon"),
    ("p50 latency us", "latency x rayon"),
];

/// Each pool, `opts.rounds()` times in rotated order, per thread count and
/// gap.
pub fn run(report: &mut Report, opts: &Options) {
    let iters = calibrate_busy_work(Duration::from_micros(5));
    let useful_us = ticks::useful_us(iters);
    report.note(format!(
        "B7: one job = {iters} xorshift rounds; {} jobs take {useful_us:.1} us on one thread",
        ticks::JOBS
    ));
    for threads in [2usize, 8] {
        for gap in ticks::GAPS {
            let case = format!("{threads} threads, gap {gap:?}");
            run_case(report, opts, ("B7", &case), threads, gap, iters);
            for kind in opts.ours() {
                let cpu_target = format!("{} less CPU per tick than rayon ({case})", label(kind));
                check_against_rayon(report, ("B7", &case), kind, "cpu x rayon", true, cpu_target);
                let target = format!("{} burst latency no worse than rayon ({case})", label(kind));
                check_against_rayon(
                    report,
                    ("B7", &case),
                    kind,
                    "latency x rayon",
                    false,
                    target,
                );
            }
        }
    }
    report.add(
        "B7",
        "useful work",
        "8 jobs on one thread",
        "us/tick",
        useful_us,
    );
}

/// One case of B7's loop (B9 runs it too, under load): every contender,
/// `opts.rounds()` times in rotated order, on `threads` workers, with jobs
/// of `iters` rounds and `gap` between ticks.
pub fn run_case(
    report: &mut Report,
    opts: &Options,
    (bench, case): (&'static str, &str),
    threads: usize,
    gap: Duration,
    iters: u32,
) {
    let useful_us = ticks::useful_us(iters);
    let count = if opts.quick { 50 } else { 200 };
    let contenders = Contender::all(opts);
    for round in 0..opts.rounds() {
        let mut measured = Round::new(&ROUND);
        for contender in rotated(&contenders, round) {
            let pool = contender.build(threads, opts);
            let (ticked, stats_before) = ticks::run(&pool, iters, gap, count, || pool.stats());
            let cpu_us = ticked.cpu.as_nanos() as f64 / 1e3 / count as f64;
            let name = contender.label();
            if let Some(during) = stats_before.zip(pool.stats()).map(|(b, a)| a - b) {
                let wakes = during.wakes as f64 / count as f64;
                report.add(bench, case, &name, "futex wakes/tick", wakes);
            }
            report.add(bench, case, &name, "cpu/useful", cpu_us / useful_us);
            let p90 = percentile(&mut ticked.latency_us.clone(), 0.9);
            report.add(bench, case, &name, "p90 latency us", p90);
            pool.shutdown();
            let latency = median(&ticked.latency_us);
            let values = [cpu_us, cpu_us - useful_us, latency];
            measured.add(&name, &values, ticked.sum);
        }
        measured.record(report, (bench, case));
    }
}

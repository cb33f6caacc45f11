//! B7: ticks of small jobs with gaps between them, as a game or a server
//! loop would submit them: pool CPU per tick and latency per tick.

use std::hint::black_box;
use std::thread;
use std::time::{Duration, Instant};

use eventcount_pool::procstat::cpu_of_other_threads;
use eventcount_pool::{busy_work, calibrate_busy_work, AnyPool, Workload};

use crate::options::Options;
use crate::report::Report;
use crate::suite::pools::{check_against_rayon, label};
use crate::summary::{median, percentile, rotated, thread_cpu};

const JOBS: u32 = 8;
const GAPS: [Duration; 3] = [
    Duration::from_micros(20),
    Duration::from_micros(200),
    Duration::from_millis(2),
];

/// Each pool, `opts.rounds()` times in rotated order, per thread count and
/// gap.
pub fn run(report: &mut Report, opts: &Options) {
    let iters = calibrate_busy_work(Duration::from_micros(5));
    let useful_us = useful_work_us(iters);
    report.note(format!(
        "B7: one job = {iters} xorshift rounds; {JOBS} jobs take {useful_us:.1} us on one thread"
    ));
    let ticks = if opts.quick { 50 } else { 200 };
    for threads in [2usize, 8] {
        for gap in GAPS {
            let case = format!("{threads} threads, gap {gap:?}");
            for round in 0..opts.rounds() {
                let (mut cpu_values, mut latency_values, mut sums) =
                    (Vec::new(), Vec::new(), Vec::new());
                let mut wasted_values = Vec::new();
                for kind in rotated(opts.pools(), round) {
                    let pool = AnyPool::new(kind, threads, opts.idle_policy());
                    let tick = |i: u64| Workload::Burst {
                        seed: i * 8,
                        jobs: JOBS,
                        iters,
                    };
                    for i in 0..20 {
                        black_box(pool.run(&tick(i)));
                        pause(gap);
                    }
                    let stats_before = pool.stats();
                    let cpu_before = cpu_of_other_threads();
                    let mut latencies = Vec::with_capacity(ticks);
                    let mut sum = 0u64;
                    for i in 0..ticks as u64 {
                        let start = Instant::now();
                        sum = sum.wrapping_add(pool.run(&tick(i)));
                        latencies.push(start.elapsed().as_nanos() as f64 / 1e3);
                        pause(gap);
                    }
                    let cpu = cpu_of_other_threads().saturating_sub(cpu_before);
                    let cpu_us = cpu.as_nanos() as f64 / 1e3 / ticks as f64;
                    let name = label(kind);
                    if let Some(during) = stats_before.zip(pool.stats()).map(|(b, a)| a - b) {
                        let wakes = during.wakes as f64 / ticks as f64;
                        report.add("B7", &case, name, "futex wakes/tick", wakes);
                    }
                    report.add("B7", &case, name, "cpu/useful", cpu_us / useful_us);
                    wasted_values.push((name.to_string(), cpu_us - useful_us));
                    let p90 = percentile(&mut latencies.clone(), 0.9);
                    report.add("B7", &case, name, "p90 latency us", p90);
                    pool.shutdown();
                    cpu_values.push((name.to_string(), cpu_us));
                    latency_values.push((name.to_string(), median(&latencies)));
                    sums.push((name.to_string(), sum));
                }
                report.expect_same(&format!("B7 {case}"), &sums);
                report.add_round(
                    "B7",
                    &case,
                    "cpu us/tick",
                    &cpu_values,
                    "rayon",
                    "cpu x rayon",
                );
                report.add_round(
                    "B7",
                    &case,
                    "wasted us/tick",
                    &wasted_values,
                    "rayon",
                    "wasted x rayon",
                );
                let latency = "latency x rayon";
                report.add_round(
                    "B7",
                    &case,
                    "p50 latency us",
                    &latency_values,
                    "rayon",
                    latency,
                );
            }
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

/// The useful work of one tick, timed the way the jobs run it: its jobs
/// one after another on this thread (median of 21 ticks, µs of this
/// thread's CPU time).
fn useful_work_us(iters: u32) -> f64 {
    let times: Vec<f64> = (0..21u64)
        .map(|seed| {
            let start = thread_cpu();
            for job in 0..JOBS {
                black_box(busy_work(seed * 8 + job as u64, iters));
            }
            (thread_cpu() - start).as_nanos() as f64 / 1e3
        })
        .collect();
    median(&times)
}

/// The gap between ticks: short gaps are serial work on the main thread
/// (it spins), long ones are idle time (it sleeps).
fn pause(gap: Duration) {
    if gap < Duration::from_micros(100) {
        let until = Instant::now() + gap;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    } else {
        thread::sleep(gap);
    }
}

//! B6: what a pool burns after a burst, while it has nothing to do; and
//! how soon all of our workers sleep.

use std::fmt::Write as _;
use std::hint::black_box;
use std::thread;
use std::time::{Duration, Instant};

use eventcount_bench::pool::AnyPool;
use eventcount_bench::workload::procstat::ProcUsage;
use eventcount_bench::workload::stats::rotated;
use eventcount_bench::workload::Workload;

use crate::options::Options;
use crate::report::Report;
use crate::suite::pools::{check_against_rayon, label};

/// Each pool, `opts.rounds()` times in rotated order, at 2 and 8 threads.
pub fn run(report: &mut Report, opts: &Options) {
    let burst = Workload::Fib { n: 25, cutoff: 10 };
    let window = Duration::from_millis(if opts.quick { 100 } else { 300 });
    for threads in [2usize, 8] {
        let case = format!("{threads} threads");
        for round in 0..opts.rounds() {
            let mut cpu_values = Vec::new();
            for kind in rotated(opts.pools(), round) {
                let pool = AnyPool::new(kind, threads, opts.idle_policy());
                black_box(pool.run(&burst));
                // Time to quiescence (ours): poll every 20 us after a burst.
                if pool.num_sleeping().is_some() {
                    black_box(pool.run(&burst));
                    let start = Instant::now();
                    let deadline = start + Duration::from_secs(1);
                    while pool.num_sleeping() != Some(threads) && Instant::now() < deadline {
                        thread::sleep(Duration::from_micros(20));
                    }
                    let us = start.elapsed().as_nanos() as f64 / 1e3;
                    report.add("B6", &case, label(kind), "us until all asleep", us);
                }
                // CPU in the window after a burst; nothing else runs.
                black_box(pool.run(&burst));
                let stats_before = pool.stats();
                let before = ProcUsage::for_pool();
                thread::sleep(window);
                let spent = ProcUsage::for_pool().since(&before);
                let cpu_ms = spent.cpu.as_nanos() as f64 / 1e6;
                let switches = spent.voluntary_switches as f64;
                report.add("B6", &case, label(kind), "context switches", switches);
                if let Some(during) = stats_before.zip(pool.stats()).map(|(b, a)| a - b) {
                    // Wakes after every worker fell asleep must be 0; the
                    // window also holds the spin-down, so count both.
                    report.add("B6", &case, label(kind), "futex wakes", during.wakes as f64);
                }
                cpu_values.push((label(kind).to_string(), cpu_ms));
                pool.shutdown();
            }
            report.add_round(
                "B6",
                &case,
                "cpu ms in window",
                &cpu_values,
                "rayon",
                "x rayon",
            );
        }
        let rayon_cpu = report.median("B6", &case, "rayon", "cpu ms in window");
        for kind in opts.ours() {
            let target = format!(
                "{} idle CPU after a burst below rayon's ({case}, {} ms window)",
                label(kind),
                window.as_millis()
            );
            check_against_rayon(report, ("B6", &case), kind, "x rayon", true, target);
            if let (Some(ours), Some(theirs), Some(check)) = (
                report.median("B6", &case, label(kind), "cpu ms in window"),
                rayon_cpu,
                report.checks.last_mut(),
            ) {
                let _ = write!(check.measured, "; {ours:.3} ms vs {theirs:.3} ms");
            }
        }
    }
}

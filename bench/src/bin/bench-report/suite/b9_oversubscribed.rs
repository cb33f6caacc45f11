//! B9: oversubscription the pool did not choose, at 2 threads on a
//! machine of 2 vCPUs. (a) B7's and B8's loops while two CPU hogs, each a
//! process that spins, take the machine; (b) B8's loop on two pools of 2
//! threads in one process at the same time, as two libraries with a pool
//! each would run.

use std::time::Duration;

use eventcount_bench::workload::hog::Hogs;
use eventcount_bench::workload::{calibrate_busy_work, ticks};

use crate::options::Options;
use crate::report::Report;
use crate::suite::b8_control::{mode, SHAPES};
use crate::suite::{b7_ticks, b8_control};

/// Workers per pool.
const THREADS: usize = 2;

/// CPU hogs in (a): one per vCPU of the machine the benchmarks are written for.
const HOGS: usize = 2;

/// (a) under the hogs, then (b).
pub fn run(report: &mut Report, opts: &Options) {
    // Calibrated before the hogs start: a job is the same work as in B7.
    let iters = calibrate_busy_work(Duration::from_micros(5));
    match Hogs::start(HOGS) {
        Ok(hogs) => {
            let hogged = |what: String| format!("{} CPU hogs, {what}", hogs.count());
            for gap in ticks::GAPS {
                let case = hogged(format!("B7 gap {gap:?}"));
                b7_ticks::run_case(report, opts, ("B9", &case), THREADS, gap, iters);
            }
            for (shape_name, shape) in &SHAPES {
                for whole_tick in [false, true] {
                    let case = hogged(format!("B8 {shape_name}, {}", mode(whole_tick)));
                    let shape = (shape, whole_tick);
                    b8_control::run_case(report, opts, ("B9", &case), THREADS, shape, iters, false);
                }
            }
        }
        Err(err) => report.note(format!(
            "B9: no CPU hogs ({err}); the hogged cases did not run"
        )),
    }
    for (shape_name, shape) in &SHAPES {
        for whole_tick in [false, true] {
            let case = format!("two pools at once, B8 {shape_name}, {}", mode(whole_tick));
            let shape = (shape, whole_tick);
            b8_control::run_case(report, opts, ("B9", &case), THREADS, shape, iters, true);
        }
    }
}

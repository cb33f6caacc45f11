//! B8: a control loop, in the shape of rayon PR #1318's tick benchmark:
//! every tick runs parallel regions, each a join tree of busy leaves, with
//! serial work between the regions, and then the pool idles until the
//! tick's period is over. Two modes: each region its own `install` from the
//! main thread (the serial work runs there), or the whole tick one
//! `install` (the serial work runs on a worker). The loop is
//! `eventcount_workload::control`, which rayon-bench runs too.

use std::hint::black_box;
use std::time::Duration;

use eventcount_pool::AnyPool;
use eventcount_workload::control::{self, Shape};
use eventcount_workload::stats::{median, median_cpu_us, percentile, rotated};
use eventcount_workload::{busy_work, calibrate_busy_work};

use crate::options::Options;
use crate::report::Report;
use crate::suite::pools::{label, Metric, Round};

/// The shapes of tick, by their names in the tables: the full control loop,
/// and a lighter tick in which the pool idles most of the time, in gaps of
/// every length.
const SHAPES: [(&str, Shape); 2] = [
    ("8 regions x 64 x 10 us, every 10 ms", control::FULL),
    ("8 regions x 8 x 5 us, every 1 ms", control::LIGHT),
];

/// What each round records of each pool, against rayon's.
const ROUND: [Metric; 3] = [
    ("wasted us/tick", "wasted x rayon"),
    ("tick p50 us", "tick x rayon"),
    ("region p50 us", "region x rayon"),
];

/// Each pool, `opts.rounds()` times in rotated order, per thread count,
/// shape and mode.
pub fn run(report: &mut Report, opts: &Options) {
    let iters = calibrate_busy_work(Duration::from_micros(5));
    for threads in [2usize, 8] {
        for (shape_name, shape) in &SHAPES {
            for whole_tick in [false, true] {
                let mode = if whole_tick {
                    "one install"
                } else {
                    "install per region"
                };
                let case = format!("{shape_name}, {mode}, {threads} threads");
                let useful_us = useful_us(shape, iters, whole_tick);
                for round in 0..opts.rounds() {
                    let mut measured = Round::new(&ROUND);
                    for kind in rotated(opts.pools(), round) {
                        let pool = AnyPool::new(kind, threads, opts.idle_policy());
                        let ticks = if opts.quick {
                            shape.ticks / 10
                        } else {
                            shape.ticks
                        };
                        let m = control::run(&pool, shape, iters, whole_tick, ticks);
                        pool.shutdown();
                        let name = label(kind);
                        let cpu_us = m.cpu_us_per_tick();
                        report.add("B8", &case, name, "cpu cores", m.cores());
                        report.add("B8", &case, name, "cpu/useful", cpu_us / useful_us);
                        let switches = m.switches_per_tick();
                        report.add("B8", &case, name, "ctx switches/tick", switches);
                        let mut ticks = m.tick_us.clone();
                        let mut regions = m.region_us.clone();
                        report.add(
                            "B8",
                            &case,
                            name,
                            "tick p99 us",
                            percentile(&mut ticks, 0.99),
                        );
                        report.add(
                            "B8",
                            &case,
                            name,
                            "region p99 us",
                            percentile(&mut regions, 0.99),
                        );
                        let (tick, region) = (median(&m.tick_us), median(&m.region_us));
                        measured.add(name, &[cpu_us - useful_us, tick, region], m.sum);
                    }
                    measured.record(report, ("B8", &case));
                }
                report.add("B8", &case, "useful work", "us/tick", useful_us);
            }
        }
    }
}

/// The pool's useful work per tick, in this thread's CPU time: every leaf,
/// and in the one-install mode the serial stretches too, which then run on
/// a worker (median of 11 timings).
fn useful_us(shape: &Shape, iters: u32, whole_tick: bool) -> f64 {
    let leaf_iters = iters * shape.leaf_units;
    let serial_iters = iters * shape.serial_units;
    median_cpu_us(11, |seed| {
        for leaf in 0..u64::from(shape.regions * shape.leaves) {
            black_box(busy_work(seed * 4096 + leaf, leaf_iters));
        }
        if whole_tick {
            for r in 1..shape.regions {
                black_box(busy_work(seed ^ u64::from(r), serial_iters));
            }
        }
    })
}

//! B8: a control loop, in the shape of rayon PR #1318's tick benchmark:
//! every tick runs parallel regions, each a join tree of busy leaves, with
//! serial work between the regions, and then the pool idles until the
//! tick's period is over. Two modes: each region its own `install` from the
//! main thread (the serial work runs there), or the whole tick one
//! `install` (the serial work runs on a worker). The loop is
//! `eventcount_bench::workload::control`, which rayon-bench runs too.

use std::hint::black_box;
use std::time::Duration;

use eventcount_bench::workload::control::{self, Shape};
use eventcount_bench::workload::stats::{median, median_cpu_us, percentile, rotated};
use eventcount_bench::workload::{busy_work, calibrate_busy_work};

use crate::options::Options;
use crate::report::Report;
use crate::suite::pools::{Contender, Metric, Round};

/// The shapes of tick, by their names in the tables: the full control loop,
/// and a lighter tick in which the pool idles most of the time, in gaps of
/// every length.
pub const SHAPES: [(&str, Shape); 2] = [
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
                let case = format!("{shape_name}, {}, {threads} threads", mode(whole_tick));
                run_case(
                    report,
                    opts,
                    ("B8", &case),
                    threads,
                    (shape, whole_tick),
                    iters,
                    false,
                );
            }
        }
    }
}

/// One case of B8's loop (B9 runs it too): every contender,
/// `opts.rounds()` times in rotated order, on `threads` workers; with
/// `pair`, on two such pools at once in this process, each driven by a
/// thread of its own (the values are then per pool, latencies of both).
pub fn run_case(
    report: &mut Report,
    opts: &Options,
    (bench, case): (&'static str, &str),
    threads: usize,
    (shape, whole_tick): (&Shape, bool),
    iters: u32,
    pair: bool,
) {
    let useful_us = useful_us(shape, iters, whole_tick);
    let ticks = if opts.quick {
        shape.ticks / 10
    } else {
        shape.ticks
    };
    let contenders = Contender::all(opts);
    for round in 0..opts.rounds() {
        let mut measured = Round::new(&ROUND);
        for contender in rotated(&contenders, round) {
            let m = if pair {
                let (a, b) = (
                    contender.build(threads, opts),
                    contender.build(threads, opts),
                );
                let m = control::run_pair([&a, &b], shape, iters, whole_tick, ticks);
                // The later first: each waits for the threads started after
                // it was built to end.
                b.shutdown();
                a.shutdown();
                m
            } else {
                let pool = contender.build(threads, opts);
                let m = control::run(&pool, shape, iters, whole_tick, ticks);
                pool.shutdown();
                m
            };
            let name = contender.label();
            let cpu_us = m.cpu_us_per_tick();
            report.add(bench, case, &name, "cpu cores", m.cores());
            report.add(bench, case, &name, "cpu/useful", cpu_us / useful_us);
            let switches = m.switches_per_tick();
            report.add(bench, case, &name, "ctx switches/tick", switches);
            let mut ticks = m.tick_us.clone();
            let mut regions = m.region_us.clone();
            let tick_p99 = percentile(&mut ticks, 0.99);
            report.add(bench, case, &name, "tick p99 us", tick_p99);
            let region_p99 = percentile(&mut regions, 0.99);
            report.add(bench, case, &name, "region p99 us", region_p99);
            let (tick, region) = (median(&m.tick_us), median(&m.region_us));
            measured.add(&name, &[cpu_us - useful_us, tick, region], m.sum);
        }
        measured.record(report, (bench, case));
    }
    report.add(bench, case, "useful work", "us/tick", useful_us);
}

/// The name of a mode in the cases' names.
pub fn mode(whole_tick: bool) -> &'static str {
    if whole_tick {
        "one install"
    } else {
        "install per region"
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

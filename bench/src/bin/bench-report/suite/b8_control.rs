//! B8: a control loop, in the shape of rayon PR #1318's tick benchmark:
//! every tick runs parallel regions, each a join tree of busy leaves, with
//! serial work between the regions, and then the pool idles until the
//! tick's period is over. Two modes: each region its own `install` from the
//! main thread (the serial work runs there), or the whole tick one
//! `install` (the serial work runs on a worker).

use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use eventcount_pool::procstat::{cpu_of_other_threads, ProcUsage};
use eventcount_pool::{busy_work, calibrate_busy_work, AnyPool, TickShape, Workload};

use crate::options::Options;
use crate::report::Report;
use crate::suite::pools::label;
use crate::summary::{median, percentile, rotated, thread_cpu};

/// One shape of tick, in units of the calibrated 5 µs job.
struct Shape {
    name: &'static str,
    regions: u32,
    leaves: u32,
    leaf_units: u32,
    serial_units: u32,
    period: Duration,
    ticks: usize,
}

/// 8 regions of 64 leaves of 10 µs, 20 µs of serial work between them,
/// every 10 ms; and a lighter tick in which the pool idles most of the
/// time, in gaps of every length.
const SHAPES: [Shape; 2] = [
    Shape {
        name: "8 regions x 64 x 10 us, every 10 ms",
        regions: 8,
        leaves: 64,
        leaf_units: 2,
        serial_units: 4,
        period: Duration::from_millis(10),
        ticks: 100,
    },
    Shape {
        name: "8 regions x 8 x 5 us, every 1 ms",
        regions: 8,
        leaves: 8,
        leaf_units: 1,
        serial_units: 4,
        period: Duration::from_millis(1),
        ticks: 400,
    },
];

/// What one pool measured in one round.
struct Measured {
    cpu_us: f64,
    cores: f64,
    tick_us: Vec<f64>,
    region_us: Vec<f64>,
    switches: f64,
    sum: u64,
}

/// Each pool, `opts.rounds()` times in rotated order, per thread count,
/// shape and mode.
pub fn run(report: &mut Report, opts: &Options) {
    let iters = calibrate_busy_work(Duration::from_micros(5));
    for threads in [2usize, 8] {
        for shape in &SHAPES {
            for whole_tick in [false, true] {
                let mode = if whole_tick {
                    "one install"
                } else {
                    "install per region"
                };
                let case = format!("{}, {mode}, {threads} threads", shape.name);
                let useful_us = useful_us(shape, iters, whole_tick);
                for round in 0..opts.rounds() {
                    let (mut wasted, mut tick_p50, mut region_p50) =
                        (Vec::new(), Vec::new(), Vec::new());
                    let mut sums = Vec::new();
                    for kind in rotated(opts.pools(), round) {
                        let pool = AnyPool::new(kind, threads, opts.idle_policy());
                        let m = measure(&pool, shape, iters, whole_tick, opts.quick);
                        pool.shutdown();
                        let name = label(kind);
                        report.add("B8", &case, name, "cpu cores", m.cores);
                        report.add("B8", &case, name, "cpu/useful", m.cpu_us / useful_us);
                        report.add("B8", &case, name, "ctx switches/tick", m.switches);
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
                        wasted.push((name.to_string(), m.cpu_us - useful_us));
                        tick_p50.push((name.to_string(), median(&m.tick_us)));
                        region_p50.push((name.to_string(), median(&m.region_us)));
                        sums.push((name.to_string(), m.sum));
                    }
                    report.expect_same(&format!("B8 {case}"), &sums);
                    report.add_round(
                        "B8",
                        &case,
                        "wasted us/tick",
                        &wasted,
                        "rayon",
                        "wasted x rayon",
                    );
                    report.add_round(
                        "B8",
                        &case,
                        "tick p50 us",
                        &tick_p50,
                        "rayon",
                        "tick x rayon",
                    );
                    report.add_round(
                        "B8",
                        &case,
                        "region p50 us",
                        &region_p50,
                        "rayon",
                        "region x rayon",
                    );
                }
                report.add("B8", &case, "useful work", "us/tick", useful_us);
            }
        }
    }
}

/// Warm up, then run the ticks, paced to the period (no catching up after
/// an overrun), and measure.
fn measure(pool: &AnyPool, shape: &Shape, iters: u32, whole_tick: bool, quick: bool) -> Measured {
    let leaf_iters = iters * shape.leaf_units;
    let serial_iters = iters * shape.serial_units;
    let ticks = if quick { shape.ticks / 10 } else { shape.ticks };
    let region_us = Arc::new(Mutex::new(Vec::new()));
    let tick_shape = TickShape {
        regions: shape.regions,
        leaves: shape.leaves,
        leaf_iters,
        serial_iters,
        region_us: region_us.clone(),
    };
    let run_tick = |seed: u64| -> u64 {
        if whole_tick {
            return pool.run(&Workload::Tick {
                seed,
                shape: tick_shape.clone(),
            });
        }
        let mut sum = 0u64;
        let mut times = Vec::with_capacity(shape.regions as usize);
        for r in 0..shape.regions {
            if r > 0 {
                sum = sum.wrapping_add(busy_work(seed ^ u64::from(r), serial_iters));
            }
            let start = Instant::now();
            sum = sum.wrapping_add(pool.run(&Workload::Burst {
                seed: seed * 64 + u64::from(r),
                jobs: shape.leaves,
                iters: leaf_iters,
            }));
            times.push(start.elapsed().as_secs_f64() * 1e6);
        }
        region_us
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(times);
        sum
    };
    let mut next = Instant::now();
    let pace = |next: &mut Instant| {
        *next += shape.period;
        let now = Instant::now();
        match next.checked_duration_since(now) {
            Some(left) => thread::sleep(left),
            None => *next = now,
        }
    };
    for t in 0..(ticks / 10).max(2) as u64 {
        black_box(run_tick(t));
        pace(&mut next);
    }
    region_us.lock().unwrap_or_else(|p| p.into_inner()).clear();
    let (cpu0, usage0, wall0) = (cpu_of_other_threads(), ProcUsage::now(), Instant::now());
    let mut tick_us = Vec::with_capacity(ticks);
    let mut sum = 0u64;
    for t in 0..ticks as u64 {
        let start = Instant::now();
        sum = sum.wrapping_add(run_tick(t));
        tick_us.push(start.elapsed().as_secs_f64() * 1e6);
        pace(&mut next);
    }
    let wall = wall0.elapsed();
    let cpu = cpu_of_other_threads().saturating_sub(cpu0);
    let switches = ProcUsage::now().voluntary_switches - usage0.voluntary_switches;
    let region_us = std::mem::take(&mut *region_us.lock().unwrap_or_else(|p| p.into_inner()));
    Measured {
        cpu_us: cpu.as_secs_f64() * 1e6 / ticks as f64,
        cores: cpu.as_secs_f64() / wall.as_secs_f64(),
        tick_us,
        region_us,
        switches: switches as f64 / ticks as f64,
        sum,
    }
}

/// The pool's useful work per tick, in this thread's CPU time: every leaf,
/// and in the one-install mode the serial stretches too, which then run on
/// a worker (median of 11 timings).
fn useful_us(shape: &Shape, iters: u32, whole_tick: bool) -> f64 {
    let leaf_iters = iters * shape.leaf_units;
    let serial_iters = iters * shape.serial_units;
    let times: Vec<f64> = (0..11u64)
        .map(|seed| {
            let start = thread_cpu();
            for leaf in 0..u64::from(shape.regions * shape.leaves) {
                black_box(busy_work(seed * 4096 + leaf, leaf_iters));
            }
            if whole_tick {
                for r in 1..shape.regions {
                    black_box(busy_work(seed ^ u64::from(r), serial_iters));
                }
            }
            (thread_cpu() - start).as_secs_f64() * 1e6
        })
        .collect();
    median(&times)
}

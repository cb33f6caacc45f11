//! The workloads of `scripts/rayon-bench`, written once against rayon's
//! public API. rayon-interop builds this file three times, against stock
//! rayon and against rayon-core on each of eventcount's protocols; only the
//! sleep module differs between the three binaries.
//!
//! One run measures one workload on one pool and prints one JSON object:
//!
//! ```text
//! workload calibrate                    -> {"iters", "useful_us"}
//! workload fib|tree|sum|sort|fold <threads> -> {"ms", "check", "switches"}
//! workload idle <threads>               -> {"cpu_ms", "switches"}
//! workload ticks <threads> <gap_us> <iters> -> {"cpu_us", "useful_us", "wasted_us", "p50_us", "p90_us", "switches", "check"}
//! workload control <threads> <regions|tick> <full|light> <iters> -> {"cpu_cores", "cpu_per_useful",
//!     "wasted_us", "tick_p50_us", "tick_p99_us", "region_p50_us", "region_p99_us", "switches", "check"}
//! ```
//!
//! `iters` is what `calibrate` measured: iterations of the busy loop that
//! take about 5 µs here.
//!
//! CPU time is read from /proc per thread, and counts the pool's threads
//! only (every thread but the main one), so the main thread's own waiting
//! between ticks is not charged to the pool.

use std::hint::black_box;
use std::thread;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, what: &str| -> u64 {
        args.get(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("workload: argument {i} ({what}) missing or not a number"))
    };
    let name = args.first().map(String::as_str).unwrap_or("");
    let report = match name {
        "calibrate" => calibrate(),
        "fib" | "tree" | "sum" | "sort" | "fold" => timed(name, pool(arg(1, "threads"))),
        "idle" => idle(pool(arg(1, "threads"))),
        "ticks" => ticks(
            pool(arg(1, "threads")),
            Duration::from_micros(arg(2, "gap in us")),
            arg(3, "busy iterations per job") as u32,
        ),
        "control" => control(
            pool(arg(1, "threads")),
            args.get(2).map(String::as_str).unwrap_or(""),
            args.get(3).map(String::as_str).unwrap_or(""),
            arg(4, "busy iterations per 5 us") as u32,
        ),
        other => panic!("workload: unknown workload {other:?}"),
    };
    println!("{report}");
}

fn pool(threads: u64) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads as usize)
        .build()
        .expect("build the pool")
}

// ---------------------------------------------------------------------------
// B5 and the parallel iterators: time per run, median of several.

const FIB_N: u32 = 25;
const FIB_CUTOFF: u32 = 10;
const TREE_NODES: usize = (1 << 18) - 1;
const TREE_DEPTH: u32 = 10;
const SUM_ITEMS: u64 = 10_000_000;
const SORT_ITEMS: usize = 1 << 20;
/// The saturating fold: items of a few rounds of xorshift each, split as
/// finely as rayon likes, so every worker steals and runs to the end.
const FOLD_ITEMS: u64 = 1 << 22;

fn timed(name: &str, pool: rayon::ThreadPool) -> serde_json::Value {
    let tree: Vec<u64> = (0..TREE_NODES as u64).map(|i| i.wrapping_mul(31) % 1000).collect();
    let unsorted: Vec<u64> = {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        (0..SORT_ITEMS).map(|_| xorshift(&mut x)).collect()
    };
    // Enough runs for a stable median: a fork-join run takes a fraction
    // of a millisecond here, a sort tens of milliseconds.
    let (runs, warmup) = match name {
        "sort" | "fold" => (11, 2),
        "sum" => (31, 3),
        _ => (101, 10),
    };
    let mut times = Vec::with_capacity(runs);
    let mut check = 0u64;
    let switches0 = voluntary_switches();
    for run in 0..warmup + runs {
        let mut data = if name == "sort" { unsorted.clone() } else { Vec::new() };
        let start = Instant::now();
        check = pool.install(|| match name {
            "fib" => fib(FIB_N, FIB_CUTOFF),
            "tree" => tree_sum(&tree, 0, TREE_DEPTH),
            "sum" => (0..SUM_ITEMS)
                .into_par_iter()
                .map(|x| x.wrapping_mul(x) ^ (x >> 3))
                .sum::<u64>(),
            "fold" => (0..FOLD_ITEMS as u32)
                .into_par_iter()
                .with_max_len(64)
                .fold(|| 0u64, |acc, x| acc ^ busy(u64::from(x), 8))
                .reduce(|| 0, |a, b| a ^ b),
            _ => {
                data.par_sort();
                data[data.len() / 2]
            }
        });
        if run >= warmup {
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        black_box(&data);
    }
    let switches = voluntary_switches() - switches0;
    json!({
        "ms": median(&mut times),
        "check": check,
        "switches": switches as f64 / (warmup + runs) as f64,
    })
}

fn fib(n: u32, cutoff: u32) -> u64 {
    if n <= cutoff || n < 2 {
        return fib_seq(n);
    }
    let (a, b) = rayon::join(|| fib(n - 1, cutoff), || fib(n - 2, cutoff));
    a + b
}

fn fib_seq(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// The sum of the complete binary tree stored in `tree` under `root`,
/// splitting with `join` down to `depth`.
fn tree_sum(tree: &[u64], root: usize, depth: u32) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    if depth == 0 {
        return tree_sum_seq(tree, root);
    }
    let (l, r) = rayon::join(
        || tree_sum(tree, 2 * root + 1, depth - 1),
        || tree_sum(tree, 2 * root + 2, depth - 1),
    );
    tree[root] + l + r
}

fn tree_sum_seq(tree: &[u64], root: usize) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    tree[root] + tree_sum_seq(tree, 2 * root + 1) + tree_sum_seq(tree, 2 * root + 2)
}

// ---------------------------------------------------------------------------
// B6: the CPU a pool burns in the 300 ms after a burst of work.

fn idle(pool: rayon::ThreadPool) -> serde_json::Value {
    black_box(pool.install(|| fib(FIB_N, FIB_CUTOFF)));
    let (cpu0, switches0) = (pool_cpu(), voluntary_switches());
    thread::sleep(Duration::from_millis(300));
    let (cpu1, switches1) = (pool_cpu(), voluntary_switches());
    json!({
        "cpu_ms": (cpu1 - cpu0).as_secs_f64() * 1e3,
        "switches": switches1 - switches0,
    })
}

// ---------------------------------------------------------------------------
// B7: ticks of 8 small jobs, with gaps between them.

const TICK_JOBS: u32 = 8;
const TICKS: u64 = 200;
const WARMUP_TICKS: u64 = 20;

/// Iterations of `busy` that take about 5 us here, and what 8 such jobs
/// take on one thread (the useful work of one tick).
fn calibrate() -> serde_json::Value {
    let probe = 20_000u32;
    let mut per_iter: Vec<f64> = (0..9)
        .map(|seed| {
            let start = Instant::now();
            black_box(busy(seed, probe));
            start.elapsed().as_secs_f64() / probe as f64
        })
        .collect();
    let iters = ((5e-6 / median(&mut per_iter)).round() as u32).max(1);
    json!({ "iters": iters, "useful_us": tick_useful_us(iters) })
}

/// What `jobs` jobs of `iters` iterations take on one thread, in µs of
/// that thread's CPU time (not wall time, which another process on the
/// machine would stretch): the median of 21 timings, each of every job
/// once, in a row.
fn useful_us(jobs: u32, iters: u32) -> f64 {
    let mut runs: Vec<f64> = (0..21u64)
        .map(|seed| {
            let start = thread_cpu();
            for job in 0..jobs {
                black_box(busy(seed * 64 + job as u64, iters));
            }
            (thread_cpu() - start).as_secs_f64() * 1e6
        })
        .collect();
    median(&mut runs)
}

/// The calling thread's CPU time so far.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The useful work of one B7 tick: its 8 jobs on one thread.
fn tick_useful_us(iters: u32) -> f64 {
    useful_us(TICK_JOBS, iters)
}

fn ticks(pool: rayon::ThreadPool, gap: Duration, iters: u32) -> serde_json::Value {
    let useful_us = tick_useful_us(iters);
    let tick = |i: u64| pool.install(|| burst(i * 8, TICK_JOBS, iters));
    for i in 0..WARMUP_TICKS {
        black_box(tick(i));
        pause(gap);
    }
    let (cpu0, switches0) = (pool_cpu(), voluntary_switches());
    let mut latencies = Vec::with_capacity(TICKS as usize);
    let mut check = 0u64;
    for i in 0..TICKS {
        let start = Instant::now();
        check = check.wrapping_add(tick(i));
        latencies.push(start.elapsed().as_secs_f64() * 1e6);
        pause(gap);
    }
    let cpu = pool_cpu() - cpu0;
    let switches = voluntary_switches() - switches0;
    latencies.sort_by(f64::total_cmp);
    let cpu_us = cpu.as_secs_f64() * 1e6 / TICKS as f64;
    json!({
        "cpu_us": cpu_us,
        "useful_us": useful_us,
        "wasted_us": cpu_us - useful_us,
        "p50_us": percentile(&latencies, 0.5),
        "p90_us": percentile(&latencies, 0.9),
        "switches": switches as f64 / TICKS as f64,
        "check": check,
    })
}

/// `jobs` busy jobs spread over the pool with a join tree.
fn burst(seed: u64, jobs: u32, iters: u32) -> u64 {
    if jobs <= 1 {
        return busy(seed, iters);
    }
    let half = jobs / 2;
    let (a, b) = rayon::join(
        || burst(seed, half, iters),
        || burst(seed + half as u64, jobs - half, iters),
    );
    a.wrapping_add(b)
}

/// `iters` rounds of xorshift: a job of calibrated length.
#[inline(never)]
fn busy(seed: u64, iters: u32) -> u64 {
    let mut x = seed | 1;
    for _ in 0..iters {
        x = black_box(xorshift(&mut x));
    }
    x
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
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

// ---------------------------------------------------------------------------
// B8: a control loop (the shape of rayon PR #1318's tick benchmark). Every
// tick runs parallel regions, each a tree of `join`s down to its leaves,
// with serial work between regions, and then the pool idles until the
// tick's period is over.

/// One shape of tick.
struct Shape {
    regions: u32,
    leaves: u32,
    /// A leaf's work, in units of the calibrated 5 µs.
    leaf_units: u32,
    /// Serial work between two regions, in units of 5 µs.
    serial_units: u32,
    period: Duration,
    ticks: u32,
    warmup: u32,
}

/// 8 regions of 64 leaves of 10 µs, 20 µs of serial work between them,
/// every 10 ms.
const FULL: Shape = Shape {
    regions: 8,
    leaves: 64,
    leaf_units: 2,
    serial_units: 4,
    period: Duration::from_millis(10),
    ticks: 100,
    warmup: 10,
};

/// 8 regions of 8 leaves of 5 µs, 20 µs of serial work between them,
/// every 1 ms: the pool idles most of the tick, in gaps of every length.
const LIGHT: Shape = Shape {
    regions: 8,
    leaves: 8,
    leaf_units: 1,
    serial_units: 4,
    period: Duration::from_millis(1),
    ticks: 400,
    warmup: 40,
};

fn control(pool: rayon::ThreadPool, mode: &str, shape: &str, iters: u32) -> serde_json::Value {
    let shape = match shape {
        "full" => FULL,
        "light" => LIGHT,
        other => panic!("workload control: unknown shape {other:?} (full or light)"),
    };
    let whole_tick = match mode {
        "regions" => false,
        "tick" => true,
        other => panic!("workload control: unknown mode {other:?} (regions or tick)"),
    };
    let leaf = iters * shape.leaf_units;
    let serial = iters * shape.serial_units;
    // The pool's useful work per tick: every leaf, and in tick mode the
    // serial stretches too, which then run on a worker.
    let serial_us = useful_us(shape.regions - 1, serial);
    let useful_us = useful_us(shape.regions * shape.leaves, leaf)
        + if whole_tick { serial_us } else { 0.0 };

    let region = |seed: u64| burst(seed, shape.leaves, leaf);
    let mut region_us = Vec::with_capacity((shape.ticks * shape.regions) as usize);
    let mut tick_us = Vec::with_capacity(shape.ticks as usize);
    let mut check = 0u64;
    let run_tick = |t: u64, record: bool, region_us: &mut Vec<f64>| -> u64 {
        let mut times = Vec::with_capacity(shape.regions as usize);
        let sum = if whole_tick {
            pool.install(|| {
                let mut sum = 0u64;
                for r in 0..u64::from(shape.regions) {
                    if r > 0 {
                        sum = sum.wrapping_add(busy(t ^ r, serial));
                    }
                    let start = Instant::now();
                    sum = sum.wrapping_add(region(t * 64 + r));
                    times.push(start.elapsed().as_secs_f64() * 1e6);
                }
                sum
            })
        } else {
            let mut sum = 0u64;
            for r in 0..u64::from(shape.regions) {
                if r > 0 {
                    sum = sum.wrapping_add(busy(t ^ r, serial));
                }
                let start = Instant::now();
                sum = sum.wrapping_add(pool.install(|| region(t * 64 + r)));
                times.push(start.elapsed().as_secs_f64() * 1e6);
            }
            sum
        };
        if record {
            region_us.extend(times);
        }
        sum
    };

    let mut next = Instant::now();
    let pace = |next: &mut Instant| {
        *next += shape.period;
        let now = Instant::now();
        match next.checked_duration_since(now) {
            Some(left) => thread::sleep(left),
            None => *next = now, // overran: no catching up
        }
    };
    for t in 0..shape.warmup {
        black_box(run_tick(u64::from(t), false, &mut region_us));
        pace(&mut next);
    }
    let (cpu0, switches0, wall0) = (pool_cpu(), voluntary_switches(), Instant::now());
    for t in 0..shape.ticks {
        let start = Instant::now();
        check = check.wrapping_add(run_tick(u64::from(t), true, &mut region_us));
        tick_us.push(start.elapsed().as_secs_f64() * 1e6);
        pace(&mut next);
    }
    let wall = wall0.elapsed();
    let cpu = pool_cpu() - cpu0;
    let switches = voluntary_switches() - switches0;
    tick_us.sort_by(f64::total_cmp);
    region_us.sort_by(f64::total_cmp);
    let cpu_per_tick_us = cpu.as_secs_f64() * 1e6 / f64::from(shape.ticks);
    json!({
        "cpu_cores": cpu.as_secs_f64() / wall.as_secs_f64(),
        "cpu_per_useful": cpu_per_tick_us / useful_us,
        "cpu_us": cpu_per_tick_us,
        "useful_us": useful_us,
        "wasted_us": cpu_per_tick_us - useful_us,
        "tick_p50_us": percentile(&tick_us, 0.5),
        "tick_p99_us": percentile(&tick_us, 0.99),
        "region_p50_us": percentile(&region_us, 0.5),
        "region_p99_us": percentile(&region_us, 0.99),
        "switches": switches as f64 / f64::from(shape.ticks),
        "check": check,
    })
}

// ---------------------------------------------------------------------------
// Measurement.

/// CPU time of every thread of this process but the main one, from each
/// thread's /proc schedstat (nanoseconds).
fn pool_cpu() -> Duration {
    let main = std::process::id().to_string();
    let mut total = Duration::ZERO;
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        if task.file_name().to_str() == Some(main.as_str()) {
            continue;
        }
        if let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) {
            if let Some(ns) = stat.split_whitespace().next().and_then(|v| v.parse().ok()) {
                total += Duration::from_nanos(ns);
            }
        }
    }
    total
}

/// Voluntary context switches of every thread of this process: each is a
/// block in the kernel (a futex wait, a sleep).
fn voluntary_switches() -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        if let Ok(status) = std::fs::read_to_string(task.path().join("status")) {
            total += status
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    total
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    percentile(values, 0.5)
}

/// The value at fraction `p` of sorted `values` (nearest rank).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

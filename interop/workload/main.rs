//! The workload program of `scripts/rayon-bench`. rayon-interop builds
//! this file once per build, against stock rayon and against rayon-core on
//! each of eventcount's protocols; only the sleep module differs between
//! the binaries. The fork-join workloads and the loops of B7 and B8 are
//! eventcount-bench's (`workload`), the same code bench-report runs on the example
//! pool; the parallel iterators (`sum`, `sort`, `fold`) are rayon's own.
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
//! workload control-pair <threads> <regions|tick> <full|light> <iters> -> the same, for two
//!     pools at once, each driven by a thread of its own: CPU per tick per pool, both pools'
//!     latencies, the cores of both
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

use eventcount_bench::workload::procstat::{live_threads, voluntary_switches, ProcUsage};
use eventcount_bench::workload::stats::{median, percentile};
use eventcount_bench::workload::{
    calibrate_busy_work, control, fold_item, jobs_cpu_us, make_tree, ticks, xorshift, RayonWorker,
    Runner, Workload,
};
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
        "control" | "control-pair" => {
            let threads = arg(1, "threads");
            let pair = name == "control-pair";
            let pools: Vec<rayon::ThreadPool> =
                (0..1 + usize::from(pair)).map(|_| pool(threads)).collect();
            control(
                &pools,
                args.get(2).map(String::as_str).unwrap_or(""),
                args.get(3).map(String::as_str).unwrap_or(""),
                arg(4, "busy iterations per 5 us") as u32,
            )
        }
        other => panic!("workload: unknown workload {other:?}"),
    };
    if std::env::var_os("EVENTCOUNT_GAP_TRACE").is_some() {
        // A recording run (`--record`): the pools are dropped, and each
        // writes the rest of its gaps when its last worker exits. Wait for
        // them, a few seconds at most.
        let deadline = Instant::now() + Duration::from_secs(5);
        while live_threads() > 1 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
    }
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

const FIB: Workload = Workload::Fib { n: 25, cutoff: 10 };
const TREE_NODES: usize = (1 << 18) - 1;
const TREE_DEPTH: u32 = 10;
const SUM_ITEMS: u64 = 10_000_000;
const SORT_ITEMS: usize = 1 << 20;
/// The saturating fold: items of a few rounds of xorshift each, split as
/// finely as rayon likes, so every worker steals and runs to the end.
const FOLD_ITEMS: u64 = 1 << 22;

fn timed(name: &str, pool: rayon::ThreadPool) -> serde_json::Value {
    let tree = Workload::TreeSum {
        tree: make_tree(TREE_NODES),
        depth: TREE_DEPTH,
    };
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
        let mut data = if name == "sort" {
            unsorted.clone()
        } else {
            Vec::new()
        };
        let start = Instant::now();
        check = pool.install(|| match name {
            "fib" => FIB.run_on(&RayonWorker),
            "tree" => tree.run_on(&RayonWorker),
            "sum" => (0..SUM_ITEMS)
                .into_par_iter()
                .map(|x| x.wrapping_mul(x) ^ (x >> 3))
                .sum::<u64>(),
            "fold" => (0..FOLD_ITEMS as u32)
                .into_par_iter()
                .with_max_len(64)
                .fold(|| 0u64, |acc, x| acc ^ fold_item(u64::from(x)))
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
        "ms": median(&times),
        "check": check,
        "switches": switches as f64 / (warmup + runs) as f64,
    })
}

// ---------------------------------------------------------------------------
// B6: the CPU a pool burns in the 300 ms after a burst of work.

fn idle(pool: rayon::ThreadPool) -> serde_json::Value {
    black_box(pool.run(&FIB));
    let before = ProcUsage::for_pool();
    thread::sleep(Duration::from_millis(300));
    let spent = ProcUsage::for_pool().since(&before);
    json!({
        "cpu_ms": spent.cpu.as_secs_f64() * 1e3,
        "switches": spent.voluntary_switches,
    })
}

// ---------------------------------------------------------------------------
// B7: ticks of 8 small jobs, with gaps between them.

const TICKS: u64 = 200;

/// Iterations of the busy loop that take about 5 us here, and what a B7
/// tick's 8 such jobs take on one thread (its useful work).
fn calibrate() -> serde_json::Value {
    let iters = calibrate_busy_work(Duration::from_micros(5));
    json!({ "iters": iters, "useful_us": ticks::useful_us(iters) })
}

fn ticks(pool: rayon::ThreadPool, gap: Duration, iters: u32) -> serde_json::Value {
    let useful_us = ticks::useful_us(iters);
    let (ticked, switches0) = ticks::run(&pool, iters, gap, TICKS, voluntary_switches);
    let switches = voluntary_switches() - switches0;
    let mut latencies = ticked.latency_us;
    let cpu_us = ticked.cpu.as_secs_f64() * 1e6 / TICKS as f64;
    json!({
        "cpu_us": cpu_us,
        "useful_us": useful_us,
        "wasted_us": cpu_us - useful_us,
        "p50_us": percentile(&mut latencies, 0.5),
        "p90_us": percentile(&mut latencies, 0.9),
        "switches": switches as f64 / TICKS as f64,
        "check": ticked.sum,
    })
}

// ---------------------------------------------------------------------------
// B8: a control loop (the shape of rayon PR #1318's tick benchmark), as
// bench-report runs it on the example pool; and B9's two pools at once.

/// One pool, or two at once (`control::run_pair`).
fn control(pools: &[rayon::ThreadPool], mode: &str, shape: &str, iters: u32) -> serde_json::Value {
    let shape = match shape {
        "full" => control::FULL,
        "light" => control::LIGHT,
        other => panic!("workload control: unknown shape {other:?} (full or light)"),
    };
    let whole_tick = match mode {
        "regions" => false,
        "tick" => true,
        other => panic!("workload control: unknown mode {other:?} (regions or tick)"),
    };
    // The pool's useful work per tick: every leaf, and in tick mode the
    // serial stretches too, which then run on a worker.
    let leaves = jobs_cpu_us(21, shape.regions * shape.leaves, iters * shape.leaf_units);
    let useful_us = if whole_tick {
        leaves + jobs_cpu_us(21, shape.regions - 1, iters * shape.serial_units)
    } else {
        leaves
    };
    let mut m = match pools {
        [pool] => control::run(pool, &shape, iters, whole_tick, shape.ticks),
        [a, b] => control::run_pair([a, b], &shape, iters, whole_tick, shape.ticks),
        _ => unreachable!("one pool or two"),
    };
    let cpu_per_tick_us = m.cpu_us_per_tick();
    json!({
        "cpu_cores": m.cores(),
        "cpu_per_useful": cpu_per_tick_us / useful_us,
        "cpu_us": cpu_per_tick_us,
        "useful_us": useful_us,
        "wasted_us": cpu_per_tick_us - useful_us,
        "tick_p50_us": percentile(&mut m.tick_us, 0.5),
        "tick_p99_us": percentile(&mut m.tick_us, 0.99),
        "region_p50_us": percentile(&mut m.region_us, 0.5),
        "region_p99_us": percentile(&mut m.region_us, 0.99),
        "switches": m.switches_per_tick(),
        "check": m.sum,
    })
}

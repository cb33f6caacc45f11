//! B2-B4: waking sleeping threads, ours against the usual alternatives.
//!
//! - `pingpong/<impl>`: one round trip between two threads (A wakes B, B
//!   wakes A), both sleeping between turns. Baseline: `raw_futex`.
//! - `fanout/<impl>/<N>`: N sleepers, one wake-all, time until all N
//!   acknowledged. Only the wake is timed: before each round the bench
//!   waits until every sleeper is asleep in the kernel.
//! - `bursty/<impl>`: 2 producers and 4 consumers over a `Mutex<VecDeque>`,
//!   bursts of 32 items with 50 us gaps; throughput per item.
//!
//! Run with `cargo bench --bench wake`. On the 2-vCPU VM a cross-core wake
//! costs ~30 us and varies from run to run: compare rows within one run
//! (`python3 scripts/bench_ratios.py wake pingpong/raw_futex 3`), or use
//! `cargo run --release --example bench_report`, which alternates the
//! implementations and prints medians and ratios.

#[path = "support/wake_impls.rs"]
mod wake_impls;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use wake_impls::{BurstConfig, BurstImpl, FanImpl, Fanout, PingImpl, PingPong};

fn pingpong(c: &mut Criterion) {
    let mut group = c.benchmark_group("pingpong");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    for imp in PingImpl::ALL {
        let mut pair = PingPong::start(imp);
        let before = pair.stats();
        let mut trips = 0u64;
        group.bench_function(imp.name(), |b| {
            b.iter_custom(|iters| {
                trips += iters;
                let start = Instant::now();
                for _ in 0..iters {
                    pair.round_trip();
                }
                start.elapsed()
            })
        });
        if let (Some(before), Some(after)) = (before, pair.stats()) {
            eprintln!(
                "pingpong/notifier: {:.2} futex waits and {:.2} futex wakes per round trip \
                 (ideal: 2 and 2)",
                (after.waits - before.waits) as f64 / trips.max(1) as f64,
                (after.wakes - before.wakes) as f64 / trips.max(1) as f64,
            );
        }
    }
    group.finish();
}

fn fanout(c: &mut Criterion) {
    let mut group = c.benchmark_group("fanout");
    // Each timed wake-all is preceded by an untimed wait until all sleepers
    // are asleep, which costs more than the wake: keep the budget small.
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(700))
        .sample_size(10);
    for n in [2usize, 4, 8] {
        for imp in FanImpl::ALL {
            let mut fan = Fanout::start(imp, n);
            let before = fan.stats();
            let rounds_before = fan.rounds();
            group.bench_with_input(BenchmarkId::new(imp.name(), n), &n, |b, _| {
                b.iter_custom(|iters| (0..iters).map(|_| fan.round()).sum())
            });
            if let (Some(before), Some(after)) = (before, fan.stats()) {
                let rounds = (fan.rounds() - rounds_before).max(1) as f64;
                eprintln!(
                    "fanout/notifier/{n}: {:.3} futex wakes per notify_all with {n} sleeping \
                     waiters (target: exactly {n}), {:.3} futex waits per round",
                    (after.wakes - before.wakes) as f64 / rounds,
                    (after.waits - before.waits) as f64 / rounds,
                );
            }
        }
    }
    group.finish();
}

fn bursty(c: &mut Criterion) {
    let cfg = BurstConfig::small(10);
    let mut group = c.benchmark_group("bursty");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10)
        .throughput(Throughput::Elements(cfg.items() as u64));
    for imp in BurstImpl::ALL {
        let mut wakes = (0u64, 0u64);
        group.bench_function(imp.name(), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let run = wake_impls::run_bursty(imp, &cfg);
                    if let Some(stats) = run.stats {
                        wakes.0 += stats.wakes;
                        wakes.1 += run.items as u64;
                    }
                    total += run.elapsed;
                }
                total
            })
        });
        if wakes.1 > 0 {
            eprintln!(
                "bursty/notifier: {:.3} futex wakes per item",
                wakes.0 as f64 / wakes.1 as f64
            );
        }
    }
    group.finish();
}

criterion_group!(benches, pingpong, fanout, bursty);
criterion_main!(benches);

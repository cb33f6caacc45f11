//! B2-B4: waking sleeping threads, ours against the usual alternatives,
//! each workload written once over every peer (`eventcount_bench::peer`).
//!
//! - `pingpong/<peer>`: one round trip between two threads (A wakes B, B
//!   wakes A), both sleeping between turns. Baseline: `raw_futex`.
//! - `fanout/<peer>/<N>`: N sleepers, one wake-all, time until all N
//!   acknowledged. Only the wake is timed: before each round the bench
//!   waits until every sleeper is asleep in the kernel.
//! - `bursty/<peer>`: 2 producers and 4 consumers over a `Mutex<VecDeque>`,
//!   bursts of 32 items with 50 us gaps; throughput per item.
//!
//! Run with `cargo bench -p eventcount-bench --bench wake`. On the 2-vCPU
//! VM a cross-core wake costs ~30 us and varies from run to run: compare
//! rows within one run, or use `bench-report`, which alternates the peers
//! and prints medians and ratios taken within each round.

use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use eventcount::SleepStats;
use eventcount_bench::bursty::{self, BurstConfig};
use eventcount_bench::{fanout, pingpong};

/// A group with a short time budget: every row sleeps and wakes threads,
/// and criterion's defaults would take minutes.
fn short_group<'a>(
    c: &'a mut Criterion,
    name: &str,
    (warm_up, measurement): (Duration, Duration),
    samples: usize,
) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .warm_up_time(warm_up)
        .measurement_time(measurement)
        .sample_size(samples);
    group
}

/// The futex calls a peer made between two readings, if it counts them.
fn during(before: Option<SleepStats>, after: Option<SleepStats>) -> Option<SleepStats> {
    before.zip(after).map(|(before, after)| after - before)
}

fn pingpong(c: &mut Criterion) {
    let budget = (Duration::from_millis(500), Duration::from_secs(2));
    let mut group = short_group(c, "pingpong", budget, 20);
    for kind in pingpong::PEERS {
        let mut pair = pingpong::start(kind);
        let before = pair.stats();
        let mut trips = 0u64;
        group.bench_function(kind.name(), |b| {
            b.iter_custom(|iters| {
                trips += iters;
                let start = Instant::now();
                for _ in 0..iters {
                    pair.round_trip();
                }
                start.elapsed()
            })
        });
        if let Some(stats) = during(before, pair.stats()) {
            let per_trip = |count: u64| count as f64 / trips.max(1) as f64;
            eprintln!(
                "pingpong/{}: {:.2} futex waits and {:.2} futex wakes per round trip \
                 (ideal: 2 and 2)",
                kind.name(),
                per_trip(stats.waits),
                per_trip(stats.wakes),
            );
        }
    }
    group.finish();
}

fn fanout(c: &mut Criterion) {
    // Each timed wake-all is preceded by an untimed wait until all sleepers
    // are asleep, which costs more than the wake: keep the budget small.
    let budget = (Duration::from_millis(300), Duration::from_millis(700));
    let mut group = short_group(c, "fanout", budget, 10);
    for n in [2usize, 4, 8] {
        for kind in fanout::PEERS {
            let mut fan = fanout::start(kind, n);
            let before = fan.stats();
            let mut rounds = 0u64;
            group.bench_with_input(BenchmarkId::new(kind.name(), n), &n, |b, _| {
                b.iter_custom(|iters| {
                    rounds += iters;
                    (0..iters).map(|_| fan.round()).sum()
                })
            });
            if let Some(stats) = during(before, fan.stats()) {
                let per_round = |count: u64| count as f64 / rounds.max(1) as f64;
                eprintln!(
                    "fanout/{}/{n}: {:.3} futex wakes per notify_all with {n} sleeping \
                     waiters (target: exactly {n}), {:.3} futex waits per round",
                    kind.name(),
                    per_round(stats.wakes),
                    per_round(stats.waits),
                );
            }
        }
    }
    group.finish();
}

fn bursty(c: &mut Criterion) {
    let cfg = BurstConfig::small(10);
    let budget = (Duration::from_millis(500), Duration::from_secs(2));
    let mut group = short_group(c, "bursty", budget, 10);
    group.throughput(Throughput::Elements(cfg.items() as u64));
    for kind in bursty::PEERS {
        let (mut wakes, mut items) = (0u64, 0u64);
        group.bench_function(kind.name(), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let run = bursty::run(kind, &cfg);
                    if let Some(stats) = run.stats {
                        wakes += stats.wakes;
                        items += run.items as u64;
                    }
                    total += run.elapsed;
                }
                total
            })
        });
        if items > 0 {
            eprintln!(
                "bursty/{}: {:.3} futex wakes per item",
                kind.name(),
                wakes as f64 / items as f64
            );
        }
    }
    group.finish();
}

criterion_group!(benches, pingpong, fanout, bursty);
criterion_main!(benches);

//! B5: fork-join in the example work-stealing pool (examples/pool) on both
//! sleep protocols, against `rayon::join` inside rayon's own pool
//! (`install`, never from outside), at 2 and 8 threads on the same inputs:
//!
//! - `fib25_cutoff10/<impl>/<threads>`: `fib(25)`, `join` down to n = 10;
//! - `tree_2^18-1_depth10/<impl>/<threads>`: the sum of a complete binary
//!   tree of 2^18 - 1 nodes, `join` for the top 10 levels.
//!
//! `seq` rows are the sequential baseline on the bench thread. Every pool is
//! built once per row and warmed up by criterion. B6 (idle CPU after a
//! burst) and B7 (ticks) measure CPU time, not wall time: they are in
//! `cargo run --release --example bench_report`.

#[path = "support/forkjoin.rs"]
mod forkjoin;
#[path = "../examples/pool/pool.rs"]
mod pool;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion};
use eventcount::{JecSleep, NotifierSleep, SleepProtocol};
use pool::Pool;

const FIB_N: u32 = 25;
const FIB_CUTOFF: u32 = 10;
const TREE_NODES: usize = (1 << 18) - 1;
const TREE_DEPTH: u32 = 10;
const THREADS: [usize; 2] = [2, 8];

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

fn configure(group: &mut Group<'_>) {
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
}

fn ours<S: SleepProtocol + 'static>(
    group: &mut Group<'_>,
    threads: usize,
    sleep: S,
    run: impl Fn(&Pool<S>) -> u64,
) {
    let pool = Pool::new(threads, sleep);
    let name = pool.sleep().name();
    group.bench_function(BenchmarkId::new(name, threads), |b| {
        b.iter(|| black_box(run(&pool)))
    });
    pool.shutdown();
}

fn rayon_row(group: &mut Group<'_>, threads: usize, run: impl Fn() -> u64 + Sync) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("rayon pool");
    group.bench_function(BenchmarkId::new("rayon", threads), |b| {
        b.iter(|| black_box(pool.install(&run)))
    });
}

fn fib(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("fib{FIB_N}_cutoff{FIB_CUTOFF}"));
    configure(&mut group);
    group.bench_function(BenchmarkId::new("seq", 1), |b| {
        b.iter(|| pool::fib_seq(black_box(FIB_N)))
    });
    for threads in THREADS {
        ours(&mut group, threads, JecSleep::new(threads), |p| {
            p.install(|ctx| pool::fib(ctx, black_box(FIB_N), black_box(FIB_CUTOFF)))
        });
        ours(&mut group, threads, NotifierSleep::new(threads), |p| {
            p.install(|ctx| pool::fib(ctx, black_box(FIB_N), black_box(FIB_CUTOFF)))
        });
        rayon_row(&mut group, threads, || {
            forkjoin::rayon_fib(black_box(FIB_N), black_box(FIB_CUTOFF))
        });
    }
    group.finish();
}

fn tree(c: &mut Criterion) {
    let tree = pool::make_tree(TREE_NODES);
    let mut group = c.benchmark_group(format!("tree_2^18-1_depth{TREE_DEPTH}"));
    configure(&mut group);
    group.bench_function(BenchmarkId::new("seq", 1), |b| {
        b.iter(|| pool::tree_sum_seq(black_box(&tree), 0))
    });
    for threads in THREADS {
        let t = tree.clone();
        ours(&mut group, threads, JecSleep::new(threads), move |p| {
            let t: Arc<Vec<u64>> = t.clone();
            p.install(move |ctx| pool::tree_sum(ctx, &t, 0, TREE_DEPTH))
        });
        let t = tree.clone();
        ours(&mut group, threads, NotifierSleep::new(threads), move |p| {
            let t: Arc<Vec<u64>> = t.clone();
            p.install(move |ctx| pool::tree_sum(ctx, &t, 0, TREE_DEPTH))
        });
        rayon_row(&mut group, threads, || {
            forkjoin::rayon_tree(&tree, 0, TREE_DEPTH)
        });
    }
    group.finish();
}

criterion_group!(benches, fib, tree);
criterion_main!(benches);

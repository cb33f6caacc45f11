//! B5: fork-join in the example work-stealing pool (`eventcount_bench::pool`) on
//! both sleep protocols, against `rayon::join` inside rayon's own pool
//! (`install`, never from outside), at 2 and 8 threads on the same inputs:
//!
//! - `fib25_cutoff10/<pool>/<threads>`: `fib(25)`, `join` down to n = 10;
//! - `tree_2^18-1_depth10/<pool>/<threads>`: the sum of a complete binary
//!   tree of 2^18 - 1 nodes, `join` for the top 10 levels.
//!
//! `seq` rows are the sequential baseline on the bench thread. Every pool is
//! built once per row and warmed up by criterion. B6 (idle CPU after a
//! burst) and B7 (ticks) measure CPU time, not wall time: they are in
//! `bench-report`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use eventcount::IdlePolicy;
use eventcount_bench::pool::{AnyPool, PoolKind};
use eventcount_bench::workload::{make_tree, Workload};

const THREADS: [usize; 2] = [2, 8];

/// The sequential row, then every pool at every thread count, on `work`.
fn compare(c: &mut Criterion, group_name: &str, work: Workload) {
    let mut group = c.benchmark_group(group_name);
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    group.bench_function(BenchmarkId::new("seq", 1), |b| {
        b.iter(|| black_box(&work).run_sequential())
    });
    for threads in THREADS {
        for kind in PoolKind::ALL {
            let pool = AnyPool::new(kind, threads, IdlePolicy::default());
            group.bench_function(BenchmarkId::new(kind.name(), threads), |b| {
                b.iter(|| pool.run(black_box(&work)))
            });
            pool.shutdown();
        }
    }
    group.finish();
}

fn fib(c: &mut Criterion) {
    compare(c, "fib25_cutoff10", Workload::Fib { n: 25, cutoff: 10 });
}

fn tree(c: &mut Criterion) {
    let tree = make_tree((1 << 18) - 1);
    compare(
        c,
        "tree_2^18-1_depth10",
        Workload::TreeSum { tree, depth: 10 },
    );
}

criterion_group!(benches, fib, tree);
criterion_main!(benches);

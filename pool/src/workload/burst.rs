//! Fork-join workloads for B5-B7 written for rayon and for the example pool
//! (`examples/pool/pool.rs`, which the includer must declare as `mod pool`).
//!
//! Shared by `benches/pool.rs` and `examples/bench_report.rs` through
//! `#[path]`.

#![allow(dead_code)] // each includer uses a different part

use std::hint::black_box;
use std::time::{Duration, Instant};

use eventcount::SleepProtocol;

use crate::pool::{self, WorkerCtx};

/// rayon's twin of `pool::fib`.
pub fn rayon_fib(n: u32, cutoff: u32) -> u64 {
    if n <= cutoff || n < 2 {
        return pool::fib_seq(n);
    }
    let (a, b) = rayon::join(|| rayon_fib(n - 1, cutoff), || rayon_fib(n - 2, cutoff));
    a + b
}

/// rayon's twin of `pool::tree_sum`.
pub fn rayon_tree(tree: &[u64], root: usize, depth: u32) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    if depth == 0 {
        return pool::tree_sum_seq(tree, root);
    }
    let (l, r) = rayon::join(
        || rayon_tree(tree, 2 * root + 1, depth - 1),
        || rayon_tree(tree, 2 * root + 2, depth - 1),
    );
    tree[root] + l + r
}

/// `iters` rounds of xorshift: a job of calibrated length.
#[inline(never)]
pub fn busy_work(seed: u64, iters: u32) -> u64 {
    let mut x = seed | 1;
    for _ in 0..iters {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = black_box(x);
    }
    x
}

/// The `busy_work` iteration count that takes about `target` on this
/// machine (median of several timings on the calling thread).
pub fn calibrate_busy_work(target: Duration) -> u32 {
    let probe = 20_000u32;
    let mut per_iter = Vec::new();
    for round in 0..9 {
        let start = Instant::now();
        black_box(busy_work(round, probe));
        per_iter.push(start.elapsed().as_secs_f64() / probe as f64);
    }
    per_iter.sort_by(f64::total_cmp);
    let per = per_iter[per_iter.len() / 2];
    ((target.as_secs_f64() / per).round() as u32).max(1)
}

/// `jobs` busy jobs spread over the pool with a join tree (B7's tick).
pub fn burst_tree<S: SleepProtocol + 'static>(
    ctx: &WorkerCtx<S>,
    seed: u64,
    jobs: u32,
    iters: u32,
) -> u64 {
    if jobs <= 1 {
        return busy_work(seed, iters);
    }
    let half = jobs / 2;
    let (a, b) = ctx.join(
        move |ctx| burst_tree(ctx, seed, half, iters),
        move |ctx| burst_tree(ctx, seed + half as u64, jobs - half, iters),
    );
    a.wrapping_add(b)
}

/// rayon's twin of `burst_tree`.
pub fn rayon_burst(seed: u64, jobs: u32, iters: u32) -> u64 {
    if jobs <= 1 {
        return busy_work(seed, iters);
    }
    let half = jobs / 2;
    let (a, b) = rayon::join(
        || rayon_burst(seed, half, iters),
        || rayon_burst(seed + half as u64, jobs - half, iters),
    );
    a.wrapping_add(b)
}

//! Bursts of calibrated busy jobs: what a pool does between idle spells
//! (the pool example's bursts, and the ticks of benchmark B7).

use std::hint::black_box;
use std::time::{Duration, Instant};

use eventcount::SleepProtocol;

use crate::WorkerCtx;

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

/// `jobs` busy jobs spread over the example pool with a join tree.
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

/// [`burst_tree`] written for rayon (call it inside a rayon pool's
/// `install`).
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

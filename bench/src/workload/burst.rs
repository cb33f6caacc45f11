//! Bursts of calibrated busy jobs: what a pool does between idle spells
//! (the example pool's bursts, the ticks of B7, the regions of B8).

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::workload::stats::median_cpu_us;
use crate::workload::Join;

/// One step of xorshift64 on `x`, returning the new value.
#[inline]
pub fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// `iters` rounds of xorshift: a job of calibrated length. Never inlined,
/// so that a job costs the same wherever it is called from.
#[inline(never)]
pub fn busy_work(seed: u64, iters: u32) -> u64 {
    let mut x = seed | 1;
    for _ in 0..iters {
        x = black_box(xorshift(&mut x));
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

/// What `jobs` busy jobs of `iters` rounds take run one after another on
/// the calling thread: the median of `timings` timings, in µs of the
/// thread's CPU time. The useful work a pool's CPU time is set against.
pub fn jobs_cpu_us(timings: u64, jobs: u32, iters: u32) -> f64 {
    median_cpu_us(timings, |seed| {
        for job in 0..u64::from(jobs) {
            black_box(busy_work(seed * 8 + job, iters));
        }
    })
}

/// `jobs` busy jobs of `iters` rounds spread over the pool with a join
/// tree; job i is seeded with `seed + i`.
pub fn burst_tree<J: Join>(worker: &J, seed: u64, jobs: u32, iters: u32) -> u64 {
    if jobs <= 1 {
        return busy_work(seed, iters);
    }
    let half = jobs / 2;
    let (a, b) = worker.join(
        move |w| burst_tree(w, seed, half, iters),
        move |w| burst_tree(w, seed + half as u64, jobs - half, iters),
    );
    a.wrapping_add(b)
}

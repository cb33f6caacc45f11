//! B7's loop: ticks of a few small jobs with gaps between them, as a game
//! or a server loop would submit them. bench-report runs it on the example
//! pool and on rayon's; rayon-bench on stock and patched rayon.

use std::hint::black_box;
use std::thread;
use std::time::{Duration, Instant};

use crate::workload::procstat::cpu_of_other_threads;
use crate::workload::{jobs_cpu_us, Runner, Workload};

/// Jobs per tick.
pub const JOBS: u32 = 8;

/// The gaps between ticks: serial work on the caller (short), and idle
/// time of two lengths.
pub const GAPS: [Duration; 3] = [
    Duration::from_micros(20),
    Duration::from_micros(200),
    Duration::from_millis(2),
];

/// Ticks run before the measured ones.
const WARMUP: u64 = 20;

/// Tick `i`: [`JOBS`] busy jobs of `iters` rounds, in a join tree.
pub fn tick(i: u64, iters: u32) -> Workload {
    Workload::Burst {
        seed: i * 8,
        jobs: JOBS,
        iters,
    }
}

/// The useful work of one tick, timed the way the jobs run it: its jobs
/// one after another on this thread (median of 21 ticks, µs of this
/// thread's CPU time).
pub fn useful_us(iters: u32) -> f64 {
    jobs_cpu_us(21, JOBS, iters)
}

/// The gap between ticks: short gaps are serial work on the caller (it
/// spins), long ones are idle time (it sleeps).
pub fn pause(gap: Duration) {
    if gap < Duration::from_micros(100) {
        let until = Instant::now() + gap;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    } else {
        thread::sleep(gap);
    }
}

/// What the measured ticks of one [`run`] took.
#[derive(Clone, Debug)]
pub struct Ticked {
    /// Each tick's latency, from handing it over to its result, in µs.
    pub latency_us: Vec<f64>,
    /// CPU time of every thread but the caller's over all the ticks.
    pub cpu: Duration,
    /// The ticks' results, summed (wrapping): the same on every pool.
    pub sum: u64,
}

/// Warm up, then run `ticks` ticks of jobs of `iters` rounds on `pool`,
/// pausing `gap` after each. `start` runs just before the measured ticks,
/// after the warm-up, and its result comes back with the measurement: a
/// caller's own counters are read there.
pub fn run<R: Runner + ?Sized, T>(
    pool: &R,
    iters: u32,
    gap: Duration,
    ticks: u64,
    start: impl FnOnce() -> T,
) -> (Ticked, T) {
    for i in 0..WARMUP {
        black_box(pool.run(&tick(i, iters)));
        pause(gap);
    }
    let started = start();
    let cpu_before = cpu_of_other_threads();
    let mut latency_us = Vec::with_capacity(ticks as usize);
    let mut sum = 0u64;
    for i in 0..ticks {
        let start = Instant::now();
        sum = sum.wrapping_add(pool.run(&tick(i, iters)));
        latency_us.push(start.elapsed().as_secs_f64() * 1e6);
        pause(gap);
    }
    let cpu = cpu_of_other_threads().saturating_sub(cpu_before);
    let ticked = Ticked {
        latency_us,
        cpu,
        sum,
    };
    (ticked, started)
}

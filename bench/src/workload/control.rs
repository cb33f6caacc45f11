//! B8's loop: a control loop, in the shape of rayon PR #1318's tick
//! benchmark. Every tick runs parallel regions, each a join tree of busy
//! leaves, with serial work between the regions, and then the pool idles
//! until the tick's period is over. Two modes: each region its own run
//! from the caller (the serial work runs there), or the whole tick one run
//! (the serial work runs on a worker). bench-report runs it on the example
//! pool and on rayon's; rayon-bench on stock and patched rayon.

use std::hint::black_box;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::workload::procstat::{
    calling_thread_cpu, cpu_between, cpu_by_thread, voluntary_switches, ProcUsage,
};
use crate::workload::{Runner, TickShape, Workload};

/// One shape of tick, in units of the calibrated 5 µs job.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Parallel regions per tick.
    pub regions: u32,
    /// Leaves per region.
    pub leaves: u32,
    /// A leaf's work, in 5 µs units.
    pub leaf_units: u32,
    /// Serial work between two regions, in 5 µs units.
    pub serial_units: u32,
    /// One tick every period; an overrun is not caught up.
    pub period: Duration,
    /// Ticks measured in a full run.
    pub ticks: usize,
}

/// 8 regions of 64 leaves of 10 µs, 20 µs of serial work between them,
/// every 10 ms.
pub const FULL: Shape = Shape {
    regions: 8,
    leaves: 64,
    leaf_units: 2,
    serial_units: 4,
    period: Duration::from_millis(10),
    ticks: 100,
};

/// 8 regions of 8 leaves of 5 µs, 20 µs of serial work between them, every
/// 1 ms: the pool idles most of the tick, in gaps of every length.
pub const LIGHT: Shape = Shape {
    regions: 8,
    leaves: 8,
    leaf_units: 1,
    serial_units: 4,
    period: Duration::from_millis(1),
    ticks: 400,
};

/// What the measured ticks of one [`run`] took.
#[derive(Clone, Debug)]
pub struct Measured {
    /// Ticks measured.
    pub ticks: usize,
    /// CPU time of every thread but the caller's, over the measured ticks.
    pub cpu: Duration,
    /// Wall time of the measured ticks, their idle ends included.
    pub wall: Duration,
    /// Voluntary context switches of every thread meanwhile.
    pub switches: u64,
    /// Each tick's time, in µs, from its start to its last region's end.
    pub tick_us: Vec<f64>,
    /// Each region's time, in µs.
    pub region_us: Vec<f64>,
    /// The ticks' results, summed (wrapping): the same on every pool.
    pub sum: u64,
}

impl Measured {
    /// The pool's CPU time per tick, in µs.
    pub fn cpu_us_per_tick(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.ticks as f64
    }

    /// How many cores the pool kept busy on average.
    pub fn cores(&self) -> f64 {
        self.cpu.as_secs_f64() / self.wall.as_secs_f64()
    }

    /// Voluntary context switches per tick.
    pub fn switches_per_tick(&self) -> f64 {
        self.switches as f64 / self.ticks as f64
    }
}

/// Warm up (a tenth of `ticks`, at least 2), then run `ticks` ticks of
/// `shape` on `pool`, paced to the period, and measure. `iters` is the
/// busy rounds of the 5 µs unit; `whole_tick` runs each tick as one job,
/// else each region as its own.
pub fn run<R: Runner + ?Sized>(
    pool: &R,
    shape: &Shape,
    iters: u32,
    whole_tick: bool,
    ticks: usize,
) -> Measured {
    run_hooked(pool, shape, iters, whole_tick, ticks, || ())
}

/// [`run`], calling `measuring` between the warm-up and the measured ticks.
fn run_hooked<R: Runner + ?Sized>(
    pool: &R,
    shape: &Shape,
    iters: u32,
    whole_tick: bool,
    ticks: usize,
    measuring: impl FnOnce(),
) -> Measured {
    let tick_shape = TickShape {
        regions: shape.regions,
        leaves: shape.leaves,
        leaf_iters: iters * shape.leaf_units,
        serial_iters: iters * shape.serial_units,
        region_us: Arc::new(Mutex::new(Vec::new())),
    };
    let run_tick = |seed: u64| -> u64 {
        if whole_tick {
            return pool.run(&Workload::Tick {
                seed,
                shape: tick_shape.clone(),
            });
        }
        let mut sum = 0u64;
        let mut times = Vec::with_capacity(shape.regions as usize);
        for r in 0..shape.regions {
            sum = sum.wrapping_add(tick_shape.serial(seed, r));
            let start = Instant::now();
            sum = sum.wrapping_add(pool.run(&Workload::Burst {
                seed: TickShape::region_seed(seed, r),
                jobs: tick_shape.leaves,
                iters: tick_shape.leaf_iters,
            }));
            times.push(start.elapsed().as_secs_f64() * 1e6);
        }
        tick_shape.record(times);
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
    for t in 0..(ticks / 10).max(2) as u64 {
        black_box(run_tick(t));
        pace(&mut next);
    }
    tick_shape.take_times();
    measuring();
    let (before, wall_before) = (ProcUsage::for_pool(), Instant::now());
    let mut tick_us = Vec::with_capacity(ticks);
    let mut sum = 0u64;
    for t in 0..ticks as u64 {
        let start = Instant::now();
        sum = sum.wrapping_add(run_tick(t));
        tick_us.push(start.elapsed().as_secs_f64() * 1e6);
        pace(&mut next);
    }
    let wall = wall_before.elapsed();
    let spent = ProcUsage::for_pool().since(&before);
    Measured {
        ticks,
        cpu: spent.cpu,
        wall,
        switches: spent.voluntary_switches,
        tick_us,
        region_us: tick_shape.take_times(),
        sum,
    }
}

/// B9's second case: two pools in one process, each driven by a thread of
/// its own through [`run`] at the same time, as two libraries with a pool
/// each would. The measured ticks of both start together, after both
/// warm-ups.
///
/// The result merges both: `ticks` counts both pools' ticks (so the CPU
/// per tick is per pool), `cpu` is both pools' CPU time (that of the
/// process's threads alive over the whole measurement, less the two
/// driving threads'), the latencies are both pools', `sum` adds both
/// results, and `wall` is the longer of the two runs.
pub fn run_pair<R: Runner + Sync + ?Sized>(
    pools: [&R; 2],
    shape: &Shape,
    iters: u32,
    whole_tick: bool,
    ticks: usize,
) -> Measured {
    // Three parties: both drivers and this thread, which reads the
    // process's CPU while the drivers are alive (an exited thread's time
    // leaves the sum).
    let start = Barrier::new(3);
    let end = Barrier::new(3);
    let (runs, cpu) = thread::scope(|scope| {
        let drivers = pools.map(|pool| {
            let (start, end) = (&start, &end);
            scope.spawn(move || {
                let mut own = Duration::ZERO;
                let m = run_hooked(pool, shape, iters, whole_tick, ticks, || {
                    start.wait();
                    own = calling_thread_cpu();
                });
                let own = calling_thread_cpu().saturating_sub(own);
                // Between these two waits the caller reads the CPU, while
                // this thread is still alive to be counted.
                end.wait();
                end.wait();
                (m, own)
            })
        });
        start.wait();
        let (before, switches_before) = (cpu_by_thread(), voluntary_switches());
        end.wait();
        let spent = ProcUsage {
            cpu: cpu_between(&before, &cpu_by_thread()),
            voluntary_switches: voluntary_switches().saturating_sub(switches_before),
        };
        end.wait();
        let runs = drivers.map(|d| d.join().expect("a driver of run_pair panicked"));
        (runs, spent)
    });
    let [(a, a_own), (b, b_own)] = runs;
    let mut tick_us = a.tick_us;
    tick_us.extend(b.tick_us);
    let mut region_us = a.region_us;
    region_us.extend(b.region_us);
    Measured {
        ticks: a.ticks + b.ticks,
        cpu: cpu.cpu.saturating_sub(a_own + b_own),
        wall: a.wall.max(b.wall),
        switches: cpu.voluntary_switches,
        tick_us,
        region_us,
        sum: a.sum.wrapping_add(b.sum),
    }
}

#[cfg(all(test, feature = "rayon"))]
mod tests {
    use super::*;

    fn pool() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a pool of 2")
    }

    #[test]
    fn a_pair_runs_both_pools_and_merges_their_ticks() {
        let shape = Shape {
            ticks: 6,
            period: Duration::from_micros(200),
            ..LIGHT
        };
        let single = run(&pool(), &shape, 10, false, shape.ticks);
        for whole_tick in [false, true] {
            let (a, b) = (pool(), pool());
            let pair = run_pair([&a, &b], &shape, 10, whole_tick, shape.ticks);
            assert_eq!(pair.ticks, 2 * shape.ticks);
            assert_eq!(pair.tick_us.len(), 2 * shape.ticks);
            let regions = 2 * shape.ticks * shape.regions as usize;
            assert_eq!(pair.region_us.len(), regions);
            if !whole_tick {
                assert_eq!(pair.sum, single.sum.wrapping_mul(2));
            }
        }
    }
}

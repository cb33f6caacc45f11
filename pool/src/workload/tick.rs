//! A control loop's tick as one job: parallel regions, each a join tree of
//! busy leaves, with serial work between them (benchmark B8's "one install"
//! mode, after the tick benchmark of rayon PR #1318).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use eventcount::SleepProtocol;

use crate::workload::burst::{burst_tree, busy_work, rayon_burst};
use crate::WorkerCtx;

/// The shape of a tick, and where its regions' times go.
#[derive(Clone, Debug)]
pub struct TickShape {
    /// Parallel regions per tick.
    pub regions: u32,
    /// Leaves per region.
    pub leaves: u32,
    /// Busy rounds per leaf.
    pub leaf_iters: u32,
    /// Busy rounds of serial work between two regions.
    pub serial_iters: u32,
    /// Each region's time, in µs, appended as the tick runs.
    pub region_us: Arc<Mutex<Vec<f64>>>,
}

impl TickShape {
    /// Serial work before region `r` (none before the first).
    fn serial(&self, seed: u64, r: u32) -> u64 {
        if r == 0 {
            0
        } else {
            busy_work(seed ^ u64::from(r), self.serial_iters)
        }
    }

    fn record(&self, times: Vec<f64>) {
        self.region_us
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(times);
    }
}

/// One tick on the example pool, inside one `install`.
pub fn tick<S: SleepProtocol + 'static>(ctx: &WorkerCtx<S>, seed: u64, shape: &TickShape) -> u64 {
    let mut sum = 0u64;
    let mut times = Vec::with_capacity(shape.regions as usize);
    for r in 0..shape.regions {
        sum = sum.wrapping_add(shape.serial(seed, r));
        let start = Instant::now();
        let region_seed = seed * 64 + u64::from(r);
        sum = sum.wrapping_add(burst_tree(ctx, region_seed, shape.leaves, shape.leaf_iters));
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    shape.record(times);
    sum
}

/// [`tick`] written for rayon (call it inside a rayon pool's `install`).
pub fn rayon_tick(seed: u64, shape: &TickShape) -> u64 {
    let mut sum = 0u64;
    let mut times = Vec::with_capacity(shape.regions as usize);
    for r in 0..shape.regions {
        sum = sum.wrapping_add(shape.serial(seed, r));
        let start = Instant::now();
        let region_seed = seed * 64 + u64::from(r);
        sum = sum.wrapping_add(rayon_burst(region_seed, shape.leaves, shape.leaf_iters));
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    shape.record(times);
    sum
}

/// [`tick`] on the calling thread, without joins.
pub fn tick_seq(seed: u64, shape: &TickShape) -> u64 {
    (0..shape.regions).fold(0u64, |sum, r| {
        let region_seed = seed * 64 + u64::from(r);
        let region = (0..u64::from(shape.leaves))
            .map(|leaf| busy_work(region_seed + leaf, shape.leaf_iters))
            .fold(0, u64::wrapping_add);
        sum.wrapping_add(shape.serial(seed, r)).wrapping_add(region)
    })
}

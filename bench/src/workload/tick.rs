//! A control loop's tick as one job: parallel regions, each a join tree of
//! busy leaves, with serial work between them (B8's "one install" mode,
//! after the tick benchmark of rayon PR #1318).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::workload::{burst_tree, busy_work, Join};

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
    /// Serial work before region `r` of the tick seeded `seed` (none before
    /// the first).
    pub fn serial(&self, seed: u64, r: u32) -> u64 {
        if r == 0 {
            0
        } else {
            busy_work(seed ^ u64::from(r), self.serial_iters)
        }
    }

    /// The seed of region `r`'s first leaf in the tick seeded `seed`.
    pub fn region_seed(seed: u64, r: u32) -> u64 {
        seed * 64 + u64::from(r)
    }

    /// Append one tick's region times.
    pub fn record(&self, times: Vec<f64>) {
        self.region_us
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(times);
    }

    /// Take every region time recorded so far, leaving none.
    pub fn take_times(&self) -> Vec<f64> {
        std::mem::take(&mut *self.region_us.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// One tick, as one job on the pool.
pub fn tick<J: Join>(worker: &J, seed: u64, shape: &TickShape) -> u64 {
    let mut sum = 0u64;
    let mut times = Vec::with_capacity(shape.regions as usize);
    for r in 0..shape.regions {
        sum = sum.wrapping_add(shape.serial(seed, r));
        let start = Instant::now();
        let region_seed = TickShape::region_seed(seed, r);
        sum = sum.wrapping_add(burst_tree(
            worker,
            region_seed,
            shape.leaves,
            shape.leaf_iters,
        ));
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    shape.record(times);
    sum
}

/// [`tick`] on the calling thread, without joins.
pub fn tick_seq(seed: u64, shape: &TickShape) -> u64 {
    (0..shape.regions).fold(0u64, |sum, r| {
        let region_seed = TickShape::region_seed(seed, r);
        let region = (0..u64::from(shape.leaves))
            .map(|leaf| busy_work(region_seed + leaf, shape.leaf_iters))
            .fold(0, u64::wrapping_add);
        sum.wrapping_add(shape.serial(seed, r)).wrapping_add(region)
    })
}

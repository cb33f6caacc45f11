//! The fork-join workloads, and [`Workload`]: one run of any of them.

pub(crate) mod burst;
pub(crate) mod fib;
pub(crate) mod fold;
pub(crate) mod tick;
pub(crate) mod tree;

use std::sync::Arc;

pub use tick::TickShape;

/// One run of a fork-join workload, with its inputs: what
/// [`AnyPool::run`](crate::AnyPool::run) runs on any pool, and
/// [`Workload::run_sequential`] on the calling thread.
#[derive(Clone, Debug)]
pub enum Workload {
    /// `fib(n)`, joining down to `n == cutoff` ([`fib`](crate::fib)).
    Fib {
        /// The argument.
        n: u32,
        /// Below this the recursion is sequential.
        cutoff: u32,
    },
    /// The sum of `tree`, joining for its top `depth` levels
    /// ([`tree_sum`](crate::tree_sum)).
    TreeSum {
        /// The tree ([`make_tree`](crate::make_tree)), shared by every run.
        tree: Arc<Vec<u64>>,
        /// Levels that join; the subtrees below are summed sequentially.
        depth: u32,
    },
    /// `jobs` busy jobs of `iters` xorshift rounds each, seeded from
    /// `seed` ([`burst_tree`](crate::burst_tree)).
    Burst {
        /// Seed of the first job; job i uses `seed + i`.
        seed: u64,
        /// How many jobs.
        jobs: u32,
        /// Length of each job ([`calibrate_busy_work`](crate::calibrate_busy_work)).
        iters: u32,
    },
    /// The fold of items `0..items`, joining down to `chunk` items
    /// ([`fold_range`](crate::fold_range)): a workload that keeps every
    /// worker busy to its end.
    Fold {
        /// How many items.
        items: u64,
        /// Below this many items the fold is sequential.
        chunk: u64,
    },
    /// One tick of a control loop, as one job ([`tick`](crate::tick)).
    Tick {
        /// Seeds the tick's work.
        seed: u64,
        /// Its regions, leaves and serial work.
        shape: TickShape,
    },
}

impl Workload {
    /// The same result computed on the calling thread, without joins: the
    /// sequential baseline.
    pub fn run_sequential(&self) -> u64 {
        match self {
            Workload::Fib { n, .. } => fib::fib_seq(*n),
            Workload::TreeSum { tree, .. } => tree::tree_sum_seq(tree, 0),
            Workload::Burst { seed, jobs, iters } => (0..*jobs as u64)
                .map(|job| burst::busy_work(seed + job, *iters))
                .fold(0, u64::wrapping_add),
            Workload::Fold { items, .. } => fold::fold_seq(0, *items),
            Workload::Tick { seed, shape } => tick::tick_seq(*seed, shape),
        }
    }
}

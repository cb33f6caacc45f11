//! [`Workload`]: one run of any of the workloads, as data, so that a pool
//! of any kind can be handed one through a [`Runner`](crate::workload::Runner).

use std::sync::Arc;

use crate::workload::{
    burst_tree, busy_work, fib, fib_seq, fold_range, fold_seq, tick, tick_seq, tree_sum,
    tree_sum_seq, Join, TickShape,
};

/// One run of a fork-join workload, with its inputs: what
/// [`Workload::run_on`] runs on a worker of any pool, and
/// [`Workload::run_sequential`] on the calling thread.
#[derive(Clone, Debug)]
pub enum Workload {
    /// `fib(n)`, joining down to `n == cutoff` ([`fib`]).
    Fib {
        /// The argument.
        n: u32,
        /// Below this the recursion is sequential.
        cutoff: u32,
    },
    /// The sum of `tree`, joining for its top `depth` levels
    /// ([`tree_sum`]).
    TreeSum {
        /// The tree ([`make_tree`](crate::workload::make_tree)), shared by every run.
        tree: Arc<Vec<u64>>,
        /// Levels that join; the subtrees below are summed sequentially.
        depth: u32,
    },
    /// `jobs` busy jobs of `iters` xorshift rounds each, seeded from
    /// `seed` ([`burst_tree`]).
    Burst {
        /// Seed of the first job; job i uses `seed + i`.
        seed: u64,
        /// How many jobs.
        jobs: u32,
        /// Length of each job ([`calibrate_busy_work`](crate::workload::calibrate_busy_work)).
        iters: u32,
    },
    /// The fold of items `0..items`, joining down to `chunk` items
    /// ([`fold_range`]): a workload that keeps every worker busy to its end.
    Fold {
        /// How many items.
        items: u64,
        /// Below this many items the fold is sequential.
        chunk: u64,
    },
    /// One tick of a control loop, as one job ([`tick`]).
    Tick {
        /// Seeds the tick's work.
        seed: u64,
        /// Its regions, leaves and serial work.
        shape: TickShape,
    },
}

impl Workload {
    /// Run on `worker`, a worker of the pool the caller is inside.
    pub fn run_on<J: Join>(&self, worker: &J) -> u64 {
        match self {
            Workload::Fib { n, cutoff } => fib(worker, *n, *cutoff),
            Workload::TreeSum { tree, depth } => tree_sum(worker, tree, 0, *depth),
            Workload::Burst { seed, jobs, iters } => burst_tree(worker, *seed, *jobs, *iters),
            Workload::Fold { items, chunk } => fold_range(worker, 0, *items, *chunk),
            Workload::Tick { seed, shape } => tick(worker, *seed, shape),
        }
    }

    /// The same result computed on the calling thread, without joins: the
    /// sequential baseline.
    pub fn run_sequential(&self) -> u64 {
        match self {
            Workload::Fib { n, .. } => fib_seq(*n),
            Workload::TreeSum { tree, .. } => tree_sum_seq(tree, 0),
            Workload::Burst { seed, jobs, iters } => (0..*jobs as u64)
                .map(|job| busy_work(seed + job, *iters))
                .fold(0, u64::wrapping_add),
            Workload::Fold { items, .. } => fold_seq(0, *items),
            Workload::Tick { seed, shape } => tick_seq(*seed, shape),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::make_tree;

    /// A pool of one: runs both halves in order on the calling thread.
    struct Inline;

    impl Join for Inline {
        fn join<RA: Send, RB: Send>(
            &self,
            a: impl FnOnce(&Self) -> RA + Send,
            b: impl FnOnce(&Self) -> RB + Send,
        ) -> (RA, RB) {
            (a(self), b(self))
        }
    }

    fn every_workload() -> Vec<Workload> {
        let shape = TickShape {
            regions: 3,
            leaves: 5,
            leaf_iters: 10,
            serial_iters: 7,
            region_us: Default::default(),
        };
        vec![
            Workload::Fib { n: 20, cutoff: 8 },
            Workload::TreeSum {
                tree: make_tree((1 << 12) - 1),
                depth: 5,
            },
            Workload::Burst {
                seed: 3,
                jobs: 13,
                iters: 50,
            },
            Workload::Fold {
                items: 10_000,
                chunk: 64,
            },
            Workload::Tick { seed: 9, shape },
        ]
    }

    #[test]
    fn every_workload_joined_computes_its_sequential_baseline() {
        for work in every_workload() {
            assert_eq!(work.run_on(&Inline), work.run_sequential(), "{work:?}");
        }
    }

    #[cfg(feature = "rayon")]
    #[test]
    fn every_workload_on_rayon_computes_its_sequential_baseline() {
        use crate::workload::Runner;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for work in every_workload() {
            assert_eq!(pool.run(&work), work.run_sequential(), "{work:?}");
        }
    }

    #[test]
    fn a_tick_records_one_time_per_region() {
        let work = &every_workload()[4];
        let Workload::Tick { shape, .. } = work else {
            unreachable!()
        };
        work.run_on(&Inline);
        assert_eq!(shape.take_times().len(), 3);
        assert!(shape.take_times().is_empty());
    }
}

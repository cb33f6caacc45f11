//! Rayon as one more pool the workloads run on: through its public API
//! only, so that the same code runs on stock rayon and on rayon-core
//! patched onto eventcount.

use crate::workload::{Join, Runner, Workload};

/// A job running in a rayon pool: its [`Join`] is `rayon::join`. Hand it
/// to a workload inside the pool's `install`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RayonWorker;

impl Join for RayonWorker {
    fn join<RA: Send, RB: Send>(
        &self,
        a: impl FnOnce(&Self) -> RA + Send,
        b: impl FnOnce(&Self) -> RB + Send,
    ) -> (RA, RB) {
        rayon::join(|| a(&RayonWorker), || b(&RayonWorker))
    }
}

impl Runner for rayon::ThreadPool {
    fn run(&self, work: &Workload) -> u64 {
        self.install(|| work.run_on(&RayonWorker))
    }
}

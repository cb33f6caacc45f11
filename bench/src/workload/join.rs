//! The two views of a pool that the workloads and the measurements are
//! written against.

use crate::workload::Workload;

/// A worker of a fork-join pool, as a job running on it sees it. Each
/// workload is written once against this, and monomorphised per pool, so
/// that it compiles to the same code as one written for that pool alone.
pub trait Join {
    /// Run `a` here and `b` possibly on another worker of the same pool,
    /// and return both results once both have finished. A panic in either
    /// is re-raised here.
    fn join<RA: Send, RB: Send>(
        &self,
        a: impl FnOnce(&Self) -> RA + Send,
        b: impl FnOnce(&Self) -> RB + Send,
    ) -> (RA, RB);
}

/// A pool as the thread that hands it work sees it. The measurement loops
/// ([`ticks`](crate::workload::ticks), [`control`](crate::workload::control)) are written
/// against this, so that one loop drives any pool.
pub trait Runner {
    /// Run `work` on one of the pool's workers and wait for its result.
    fn run(&self, work: &Workload) -> u64;
}

//! [`Search`]: what an idle worker carries between rounds, on either
//! protocol. Each protocol's idle type wraps one and supplies, through
//! [`Searcher`], only what is its own: its announcement and how a search
//! ends.

use std::fmt;

use super::{check_owner, Period, PoolIdle, WorkerIdle};
use crate::latch::CoreLatch;

/// A protocol as its workers' searches see it.
pub(crate) trait Searcher: Sized {
    /// What the protocol keeps of a worker's announcement until it sleeps
    /// or withdraws.
    type Announced<'a>
    where
        Self: 'a;
    fn pool(&self) -> &PoolIdle;
    fn worker_idle(&self, worker: usize) -> &WorkerIdle;
    /// (idle workers awake, busy workers), for rayon PR #1314's bound.
    fn idle_counts(&self) -> (usize, usize);
    /// The search is over (its state is dropped): uncount the worker, give
    /// back its searcher slot, and hand off.
    fn end_search(&self, search: &mut Search<'_, Self>);
}

/// One idle period of one worker, from `start_looking` until `work_found`
/// or a drop, which ends it ([`Searcher::end_search`]).
pub(crate) struct Search<'a, P: Searcher> {
    pub(crate) sleep: &'a P,
    pub(crate) worker: usize,
    pub(crate) period: Period,
    pub(crate) announced: Option<P::Announced<'a>>,
    /// Whether the worker is in the protocol's idle count (or announced):
    /// false from a park of the caller's that returned with no wake until
    /// the next round, which counts it back in.
    pub(crate) counted: bool,
}

impl<'a, P: Searcher> Search<'a, P> {
    /// A search that `start_looking` has counted in.
    pub(crate) fn new(sleep: &'a P, worker: usize) -> Self {
        Search {
            sleep,
            worker,
            period: Period::new(worker),
            announced: None,
            counted: true,
        }
    }

    #[track_caller]
    pub(crate) fn may_search(&mut self, sleep: &P, latch: &CoreLatch) -> bool {
        check_owner("may_search", self.sleep, sleep, self.worker);
        self.period
            .may_search(sleep.pool(), latch, || sleep.idle_counts())
    }

    /// The policy learns from the search, which the drop then ends.
    #[track_caller]
    pub(crate) fn found(mut self, sleep: &P) {
        check_owner("work_found", self.sleep, sleep, self.worker);
        self.period
            .found(sleep.worker_idle(self.worker), sleep.pool());
    }

    /// Whether this search holds a searcher slot (for the loom models).
    #[cfg(all(test, loom))]
    pub(crate) fn holds_searcher_slot(&self) -> bool {
        self.period.slot
    }

    /// `Debug` for the protocol's idle type, `name`.
    pub(crate) fn debug(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result
    where
        P::Announced<'a>: fmt::Debug,
    {
        f.debug_struct(name)
            .field("worker", &self.worker)
            .field("period", &self.period)
            .field("announced", &self.announced)
            .field("counted", &self.counted)
            .finish()
    }
}

impl<P: Searcher> Drop for Search<'_, P> {
    fn drop(&mut self) {
        self.sleep.end_search(self);
    }
}

//! [`IdleCounters`]: what one worker's idle periods cost, as
//! [`SleepStats`] reports it.

use std::time::Duration;

use crate::stats::SleepStats;
use crate::sync::unmodeled::{AtomicU64, Relaxed};

/// One worker's idle counters. Only that worker writes them, on its idle
/// paths; `stats()` reads them from anywhere (a snapshot). Relaxed cells
/// that loom does not see (`sync::unmodeled`): nothing is published through
/// them.
#[derive(Debug, Default)]
pub(crate) struct IdleCounters {
    empty_wakes: AtomicU64,
    searching_ns: AtomicU64,
    parked_ns: AtomicU64,
}

impl IdleCounters {
    pub(crate) fn empty_wake(&self) {
        self.empty_wakes.fetch_add(1, Relaxed);
    }

    pub(crate) fn searched(&self, ns: u64) {
        self.searching_ns.fetch_add(ns, Relaxed);
    }

    pub(crate) fn parked(&self, ns: u64) {
        self.parked_ns.fetch_add(ns, Relaxed);
    }

    /// `stats` with this worker's counts added.
    pub(crate) fn add_to(&self, mut stats: SleepStats) -> SleepStats {
        stats.empty_wakes += self.empty_wakes.load(Relaxed);
        stats.searching += Duration::from_nanos(self.searching_ns.load(Relaxed));
        stats.parked += Duration::from_nanos(self.parked_ns.load(Relaxed));
        stats
    }
}

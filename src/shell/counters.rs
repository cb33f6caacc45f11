//! [`IdleCounters`]: what a worker's idle periods cost, for [`SleepStats`].

use std::time::Duration;

use crate::stats::SleepStats;
use crate::sync::unmodeled::{AtomicU64, Relaxed};
use crate::sync::HAS_THREAD_CPU_CLOCK;

/// `asleep_since_ns` while the worker is not asleep.
const AWAKE: u64 = u64::MAX;

/// How one search (a phase's search rounds) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SearchEnd {
    /// The worker found work, or its latch set, while it searched.
    FoundWork,
    /// The budget ran out: the worker went on to sleep (its final check
    /// may still find work).
    GaveUp,
}

/// One worker's idle counters. Only that worker writes them, on its idle
/// paths; `stats()` reads them from anywhere (a snapshot). Relaxed cells
/// that loom does not see: nothing is published through them. With one
/// writer, an addition is a load and a store ([`add`]), not a locked
/// read-modify-write, which costs about 20 cycles on x86 even uncontended.
/// Two threads on one worker index (a misuse) could lose a count, never
/// corrupt one.
#[derive(Debug)]
pub(crate) struct IdleCounters {
    empty_wakes: AtomicU64,
    searching_ns: AtomicU64,
    searching_cpu_ns: AtomicU64,
    searches_found_work: AtomicU64,
    searches_gave_up: AtomicU64,
    parked_ns: AtomicU64,
    /// When the sleep in progress began (shared clock), or `AWAKE`.
    asleep_since_ns: AtomicU64,
}

impl Default for IdleCounters {
    fn default() -> Self {
        IdleCounters {
            empty_wakes: AtomicU64::new(0),
            searching_ns: AtomicU64::new(0),
            searching_cpu_ns: AtomicU64::new(0),
            searches_found_work: AtomicU64::new(0),
            searches_gave_up: AtomicU64::new(0),
            parked_ns: AtomicU64::new(0),
            asleep_since_ns: AtomicU64::new(AWAKE),
        }
    }
}

/// `cell += n`, by its only writer.
#[inline]
fn add(cell: &AtomicU64, n: u64) {
    cell.store(cell.load(Relaxed).wrapping_add(n), Relaxed);
}

impl IdleCounters {
    pub(crate) fn empty_wake(&self) {
        add(&self.empty_wakes, 1);
    }

    /// A search ended as `end` after `wall_ns` of wall time, of which the
    /// thread ran `cpu_ns` (0 without a CPU clock).
    pub(crate) fn searched(&self, end: SearchEnd, wall_ns: u64, cpu_ns: u64) {
        if wall_ns > 0 {
            add(&self.searching_ns, wall_ns);
        }
        if cpu_ns > 0 {
            add(&self.searching_cpu_ns, cpu_ns);
        }
        let count = match end {
            SearchEnd::FoundWork => &self.searches_found_work,
            SearchEnd::GaveUp => &self.searches_gave_up,
        };
        add(count, 1);
    }

    /// A sleep began at `now_ns` on the shared clock.
    pub(crate) fn asleep(&self, now_ns: u64) {
        self.asleep_since_ns.store(now_ns, Relaxed);
    }

    /// When the sleep in progress began on the shared clock, if one is.
    pub(crate) fn asleep_since_ns(&self) -> Option<u64> {
        let since = self.asleep_since_ns.load(Relaxed);
        (since != AWAKE).then_some(since)
    }

    /// The sleep ended after `ns`. The sleep in progress is cleared first:
    /// a snapshot taken in between misses this sleep, not counts it twice.
    pub(crate) fn parked(&self, ns: u64) {
        self.asleep_since_ns.store(AWAKE, Relaxed);
        add(&self.parked_ns, ns);
    }

    /// `stats` with this worker's counts added; a sleep in progress counts
    /// up to `now_ns` on the shared clock.
    pub(crate) fn add_to(&self, mut stats: SleepStats, now_ns: u64) -> SleepStats {
        stats.empty_wakes += self.empty_wakes.load(Relaxed);
        stats.searching += Duration::from_nanos(self.searching_ns.load(Relaxed));
        if HAS_THREAD_CPU_CLOCK {
            let cpu = Duration::from_nanos(self.searching_cpu_ns.load(Relaxed));
            stats.searching_cpu = Some(stats.searching_cpu.unwrap_or_default() + cpu);
        }
        stats.searches_found_work += self.searches_found_work.load(Relaxed);
        stats.searches_gave_up += self.searches_gave_up.load(Relaxed);
        let mut parked = self.parked_ns.load(Relaxed);
        let since = self.asleep_since_ns.load(Relaxed);
        if since != AWAKE {
            parked = parked.saturating_add(now_ns.saturating_sub(since));
        }
        stats.parked += Duration::from_nanos(parked);
        stats
    }
}

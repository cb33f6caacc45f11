//! [`SearcherSlots`]: the searcher cap's count of workers searching from
//! their top-level idle loop.
//!
//! | bits  | field       | meaning                                              |
//! |-------|-------------|------------------------------------------------------|
//! | 0..32 | `searching` | top-level searchers holding a slot (≤ the cap)        |
//!
//! A worker takes a slot when a search phase of its top-level loop starts
//! and gives it back when it gets sleepy or ends its search; a joining
//! worker never takes one. No wake depends on the count, since a worker the
//! cap sends to sleep still makes the final check: every access is Relaxed,
//! and only the read-modify-writes' atomicity, which keeps the count within
//! the cap, matters. The hand-off follows the awake idle count, not this.

use crossbeam_utils::CachePadded;

use crate::idle::{IdlePolicy, Searchers};
use crate::latch::WaitKind;
use crate::sync::{AtomicU32, Ordering};

/// The slots of a capped policy (none without a fixed cap), and the rule
/// that decides whether a phase may search.
pub(crate) struct SearcherSlots {
    searching: CachePadded<AtomicU32>,
    cap: Option<u32>,
    /// rayon PR #1314's bound instead of a cap.
    busy_bound: bool,
}

impl SearcherSlots {
    pub(crate) fn new(policy: &IdlePolicy, workers: usize) -> Self {
        SearcherSlots {
            searching: CachePadded::new(AtomicU32::new(0)),
            // At most `workers`, which the protocols bound to 16 bits.
            cap: policy
                .searcher_cap(workers)
                .map(|cap| u32::try_from(cap).unwrap_or(u32::MAX)),
            busy_bound: matches!(policy.searchers, Searchers::Busy),
        }
    }

    /// Whether a phase of a search of `kind` may search: under rayon PR
    /// #1314's bound, per `idle_counts` (idle workers awake, busy workers);
    /// under a cap, if it holds or takes a slot into `held`, or if it joins.
    pub(crate) fn may_search(
        &self,
        kind: WaitKind,
        held: &mut bool,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) -> bool {
        if self.busy_bound {
            let (awake_idle, busy) = idle_counts();
            return awake_idle <= busy.max(1);
        }
        kind == WaitKind::Join || self.try_take(held)
    }

    /// True if the policy is rayon PR #1314's bound, the only reader of a
    /// count of busy workers.
    #[inline]
    pub(crate) fn counts_busy(&self) -> bool {
        self.busy_bound
    }

    /// True if the policy caps the top-level searchers.
    #[inline]
    pub(crate) fn is_capped(&self) -> bool {
        self.cap.is_some()
    }

    /// Take a slot for a worker that holds none, if the cap has one free
    /// (or there is no cap). True if the worker may search.
    #[inline]
    fn try_take(&self, held: &mut bool) -> bool {
        let Some(cap) = self.cap else {
            return true;
        };
        if *held {
            return true;
        }
        // Check before write: a full cap is never exceeded, not even for a
        // moment that another worker could observe.
        *held = self
            .searching
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < cap).then_some(n + 1)
            })
            .is_ok();
        *held
    }

    /// Give back the slot `held` says the worker holds, if any.
    #[inline]
    pub(crate) fn release(&self, held: &mut bool) {
        if std::mem::take(held) {
            let before = self.searching.fetch_sub(1, Ordering::Relaxed);
            debug_assert!(before > 0, "SearcherSlots::release: no slot was taken");
        }
    }

    /// Slots taken right now (a snapshot, for tests and `Debug`).
    pub(crate) fn taken(&self) -> u32 {
        self.searching.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for SearcherSlots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearcherSlots")
            .field("searching", &self.taken())
            .field("cap", &self.cap)
            .field("busy_bound", &self.busy_bound)
            .finish()
    }
}

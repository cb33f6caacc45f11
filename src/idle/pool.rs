//! [`PoolIdle`]: what a pool's workers share about idling: the searcher
//! cap's slots and the oversubscription score, and the rule that decides
//! from both whether a phase may search.

use super::policy::IdlePolicy;
use super::pressure::Pressure;
use super::searchers::SearcherSlots;
use crate::latch::WaitKind;

/// One per protocol: the searcher cap's slots and the pool's
/// oversubscription score, each on its own cache line.
#[derive(Debug)]
pub(crate) struct PoolIdle {
    pub(crate) slots: SearcherSlots,
    pub(crate) pressure: Pressure,
}

impl PoolIdle {
    pub(crate) fn new(policy: &IdlePolicy, workers: usize) -> Self {
        PoolIdle {
            slots: SearcherSlots::new(policy, workers),
            pressure: Pressure::new(policy.pressure, workers),
        }
    }

    /// Whether a phase of a search of `kind` may search. A pressured phase
    /// always may, and takes no slot: under oversubscription a search round
    /// yields to a runnable peer, which is what the cap would have made
    /// room for, so the cap is lifted rather than filled (a slot it took
    /// would be one an unpressured phase could not get). Otherwise the cap
    /// decides ([`SearcherSlots::may_search`]).
    pub(crate) fn may_search(
        &self,
        pressured: bool,
        kind: WaitKind,
        held: &mut bool,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) -> bool {
        pressured || self.slots.may_search(kind, held, idle_counts)
    }
}

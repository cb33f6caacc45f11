//! One waiter slot: the futex word its owner sleeps on, its link in the
//! committed-waiter stack, and its push epoch.
//!
//! The futex word doubles as the slot's protocol state:
//!
//! | value       | meaning                                           | written by |
//! |-------------|---------------------------------------------------|------------|
//! | `IDLE`      | no wait in progress; the slot may be prepared     | owner      |
//! | `PREPARED`  | a `PreparedWait` token is out (counted as a pre-waiter) | owner |
//! | `COMMITTED` | pushed on the stack, not asleep yet               | owner      |
//! | `PARKED`    | asleep on the futex (or about to be)              | owner      |
//! | `SIGNALED`  | popped by a notifier; the owner may leave         | notifier   |
//!
//! Only a notifier that popped the slot off the stack writes `SIGNALED`, and
//! it does so exactly once per push, with a swap: the old value tells it
//! whether the owner is asleep (`PARKED`: make the wake syscall) or not yet
//! (`COMMITTED`: the owner's own COMMITTED→PARKED CAS will fail and it will
//! not sleep). That is how a notifier calls `futex_wake` only when the target
//! is really asleep.

use crate::sync::{AtomicU64, Futex, Ordering};

pub(crate) const IDLE: u32 = 0;
pub(crate) const PREPARED: u32 = 1;
pub(crate) const COMMITTED: u32 = 2;
pub(crate) const PARKED: u32 = 3;
pub(crate) const SIGNALED: u32 = 4;

/// The name of a slot state, for messages.
pub(crate) fn state_name(state: u32) -> &'static str {
    match state {
        IDLE => "idle",
        PREPARED => "prepared",
        COMMITTED => "committed",
        PARKED => "parked",
        SIGNALED => "signaled",
        _ => "invalid",
    }
}

pub(crate) struct Slot {
    /// The protocol state above; the owner sleeps on it.
    pub(crate) futex: Futex,
    /// The stack word (top and epoch) that was on the stack when this slot
    /// was pushed: the link a pop restores. Written by the owner before its
    /// push CAS (which publishes it, Release); read by notifiers after an
    /// Acquire load of the state.
    pub(crate) next: AtomicU64,
    /// This slot's epoch, pre-shifted into the state's epoch field. Only the
    /// token holder touches it (Relaxed); the Release store of `IDLE` and the
    /// Acquire CAS out of `IDLE` carry it between successive holders.
    pub(crate) epoch: AtomicU64,
}

impl Slot {
    pub(crate) fn new(epoch: u64) -> Self {
        Slot {
            futex: Futex::new(IDLE),
            next: AtomicU64::new(0),
            epoch: AtomicU64::new(epoch),
        }
    }

    #[inline]
    pub(crate) fn state(&self) -> u32 {
        self.futex.word().load(Ordering::Relaxed)
    }

    /// End a wait: the slot may be prepared again. Release carries this
    /// holder's epoch update to the next holder's Acquire CAS in `prepare_wait`.
    #[inline]
    pub(crate) fn release(&self) {
        self.futex.word().store(IDLE, Ordering::Release);
    }

    /// Sleep until a notifier has popped this slot and signalled it.
    ///
    /// Called by the owner right after its push CAS succeeded.
    pub(crate) fn park(&self) {
        let word = self.futex.word();
        // COMMITTED -> PARKED announces that we are about to sleep. If a
        // notifier got here first the word is SIGNALED and we never sleep.
        // Acquire on both outcomes: SIGNALED must carry the notifier's
        // writes (the predicate it made true) to us.
        if word
            .compare_exchange(COMMITTED, PARKED, Ordering::Acquire, Ordering::Acquire)
            .is_ok()
        {
            // Loop over spurious returns: only SIGNALED lets us go.
            while word.load(Ordering::Acquire) == PARKED {
                self.futex.wait(PARKED);
            }
        }
        debug_assert_eq!(word.load(Ordering::Relaxed), SIGNALED);
    }

    /// Hand the slot's owner its notification; make the wake syscall only if
    /// the owner is asleep. The caller must have popped this slot.
    pub(crate) fn unpark(&self) {
        // Swap, not store: the old value says whether the owner sleeps.
        // Release pairs with the owner's Acquire in `park`.
        let old = self.futex.word().swap(SIGNALED, Ordering::Release);
        debug_assert!(
            old == COMMITTED || old == PARKED,
            "unpark found slot in state {}",
            state_name(old)
        );
        if old == PARKED {
            self.futex.wake_one();
        }
    }
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("state", &state_name(self.state()))
            .finish_non_exhaustive()
    }
}

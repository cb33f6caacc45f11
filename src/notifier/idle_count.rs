//! `NotifierSleep`'s count of the workers a post can rely on: the awake
//! idle workers, and the woken ones not yet back.
//!
//! | bits   | field        | meaning |
//! |--------|--------------|---------|
//! | 0..32  | `waking`, plus 2³¹ | wakes delivered by the protocol's own notifies whose worker is not yet back in `awake_idle`. Signed: a woken worker can count itself back before its waker credits the wake, and the field is below zero until the credit lands. The bias keeps the field's arithmetic inside its 32 bits |
//! | 32..64 | `awake_idle` | workers between `start_looking` (or a wake) and the end of their search (or their announcement): idle, not asleep, not announced. At most the capacity |
//!
//! A post relies on `awake_idle + max(waking, 0)` workers (`covering`),
//! never more than will search (docs/notifier.md, "The awake idle count").
//!
//! Every access is Relaxed: the SeqCst fences of the notifier's handshake
//! order it against the queues, and a read that misses an increment makes
//! a post wake one sleeper more than needed, never one fewer.

use std::fmt;

use crate::sync::{AtomicU64, Ordering};

/// `awake_idle`'s unit.
const ONE_AWAKE: u64 = 1 << 32;
/// The bias of `waking`: the field holds `waking + BIAS`.
const BIAS: u64 = 1 << 31;
/// The low half: `waking + BIAS`.
const WAKING_MASK: u64 = ONE_AWAKE - 1;

/// The packed word (layout in the module docs).
pub(super) struct IdleCount(AtomicU64);

/// One reading of the word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct IdleWord(u64);

impl IdleWord {
    /// Workers idle, awake and not announced.
    pub(super) fn awake_idle(self) -> usize {
        (self.0 >> 32) as usize
    }

    /// Wakes delivered and credited, less the workers back from one.
    pub(super) fn waking(self) -> i64 {
        (self.0 & WAKING_MASK) as i64 - BIAS as i64
    }

    /// The workers a post can rely on: every one of them searches again
    /// before it sleeps, or ends its search and hands off if it is the last.
    pub(super) fn covering(self) -> usize {
        self.awake_idle() + self.waking().max(0) as usize
    }
}

impl fmt::Debug for IdleWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdleCount")
            .field("awake_idle", &self.awake_idle())
            .field("waking", &self.waking())
            .finish()
    }
}

impl IdleCount {
    pub(super) fn new() -> Self {
        IdleCount(AtomicU64::new(BIAS))
    }

    pub(super) fn load(&self) -> IdleWord {
        IdleWord(self.0.load(Ordering::Relaxed))
    }

    /// `awake_idle += 1` unless that would pass `capacity`: a worker that
    /// starts looking. Nothing is written when it is refused.
    pub(super) fn try_count_in(&self, capacity: usize) -> bool {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |word| {
                (IdleWord(word).awake_idle() < capacity).then_some(word + ONE_AWAKE)
            })
            .is_ok()
    }

    /// `awake_idle -= 1`: the announcement, or the end of a search; returns
    /// the word after it.
    pub(super) fn leave(&self) -> IdleWord {
        IdleWord(self.0.fetch_sub(ONE_AWAKE, Ordering::Relaxed) - ONE_AWAKE)
    }

    /// `awake_idle += 1`: awake and idle again with no wake (a withdrawal).
    pub(super) fn back(&self) {
        self.0.fetch_add(ONE_AWAKE, Ordering::Relaxed);
    }

    /// `waking -= 1, awake_idle += 1` in one step: a worker back from a
    /// wake of the protocol's.
    pub(super) fn back_from_wake(&self) {
        self.0.fetch_add(ONE_AWAKE - 1, Ordering::Relaxed);
    }

    /// `waking -= 1`: a worker woken while announced that ends its search
    /// at once (back from the wake and out again); returns the word after.
    pub(super) fn woken_and_gone(&self) -> IdleWord {
        IdleWord(self.0.fetch_sub(1, Ordering::Relaxed) - 1)
    }

    /// `waking += n`: the protocol's notify just delivered `n` wakes.
    pub(super) fn credit(&self, n: usize) {
        if n > 0 {
            self.0.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}

impl fmt::Debug for IdleCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.load().fmt(f)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_count_back_ahead_of_its_credit_counts_the_worker_once() {
        let count = IdleCount::new();
        assert!(count.try_count_in(2));
        assert_eq!(count.leave().covering(), 0);
        // Woken: back before the waker's credit lands.
        count.back_from_wake();
        let early = count.load();
        assert_eq!((early.awake_idle(), early.waking()), (1, -1));
        assert_eq!(early.covering(), 1);
        count.credit(1);
        assert_eq!(count.load().covering(), 1);
        assert_eq!(count.load().waking(), 0);
    }

    #[test]
    fn a_credited_wake_covers_until_its_worker_is_back() {
        let count = IdleCount::new();
        count.credit(2);
        assert_eq!(count.load().covering(), 2);
        count.back_from_wake();
        assert_eq!(count.load().covering(), 2);
        assert_eq!(count.woken_and_gone().covering(), 1);
        assert_eq!(count.leave().covering(), 0);
        assert_eq!(
            format!("{:?}", count),
            "IdleCount { awake_idle: 0, waking: 0 }"
        );
    }

    #[test]
    fn the_capacity_is_never_passed() {
        let count = IdleCount::new();
        assert!(count.try_count_in(1));
        assert!(!count.try_count_in(1));
        assert_eq!(count.load().awake_idle(), 1);
    }
}

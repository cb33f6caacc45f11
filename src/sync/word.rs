//! [`Futex`]: a 32-bit word that threads can sleep on until another thread
//! changes it, with an optional deadline, on whichever backend this build
//! chose (`sync/mod.rs`).
//!
//! Callers must treat every return from `wait` as possibly spurious and
//! re-check the word: a real futex returns on signals and stale wakes, and
//! the lock-based backends would otherwise hide a missing Acquire.

use super::unmodeled::{AtomicU64 as CountU64, Relaxed};
use std::time::Instant;

use super::backend::Parker;
use super::AtomicU32;

/// A futex word: an `AtomicU32` with wait and wake.
///
/// It also counts its own `wait` and `wake_one` calls for
/// [`SleepStats`](crate::SleepStats). The counters are std atomics even
/// under loom, which does not see them, so they never grow a model; each
/// Relaxed increment sits on the same cache line as the word, on a path
/// that makes a syscall anyway.
pub(crate) struct Futex {
    word: AtomicU32,
    parker: Parker,
    waits: CountU64,
    wakes: CountU64,
}

impl Futex {
    pub(crate) fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
            parker: Parker::new(),
            waits: CountU64::new(0),
            wakes: CountU64::new(0),
        }
    }

    /// The word itself, for loads, stores and read-modify-writes.
    #[inline]
    pub(crate) fn word(&self) -> &AtomicU32 {
        &self.word
    }

    /// Sleep while the word equals `expected`. May return spuriously.
    pub(crate) fn wait(&self, expected: u32) {
        self.waits.fetch_add(1, Relaxed);
        self.parker.wait(&self.word, expected);
    }

    /// Sleep while the word equals `expected`, until `deadline` at the
    /// latest. Returns true if the deadline has passed (under loom: at once,
    /// unless the word already differs). May return spuriously before the
    /// deadline: the caller re-checks the word and calls again.
    pub(crate) fn wait_until(&self, expected: u32, deadline: Instant) -> bool {
        if Instant::now() >= deadline {
            return true; // no sleep, so no count
        }
        self.waits.fetch_add(1, Relaxed);
        self.parker.wait_until(&self.word, expected, deadline)
    }

    /// Wake one thread sleeping in `wait` or `wait_until` on this word.
    pub(crate) fn wake_one(&self) {
        self.wakes.fetch_add(1, Relaxed);
        self.parker.wake_one(&self.word);
    }

    /// Count a sleep made elsewhere: in a caller's `park`.
    pub(crate) fn count_external_wait(&self) {
        self.waits.fetch_add(1, Relaxed);
    }

    /// Count a wake made elsewhere: through an unpark hook.
    pub(crate) fn count_external_wake(&self) {
        self.wakes.fetch_add(1, Relaxed);
    }

    /// (wait calls, wake calls) so far, external ones included.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (self.waits.load(Relaxed), self.wakes.load(Relaxed))
    }
}

impl std::fmt::Debug for Futex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Futex")
            .field(&self.word.load(Relaxed))
            .finish()
    }
}

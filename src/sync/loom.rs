//! The backend of the crate's own unit tests under `--cfg loom`: loom's
//! atomics and hints, and a loom `Notify` per word, so that the models
//! drive the very protocol code that ships.
//!
//! A `Notify` keeps one wake for a waiter that has not started waiting yet,
//! which is all the futex contract asks of a word with one sleeper (every
//! word in this crate has only its owner sleeping on it): a waker that
//! changed the word and then calls `wake_one` either finds the owner asleep
//! or leaves it a wake that its `wait` consumes at once. It may also wake
//! spuriously; every caller re-checks the word, as it must after a futex
//! wait.
//!
//! loom has no clock: a timed wait times out at once unless the word
//! already changed, which drives every timeout path through every
//! interleaving the model explores.

use std::time::Instant;

use loom::sync::Notify;

pub(crate) use loom::hint::spin_loop;
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
pub(crate) use loom::thread::yield_now;

/// Loom stands in for the portable backend's lock-based design.
pub(crate) const KIND: crate::ParkingBackend = crate::ParkingBackend::Portable;

pub(crate) struct Parker {
    wake: Notify,
}

impl Parker {
    pub(crate) fn new() -> Self {
        Parker {
            wake: Notify::new(),
        }
    }

    pub(crate) fn wait(&self, word: &AtomicU32, expected: u32) {
        if word.load(Ordering::Relaxed) == expected {
            self.wake.wait();
        }
    }

    /// Times out at once: true unless the word already differs.
    pub(crate) fn wait_until(&self, word: &AtomicU32, expected: u32, _deadline: Instant) -> bool {
        word.load(Ordering::Relaxed) == expected
    }

    pub(crate) fn wake_one(&self, _word: &AtomicU32) {
        self.wake.notify();
    }
}

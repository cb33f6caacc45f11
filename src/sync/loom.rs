//! The backend of the crate's own unit tests under `--cfg loom`: loom's
//! atomics and hints, and a loom `Mutex` + `Condvar` per word, so that the
//! models drive the very protocol code that ships.
//!
//! loom has no futex, and no clock: a timed wait times out at once unless
//! the word already changed, which drives every timeout path through every
//! interleaving the model explores.

use std::time::Instant;

use loom::sync::{Condvar, Mutex};

pub(crate) use loom::hint::spin_loop;
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
pub(crate) use loom::thread::yield_now;

/// Loom models the lock-based design of the portable backend.
pub(crate) const KIND: crate::ParkingBackend = crate::ParkingBackend::Portable;

pub(crate) struct Parker {
    lock: Mutex<()>,
    sleepers: Condvar,
}

impl Parker {
    pub(crate) fn new() -> Self {
        Parker {
            lock: Mutex::new(()),
            sleepers: Condvar::new(),
        }
    }

    pub(crate) fn wait(&self, word: &AtomicU32, expected: u32) {
        let guard = self.lock.lock().unwrap();
        if word.load(Ordering::Relaxed) == expected {
            drop(self.sleepers.wait(guard).unwrap());
        }
    }

    /// Times out at once: true unless the word already differs.
    pub(crate) fn wait_until(&self, word: &AtomicU32, expected: u32, _deadline: Instant) -> bool {
        word.load(Ordering::Relaxed) == expected
    }

    pub(crate) fn wake_one(&self, _word: &AtomicU32) {
        drop(self.lock.lock().unwrap());
        self.sleepers.notify_one();
    }
}

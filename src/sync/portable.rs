//! The portable backend, for every target without a futex (and for
//! `--cfg eventcount_fallback`): std atomics, and a std `Mutex` + `Condvar`
//! per word.
//!
//! It gives exactly the futex contract. `wait(expected)` checks the word
//! under the lock and sleeps only if it still holds `expected`; a waker that
//! changed the word then calls `wake_one`, which takes the same lock, so it
//! cannot slip in between that check and the sleep. The cost is one
//! uncontended lock per wait and per wake.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

pub(crate) use std::hint::spin_loop;
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
pub(crate) use std::thread::yield_now;

pub(crate) const KIND: crate::ParkingBackend = crate::ParkingBackend::Portable;

pub(crate) struct Parker {
    /// Guards no data, only the check-then-sleep step.
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

    /// The lock, or `None` if the word no longer holds `expected`.
    fn lock_if(&self, word: &AtomicU32, expected: u32) -> Option<MutexGuard<'_, ()>> {
        // Poisoning cannot leave anything inconsistent: the lock guards no
        // data.
        let guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        // Relaxed on purpose: the caller re-loads with the ordering it needs
        // after we return, as it must after a real futex wait.
        (word.load(Ordering::Relaxed) == expected).then_some(guard)
    }

    pub(crate) fn wait(&self, word: &AtomicU32, expected: u32) {
        if let Some(guard) = self.lock_if(word, expected) {
            drop(self.sleepers.wait(guard));
        }
    }

    /// True if the deadline has passed.
    pub(crate) fn wait_until(&self, word: &AtomicU32, expected: u32, deadline: Instant) -> bool {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return true;
        };
        if let Some(guard) = self.lock_if(word, expected) {
            drop(self.sleepers.wait_timeout(guard, left));
        }
        Instant::now() >= deadline
    }

    /// The caller changed the word before this call. Taking and releasing
    /// the lock orders that change before any waiter's check, or finds the
    /// waiter already inside `wait`; the notify then follows outside the
    /// lock, so the woken waiter does not block on it.
    pub(crate) fn wake_one(&self, _word: &AtomicU32) {
        drop(self.lock.lock().unwrap_or_else(|p| p.into_inner()));
        self.sleepers.notify_one();
    }
}

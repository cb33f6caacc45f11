//! The park backend, for every target without the futex backend (and for
//! `--cfg eventcount_fallback`): std atomics, and std's own thread parker,
//! `thread::park` / `Thread::unpark`, which std builds on the platform's
//! native primitive (a futex or `WaitOnAddress` where there is one).
//!
//! Each word keeps the handle of the thread waiting on it right now, in a
//! `Mutex<Option<Thread>>`. A wait registers under the lock and only then
//! re-loads the word; a waker changes the word and only then takes the
//! handle. Why that loses no wake, the spurious returns it allows and its
//! cost: docs/notifier.md, "Parking backends".

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::{self, Thread};
use std::time::Instant;

pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
pub(crate) use std::thread::yield_now;

pub(crate) struct Parker {
    /// The thread waiting on the word, from its registration until it wakes
    /// or a waker takes it. Never held across a park or an unpark.
    sleeper: Mutex<Option<Thread>>,
}

impl Parker {
    pub(crate) fn new() -> Self {
        Parker {
            sleeper: Mutex::new(None),
        }
    }

    /// The lock. Poisoning cannot leave anything inconsistent: nothing runs
    /// under it that can panic, and an `Option<Thread>` is valid whatever
    /// it holds.
    fn sleeper(&self) -> MutexGuard<'_, Option<Thread>> {
        self.sleeper.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Register the calling thread, then re-load the word: true if it still
    /// holds `expected`, so that parking is safe (module docs). Relaxed is
    /// enough for both loads: the lock orders a waker's change before the
    /// re-load, and the caller re-loads with the ordering it needs after
    /// the wait, as it must after a real futex wait.
    fn register_if(&self, word: &AtomicU32, expected: u32) -> bool {
        if word.load(Ordering::Relaxed) != expected {
            return false; // changed already: no lock, no park
        }
        *self.sleeper() = Some(thread::current());
        word.load(Ordering::Relaxed) == expected
    }

    /// Clear our registration, unless a waker took it already. Until this,
    /// a waker may still unpark us for this wait; after it, none can.
    fn unregister(&self) {
        drop(self.sleeper().take());
    }

    pub(crate) fn wait(&self, word: &AtomicU32, expected: u32) {
        if self.register_if(word, expected) {
            thread::park();
        }
        self.unregister();
    }

    /// True if the deadline has passed.
    pub(crate) fn wait_until(&self, word: &AtomicU32, expected: u32, deadline: Instant) -> bool {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return true;
        };
        if self.register_if(word, expected) {
            thread::park_timeout(left);
        }
        self.unregister();
        Instant::now() >= deadline
    }

    /// The caller changed the word before this call. Take the handle of
    /// whoever registered to sleep on the old value and unpark it, outside
    /// the lock so that the woken thread does not wait for it. Nobody
    /// registered: nobody is asleep, or about to be, on the old value.
    pub(crate) fn wake_one(&self, _word: &AtomicU32) {
        let sleeper = self.sleeper().take();
        if let Some(thread) = sleeper {
            thread.unpark();
        }
    }
}

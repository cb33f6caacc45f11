//! The park backend, for every target without the futex backend (and for
//! `--cfg eventcount_fallback`): std atomics, and std's own thread parker,
//! `thread::park` / `Thread::unpark`, which std builds on the platform's
//! native primitive (a futex or `WaitOnAddress` where there is one).
//!
//! Every word in this crate has at most one sleeper at a time, its owner,
//! which is the shape park and unpark fit: a waker wakes a thread, not a
//! word. The owner can change over time, though (a `Notifier` slot may be
//! taken by one thread after another), so each word keeps the handle of the
//! thread waiting on it right now, in a `Mutex<Option<Thread>>` that only
//! that thread and its wakers touch.
//!
//! Why no wake is lost. A wait registers its thread under the lock, and
//! only then re-loads the word; a waker changes the word first, and only
//! then takes the handle under the lock. Either the waker's lock comes
//! after the registration, and it finds the handle and unparks the thread;
//! or it comes before, and then the waker's change happens before the
//! registration's lock (the lock's release and acquire order them), so the
//! re-load sees the change and the thread does not park. That is the
//! futex's "compare and queue as one step", made of a lock and an order.
//! An unpark that comes before the `park` call is kept by std as the
//! thread's token, and that `park` returns at once.
//!
//! Spurious returns, both ways, are allowed by the futex contract that
//! every caller keeps (it re-loads the word and waits again):
//! - `park` may return with no unpark at all, and a wait then returns;
//! - an unpark may reach a thread that is no longer waiting on this word:
//!   a waker took the handle, the owner woke up for another reason (a
//!   timeout, a spurious return) and left. The unpark then stays as the
//!   thread's token and makes its next `park`, on any word or in any other
//!   code that parks, return once early. std documents that every `park`
//!   must allow for that.
//!
//! The cost next to the futex backend: a wait takes the lock twice (to
//! register, and to clear its handle when it wakes), a wake once, all
//! uncontended but for a waker racing its sleeper; `thread::current()`
//! clones a handle; and the sleep itself is std's parker, which is a futex
//! wait on a word of std's on the futex platforms.

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

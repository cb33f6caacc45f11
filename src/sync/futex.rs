//! A 32-bit word that threads can sleep on until another thread changes it.
//!
//! Normal builds use `atomic-wait` (the futex syscall on Linux, `_umtx_op`
//! on FreeBSD, `WaitOnAddress` on Windows, libc++'s waiter table on macOS).
//! Under loom the word is paired with a loom `Mutex` + `Condvar`, which gives
//! exactly the futex contract: `wait(expected)` sleeps only if the word still
//! holds `expected` when checked under the lock, and a waker that changes the
//! word and then calls `wake_one` takes the same lock, so it cannot slip in
//! between that check and the sleep.
//!
//! Callers must treat every return from `wait` as possibly spurious and
//! re-check the word: a real futex returns on signals and stale wakes, and
//! the loom emulation's mutex would otherwise hide a missing Acquire.

use super::{AtomicU32, Ordering};

/// A futex word: an `AtomicU32` with wait and wake.
///
/// Outside loom it also counts its own `wait` and `wake_one` calls (each is
/// a syscall; the Relaxed increment sits next to it on the same cache line),
/// for [`SleepStats`](crate::SleepStats).
pub(crate) struct Futex {
    word: AtomicU32,
    #[cfg(not(all(test, loom)))]
    waits: std::sync::atomic::AtomicU64,
    #[cfg(not(all(test, loom)))]
    wakes: std::sync::atomic::AtomicU64,
    #[cfg(all(test, loom))]
    lock: loom::sync::Mutex<()>,
    #[cfg(all(test, loom))]
    sleepers: loom::sync::Condvar,
}

impl Futex {
    pub(crate) fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
            #[cfg(not(all(test, loom)))]
            waits: std::sync::atomic::AtomicU64::new(0),
            #[cfg(not(all(test, loom)))]
            wakes: std::sync::atomic::AtomicU64::new(0),
            #[cfg(all(test, loom))]
            lock: loom::sync::Mutex::new(()),
            #[cfg(all(test, loom))]
            sleepers: loom::sync::Condvar::new(),
        }
    }

    /// The word itself, for loads, stores and read-modify-writes.
    #[inline]
    pub(crate) fn word(&self) -> &AtomicU32 {
        &self.word
    }

    /// Sleep while the word equals `expected`. May return spuriously.
    #[cfg(not(all(test, loom)))]
    pub(crate) fn wait(&self, expected: u32) {
        self.waits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        atomic_wait::wait(&self.word, expected);
    }

    /// Wake one thread sleeping in [`Futex::wait`] on this word, if any.
    #[cfg(not(all(test, loom)))]
    pub(crate) fn wake_one(&self) {
        self.wakes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        atomic_wait::wake_one(&self.word);
    }

    /// (wait calls, wake calls) so far.
    #[cfg(not(all(test, loom)))]
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.waits.load(std::sync::atomic::Ordering::Relaxed),
            self.wakes.load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    #[cfg(all(test, loom))]
    pub(crate) fn wait(&self, expected: u32) {
        let guard = self.lock.lock().unwrap();
        // Relaxed on purpose: the caller re-loads with the ordering it needs
        // after we return, as it must after a real futex wait.
        if self.word.load(Ordering::Relaxed) == expected {
            drop(self.sleepers.wait(guard).unwrap());
        }
    }

    #[cfg(all(test, loom))]
    pub(crate) fn wake_one(&self) {
        let _guard = self.lock.lock().unwrap();
        self.sleepers.notify_one();
    }

    /// Not counted under loom: extra atomics would only grow the model.
    #[cfg(all(test, loom))]
    pub(crate) fn counts(&self) -> (u64, u64) {
        (0, 0)
    }
}

impl std::fmt::Debug for Futex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Futex")
            .field(&self.word.load(Ordering::Relaxed))
            .finish()
    }
}

//! A 32-bit word that threads can sleep on until another thread changes it,
//! with an optional deadline.
//!
//! Backends, chosen at compile time:
//!
//! | build                                        | untimed wait / wake            | timed wait                                   |
//! |----------------------------------------------|--------------------------------|----------------------------------------------|
//! | Linux, Android                               | `atomic-wait` (`FUTEX_WAIT` / `FUTEX_WAKE`) | `FUTEX_WAIT` with a timeout (`futex_linux.rs`) |
//! | every other target, or `--cfg eventcount_fallback` | std `Mutex` + `Condvar` per word | `Condvar::wait_timeout`                   |
//! | the crate's unit tests under `--cfg loom`    | loom `Mutex` + `Condvar` per word | times out at once (loom has no clock)     |
//!
//! The Mutex + Condvar backends give exactly the futex contract:
//! `wait(expected)` sleeps only if the word still holds `expected` when
//! checked under the lock, and a waker that changed the word and then calls
//! `wake_one` takes the same lock, so it cannot slip in between that check
//! and the sleep. The fallback is the portable one: it needs nothing but std,
//! costs one uncontended lock per wait and per wake, and is what FreeBSD,
//! Windows and macOS get until their native timed waits are wired in.
//!
//! Callers must treat every return from `wait` as possibly spurious and
//! re-check the word: a real futex returns on signals and stale wakes, and
//! the lock-based backends would otherwise hide a missing Acquire.

use std::time::Instant;

use super::{AtomicU32, Ordering};

#[cfg(all(
    not(all(test, loom)),
    not(eventcount_fallback),
    any(target_os = "linux", target_os = "android")
))]
const BACKEND: Backend = Backend::Futex;
#[cfg(all(
    not(all(test, loom)),
    any(
        eventcount_fallback,
        not(any(target_os = "linux", target_os = "android"))
    )
))]
const BACKEND: Backend = Backend::Portable;
#[cfg(all(test, loom))]
const BACKEND: Backend = Backend::Loom;

/// Which implementation this build parks with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code)] // one variant per build
pub(crate) enum Backend {
    /// The futex syscall.
    Futex,
    /// std Mutex + Condvar per word.
    Portable,
    /// loom's Mutex + Condvar per word.
    Loom,
}

/// The backend this build uses.
pub(crate) const fn backend() -> Backend {
    BACKEND
}

/// A futex word: an `AtomicU32` with wait and wake.
///
/// Outside loom it also counts its own `wait` and `wake_one` calls (each is
/// a syscall or a lock; the Relaxed increment sits next to it on the same
/// cache line), for [`SleepStats`](crate::SleepStats).
pub(crate) struct Futex {
    word: AtomicU32,
    #[cfg(not(all(test, loom)))]
    waits: std::sync::atomic::AtomicU64,
    #[cfg(not(all(test, loom)))]
    wakes: std::sync::atomic::AtomicU64,
    #[cfg(any(
        eventcount_fallback,
        not(any(target_os = "linux", target_os = "android"))
    ))]
    #[cfg(not(all(test, loom)))]
    lock: std::sync::Mutex<()>,
    #[cfg(any(
        eventcount_fallback,
        not(any(target_os = "linux", target_os = "android"))
    ))]
    #[cfg(not(all(test, loom)))]
    sleepers: std::sync::Condvar,
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
            #[cfg(any(
                eventcount_fallback,
                not(any(target_os = "linux", target_os = "android"))
            ))]
            #[cfg(not(all(test, loom)))]
            lock: std::sync::Mutex::new(()),
            #[cfg(any(
                eventcount_fallback,
                not(any(target_os = "linux", target_os = "android"))
            ))]
            #[cfg(not(all(test, loom)))]
            sleepers: std::sync::Condvar::new(),
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
    pub(crate) fn wait(&self, expected: u32) {
        self.count_wait();
        match BACKEND {
            Backend::Futex => self.futex_wait(expected),
            Backend::Portable | Backend::Loom => self.locked_wait(expected, None),
        }
    }

    /// Sleep while the word equals `expected`, until `deadline` at the
    /// latest. Returns true if the deadline has passed (under loom: always,
    /// at once, unless the word already differs). May return spuriously
    /// before the deadline: the caller re-checks the word and calls again.
    pub(crate) fn wait_until(&self, expected: u32, deadline: Instant) -> bool {
        if BACKEND == Backend::Loom {
            // loom cannot model time: every timed wait times out at once,
            // which drives the timeout path through every interleaving.
            return self.word.load(Ordering::Relaxed) == expected;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        self.count_wait();
        match BACKEND {
            Backend::Futex => self.futex_wait_timeout(expected, deadline - now),
            Backend::Portable | Backend::Loom => self.locked_wait(expected, Some(deadline - now)),
        }
        Instant::now() >= deadline
    }

    /// Wake one thread sleeping in `wait` or `wait_until` on this word.
    pub(crate) fn wake_one(&self) {
        self.count_wake();
        match BACKEND {
            Backend::Futex => self.futex_wake(),
            Backend::Portable | Backend::Loom => self.locked_wake(),
        }
    }

    // ---- futex backend -------------------------------------------------

    #[cfg(all(
        not(all(test, loom)),
        not(eventcount_fallback),
        any(target_os = "linux", target_os = "android")
    ))]
    fn futex_wait(&self, expected: u32) {
        atomic_wait::wait(&self.word, expected);
    }

    #[cfg(all(
        not(all(test, loom)),
        not(eventcount_fallback),
        any(target_os = "linux", target_os = "android")
    ))]
    fn futex_wait_timeout(&self, expected: u32, timeout: std::time::Duration) {
        super::futex_linux::wait_timeout(&self.word, expected, timeout);
    }

    #[cfg(all(
        not(all(test, loom)),
        not(eventcount_fallback),
        any(target_os = "linux", target_os = "android")
    ))]
    fn futex_wake(&self) {
        atomic_wait::wake_one(&self.word);
    }

    #[cfg(not(all(
        not(all(test, loom)),
        not(eventcount_fallback),
        any(target_os = "linux", target_os = "android")
    )))]
    fn futex_wait(&self, _expected: u32) {
        unreachable!("no futex backend in this build")
    }

    #[cfg(not(all(
        not(all(test, loom)),
        not(eventcount_fallback),
        any(target_os = "linux", target_os = "android")
    )))]
    fn futex_wait_timeout(&self, _expected: u32, _timeout: std::time::Duration) {
        unreachable!("no futex backend in this build")
    }

    #[cfg(not(all(
        not(all(test, loom)),
        not(eventcount_fallback),
        any(target_os = "linux", target_os = "android")
    )))]
    fn futex_wake(&self) {
        unreachable!("no futex backend in this build")
    }

    // ---- lock-based backends (portable and loom) -----------------------

    #[cfg(any(
        all(test, loom),
        eventcount_fallback,
        not(any(target_os = "linux", target_os = "android"))
    ))]
    fn locked_wake(&self) {
        // Poisoning cannot leave the word inconsistent: the lock guards no
        // data, only the check-then-sleep step.
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.sleepers.notify_one();
    }

    #[cfg(any(
        all(test, loom),
        eventcount_fallback,
        not(any(target_os = "linux", target_os = "android"))
    ))]
    fn locked_wait(&self, expected: u32, timeout: Option<std::time::Duration>) {
        let guard = self
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Relaxed on purpose: the caller re-loads with the ordering it needs
        // after we return, as it must after a real futex wait.
        if self.word.load(Ordering::Relaxed) != expected {
            return;
        }
        match timeout {
            None => drop(self.sleepers.wait(guard)),
            #[cfg(not(all(test, loom)))]
            Some(timeout) => drop(self.sleepers.wait_timeout(guard, timeout)),
            #[cfg(all(test, loom))]
            Some(_) => unreachable!("loom timed waits return before sleeping"),
        }
    }

    #[cfg(not(any(
        all(test, loom),
        eventcount_fallback,
        not(any(target_os = "linux", target_os = "android"))
    )))]
    fn locked_wake(&self) {
        unreachable!("no lock-based backend in this build")
    }

    #[cfg(not(any(
        all(test, loom),
        eventcount_fallback,
        not(any(target_os = "linux", target_os = "android"))
    )))]
    fn locked_wait(&self, _expected: u32, _timeout: Option<std::time::Duration>) {
        unreachable!("no lock-based backend in this build")
    }

    // ---- counts ----------------------------------------------------------

    #[inline]
    fn count_wait(&self) {
        #[cfg(not(all(test, loom)))]
        self.waits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    #[inline]
    fn count_wake(&self) {
        #[cfg(not(all(test, loom)))]
        self.wakes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// (wait calls, wake calls) so far. Not counted under loom: extra
    /// atomics would only grow the model.
    pub(crate) fn counts(&self) -> (u64, u64) {
        #[cfg(not(all(test, loom)))]
        return (
            self.waits.load(std::sync::atomic::Ordering::Relaxed),
            self.wakes.load(std::sync::atomic::Ordering::Relaxed),
        );
        #[cfg(all(test, loom))]
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

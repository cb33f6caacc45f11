//! The Linux and Android backend: std atomics, and the futex syscall through
//! rustix's safe wrappers (the crate has no unsafe code).

use std::time::Instant;

use rustix::thread::futex::{self, Flags, Timespec};

pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
pub(crate) use std::thread::yield_now;

/// Nothing besides the word itself: the kernel keeps the sleepers.
pub(crate) struct Parker;

impl Parker {
    pub(crate) fn new() -> Self {
        Parker
    }

    /// `FUTEX_WAIT`: sleep while `word == expected`. Its result is ignored
    /// on purpose: a wake, a signal (EINTR) and a changed word (EAGAIN) all
    /// mean "look at the word again", which every caller does.
    #[inline]
    pub(crate) fn wait(&self, word: &AtomicU32, expected: u32) {
        let _ = futex::wait(word, Flags::PRIVATE, expected, None);
    }

    /// `FUTEX_WAIT` with the time left until `deadline` (relative, as the
    /// syscall takes it). True if the deadline has passed.
    pub(crate) fn wait_until(&self, word: &AtomicU32, expected: u32, deadline: Instant) -> bool {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return true;
        };
        // A timeout past what a timespec holds is "forever" anyway.
        let timeout = Timespec::try_from(left).ok();
        let _ = futex::wait(word, Flags::PRIVATE, expected, timeout.as_ref());
        Instant::now() >= deadline
    }

    /// `FUTEX_WAKE` of one sleeper. The word may belong to a waiter that is
    /// already gone from it; the kernel then finds nobody, which is fine.
    #[inline]
    pub(crate) fn wake_one(&self, word: &AtomicU32) {
        let _ = futex::wake(word, Flags::PRIVATE, 1);
    }
}

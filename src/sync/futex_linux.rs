//! The one piece of unsafe code in the crate: a futex wait with a timeout
//! on Linux and Android, which `atomic-wait` does not offer.
//!
//! Measured need: a timed sleep must leave the waiter set at its deadline,
//! and the only lock-free way to sleep on a word with a deadline is the
//! futex syscall itself. Untimed waits and wakes still go through
//! `atomic-wait`; both act on the same word, so they interoperate.

#![allow(unsafe_code)]

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Sleep while `word == expected`, for at most `timeout`. Returns on a wake,
/// on the timeout, on a signal (EINTR), or at once if the word differs
/// (EAGAIN); the caller re-checks the word and its deadline in every case,
/// so the result is ignored.
pub(super) fn wait_timeout(word: &AtomicU32, expected: u32, timeout: Duration) {
    let timeout = libc::timespec {
        // Saturate: a timeout past the end of time_t is "forever" anyway.
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY:
    // - `word` is a live `&AtomicU32`, so the address is valid, aligned and
    //   4 bytes wide for the whole call, as FUTEX_WAIT requires; the kernel
    //   only reads it atomically, which an AtomicU32 permits.
    // - `timeout` is a valid `timespec` on our stack that outlives the call;
    //   FUTEX_WAIT reads it as a relative timeout and does not keep it.
    // - FUTEX_PRIVATE_FLAG is right: the word is never shared across processes.
    // - The remaining syscall arguments (uaddr2, val3) are unused by FUTEX_WAIT.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word as *const AtomicU32,
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &timeout as *const libc::timespec,
        );
    }
}

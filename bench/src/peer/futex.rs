//! [`RawFutex`]: the floor. Sleeps on the workload's own signal word with
//! `FUTEX_WAIT` and wakes with `FUTEX_WAKE`, through rustix's safe wrappers
//! as the library does: nothing between the workload and the kernel.

use std::sync::atomic::{AtomicU32, Ordering};

use rustix::thread::futex::{self, Flags};

use super::Peer;

/// A bare futex on the signal word.
#[derive(Debug)]
pub struct RawFutex;

impl Peer for RawFutex {
    fn new(_slots: usize) -> Self {
        RawFutex
    }

    fn wait_until(&self, _slot: usize, signal: &AtomicU32, ready: impl Fn() -> bool) {
        loop {
            // Read the word before the check: a wake after the check changed
            // it first, so the kernel sees a different value and returns.
            let seen = signal.load(Ordering::Acquire);
            if ready() {
                return;
            }
            // A wake, a signal and a changed word all mean "check again".
            let _ = futex::wait(signal, Flags::PRIVATE, seen, None);
        }
    }

    fn wake_one(&self, signal: &AtomicU32) {
        let _ = futex::wake(signal, Flags::PRIVATE, 1);
    }

    fn wake_all(&self, signal: &AtomicU32) {
        let _ = futex::wake(signal, Flags::PRIVATE, i32::MAX as u32);
    }
}

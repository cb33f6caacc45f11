//! The crate's only door to synchronization primitives.
//!
//! Every protocol file imports atomics, fences, hints and the futex from
//! here, never from `std` or `loom` directly. When the crate's own unit tests
//! are built with `--cfg loom` (`cfg(all(test, loom))`), this module swaps in
//! loom's model-checked types, so the loom models drive the very code that
//! ships.
//!
//! Why `all(test, loom)` and not bare `loom`: doctests and integration tests
//! link the library built *without* `cfg(test)`, so under
//! `RUSTFLAGS="--cfg loom" cargo test` they still get real atomics and run
//! (loom types panic outside a loom model). It also keeps a downstream
//! crate's own `--cfg loom` from turning our primitives into loom's.
//!
//! Gaps between the two builds, written down where they matter:
//! - loom treats SeqCst loads, stores and read-modify-writes as AcqRel but
//!   models `fence(SeqCst)` exactly. Every Dekker-style handshake in this crate
//!   is therefore written as an explicit `fence(SeqCst)`.
//! - loom has no futex: [`Futex`] becomes a word plus a loom Mutex + Condvar,
//!   and timed waits time out at once (see `futex.rs`).
//! - loom cannot model spinning on another thread: [`spin_loop`] and
//!   [`yield_now`] become loom yields, and protocol code never spins waiting
//!   for another thread anyway.

mod futex;
#[cfg(all(
    not(all(test, loom)),
    not(eventcount_fallback),
    any(target_os = "linux", target_os = "android")
))]
mod futex_linux;

pub(crate) use futex::Futex;
pub(crate) use futex::{backend, Backend};

#[cfg(not(all(test, loom)))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

#[cfg(all(test, loom))]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// A CPU hint for one round of a busy-wait.
#[cfg(not(all(test, loom)))]
#[inline]
#[allow(dead_code)] // used by the idle policies
pub(crate) fn spin_loop() {
    std::hint::spin_loop();
}

/// Under loom a spin is a scheduling point, or the model never ends.
#[cfg(all(test, loom))]
#[allow(dead_code)]
pub(crate) fn spin_loop() {
    loom::thread::yield_now();
}

/// Give the rest of this time slice to another thread.
#[cfg(not(all(test, loom)))]
#[inline]
#[allow(dead_code)] // used by the idle policies
pub(crate) fn yield_now() {
    std::thread::yield_now();
}

/// Under loom a yield is a scheduling point.
#[cfg(all(test, loom))]
#[allow(dead_code)]
pub(crate) fn yield_now() {
    loom::thread::yield_now();
}

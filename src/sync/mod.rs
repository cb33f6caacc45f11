//! The crate's only door to synchronization primitives.
//!
//! Every protocol file imports atomics, fences, hints and the futex word
//! from here, never from `std` or `loom` directly. This is the one place
//! that chooses, by `cfg`, which backend a build gets, and the ground of
//! the crate: nothing here imports from any other module of the crate
//! (`scripts/layers.py` checks it):
//!
//! | build                                              | atomics, hints | parking (`Parker`)                                  | file          |
//! |----------------------------------------------------|----------------|-----------------------------------------------------|---------------|
//! | Linux, Android                                     | std            | the futex syscall, via rustix                        | `futex.rs`    |
//! | every other target, or `--cfg eventcount_fallback` | std            | std's thread parker: `thread::park` / `Thread::unpark` | `park.rs`     |
//! | the crate's unit tests under `--cfg loom`, or any build with `--cfg eventcount_loom` | loom | a flag loom does not see; a sleeper yields until a wake clears it, with no synchronization of its own | `loom.rs` |
//!
//! Why `all(test, loom)` and not bare `loom`: doctests and integration tests
//! link the library built *without* `cfg(test)`, so under
//! `RUSTFLAGS="--cfg loom" cargo test` the doctests still get real atomics
//! and run (loom types panic outside a loom model). It also keeps a
//! downstream crate's own `--cfg loom` from turning our primitives into
//! loom's when it does not ask for that.
//!
//! A downstream crate whose loom models drive this crate sets a second cfg,
//! `eventcount_loom`, beside its own (as crossbeam's `crossbeam_loom`): the
//! whole library, idle clock included, then uses the loom backend, and loom
//! is a dependency under that cfg (docs/development.md, "Testing").
//!
//! Gaps between the builds, written down where they matter:
//! - loom treats SeqCst loads, stores and read-modify-writes as AcqRel but
//!   models `fence(SeqCst)` exactly. Every Dekker-style handshake in this
//!   crate is therefore an explicit `fence(SeqCst)`.
//! - loom has no clock: a timed wait times out at once (`loom.rs`), and an
//!   `IdleClock` advances by a fixed step per read (`clock.rs`).
//! - loom cannot model spinning on another thread: `yield_now` is a loom
//!   yield, and protocol code never spins waiting for another thread.
//! - the loom parker, like a futex, orders nothing; it never returns
//!   spuriously, and a lost wakeup may hit the branch limit (`loom.rs`).

// The loom backend: `any(all(test, loom), eventcount_loom)` (module docs).
#[cfg(any(all(test, loom), eventcount_loom))]
#[path = "loom.rs"]
mod backend;
#[cfg(all(
    not(any(all(test, loom), eventcount_loom)),
    not(eventcount_fallback),
    any(target_os = "linux", target_os = "android")
))]
#[path = "futex.rs"]
mod backend;
#[cfg(all(
    not(any(all(test, loom), eventcount_loom)),
    any(
        eventcount_fallback,
        not(any(target_os = "linux", target_os = "android"))
    )
))]
#[path = "park.rs"]
mod backend;
mod clock;
mod word;

pub(crate) use backend::{fence, yield_now, AtomicU32, AtomicU64, Ordering};
#[cfg(all(test, loom))]
pub(crate) use clock::LOOM_STEP;
pub(crate) use clock::{shared_clock_ns, thread_cpu_ns, IdleClock, HAS_THREAD_CPU_CLOCK};
pub(crate) use word::Futex;

/// Atomics and a lock that the loom models do not see, for values that no
/// wake depends on: the futex words' syscall counts, each worker's idle
/// counters, its learned rule and the stamp its wakers leave, which only
/// decide how long a search lasts or what the stats say. They are std's in
/// every build, Relaxed, so they never grow a model's state space; a model
/// still replays exactly, since loom runs one thread at a time and each
/// value is a function of the schedule so far. The lock is held only to
/// copy a value in or out, never across a loom operation.
pub(crate) mod unmodeled {
    pub(crate) use std::sync::atomic::Ordering::Relaxed;
    pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64};
    pub(crate) use std::sync::Mutex;
}

//! Put thread-pool workers to sleep and wake them, correctly and cheaply.
//!
//! [`Notifier`] is an event count in the line of Eigen's `EventCount` and
//! Taskflow's `NonblockingNotifier`: workers that find no work announce that
//! they are about to sleep, check for work once more, and only then park,
//! each on its own futex word. Producers pay one fence and one load to notify
//! when nobody sleeps. [`JecSleep`] and [`NotifierSleep`] put a
//! work-stealing pool's workers to sleep through one trait,
//! [`SleepProtocol`].
//!
//! **Start with the [`guide`]**: a hand-rolled loop with its stop flag,
//! waiters that come and go, and a complete small executor, each a program
//! you can copy.
//!
//! # The wait loop
//!
//! ```
//! use eventcount::Notifier;
//! use std::sync::atomic::{AtomicBool, Ordering};
//! use std::sync::Arc;
//! use std::thread;
//!
//! let notifier = Arc::new(Notifier::new(1)); // one waiter slot, id 0
//! let ready = Arc::new(AtomicBool::new(false));
//!
//! let waiter = {
//!     let (notifier, ready) = (notifier.clone(), ready.clone());
//!     thread::spawn(move || loop {
//!         if ready.load(Ordering::Acquire) { break; }   // 1. check
//!         let wait = notifier.prepare_wait(0);          // 2. announce
//!         if ready.load(Ordering::Acquire) {             // 3. check again
//!             notifier.cancel_wait(wait);
//!             break;
//!         }
//!         notifier.commit_wait(wait);                   // 4. sleep until notified
//!     })
//! };
//!
//! ready.store(true, Ordering::Release); // make the condition true,
//! notifier.notify_one();                // then notify
//! waiter.join().unwrap();
//! ```
//!
//! The protocol, its memory orderings and the proof that no wakeup is lost
//! are in [`docs::notifier`].
//!
//! # What is in it
//!
//! - [`Notifier`]: the event count above. [`PreparedWait`] is its token, and
//!   [`WaiterIds`] hands out waiter ids to threads that wait now and then,
//!   and [`WaiterWaker`] is a `std::task::Waker` that wakes a thread
//!   sleeping on it (a `block_on`, an executor's workers).
//! - [`JecSleep`]: rayon-core's jobs-event-counter sleep protocol as an
//!   adapter for any work-stealing pool ([`docs::jec_sleep`]). [`JecIdle`]
//!   is what an idle worker carries.
//! - [`SleepProtocol`]: the one trait a scheduler's worker loop calls,
//!   implemented by [`JecSleep`] and by [`NotifierSleep`] (the notifier with
//!   an idle policy; [`NotifierIdle`] is its idle state). rayon-core runs on
//!   it, with its own test suites passing ([`docs::rayon`]).
//! - [`CoreLatch`]: the four-state latch a worker sleeps against, shared by
//!   both protocols. What it is made for also tells the idle policy whether
//!   its owner waits for new work or for a job in flight.
//! - [`IdlePolicy`]: how long an idle worker searches before it sleeps, and
//!   how many search at once. By default each worker learns its budget, in
//!   time, from what its sleeps show ([`docs::idle_policy`]).
//! - [`SleepStats`]: what sleeping cost (futex calls, wakes that found
//!   nothing, time searching on the wall and CPU clocks, how searches
//!   ended, time parked), for a pool or one worker, and how to size a pool
//!   by it (the [`guide`]); [`WaitOutcome`] says why a timed
//!   wait returned; [`CapacityError`] reports a constructor asked for too
//!   much.
//! - [`Round`]: what one idle round did (searched, announced, slept, and
//!   why it returned), for a scheduler's park hooks and metrics; [`Unpark`]:
//!   the hook that wakes a worker sleeping in a park of the scheduler's own,
//!   an I/O driver's poll for one
//!   ([`SleepProtocol::no_work_found_parked`]).
//!
//! The crate has no unsafe code: the futex calls go through rustix's safe
//! wrappers.

#![forbid(unsafe_code)]
#![deny(missing_docs, missing_debug_implementations)]

/// Declares one item public with the `internals` feature and crate-private
/// without it: the items that implementing [`SleepProtocol`] outside this
/// crate needs (the latch's sleep steps, a [`CapacityError`] constructor),
/// and the ones the repository's ports, benchmarks and tests read (the
/// packed counters, the benchmark-only policies). They are not part of the
/// stable API.
macro_rules! internal {
    ($(#[$attr:meta])* pub $($item:tt)*) => {
        #[cfg(feature = "internals")]
        $(#[$attr])* pub $($item)*
        #[cfg(not(feature = "internals"))]
        #[allow(dead_code)]
        $(#[$attr])* pub(crate) $($item)*
    };
}

// The modules in layers, the lowest first; a module imports only from
// layers below its own, never through this file's re-exports
// (`scripts/layers.py` checks both, and that there is no cycle):
// 1. `sync`, the ground: atomics, fences, hints and parking, from std or
//    loom. It imports nothing of the crate's.
// 2. `error`, `outcome`, `round`, `stats`: what calls return; `unpark`:
//    the hook a scheduler hands in.
// 3. `latch`: the latch a worker sleeps against, and what it waits for.
// 4. `idle`: the idle policy, pure; `shell`: what both protocols share
//    about idling, which drives it on the clocks.
// 5. `protocol`: the `SleepProtocol` trait.
// 6. `notifier` (the event count, and `NotifierSleep` on it) and `jec`,
//    neither of which uses the other.
// 7. `waker`: a `std::task::Waker` on the notifier.
mod sync;

mod error;
mod outcome;
mod round;
mod stats;
mod unpark;

mod latch;

mod idle;
mod shell;

mod protocol;

mod jec;
mod notifier;

mod waker;

// Test-only code, above everything it tests: the loom models, and the
// helpers shared with tests/ (through tests/common), which the models may
// use too (its docs say which).
#[cfg(all(test, loom))]
mod models;
#[cfg(test)]
mod test_support;

/// The idle policy's pure state machine, for the repository's simulator
/// and trace tools: not a stable API, and only with the `policy-tools`
/// feature.
#[cfg(feature = "policy-tools")]
#[doc(hidden)]
pub mod policy_tools {
    pub use crate::idle::{IdlePeriod, IdlePolicy, Learner, Setup, Step, LATENCY_WEIGHT};
    pub use crate::latch::WaitKind;
}

#[doc = include_str!("../docs/guide.md")]
pub mod guide {}

// The README's examples run as doctests, as crates.io readers copy them.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

/// The protocols, written down: each one's state layout, every step with its
/// memory ordering and why, and the proof sketch that no wakeup is lost.
/// The code follows these pages step by step, and a check of the
/// repository keeps the two in agreement ([`docs::development`] lists it).
pub mod docs {
    #[doc = include_str!("../docs/notifier.md")]
    pub mod notifier {}
    #[doc = include_str!("../docs/jec-sleep.md")]
    pub mod jec_sleep {}
    #[doc = include_str!("../docs/idle-policy.md")]
    pub mod idle_policy {}
    #[doc = include_str!("../docs/rayon.md")]
    pub mod rayon {}
    #[doc = include_str!("../docs/tokio.md")]
    pub mod tokio {}
    #[doc = include_str!("../docs/benchmarks.md")]
    pub mod benchmarks {}
    /// The benchmarks' plots, drawn from one run's results by the
    /// repository's `plots` tool: [`benchmarks`] says how each is read and
    /// which run it shows. Each is the SVG file of `docs/plots/` in the
    /// package, inlined; a wide one scrolls sideways.
    ///
    /// # B7 on rayon's drop-in: wasted CPU against latency
    ///
    /// rayon-core on this crate against stock rayon and rayon PR #1314's two
    /// designs: ticks of 8 short jobs with idle gaps between them, one panel
    /// per thread count and gap, both axes as ratios to stock rayon in the
    /// same run.
    ///
    #[doc = "<div style=\"overflow-x: auto\">"]
    #[doc = include_str!("../docs/plots/rayon-b7-cpu-latency.svg")]
    #[doc = "</div>"]
    ///
    /// # B8 on rayon's drop-in: wasted CPU against latency
    ///
    /// The control loop and the saturating fold, one panel per shape and
    /// mode, one row per thread count.
    ///
    #[doc = "<div style=\"overflow-x: auto\">"]
    #[doc = include_str!("../docs/plots/rayon-b8-cpu-latency.svg")]
    #[doc = "</div>"]
    ///
    /// # B7 and B8 on the example pool
    ///
    /// The same cases on the repository's example pool, against rayon's own
    /// pool.
    ///
    #[doc = "<div style=\"overflow-x: auto\">"]
    #[doc = include_str!("../docs/plots/pool-b7-cpu-latency.svg")]
    #[doc = "</div>"]
    ///
    #[doc = "<div style=\"overflow-x: auto\">"]
    #[doc = include_str!("../docs/plots/pool-b8-cpu-latency.svg")]
    #[doc = "</div>"]
    ///
    /// # B2: the round trip
    ///
    /// Each peer's round trip, one panel per placement, on one log axis in µs.
    ///
    #[doc = "<div style=\"overflow-x: auto\">"]
    #[doc = include_str!("../docs/plots/b2-round-trip.svg")]
    #[doc = "</div>"]
    ///
    /// # tokio on eventcount
    ///
    /// Each build's ratio to stock tokio in the same round, one line per
    /// case and metric of `tokio-bench`, with the stock-vs-stock band in
    /// grey ([docs/tokio.md](crate::docs::tokio), "Benchmark").
    ///
    #[doc = "<div style=\"overflow-x: auto\">"]
    #[doc = include_str!("../docs/plots/tokio-ratios.svg")]
    #[doc = "</div>"]
    pub mod plots {}
    #[doc = include_str!("../docs/development.md")]
    pub mod development {}
}

#[doc = include_str!("../CHANGELOG.md")]
pub mod changelog {}

pub use error::CapacityError;
pub use idle::IdlePolicy;
#[cfg(feature = "internals")]
pub use jec::JecCounters;
pub use jec::{JecIdle, JecSleep};
pub use latch::CoreLatch;
pub use notifier::{Notifier, NotifierIdle, NotifierSleep, PreparedWait, WaiterId, WaiterIds};
pub use outcome::WaitOutcome;
#[cfg(feature = "internals")]
pub use protocol::Rounds;
pub use protocol::SleepProtocol;
pub use round::Round;
pub use stats::SleepStats;
pub use unpark::Unpark;
pub use waker::WaiterWaker;

// Every public type may cross threads: a protocol is shared by its workers,
// and an idle state or a token may be handed to another thread with them.
static_assertions::assert_impl_all!(CapacityError: Send, Sync);
static_assertions::assert_impl_all!(CoreLatch: Send, Sync);
static_assertions::assert_impl_all!(IdlePolicy: Send, Sync);
static_assertions::assert_impl_all!(JecIdle<'static>: Send, Sync);
static_assertions::assert_impl_all!(JecSleep: Send, Sync);
static_assertions::assert_impl_all!(Notifier: Send, Sync);
static_assertions::assert_impl_all!(NotifierIdle<'static>: Send, Sync);
static_assertions::assert_impl_all!(NotifierSleep: Send, Sync);
static_assertions::assert_impl_all!(PreparedWait<'static>: Send, Sync);
static_assertions::assert_impl_all!(Round: Send, Sync);
static_assertions::assert_impl_all!(SleepStats: Send, Sync);
static_assertions::assert_impl_all!(WaitOutcome: Send, Sync);
static_assertions::assert_impl_all!(WaiterId<'static>: Send, Sync);
static_assertions::assert_impl_all!(WaiterIds: Send, Sync);
static_assertions::assert_impl_all!(WaiterWaker: Send, Sync);

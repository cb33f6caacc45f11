//! eventcount's benchmark harness: what the criterion benches (`benches/`),
//! the alternating report (`bench-report`), the simulator (`policy-sim`),
//! the crate's `pool` example and rayon-interop's workload program share,
//! so that all of them measure the same thing.
//!
//! - [`workload`]: the fork-join workloads (B5-B9), written once over any
//!   pool that can join, the measurement loops, the /proc and CPU-time
//!   readings, the statistics, and the budget sweep's oracle.
//! - [`pool`] (feature `pool`): the example work-stealing pool on either
//!   protocol, and [`AnyPool`](pool::AnyPool), which runs a workload on it,
//!   on the [`eigen`] peer or on rayon's pool.
//! - [`peer`] (feature `tools`): the [`Peer`](peer::Peer) trait, one way
//!   to sleep and wake, and its seven implementations: a raw futex (the
//!   floor), the crate's `Notifier`, std's and parking_lot's condition
//!   variables, event-listener, crossbeam's `Parker` and std's
//!   `thread::park`; and the wake workloads, each written once over any
//!   peer: [`pingpong`] (B2), [`fanout`] (B3) and [`bursty`] (B4).
//! - [`sim`] (feature `tools`): the idle policy on a virtual clock, against
//!   fixed budgets, the clairvoyant policy and rayon's rounds (`policy-sim`).
//!
//! The features nest: `tools` (the default) has `pool`, which has `rayon`.
//! Nothing here asserts a timing.

#![deny(missing_docs, unsafe_code)]

#[cfg(all(
    feature = "tools",
    not(any(target_os = "linux", target_os = "android"))
))]
compile_error!(
    "eventcount-bench's tools need Linux: the raw-futex peer, /proc and taskset have no equivalent here"
);

#[cfg(feature = "tools")]
pub mod bursty;
#[cfg(feature = "pool")]
pub mod eigen;
#[cfg(feature = "tools")]
pub mod fanout;
#[cfg(feature = "tools")]
pub mod peer;
#[cfg(feature = "tools")]
pub mod pingpong;
#[cfg(feature = "pool")]
pub mod pool;
#[cfg(feature = "tools")]
pub mod sim;
#[cfg(feature = "tools")]
pub mod threads;
pub mod workload;

//! The benchmarks of `eventcount` (B1-B7 of docs/benchmarks.md): the
//! workload code shared by the criterion benches (`benches/`) and the
//! alternating report (`bench-report`), so that both measure the same thing.
//!
//! - [`peer`]: the [`Peer`](peer::Peer) trait, one way to sleep and wake,
//!   and its seven implementations: a raw futex (the floor), the crate's
//!   `Notifier`, std's and parking_lot's condition variables,
//!   event-listener, crossbeam's `Parker` and std's `thread::park`.
//! - The wake workloads, each written once over any peer: [`pingpong`]
//!   (B2), [`fanout`] (B3) and [`bursty`] (B4).
//!
//! - [`sim`]: the idle policy on a virtual clock, against fixed budgets,
//!   the clairvoyant policy and rayon's rounds (`policy-sim`).
//!
//! The fork-join workloads (B5-B8) are in `eventcount-workload`, and the
//! pool they run on in `eventcount-pool`. Nothing here asserts a timing.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(not(any(target_os = "linux", target_os = "android")))]
compile_error!(
    "eventcount-bench needs Linux: the raw-futex peer, /proc and taskset have no equivalent here"
);

pub mod bursty;
pub mod fanout;
pub mod peer;
pub mod pingpong;
pub mod sim;
pub mod threads;

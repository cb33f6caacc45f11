//! The example work-stealing pool of `eventcount`, as a small library.
//!
//! The crate's own `pool` example, its tests and the benchmarks
//! (`eventcount-bench`) all run this one copy:
//!
//! - [`Pool`]: one crossbeam deque per worker, stealing from a random
//!   victim, an injector for jobs from outside, an allocation-free
//!   [`WorkerCtx::join`], `install` and `spawn`, and a shutdown that wakes
//!   and joins every worker. All sleeping and waking goes through
//!   [`SleepProtocol`](eventcount::SleepProtocol), so the same pool runs on
//!   `JecSleep` and on `NotifierSleep`.
//! - The fork-join workloads ([`fib`], [`tree_sum`], [`burst_tree`],
//!   [`fold_range`], and a control loop's [`tick`]), each with its
//!   sequential baseline and its twin written for rayon, and [`Workload`],
//!   which names one run of any of them.
//! - [`AnyPool`]: this pool on either protocol, under any of the idle
//!   policies the benchmarks compare, or a rayon pool, behind one type, so
//!   that a measurement is written once for all of them.
//! - [`procstat`]: CPU time, context switches and thread states from /proc.
//!
//! It is a workspace member that is never published: `eventcount` takes it
//! as a path dev-dependency without a version, which `cargo publish`
//! strips. Unlike `eventcount`, it has `unsafe` code: `join` keeps its
//! second half on the joining thread's stack, as rayon does (module `job`,
//! with a `// SAFETY:` argument on every block).

#![deny(missing_docs, unsafe_op_in_unsafe_fn)]

mod any_pool;
mod job;
mod pool;
pub mod procstat;
mod worker;
mod workload;

pub use any_pool::{AnyPool, PoolKind};
pub use pool::Pool;
pub use worker::WorkerCtx;
pub use workload::burst::{burst_tree, busy_work, calibrate_busy_work, rayon_burst};
pub use workload::fib::{fib, fib_seq, rayon_fib};
pub use workload::fold::{fold_range, fold_seq, rayon_fold};
pub use workload::tick::{rayon_tick, tick, tick_seq};
pub use workload::tree::{make_tree, rayon_tree, tree_sum, tree_sum_seq};
pub use workload::{TickShape, Workload};

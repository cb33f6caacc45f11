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
//! - [`AnyPool`]: this pool on either protocol, under any of the idle
//!   policies the benchmarks compare, or a rayon pool, behind one type, so
//!   that a measurement is written once for all of them.
//!
//! The fork-join workloads are [`workload`](crate::workload)'s, written
//! once over any pool that can join: [`WorkerCtx`] is such a worker
//! ([`Join`](crate::workload::Join)), and [`AnyPool`] runs a whole
//! [`Workload`] ([`Runner`](crate::workload::Runner)). What the
//! crate's `pool` example and its tests use of it is re-exported here.
//!
//! Unlike `eventcount`, this module has `unsafe` code: `join` keeps its
//! second half on the joining thread's stack, as rayon does (module `job`,
//! with a `// SAFETY:` argument on every block).

#![deny(unsafe_op_in_unsafe_fn)]

mod any_pool;
#[allow(unsafe_code)]
mod job;
mod lifecycle;
#[allow(unsafe_code)]
mod worker;

pub use crate::workload::{fib, fib_seq, make_tree, procstat, tree_sum, tree_sum_seq, Workload};
pub use any_pool::{AnyPool, PoolKind};
pub use lifecycle::Pool;
pub use worker::WorkerCtx;

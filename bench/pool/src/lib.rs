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
//! The fork-join workloads are `eventcount-workload`'s, written once over
//! any pool that can join: [`WorkerCtx`] is such a worker
//! ([`Join`](eventcount_workload::Join)), and [`AnyPool`] runs a whole
//! [`Workload`] ([`Runner`](eventcount_workload::Runner)). What the
//! crate's `pool` example and its tests use of it is re-exported here, so
//! that they need no dependency of their own on it.
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
mod worker;

pub use any_pool::{AnyPool, PoolKind};
pub use eventcount_workload::{
    fib, fib_seq, make_tree, procstat, tree_sum, tree_sum_seq, Workload,
};
pub use pool::Pool;
pub use worker::WorkerCtx;

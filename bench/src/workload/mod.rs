//! The fork-join workloads of `eventcount`'s measurements, written once
//! over any pool, and the readings that measure them.
//!
//! Three programs run them: the example pool's own command and tests
//! (module `pool`), `bench-report`'s B5–B8, and
//! the workload program of `scripts/rayon-bench` (`interop/workload`),
//! which rayon-interop builds against stock rayon and against rayon on
//! each protocol. Running the same code in all three is what makes their
//! numbers comparable.
//!
//! - [`Join`]: a worker that can split a job in two, the one operation the
//!   workloads need; [`Runner`]: a pool that runs a [`Workload`] and waits
//!   for its result, what the measurement loops need. The example pool
//!   implements both; so does rayon (feature `rayon`:
//!   `RayonWorker`, and `Runner` for `rayon::ThreadPool`).
//! - The workloads: [`fib`], [`tree_sum`], [`burst_tree`], [`fold_range`]
//!   and a control loop's [`tick`], each with its sequential baseline, and
//!   [`Workload`], which names one run of any of them.
//! - The measurement loops that two harnesses share: [`ticks`] (B7) and
//!   [`control`] (B8, and B9's two pools at once), and B9's CPU [`hog`]s.
//! - The budget sweep both harnesses run: its command line ([`sweep`])
//!   and its verdict per row ([`oracle`]).
//! - [`procstat`]: CPU time, context switches and thread states from /proc;
//!   [`stats`]: medians and percentiles; [`source_commit`]: which commit a
//!   report was built from.

mod burst;
pub mod control;
mod fib;
mod fold;
pub mod hog;
mod join;
pub mod oracle;
pub mod procstat;
#[cfg(feature = "rayon")]
mod rayon_pool;
mod run;
mod source;
pub mod stats;
pub mod sweep;
mod tick;
pub mod ticks;
mod tree;

pub use burst::{burst_tree, busy_work, calibrate_busy_work, jobs_cpu_us, xorshift};
pub use fib::{fib, fib_seq};
pub use fold::{fold_item, fold_range, fold_seq};
pub use join::{Join, Runner};
#[cfg(feature = "rayon")]
pub use rayon_pool::RayonWorker;
pub use run::Workload;
pub use source::source_commit;
pub use tick::{tick, tick_seq, TickShape};
pub use tree::{make_tree, tree_sum, tree_sum_seq};

//! The idle policy, whole: how long an idle worker searches before it
//! sleeps, how many search at once, what each worker learns, and what its
//! idle periods cost ([docs/idle-policy.md](crate::docs::idle_policy)).
//!
//! | file          | what                                                           |
//! |---------------|----------------------------------------------------------------|
//! | `policy.rs`   | [`IdlePolicy`], the public choice, and how a round passes time  |
//! | `budget.rs`   | one worker's learned search budgets, and the rule that learns   |
//! | `period.rs`   | one idle period, phase by phase: search, sleepy, sleep          |
//! | `searchers.rs`| the searcher cap's slots, and whether the cap lets a phase search |
//! | `pressure.rs` | whether the machine is oversubscribed: the pool's size, or a score of yield rounds |
//! | `pool.rs`     | what a pool shares (slots, score), and whether a phase may search |
//! | `counters.rs` | what a worker's idle periods cost, for `SleepStats`             |
//!
//! Both protocols step an [`IdlePeriod`] from their rounds and keep one
//! [`WorkerIdle`] per worker; neither decides anything about timing on its
//! own. Nothing here wakes anybody: no wakeup depends on the policy or on
//! the oversubscription score, which is why the loom models run at their
//! extremes.

mod budget;
mod counters;
mod period;
mod policy;
mod pool;
mod pressure;
mod searchers;

pub(crate) use period::{IdlePeriod, Step, WorkerIdle};
pub use policy::IdlePolicy;
#[cfg(all(test, loom))]
pub(crate) use policy::DEFAULT_MAX_SEARCH_NS;
pub(crate) use pool::PoolIdle;

//! The idle policy: how long an idle worker searches before it sleeps, and
//! how many idle workers search at once
//! ([docs/idle-policy.md](crate::docs::idle_policy)).
//!
//! | file         | what                                                          |
//! |--------------|---------------------------------------------------------------|
//! | `policy.rs`  | [`IdlePolicy`], the public choice                             |
//! | `learner.rs` | one worker's rule: the sleep's cost, and the budget that pays |
//! | `period.rs`  | one idle period, step by step: search, sleepy, sleep          |
//!
//! Pure: no clock, no atomics; the protocols (`src/shell/`) feed it times.
//! No wakeup depends on it, so the loom models run it at its extremes.

mod learner;
mod period;
mod policy;

pub use learner::Learner;
#[cfg(feature = "policy-tools")]
pub use learner::LATENCY_WEIGHT;
pub use period::{IdlePeriod, Setup, Step};
pub use policy::IdlePolicy;
pub(crate) use policy::Searchers;

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
//! Pure: no clock, no atomics. The protocols read the clocks and keep the
//! shared state (`src/shell/`), and feed the times to an [`IdlePeriod`];
//! a simulator can feed it a virtual clock. Nothing here wakes anybody: no
//! wakeup depends on the policy, which is why the loom models run it at its
//! extremes.

mod learner;
mod period;
mod policy;

pub use learner::Learner;
#[cfg(feature = "policy-tools")]
pub use learner::LATENCY_WEIGHT;
pub use period::{IdlePeriod, Setup, Step};
pub use policy::IdlePolicy;
pub(crate) use policy::Searchers;

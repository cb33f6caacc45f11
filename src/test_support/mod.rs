//! Test helpers written once and shared by the crate's unit tests (in
//! `src/`), its loom models (`src/models/`) and its integration tests (in
//! `tests/`).
//!
//! Why here: the unit tests cannot import from `tests/`, and an integration
//! test can only reach the crate's public API, so neither side can simply
//! `use` the other's helpers. This module is compiled for all of the
//! crate's own tests (`cfg(test)` in `lib.rs`), loom's build included, and
//! `tests/common/mod.rs` includes this same directory with one
//! `#[path]` attribute. One copy of the code, two crates compiling it.
//!
//! Under loom, a model may use only the helpers that call the crate's API
//! and take any other atomics as closures ([`wait_unless`],
//! [`sleep_until`], [`rounds_until_slept`]): the rest run on std's threads and atomics, which a
//! model must not touch. The models' own helpers are in
//! `src/models/support/`.
//!
//! For that to work everything here names the crate under test only through
//! the parent module (`super::`): the crate root in the library's build,
//! `tests/common` (which imports the types from `eventcount`) in an
//! integration test's build.

// Each test binary (the library's unit tests are one) uses only the helpers
// it needs.
#![allow(dead_code)]

mod final_check;
mod heartbeat;
mod jec_counts;
mod jec_rounds;
mod notifier_waits;
mod parked_rounds;
mod watchdog;

#[allow(unused_imports)] // each test binary uses only the helpers it needs
pub use {
    final_check::FinalCheck,
    heartbeat::Heartbeat,
    jec_counts::{assert_counts, end_search},
    jec_rounds::{registered_round, registered_round_until, sleepy_round, sleepy_worker},
    notifier_waits::{sleep_until, take_permit, try_take, wait_unless},
    parked_rounds::rounds_until_slept,
    watchdog::{with_progress_watchdog, with_watchdog, WATCHDOG},
};

// The crate under test, as the parent module names it (see above).
use super::{
    CoreLatch, JecCounters, JecIdle, JecSleep, Notifier, PreparedWait, Round, SleepProtocol,
    WaitOutcome,
};

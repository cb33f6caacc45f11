//! Shared by the integration tests: the hang watchdog and the other helpers.
//! Each test file declares `mod common;` and uses what it needs.

#![allow(dead_code)] // each test file uses only the helpers it needs

// The helpers the crate's unit tests use too live once, in src/test_support
// (see its module docs for why there); this includes that same directory.
#[path = "../../src/test_support/mod.rs"]
mod test_support;

mod notifier_at_rest;
mod panics;
mod polling;
mod threads;

#[allow(unused_imports)] // each test file uses only the helpers it needs
pub use {
    notifier_at_rest::{assert_nobody_waits, assert_stack_empty},
    panics::{panic_message, try_panic_message},
    polling::wait_until,
    test_support::{
        assert_counts, end_search, registered_round, registered_round_until, rounds_until_slept,
        sleep_until, sleepy_round, sleepy_worker, take_permit, try_take, with_progress_watchdog,
        with_watchdog, FinalCheck, Heartbeat, WATCHDOG,
    },
    threads::{join_all, spawn_each},
};

// What src/test_support reaches through `super::`: the crate under test.
use eventcount::{
    CoreLatch, JecCounters, JecIdle, JecSleep, Notifier, PreparedWait, Round, SleepProtocol,
    WaitOutcome,
};

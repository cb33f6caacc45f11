//! The loom models: every protocol path, model-checked. They are the
//! crate's unit tests under `RUSTFLAGS="--cfg loom" cargo test`, the only
//! build in which `src/sync/` hands the protocols loom's atomics and its
//! parker (`src/sync/loom.rs`).
//!
//! | file              | what it models                                              |
//! |-------------------|-------------------------------------------------------------|
//! | `notifier.rs`     | the `Notifier`: prepare, commit, cancel, every notify, ABA   |
//! | `jec.rs`          | `JecSleep` on its own: the JEC, the counters, the sleep word |
//! | `protocols.rs`    | both protocols through `SleepProtocol`: latches, injection, shutdown, at both extremes of the search budget |
//! | `searcher_cap.rs` | both protocols under a searcher cap: bursts, the hand-off    |
//! | `join.rs`         | both protocols with a worker waiting on a job's latch        |
//! | `external_park.rs`| a waiter parked in its caller's `park`, woken by the `Unpark` hook: the raw notifier and both protocols, racing notifies, early unparks, spurious and timed returns |
//! | `waiter_ids.rs`   | `WaiterIds`: an id is never held twice                       |
//! | `support/`        | what the models share: `check` (the bounds), actors, job steps |
//!
//! A new model goes in the file of the part it checks, or in a new file
//! here if it checks a new part; it runs through [`support::check`] with
//! its preemption bound in code, 2 to 3 threads, and each model gets a
//! planted bug in `scripts/planted_bugs.py` that makes it fail.

mod support;

mod external_park;
mod jec;
mod join;
mod notifier;
mod protocols;
mod searcher_cap;
mod waiter_ids;

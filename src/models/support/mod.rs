//! What the loom models of the crate share, written once: how a model is
//! run ([`check`]), how its actors are spawned and joined, and the worker
//! and poster steps that both protocols' models take through
//! [`SleepProtocol`](crate::SleepProtocol).
//!
//! A helper here performs the same atomic operations, in the same order,
//! as the code each model would otherwise write out: sharing it changes no
//! model.

mod check;
mod jobs;
mod threads;

pub(crate) use check::check;
pub(crate) use jobs::{inject_one, run_one_job, search_until, sleep_until_set, take};
pub(crate) use threads::{join_all, spawn_with};

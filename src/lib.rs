//! Put thread-pool workers to sleep and wake them, correctly and cheaply.
//!
//! [`Notifier`] is an event count in the line of Eigen's `EventCount` and
//! Taskflow's `NonblockingNotifier`: workers that find no work announce that
//! they are about to sleep, check for work once more, and only then park,
//! each on its own futex word. Producers pay one fence and one load to notify
//! when nobody sleeps.
//!
//! # The wait loop
//!
//! ```
//! use eventcount::Notifier;
//! use std::collections::VecDeque;
//! use std::sync::{Arc, Mutex};
//! use std::thread;
//!
//! let notifier = Arc::new(Notifier::new(2));
//! let queue = Arc::new(Mutex::new(VecDeque::new()));
//!
//! let workers: Vec<_> = (0..2)
//!     .map(|wid| {
//!         let (notifier, queue) = (notifier.clone(), queue.clone());
//!         thread::spawn(move || {
//!             let mut sum = 0;
//!             loop {
//!                 // 1. check
//!                 if let Some(job) = queue.lock().unwrap().pop_front() {
//!                     if job == 0 { return sum; } // 0 means "stop"
//!                     sum += job;
//!                     continue;
//!                 }
//!                 // 2. prepare
//!                 let wait = notifier.prepare_wait(wid);
//!                 // 3. re-check
//!                 if !queue.lock().unwrap().is_empty() {
//!                     notifier.cancel_wait(wait);
//!                     continue;
//!                 }
//!                 // 4. commit: sleeps until a notify
//!                 notifier.commit_wait(wait);
//!             }
//!         })
//!     })
//!     .collect();
//!
//! for job in [1, 2, 3, 4, 0, 0] {
//!     queue.lock().unwrap().push_back(job);
//!     notifier.notify_one();
//! }
//! let total: i32 = workers.into_iter().map(|w| w.join().unwrap()).sum();
//! assert_eq!(total, 10);
//! ```
//!
//! The protocol, its memory orderings and the proof that no wakeup is lost
//! are in `docs/notifier.md` in the repository.
//!
//! # What is in it
//!
//! - [`Notifier`]: the event count above. [`PreparedWait`] is its token.
//! - [`JecSleep`]: rayon-core's jobs-event-counter sleep protocol as an
//!   adapter for any work-stealing pool (`docs/jec-sleep.md`). [`JecIdle`]
//!   is what an idle worker carries; [`Counters`] decodes its packed word.
//! - [`SleepProtocol`]: the one trait a scheduler's worker loop calls,
//!   implemented by [`JecSleep`] and by [`NotifierSleep`] (the notifier with
//!   an idle policy; [`NotifierIdle`] is its idle state). rayon-core runs on
//!   it (`docs/rayon.md`).
//! - [`CoreLatch`]: the four-state latch a worker sleeps against, shared by
//!   both protocols.
//! - [`IdlePolicy`]: how long an idle worker spins and yields before it
//!   sleeps. [`WaitOutcome`] says why a timed wait returned,
//!   [`SleepStats`] counts futex calls, and [`CapacityError`] reports a
//!   constructor asked for too much. [`parking_backend`] tells how this
//!   build parks a thread.
//!
//! The crate has no unsafe code: the futex calls go through rustix's safe
//! wrappers.

#![forbid(unsafe_code)]
#![deny(missing_docs, missing_debug_implementations)]

// The modules in layers, the lowest first: `sync` (atomics, fences and
// parking, from std or loom); the shared parts, `backend` to `stats`, which
// use `sync` and one another; `jec` and `notifier`, neither of which uses
// the other; and `protocol`, which uses both. No module uses a later
// layer, except `sync`: its backends name `ParkingBackend` (from
// `backend`), and its loom clock steps by `policy`'s longest default
// search.
mod sync;

mod backend;
mod budget;
mod error;
mod latch;
mod outcome;
mod policy;
mod search;
mod searchers;
mod stats;

mod jec;
mod notifier;
mod waiter_ids;

mod protocol;

// Test-only helpers, written once: the hang watchdog and friends (shared
// with tests/ through tests/common), and what the loom models share.
#[cfg(all(test, loom))]
mod loom_support;
#[cfg(all(test, not(loom)))]
mod test_support;

#[doc = include_str!("../docs/guide.md")]
pub mod guide {}

pub use backend::{parking_backend, ParkingBackend};
pub use error::CapacityError;
pub use jec::{Counters, JecIdle, JecSleep};
pub use latch::CoreLatch;
pub use notifier::{Notifier, PreparedWait};
pub use outcome::WaitOutcome;
pub use policy::IdlePolicy;
pub use protocol::{NotifierIdle, NotifierSleep, SleepProtocol};
pub use stats::SleepStats;
pub use waiter_ids::{WaiterId, WaiterIds};

// Every public type may cross threads: a protocol is shared by its workers,
// and an idle state or a token may be handed to another thread with them.
static_assertions::assert_impl_all!(CapacityError: Send, Sync);
static_assertions::assert_impl_all!(CoreLatch: Send, Sync);
static_assertions::assert_impl_all!(Counters: Send, Sync);
static_assertions::assert_impl_all!(IdlePolicy: Send, Sync);
static_assertions::assert_impl_all!(JecIdle<'static>: Send, Sync);
static_assertions::assert_impl_all!(JecSleep: Send, Sync);
static_assertions::assert_impl_all!(Notifier: Send, Sync);
static_assertions::assert_impl_all!(NotifierIdle<'static>: Send, Sync);
static_assertions::assert_impl_all!(NotifierSleep: Send, Sync);
static_assertions::assert_impl_all!(ParkingBackend: Send, Sync);
static_assertions::assert_impl_all!(PreparedWait<'static>: Send, Sync);
static_assertions::assert_impl_all!(SleepStats: Send, Sync);
static_assertions::assert_impl_all!(WaitOutcome: Send, Sync);
static_assertions::assert_impl_all!(WaiterId<'static>: Send, Sync);
static_assertions::assert_impl_all!(WaiterIds: Send, Sync);

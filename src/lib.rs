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

// Unsafe code is denied everywhere but `sync/futex_linux.rs`, the one
// syscall atomic-wait lacks (a futex wait with a timeout).
#![deny(
    unsafe_code,
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks
)]
#![deny(missing_docs, missing_debug_implementations)]

mod error;
mod idle;
mod jec;
mod notifier;
mod notifier_sleep;
mod outcome;
mod protocol;
mod stats;
mod sync;

pub use error::CapacityError;
pub use idle::IdlePolicy;
pub use jec::{CoreLatch, Counters, IdleState, JecSleep};
pub use notifier::{Notifier, PreparedWait};
pub use outcome::WaitOutcome;
pub use protocol::{NotifierIdle, NotifierSleep, SleepProtocol};
pub use stats::SleepStats;

/// Which parking backend this build uses: `"futex"` (Linux and Android: the
/// futex syscall, through `atomic-wait` plus a timed `FUTEX_WAIT`) or
/// `"portable"` (every other target, or `--cfg eventcount_fallback`: a std
/// `Mutex` + `Condvar` per waiter word). Both give the same guarantees; the
/// portable one takes a per-waiter lock on each sleep and wake.
///
/// # Examples
///
/// ```
/// let backend = eventcount::parking_backend();
/// assert!(backend == "futex" || backend == "portable");
/// ```
pub fn parking_backend() -> &'static str {
    match sync::backend() {
        sync::Backend::Futex => "futex",
        sync::Backend::Portable => "portable",
        sync::Backend::Loom => "loom",
    }
}

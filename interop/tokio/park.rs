//! The resource driver (I/O, time, signals), shared by the workers of the
//! multi-thread scheduler: one worker at a time polls it.
//!
//! This file is eventcount's, not tokio's: eventcount's interop tool writes
//! it into a copy of tokio as `src/runtime/scheduler/multi_thread/park.rs`
//! (docs/tokio.md in the eventcount repository). It keeps the driver half
//! of tokio's parker. The other half, a worker's park state and its condvar,
//! is the `eventcount` crate's (see `idle.rs`): an idle worker that gets the
//! driver sleeps in `park_in`, and one that does not sleeps on the crate's
//! own futex word.

use crate::loom::sync::Arc;
use crate::runtime::driver::{self, Driver};
use crate::util::TryLock;

use std::time::{Duration, Instant};

/// Whether a worker polled the driver in its last park.
#[derive(Copy, Clone, Eq, PartialEq)]
pub(crate) enum HadDriver {
    Yes,
    No,
}

/// A worker's way to the shared driver: every worker has a clone.
#[derive(Clone)]
pub(crate) struct Parker {
    driver: Arc<TryLock<Driver>>,
}

impl Parker {
    pub(crate) fn new(driver: Driver) -> Parker {
        Parker {
            driver: Arc::new(TryLock::new(driver)),
        }
    }

    /// Run `f` with the driver, or with None if another worker is polling
    /// it.
    pub(crate) fn with_driver<R>(&self, f: impl FnOnce(Option<&mut Driver>) -> R) -> R {
        match self.driver.try_lock() {
            Some(mut driver) => f(Some(&mut driver)),
            None => f(None),
        }
    }

    /// Poll the driver's events and timers without blocking, if no other
    /// worker holds it.
    pub(crate) fn poll(&mut self, handle: &driver::Handle) -> HadDriver {
        match self.driver.try_lock() {
            Some(mut driver) => {
                driver.park_timeout(handle, Duration::ZERO);
                HadDriver::Yes
            }
            None => HadDriver::No,
        }
    }

    pub(crate) fn shutdown(&mut self, handle: &driver::Handle) {
        if let Some(mut driver) = self.driver.try_lock() {
            driver.shutdown(handle);
        }
    }
}

/// Block in the driver until an event, `driver::Handle::unpark`, or
/// `deadline`: the park of an eventcount round. The driver's unpark keeps
/// the contract the crate asks of it, as tokio's own park relied on: an
/// unpark that comes first makes the next poll return at once.
pub(crate) fn park_in(driver: &mut Driver, handle: &driver::Handle, deadline: Option<Instant>) {
    match deadline {
        None => driver.park(handle),
        Some(deadline) => {
            driver.park_timeout(handle, deadline.saturating_duration_since(Instant::now()));
        }
    }
}

//! A `has_work` closure (the final check) for `JecSleep::no_work_found`
//! that tests can put assertions in.

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};

/// The `has_work` closure of one or more `no_work_found` calls,
/// counting its runs.
///
/// The worker is registered as a sleeper while the closure runs, and a panic
/// unwinding from there leaves it registered: the `JecIdle`'s drop then
/// trips a debug assertion and the whole test binary aborts. So a failed
/// assertion inside is caught, the closure returns true (the worker cancels
/// its sleep cleanly), and [`FinalCheck::rethrow`] raises it once
/// `no_work_found` has returned.
#[derive(Default)]
pub struct FinalCheck {
    calls: Cell<u32>,
    failure: Cell<Option<Box<dyn Any + Send>>>,
}

impl FinalCheck {
    /// A check that has not run yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A final check running `check`, which says whether injected work
    /// exists.
    pub fn run<'a>(&'a self, check: impl FnOnce() -> bool + 'a) -> impl FnOnce() -> bool + 'a {
        move || {
            self.calls.set(self.calls.get() + 1);
            match panic::catch_unwind(AssertUnwindSafe(check)) {
                Ok(found) => found,
                Err(payload) => {
                    self.failure.set(Some(payload));
                    true
                }
            }
        }
    }

    /// A final check that should not be reached. It reports injected work,
    /// so that a regression returns instead of blocking, and is seen in
    /// [`FinalCheck::calls`].
    pub fn unreached(&self) -> impl FnOnce() -> bool + '_ {
        self.run(|| true)
    }

    /// How many times a closure of this check ran.
    pub fn calls(&self) -> u32 {
        self.calls.get()
    }

    /// Raise a panic caught inside the closure, if any.
    pub fn rethrow(&self) {
        if let Some(payload) = self.failure.take() {
            panic::resume_unwind(payload);
        }
    }
}

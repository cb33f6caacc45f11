//! The workloads' own threads: letting them settle before a measurement,
//! and stopping them after.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Yield until `reached()` holds or `limit` has passed, whichever is first.
/// For states that only /proc can see (a thread asleep in the kernel):
/// waiting longer measures the same thing, so a timeout is not an error.
pub fn settle(limit: Duration, mut reached: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !reached() && Instant::now() < deadline {
        thread::yield_now();
    }
}

/// Set `stop`, `wake` the threads so they see it, and join them; `what`
/// names them in the panic if one of them panicked.
pub(crate) fn stop_and_join(
    stop: &AtomicBool,
    wake: impl FnOnce(),
    threads: impl IntoIterator<Item = JoinHandle<()>>,
    what: &str,
) {
    stop.store(true, Ordering::Release);
    wake();
    for thread in threads {
        thread.join().unwrap_or_else(|_| panic!("{what} panicked"));
    }
}

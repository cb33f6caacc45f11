//! Waiting for a condition another thread makes true.

use std::thread;
use std::time::Duration;

/// Poll `cond` every millisecond until it holds. Hangs are left to the
/// caller's watchdog; this never fails on its own.
pub fn wait_until(mut cond: impl FnMut() -> bool) {
    while !cond() {
        thread::sleep(Duration::from_millis(1));
    }
}

//! Shared by the integration tests: the hang detector.

#![allow(dead_code)] // each test file uses what it needs

use std::panic;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

/// How long a test body may run before it counts as hung. Generous on
/// purpose: it only detects hangs, it never measures speed.
pub const WATCHDOG: Duration = Duration::from_secs(30);

/// Run `body` on its own thread; panic naming `name` if it has not finished
/// within [`WATCHDOG`]. A panic inside `body` is propagated as is.
pub fn with_watchdog<F>(name: &str, body: F)
where
    F: FnOnce() + Send + 'static,
{
    let (done_tx, done_rx) = mpsc::channel();
    let handle = thread::Builder::new()
        .name(format!("{name}-body"))
        .spawn(move || {
            body();
            let _ = done_tx.send(());
        })
        .expect("spawn test body");
    match done_rx.recv_timeout(WATCHDOG) {
        Ok(()) => handle.join().expect("test body panicked after finishing"),
        // The sender was dropped without sending: the body panicked.
        Err(RecvTimeoutError::Disconnected) => {
            if let Err(payload) = handle.join() {
                panic::resume_unwind(payload);
            }
            unreachable!("{name}: body ended without reporting");
        }
        Err(RecvTimeoutError::Timeout) => {
            panic!("{name}: watchdog fired: not finished after {WATCHDOG:?} (a hang)")
        }
    }
}

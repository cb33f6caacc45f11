//! The hang detector: a test body runs on its own thread, and the test fails,
//! naming itself, if the body stops making progress. It only detects hangs
//! (a lost wakeup shows up as one); no test asserts on a duration or a speed.

use std::panic;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use super::Heartbeat;

/// How long a test body may go without finishing (or, under
/// [`with_progress_watchdog`], without a heartbeat) before it counts as
/// hung. Generous on purpose: only a hang gets anywhere near it, never a
/// slow or loaded machine.
pub const WATCHDOG: Duration = Duration::from_secs(30);

/// How often the watchdog looks at the heartbeat. Short, so that a finished
/// body is noticed at once; it bounds nothing.
const POLL: Duration = Duration::from_millis(100);

/// Run `body` on its own thread; panic naming `name` if it has not finished
/// within [`WATCHDOG`]. A panic inside `body` is propagated as is.
pub fn with_watchdog<F>(name: &str, body: F)
where
    F: FnOnce() + Send + 'static,
{
    // A body that never beats gets WATCHDOG in total.
    with_progress_watchdog(name, |_| body());
}

/// Run `body` on its own thread; panic naming `name` if it goes
/// [`WATCHDOG`] without finishing or beating the [`Heartbeat`] it is given.
/// For long tests: a loaded machine that merely runs them slowly keeps
/// beating, so it is not mistaken for a hang. A panic inside `body` is
/// propagated as is.
pub fn with_progress_watchdog<F>(name: &str, body: F)
where
    F: FnOnce(Heartbeat) + Send + 'static,
{
    let heartbeat = Heartbeat::default();
    let (done_tx, done_rx) = mpsc::channel();
    let handle = {
        let heartbeat = heartbeat.clone();
        thread::Builder::new()
            .name(format!("{name}-body"))
            .spawn(move || {
                body(heartbeat);
                let _ = done_tx.send(());
            })
            .expect("spawn test body")
    };
    let mut beats = heartbeat.count();
    let mut quiet_since = Instant::now();
    loop {
        match done_rx.recv_timeout(POLL) {
            Ok(()) => return handle.join().expect("test body panicked after finishing"),
            // The sender was dropped without sending: the body panicked.
            Err(RecvTimeoutError::Disconnected) => {
                if let Err(payload) = handle.join() {
                    panic::resume_unwind(payload);
                }
                unreachable!("{name}: body ended without reporting");
            }
            Err(RecvTimeoutError::Timeout) => {
                let now = heartbeat.count();
                if now != beats {
                    beats = now;
                    quiet_since = Instant::now();
                } else if quiet_since.elapsed() >= WATCHDOG {
                    panic!(
                        "{name}: watchdog fired: no progress for {WATCHDOG:?} after {now} \
                         heartbeats (a hang or a lost wakeup)"
                    );
                }
            }
        }
    }
}

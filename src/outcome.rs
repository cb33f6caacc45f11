//! [`WaitOutcome`]: why a timed wait returned.

/// Why a timed wait returned: [`Notifier::commit_wait_until`], and a
/// protocol's timed round,
/// [`SleepProtocol::no_work_found_until`].
///
/// [`Notifier::commit_wait_until`]: crate::Notifier::commit_wait_until
/// [`SleepProtocol::no_work_found_until`]: crate::SleepProtocol::no_work_found_until
///
/// # Examples
///
/// ```
/// use eventcount::{Notifier, WaitOutcome};
/// use std::time::{Duration, Instant};
///
/// let n = Notifier::new(1);
/// let wait = n.prepare_wait(0);
/// let deadline = Instant::now() + Duration::from_millis(1);
/// assert_eq!(n.commit_wait_until(wait, deadline), WaitOutcome::TimedOut);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a timed wait may have been notified: re-check the condition"]
pub enum WaitOutcome {
    /// A notification reached this waiter (or it did not need to sleep):
    /// re-check the condition. From a protocol's round: the round searched,
    /// got sleepy, or tried to sleep and was woken or did not need to.
    Notified,
    /// The deadline passed first. The waiter has left the waiter set, and no
    /// notification was taken from anyone.
    ///
    /// From a protocol's round, either the deadline ended the worker's
    /// sleep, or the round started after the deadline and returned at once,
    /// without searching or sleeping. Either way the worker is awake and
    /// still counted idle: its caller searches again or ends the search.
    TimedOut,
}

//! [`JecIdle`]: one idle period of a [`JecSleep`] worker, carried between
//! search rounds.

use super::JecSleep;
#[cfg(doc)]
use crate::protocol::SleepProtocol;
use crate::shell::Search;

/// A worker's search in progress: returned by
/// [`start_looking`](SleepProtocol::start_looking), passed to
/// [`no_work_found`](SleepProtocol::no_work_found) each empty round, and
/// handed back to [`work_found`](SleepProtocol::work_found) when the search
/// finds work (or the latch it waits on is set).
///
/// It carries the search's rounds and learned budget, the JEC value
/// remembered at the sleepy announcement, and the worker's searcher slot
/// when the policy caps searchers.
///
/// The search ends when this state goes: [`work_found`](SleepProtocol::work_found) takes it
/// (and learns from the search), and dropping it ends the search too, with
/// the same wakes but nothing learned, so a worker loop that unwinds while
/// idle leaves the counters right. A job run after `work_found` may wait on
/// a latch and start a nested search with a new `JecIdle`, as rayon-core's
/// `join` does.
///
/// # Examples
///
/// ```
/// use eventcount::SleepProtocol;
///
/// let sleep = eventcount::JecSleep::new(1);
/// let idle = sleep.start_looking(0);
/// sleep.work_found(idle);
/// ```
#[must_use = "a JecIdle is passed to no_work_found each empty round, then to work_found"]
pub struct JecIdle<'a>(
    /// The search; its announcement is the JEC value remembered when the
    /// worker got sleepy.
    pub(crate) Search<'a, JecSleep>,
);

impl JecIdle<'_> {
    internal! {
        /// Empty rounds searched so far in the current phase of this idle
        /// period (a wake starts a new phase).
        ///
        /// # Examples
        ///
        /// ```
        /// use eventcount::SleepProtocol;
        ///
        /// let sleep = eventcount::JecSleep::new(1);
        /// let idle = sleep.start_looking(0);
        /// assert_eq!(idle.rounds(), 0);
        /// sleep.work_found(idle);
        /// ```
        #[must_use]
        pub fn rounds(&self) -> u32 {
            self.0.period.rounds()
        }
    }
}

impl std::fmt::Debug for JecIdle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.debug("JecIdle", f)
    }
}

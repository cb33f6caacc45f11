//! [`JecIdle`]: what an idle worker of a [`JecSleep`] carries between
//! search rounds.

use super::JecSleep;

/// A worker's search in progress: returned by [`JecSleep::start_looking`]
/// and passed to [`JecSleep::no_work_found`] each empty round. It carries
/// the round count and the JEC value remembered at the sleepy announcement.
///
/// It does not end the search: [`JecSleep::work_found`] does, and it takes
/// no `JecIdle`, because the counters it updates are anonymous (as in
/// rayon-core, whose loop calls `work_found()` while its idle state is still
/// in scope). Every `start_looking` needs exactly one `work_found`, also on
/// the way out of a worker loop that unwinds; rayon-core aborts instead.
/// Dropping the state does nothing, and a worker may hold several: a job
/// run after `work_found` may wait on a latch and start a nested search
/// while the outer state is still in scope, as rayon-core's `join` does.
///
/// # Examples
///
/// ```
/// let sleep = eventcount::JecSleep::new(1);
/// let idle = sleep.start_looking(0);
/// assert_eq!(idle.worker(), 0);
/// assert_eq!(sleep.counters().inactive(), 1);
/// sleep.work_found();
/// assert_eq!(sleep.counters().inactive(), 0);
/// ```
#[must_use = "an JecIdle is passed to no_work_found each empty round"]
pub struct JecIdle<'a> {
    pub(super) sleep: &'a JecSleep,
    pub(super) worker: usize,
    pub(super) rounds: u32,
    /// The JEC value remembered when this worker got sleepy.
    pub(super) sleepy_jec: Option<u32>,
}

impl JecIdle<'_> {
    /// The worker this state belongs to.
    ///
    /// # Examples
    ///
    /// ```
    /// let sleep = eventcount::JecSleep::new(3);
    /// assert_eq!(sleep.start_looking(2).worker(), 2);
    /// ```
    #[must_use]
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// Empty rounds so far in this idle period.
    ///
    /// # Examples
    ///
    /// ```
    /// let sleep = eventcount::JecSleep::new(1);
    /// let idle = sleep.start_looking(0);
    /// assert_eq!(idle.rounds(), 0);
    /// ```
    #[must_use]
    pub fn rounds(&self) -> u32 {
        self.rounds
    }

    /// After a sleep: search from scratch (rounds back to zero).
    pub(super) fn wake_fully(&mut self) {
        self.rounds = 0;
        self.sleepy_jec = None;
    }

    /// After new work interrupted a sleep attempt: one more round, then get
    /// sleepy again (no new run of idle rounds).
    pub(super) fn wake_partly(&mut self) {
        self.rounds = self.sleep.policy().rounds_until_sleepy();
        self.sleepy_jec = None;
    }
}

impl std::fmt::Debug for JecIdle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JecIdle")
            .field("worker", &self.worker)
            .field("rounds", &self.rounds)
            .field("sleepy_jec", &self.sleepy_jec)
            .finish()
    }
}

//! [`SleepProtocol`] for [`JecSleep`]: every method forwards to the inherent
//! one of the same name, so calls through the trait compile to the same code.

use std::time::Instant;

use super::SleepProtocol;
use crate::error::CapacityError;
use crate::jec::{JecIdle, JecSleep};
use crate::latch::CoreLatch;
use crate::outcome::WaitOutcome;
use crate::policy::IdlePolicy;
use crate::stats::SleepStats;

impl SleepProtocol for JecSleep {
    type Idle<'a> = JecIdle<'a>;

    const MAX_CAPACITY: usize = JecSleep::MAX_CAPACITY;

    fn try_with_policy(workers: usize, policy: IdlePolicy) -> Result<Self, CapacityError> {
        JecSleep::try_with_policy(workers, policy)
    }

    fn capacity(&self) -> usize {
        JecSleep::capacity(self)
    }

    #[inline]
    fn start_looking(&self, worker: usize) -> JecIdle<'_> {
        JecSleep::start_looking(self, worker)
    }

    #[inline]
    fn no_work_found(
        &self,
        idle: &mut JecIdle<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
    ) {
        JecSleep::no_work_found(self, idle, latch, has_work)
    }

    fn no_work_found_until(
        &self,
        idle: &mut JecIdle<'_>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Instant,
    ) -> WaitOutcome {
        JecSleep::no_work_found_until(self, idle, latch, has_work, deadline)
    }

    #[inline]
    fn work_found(&self, idle: JecIdle<'_>) {
        JecSleep::work_found(self, idle)
    }

    #[inline]
    fn new_internal_jobs(&self, n: u32, queue_was_empty: bool) {
        JecSleep::new_internal_jobs(self, n, queue_was_empty)
    }

    #[inline]
    fn new_injected_jobs(&self, n: u32, queue_was_empty: bool) {
        JecSleep::new_injected_jobs(self, n, queue_was_empty)
    }

    #[inline]
    fn notify_worker_latch_is_set(&self, worker: usize) {
        JecSleep::notify_worker_latch_is_set(self, worker)
    }

    #[inline]
    fn set_latch(&self, latch: &CoreLatch, owner: usize) {
        JecSleep::set_latch(self, latch, owner)
    }

    #[inline]
    fn wake_all(&self) {
        JecSleep::wake_all(self)
    }

    fn name(&self) -> &'static str {
        "jec"
    }

    fn stats(&self) -> SleepStats {
        JecSleep::stats(self)
    }

    fn num_sleeping(&self) -> usize {
        JecSleep::num_sleeping(self)
    }
}

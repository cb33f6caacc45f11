//! rayon-core's `sleep` module, as a thin shim over the `eventcount` crate.
//!
//! This file is eventcount's, not rayon's: `scripts/rayon-suite` writes it
//! into a scratch copy of rayon-core as `src/sleep/mod.rs`, in place of
//! rayon's own sleep module (docs/rayon.md in the eventcount repository).
//! The rest of rayon-core calls it exactly as it called the original: the
//! `Sleep` type, its seven methods and `THREADS_MAX`.
//!
//! The protocol is a feature of the patched crate: `jec` (the default) runs
//! `eventcount::JecSleep`, the same jobs-event-counter protocol rayon-core
//! ships; `notifier` runs `eventcount::NotifierSleep`, the event count;
//! `eigen` runs the benchmark peer `eventcount_eigen::EigenSleep`. cargo's
//! features are additive and rayon asks for the default ones, so `eigen`
//! wins over `notifier`, which wins over `jec`. The feature `cap` adds
//! the searcher cap (`IdlePolicy::max_searching_half`). Every call below
//! goes through the `SleepProtocol` trait, so the shim is written once for
//! all of them.

use crate::latch::CoreLatch;
use eventcount::{IdlePolicy, SleepProtocol};

#[cfg(feature = "eigen")]
type Protocol = eventcount_eigen::EigenSleep;
#[cfg(all(feature = "notifier", not(feature = "eigen")))]
type Protocol = eventcount::NotifierSleep;
#[cfg(not(any(feature = "notifier", feature = "eigen")))]
type Protocol = eventcount::JecSleep;

/// rayon's own policy (32 yield rounds), with the searcher cap if asked.
const POLICY: IdlePolicy = if cfg!(feature = "cap") {
    IdlePolicy::new().max_searching_half()
} else {
    IdlePolicy::new()
};

/// The most threads a pool may have: the protocol's limit (65,535 for
/// both; rayon-core's own is 255 on 32-bit targets).
pub(crate) const THREADS_MAX: usize = <Protocol as SleepProtocol>::MAX_CAPACITY;

/// One per registry: puts its idle workers to sleep and wakes them.
pub(super) struct Sleep<P: SleepProtocol = Protocol> {
    protocol: P,
}

impl<P: SleepProtocol> Sleep<P> {
    /// rayon-core has already clamped `n_threads` to `THREADS_MAX`.
    pub(super) fn new(n_threads: usize) -> Self {
        match P::try_with_policy(n_threads, POLICY) {
            Ok(protocol) => Sleep { protocol },
            Err(err) => panic!("rayon-core on eventcount: {err}"),
        }
    }

    #[inline]
    pub(super) fn start_looking(&self, worker_index: usize) -> P::Idle<'_> {
        self.protocol.start_looking(worker_index)
    }

    #[inline]
    pub(super) fn work_found(&self) {
        self.protocol.work_found();
    }

    #[inline]
    pub(super) fn no_work_found(
        &self,
        idle_state: &mut P::Idle<'_>,
        latch: &CoreLatch,
        has_injected_jobs: impl FnOnce() -> bool,
    ) {
        self.protocol
            .no_work_found(idle_state, latch, has_injected_jobs);
    }

    pub(super) fn notify_worker_latch_is_set(&self, target_worker_index: usize) {
        self.protocol
            .notify_worker_latch_is_set(target_worker_index);
    }

    #[inline]
    pub(super) fn new_injected_jobs(&self, num_jobs: u32, queue_was_empty: bool) {
        self.protocol.new_injected_jobs(num_jobs, queue_was_empty);
    }

    #[inline]
    pub(super) fn new_internal_jobs(&self, num_jobs: u32, queue_was_empty: bool) {
        self.protocol.new_internal_jobs(num_jobs, queue_was_empty);
    }
}

//! rayon-core's `sleep` module, as a thin shim over the `eventcount` crate.
//!
//! This file is eventcount's, not rayon's: `scripts/rayon-suite` writes it
//! into a scratch copy of rayon-core as `src/sleep/mod.rs`, in place of
//! rayon's own sleep module (docs/rayon.md in the eventcount repository).
//! The rest of rayon-core calls it as it called the original: the `Sleep`
//! type, its seven methods and `THREADS_MAX`, except that `work_found`
//! takes the idle state that `start_looking` returned (two lines of
//! `registry.rs`), and the `terminate` latch is an idle-loop latch (one line
//! of `latch.rs`), so that a wait on any other latch is a join.
//!
//! The protocol is a feature of the patched crate: `jec` (the default) runs
//! `eventcount::JecSleep`, the same jobs-event-counter protocol rayon-core
//! ships; `notifier` runs `eventcount::NotifierSleep`, the event count;
//! `eigen` runs the benchmark peer `eventcount_eigen::EigenSleep`. cargo's
//! features are additive and rayon asks for the default ones, so `eigen`
//! wins over `notifier`, which wins over `jec`.
//!
//! The idle policy is eventcount's default (a search budget in time that
//! each worker learns, and at most half the pool searching) unless a
//! feature picks another, in this order of precedence, lowest first:
//! `nocap` is the default without its searcher cap, `rayon-policy` is
//! rayon's 32 yield rounds, and `pr1314-adaptive` and `pr1314-bounded` are
//! the two policies of rayon PR #1314 (on rayon's rounds). Every call below
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

/// The policy the features ask for (see the module docs).
const POLICY: IdlePolicy = if cfg!(feature = "pr1314-bounded") {
    IdlePolicy::rayon().max_searching_busy()
} else if cfg!(feature = "pr1314-adaptive") {
    IdlePolicy::rayon().sleep_after_empty_wake()
} else if cfg!(feature = "rayon-policy") {
    IdlePolicy::rayon()
} else if cfg!(feature = "nocap") {
    IdlePolicy::new().max_searching_all()
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
    pub(super) fn work_found(&self, idle_state: P::Idle<'_>) {
        self.protocol.work_found(idle_state);
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

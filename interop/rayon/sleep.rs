//! rayon-core's `sleep` module, as a thin shim over the `eventcount` crate.
//!
//! This file is eventcount's, not rayon's: eventcount's `rayon-interop`
//! writes it into a copy of rayon-core as `src/sleep/mod.rs`, in place of
//! rayon's own sleep module (docs/rayon.md in the eventcount repository):
//! a scratch copy for `scripts/rayon-suite`, or a user's with `export`.
//! The rest of rayon-core calls it as it called the original: the `Sleep`
//! type, its seven methods and `THREADS_MAX`, except that `work_found`
//! takes the idle state that `start_looking` returned (two lines of
//! `registry.rs`), and the `terminate` latch is an idle-loop latch (one line
//! of `latch.rs`), so that a wait on any other latch is a join.
//!
//! Which protocol and which idle policy the pool runs is decided by the
//! `Protocol` type and the `policy` function below: by features in the
//! copies that eventcount's own tools build, fixed in a copy written by
//! `rayon-interop export`. Every call goes through the `SleepProtocol`
//! trait, so the shim is written once for all of them.
//!
//! With `EVENTCOUNT_LOG` set (to anything but empty or `0`), every pool
//! prints one line to stderr when it is built: its protocol, its policy and
//! its thread count, so that a program can show which sleep it runs.

use crate::latch::CoreLatch;
use eventcount::{IdlePolicy, SleepProtocol};
use std::io::Write as _;
use std::sync::OnceLock;

// eventcount-choice: begin
// `rayon-interop export` writes the lines between these markers as two
// fixed items, so that a user's copy has no feature that could change them.
//
// The protocol: `jec` (the default) runs `eventcount::JecSleep`, the same
// jobs-event-counter protocol rayon-core ships; `notifier` runs
// `eventcount::NotifierSleep`, the event count; `eigen` runs the benchmark
// peer `EigenSleep`, whose files eventcount's tools copy in beside this one
// (`src/sleep/eigen/`, from eventcount-bench). cargo's features are
// additive and rayon asks for the default ones, so `eigen` wins over
// `notifier`, which wins over `jec`.
#[cfg(feature = "eigen")]
#[allow(unreachable_pub)]
mod eigen;
#[cfg(feature = "eigen")]
type Protocol = eigen::EigenSleep;
#[cfg(all(feature = "notifier", not(feature = "eigen")))]
type Protocol = eventcount::NotifierSleep;
#[cfg(not(any(feature = "notifier", feature = "eigen")))]
type Protocol = eventcount::JecSleep;

// The policy: eventcount's default (a search budget that each worker
// learns, and at most half the pool searching) unless a feature picks
// another, in this order of precedence, lowest first:
// `rayon-policy` is rayon's 32 yield
// rounds, and `pr1314-adaptive` and `pr1314-bounded` are the two policies
// of rayon PR #1314 (on rayon's rounds).
const POLICY: IdlePolicy = if cfg!(feature = "pr1314-bounded") {
    IdlePolicy::rayon().max_searching_busy()
} else if cfg!(feature = "pr1314-adaptive") {
    IdlePolicy::rayon().sleep_after_empty_wake(true)
} else if cfg!(feature = "rayon-policy") {
    IdlePolicy::rayon()
} else {
    IdlePolicy::new()
};

/// The policy of a pool about to be built: `POLICY`, except with the
/// `fixed-budget` feature, which eventcount's benchmarks use to sweep
/// fixed search budgets on the build of the default policy: there, if
/// `EVENTCOUNT_SEARCH_BUDGET_US` is set when the pool is built, the
/// default with its search budget fixed at that many microseconds.
fn policy() -> IdlePolicy {
    if !cfg!(feature = "fixed-budget") {
        return POLICY;
    }
    let variable = "EVENTCOUNT_SEARCH_BUDGET_US";
    let Some(value) = std::env::var_os(variable) else {
        return POLICY;
    };
    let Some(us) = value.to_str().and_then(|v| v.parse::<u64>().ok()) else {
        panic!(
            "rayon-core on eventcount, feature fixed-budget: {variable} is {value:?}, \
             not a whole number of microseconds"
        );
    };
    IdlePolicy::fixed_budget(std::time::Duration::from_micros(us))
}
// eventcount-choice: end

/// Whether each pool prints its line (see the module docs). The environment
/// is read once per process, so a pool built after the first costs one
/// load, and a pool that never logs costs nothing more.
fn log_pools() -> bool {
    static LOG: OnceLock<bool> = OnceLock::new();
    *LOG.get_or_init(|| {
        std::env::var_os("EVENTCOUNT_LOG").is_some_and(|v| !v.is_empty() && v != "0")
    })
}

/// The most threads a pool may have: both protocols' limit (rayon-core's
/// own is 255 on 32-bit targets). The benchmarks' Eigen peer holds fewer,
/// and its `try_new` says so if a pool asks for more.
pub(crate) const THREADS_MAX: usize = 65_535;

/// One per registry: puts its idle workers to sleep and wakes them.
pub(super) struct Sleep<P: SleepProtocol = Protocol> {
    protocol: P,
}

impl<P: SleepProtocol> Sleep<P> {
    /// rayon-core has already clamped `n_threads` to `THREADS_MAX`.
    pub(super) fn new(n_threads: usize) -> Self {
        let policy = policy();
        let protocol = match P::try_new(n_threads, policy, None) {
            Ok(protocol) => protocol,
            Err(err) => panic!("rayon-core on eventcount: {err}"),
        };
        if log_pools() {
            // The type's last segment names the protocol wherever the crate
            // keeps it. Not `eprintln!`: a failed write must not panic here.
            let name = std::any::type_name::<P>().rsplit("::").next();
            let _ = writeln!(
                std::io::stderr(),
                "eventcount: rayon-core pool: protocol {}, policy {policy:?}, {n_threads} threads",
                name.unwrap_or("?"),
            );
        }
        Sleep { protocol }
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
        let _ = self
            .protocol
            .no_work_found(idle_state, latch, has_injected_jobs);
    }

    pub(super) fn notify_worker_latch_is_set(&self, target_worker_index: usize) {
        self.protocol
            .notify_worker_latch_is_set(target_worker_index);
    }

    #[inline]
    pub(super) fn new_injected_jobs(&self, num_jobs: u32, queue_was_empty: bool) {
        self.protocol
            .new_injected_jobs(num_jobs as usize, queue_was_empty);
    }

    #[inline]
    pub(super) fn new_internal_jobs(&self, num_jobs: u32, queue_was_empty: bool) {
        self.protocol
            .new_internal_jobs(num_jobs as usize, queue_was_empty);
    }
}

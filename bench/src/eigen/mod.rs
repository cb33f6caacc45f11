//! A benchmark peer, never published: Eigen's 2019 `EventCount` behind
//! eventcount's [`SleepProtocol`], so the example pool and rayon-core can
//! run on it and be measured against `NotifierSleep`.
//!
//! `EigenSleep` is `NotifierSleep` with Eigen's event count under it: the
//! same count of awake idle workers and the same hand-off. It differs in
//! where a notification goes, in how a worker goes to sleep, and in its
//! idle policy (below):
//! - a notify that finds a prepared waiter leaves an anonymous signal that
//!   any pre-waiter's commit may take, and a cancel takes one back when
//!   every pre-waiter holds one (eventcount hands each notification to one
//!   waiter, and a notified canceller forwards it);
//! - Eigen has no targeted wake, so a latch set while its owner sleeps
//!   wakes every sleeper (eventcount wakes the owner alone);
//! - a worker prepares, re-checks (only `has_work`) and commits in one
//!   round, where `NotifierSleep` announces itself a round earlier so that
//!   its caller's full search is the re-check; and a post reads the awake
//!   idle count before its first notify's fence (see `new_jobs`).
//!
//! Its idle policy is rayon's 32 rounds of `yield_now`, whatever the
//! [`IdlePolicy`] says but its searcher cap: eventcount's learned budgets
//! live inside eventcount. It never skips a search after an empty wake, and its searcher cap counts
//! every idle worker, a joining one included (eventcount's cap leaves
//! joining workers out). Benchmarks compare it with
//! `NotifierSleep` on rayon's policy.
//!
//! It keeps the design's known races (see `event_count.rs`): they are part
//! of what is measured. A pool's shutdown on it should repeat `wake_all`
//! until its workers are joined.

mod event_count;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use crossbeam_utils::CachePadded;
use eventcount::{
    CapacityError, CoreLatch, IdlePolicy, Round, Rounds, SleepProtocol, SleepStats, Unpark,
};

pub use event_count::{EventCount, MAX_WAITERS};

/// Eigen's event count as a pool's sleep protocol (see the crate docs).
#[derive(Debug)]
pub struct EigenSleep {
    events: EventCount,
    /// Workers awake and idle, as in `NotifierSleep`.
    awake_idle: CachePadded<AtomicU32>,
    searcher_cap: Option<usize>,
}

/// What an idle worker of an [`EigenSleep`] pool carries between rounds.
#[derive(Debug)]
pub struct EigenIdle {
    worker: usize,
    rounds: u32,
}

/// Puts the worker back among the awake idle ones when a sleep attempt
/// ends, however it ends.
struct AwakeAgain<'a> {
    awake_idle: &'a AtomicU32,
    latch: &'a CoreLatch,
}

impl Drop for AwakeAgain<'_> {
    fn drop(&mut self) {
        self.latch.wake_up();
        self.awake_idle.fetch_add(1, Ordering::Relaxed);
    }
}

fn stats_from((waits, wakes): (u64, u64)) -> SleepStats {
    let mut stats = SleepStats::default();
    stats.waits = waits;
    stats.wakes = wakes;
    stats
}

impl EigenSleep {
    /// rayon's rounds (see the crate docs).
    const ROUNDS_UNTIL_SLEEPY: u32 = 32;

    fn first_round(&self, awake_idle: usize) -> u32 {
        match self.searcher_cap {
            Some(cap) if awake_idle > cap => Self::ROUNDS_UNTIL_SLEEPY,
            _ => 0,
        }
    }

    fn eigen_round(
        &self,
        idle: &mut EigenIdle,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
    ) -> Round {
        if idle.rounds < Self::ROUNDS_UNTIL_SLEEPY {
            std::thread::yield_now();
            idle.rounds += 1;
            return Round::Searched;
        }
        idle.rounds = 0;
        if !latch.get_sleepy() {
            return Round::Withdrew;
        }
        self.awake_idle.fetch_sub(1, Ordering::Relaxed);
        let awake_again = AwakeAgain {
            awake_idle: &self.awake_idle,
            latch,
        };
        self.events.prepare_wait();
        let round = if !latch.fall_asleep() || has_work() {
            self.events.cancel_wait();
            Round::Withdrew
        } else {
            // Eigen has no timed wait: a deadline is not honoured (the pools
            // measured here never pass one).
            let _ = deadline;
            self.events.commit_wait(idle.worker);
            Round::Woken
        };
        drop(awake_again);
        idle.rounds = self.first_round(self.awake_idle.load(Ordering::Relaxed) as usize);
        round
    }

    fn new_jobs(&self, n: usize, queue_was_empty: bool) {
        // One Notify(false) per job, as Eigen's pool does, but no more than
        // the awake idle workers cannot cover: NotifierSleep's rule, except
        // that the count is read here, before the first notify and its
        // fence, where NotifierSleep reads it after its NotifyFence. So the
        // argument of docs/notifier.md, "Why a post that wakes fewer than
        // `n` loses nothing", does not cover this peer.
        let awake = if queue_was_empty {
            self.awake_idle.load(Ordering::Relaxed) as usize
        } else {
            0
        };
        for _ in awake..n {
            if !self.events.notify(false) {
                return;
            }
        }
    }
}

impl Rounds<EigenIdle> for EigenSleep {
    /// Eigen's event count parks only on its own semaphore-like word: this
    /// peer cannot sleep in a caller's park, and says so.
    fn round(
        &self,
        operation: &str,
        idle: &mut EigenIdle,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
        park: Option<impl FnMut(Option<Instant>)>,
    ) -> Round {
        assert!(
            park.is_none(),
            "{operation}: EigenSleep cannot park outside its own event count"
        );
        self.eigen_round(idle, latch, has_work, deadline)
    }
}

impl SleepProtocol for EigenSleep {
    type Idle<'a> = EigenIdle;

    /// The hook is never called: this peer has no external park
    /// (`no_work_found_parked` panics).
    fn try_new(
        workers: usize,
        policy: IdlePolicy,
        _unpark: Option<Unpark>,
    ) -> Result<Self, CapacityError> {
        if workers == 0 || workers > MAX_WAITERS {
            return Err(CapacityError::new(
                "EigenSleep",
                "workers",
                workers,
                MAX_WAITERS,
            ));
        }
        Ok(EigenSleep {
            events: EventCount::new(workers),
            awake_idle: CachePadded::new(AtomicU32::new(0)),
            searcher_cap: policy.searcher_cap(workers),
        })
    }

    fn capacity(&self) -> usize {
        self.events.capacity()
    }

    fn start_looking(&self, worker: usize) -> EigenIdle {
        assert!(
            worker < self.capacity(),
            "start_looking: worker {worker} out of range"
        );
        let before = self.awake_idle.fetch_add(1, Ordering::Relaxed);
        EigenIdle {
            worker,
            rounds: self.first_round(before as usize + 1),
        }
    }

    fn work_found(&self, _idle: EigenIdle) {
        if self.awake_idle.fetch_sub(1, Ordering::Relaxed) == 1 {
            // The hand-off, as in NotifierSleep.
            self.events.notify(false);
        }
    }

    fn new_internal_jobs(&self, n: usize, queue_was_empty: bool) {
        self.new_jobs(n, queue_was_empty);
    }

    fn new_injected_jobs(&self, n: usize, queue_was_empty: bool) {
        self.new_jobs(n, queue_was_empty);
    }

    fn notify_worker_latch_is_set(&self, _worker: usize) {
        // No targeted wake in Eigen's design: wake everyone, so the owner
        // is among them.
        self.events.notify(true);
    }

    fn wake_all(&self) {
        self.events.notify(true);
    }

    fn stats(&self) -> SleepStats {
        stats_from(self.events.counts())
    }

    fn num_sleeping(&self) -> usize {
        self.events.num_sleeping()
    }
}

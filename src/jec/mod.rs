//! [`JecSleep`]: Rayon's jobs-event-counter sleep protocol as a reusable
//! adapter. The protocol, its orderings and its proof sketch are in
//! [docs/jec-sleep.md](crate::docs::jec_sleep); this file follows it step by step.
//!
//! | file          | what                                                      |
//! |---------------|-----------------------------------------------------------|
//! | `mod.rs`      | [`JecSleep`]: the rounds, the sleep, the posts and wakes   |
//! | `counters.rs` | the packed counters word, and [`JecCounters`] that decodes it |
//! | `worker.rs`   | one worker's sleep word, which wakers claim                |
//! | `idle.rs`     | [`JecIdle`], what an idle worker carries between rounds    |
//!
//! Its operations are the methods of [`SleepProtocol`], documented on the
//! trait; inherent here are only constructors, policy and counters.

mod counters;
mod idle;
mod worker;

use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::error::{all_looking, check_capacity, CapacityError, Count};
use crate::idle::{IdlePolicy, Step};
use crate::latch::CoreLatch;
use crate::protocol::{withdrew, Rounds, SleepProtocol};
use crate::round::Round;
use crate::shell::{check_round, PoolIdle, Search, Searcher, WorkerIdle};
use crate::stats::SleepStats;
use crate::sync::{self, fence, shared_clock_ns, Ordering};
use crate::unpark::Unpark;
use counters::{AtomicCounters, MAX_WORKERS};
use worker::{Registration, Wake, WorkerSleep};

#[cfg(feature = "internals")]
pub use counters::JecCounters;
#[cfg(not(feature = "internals"))]
pub(crate) use counters::JecCounters;
pub use idle::JecIdle;

/// The sleep manager of a pool of worker threads, after rayon-core's
/// `Sleep`: idle workers search for a number of rounds, announce that they
/// are sleepy through the jobs event counter (JEC), search once more, then
/// sleep; job posters and latch setters wake exactly as many as needed.
///
/// The scheduler calls it from its own worker loop:
///
/// ```text
/// loop {
///     let mut idle = sleep.start_looking(me);            // this worker is idle
///     loop {
///         if let Some(job) = find_work() {
///             sleep.work_found(idle);                // may wake helpers
///             run(job);
///             break;
///         }
///         sleep.no_work_found(&mut idle, &latch, || !injector.is_empty());
///     }
/// }
/// // posting: push to my deque, then sleep.new_internal_jobs(1, was_empty)
/// //          push to the injector, then sleep.new_injected_jobs(1, was_empty)
/// // latches: sleep.set_latch(&latch, owner)
/// ```
///
/// Compared with rayon-core: one `AtomicU64` of counters on every target, a
/// futex word per sleeper in place of its mutex, and an [`IdlePolicy`] for
/// the rounds, by default a search budget in time that each worker learns
/// ([docs/jec-sleep.md](crate::docs::jec_sleep) lists the rest).
pub struct JecSleep {
    counters: CachePadded<AtomicCounters>,
    workers: Box<[CachePadded<Worker>]>,
    pool: PoolIdle,
    /// Wakes a worker asleep in its caller's `park`
    /// ([`SleepProtocol::no_work_found_parked`]), for the waker that claims it.
    unpark: Option<Unpark>,
}

/// One worker's part, on its own cache line: its sleep word, which wakers
/// claim, and what its idle periods learned and cost, which only it writes.
struct Worker {
    sleep: WorkerSleep,
    idle: WorkerIdle,
}

impl JecSleep {
    fn with_initial_jec(
        workers: usize,
        policy: IdlePolicy,
        jec: u32,
        unpark: Option<Unpark>,
    ) -> Result<JecSleep, CapacityError> {
        check_capacity("JecSleep", "workers", workers, MAX_WORKERS)?;
        Ok(JecSleep {
            counters: CachePadded::new(AtomicCounters::new(jec)),
            workers: (0..workers)
                .map(|_| {
                    CachePadded::new(Worker {
                        sleep: WorkerSleep::new(),
                        idle: WorkerIdle::default(),
                    })
                })
                .collect(),
            pool: PoolIdle::new(policy, workers),
            unpark,
        })
    }

    internal! {
        /// A snapshot of the counters (sleeping, inactive, JEC).
        #[must_use]
        pub fn counters(&self) -> JecCounters {
            self.counters.load()
        }
    }

    #[track_caller]
    fn worker(&self, operation: &str, index: usize) -> &Worker {
        match self.workers.get(index) {
            Some(worker) => worker,
            None => panic!(
                "{operation}: worker index {index} is out of range for a JecSleep of {}",
                Count(self.workers.len(), "worker")
            ),
        }
    }

    /// `inactive += 1` for a worker that starts looking (or looks again after
    /// its park's own return), refusing to count more than every worker.
    #[inline]
    #[track_caller]
    fn count_inactive(&self, operation: &str, worker: usize) {
        if let Err(counters) = self.counters.try_add_inactive(self.workers.len()) {
            panic!(
                "{operation}: worker {worker} would be looking for work while {} \
                 ({counters:?}); a search was started and never ended (was its JecIdle \
                 leaked?)",
                all_looking(self.workers.len())
            );
        }
    }

    /// Make the JEC even ("sleepy") if it is odd, and return its value: a
    /// post after this point makes it differ.
    fn announce_sleepy(&self) -> u32 {
        self.counters.increment_jec_if(|c| c.jec_is_active()).jec()
    }

    /// Try to sleep. Every early return puts the worker back to searching.
    /// `operation` is the public call, for the messages.
    #[cold]
    #[track_caller]
    fn sleep(
        &self,
        operation: &str,
        idle: &mut Search<'_, JecSleep>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
        park: Option<impl FnMut(Option<Instant>)>,
    ) -> Round {
        let worker = &self.workers[idle.worker].sleep;
        // 1. UNSET -> SLEEPY; fails only if the latch is set, and panics,
        //    writing nothing, if another worker holds it.
        if !latch.get_sleepy_as(idle.worker, operation) {
            return Round::Withdrew;
        }
        // 2. Visible to wakers before we can be counted (worker.rs).
        if let Err(state) = worker.begin_registering() {
            // Another thread is in a sleep attempt as this worker. Its word
            // and its count are untouched; our latch goes back to UNSET.
            latch.stay_awake();
            panic!(
                "{operation}: worker {} is already asleep or registering on another \
                 thread (its sleep word says {state}): two threads use one worker index",
                idle.worker
            );
        }
        // 3. SLEEPY -> SLEEPING; fails only if the latch was set meanwhile.
        if !latch.fall_asleep() {
            worker.abandon();
            idle.period.search_again();
            return Round::Withdrew;
        }
        let sleepy_jec = idle
            .announced
            .expect("sleep without a sleepy announcement: rounds were advanced out of order");
        // 4. Register: JEC unchanged and sleeping + 1, in one CAS.
        loop {
            let counters = self.counters.load();
            if counters.jec() != sleepy_jec {
                // Work was posted since we got sleepy: one more search
                // round, then sleepy again (no new search phase).
                worker.abandon();
                idle.announced = None;
                idle.period.sleepy_again();
                latch.wake_up();
                return Round::Withdrew;
            }
            if self.counters.try_add_sleeping(counters) {
                break;
            }
        }
        // 5. Counted. A waker may already have found us registering.
        if worker.finish_registering() == Registration::WakeRequested {
            self.counters.sub_sleeping();
            idle.period.search_again();
            latch.wake_up();
            return Round::Notified;
        }
        // 6. SleepFence: pairs with the PushFence of `new_injected_jobs`.
        fence(Ordering::SeqCst);
        // 7. The final check for injected work (the JEC may have rolled over),
        //    the caller's code: if it panics, the guard backs us out first.
        let guard = Unregister {
            sleep: self,
            worker,
            latch,
        };
        let work_is_waiting = has_work();
        std::mem::forget(guard);
        if work_is_waiting {
            self.unregister(worker, latch);
            idle.period.search_again();
            return Round::Withdrew;
        }
        // 8. Sleep until a waker claims (and uncounts) us, or the deadline: on
        //    the futex word, or in the caller's `park` once SLEEPING_EXTERNAL
        //    (a waker then calls the hook). A `park` that returns unclaimed is
        //    a timeout: our CAS races the wakers', and the winner uncounts us.
        let worker_idle = &self.workers[idle.worker].idle;
        idle.period.sleeping(worker_idle);
        let external = park.is_some();
        let ended = match park {
            None => {
                if worker.sleep(deadline) && worker.cancel_sleep() {
                    Round::TimedOut
                } else {
                    Round::Woken
                }
            }
            Some(mut park) => {
                if worker.park_externally() {
                    worker.count_external_park();
                    park(deadline);
                    if worker.leave_external(park) {
                        withdrew(true, deadline)
                    } else {
                        Round::Woken
                    }
                } else {
                    // Claimed as a futex sleeper before we committed to the
                    // park: wait for the waker's AWAKE on the word.
                    let _ = worker.sleep(None);
                    Round::Notified
                }
            }
        };
        if matches!(ended, Round::TimedOut | Round::ParkReturned) {
            // Our CAS beat every waker: we uncount ourselves. Out of the
            // caller's park the worker also leaves its idle period, in the same
            // RMW: the park returned for its own reason, so it has work of its
            // own, no post counted on it, and its next round counts it back in.
            if external {
                self.counters.sub_sleeping_and_inactive();
                idle.counted = false;
                idle.period.park_returned(worker_idle);
            } else {
                self.counters.sub_sleeping();
                idle.period.timed_out(worker_idle);
            }
        } else {
            idle.period.woken(worker_idle, &self.pool);
        }
        idle.announced = None;
        latch.wake_up();
        ended
    }

    /// Back out a registered sleeper that is not going to sleep: uncount
    /// ourselves unless a waker claimed us first, then the latch back to UNSET.
    fn unregister(&self, worker: &WorkerSleep, latch: &CoreLatch) {
        if worker.cancel_sleep() {
            self.counters.sub_sleeping();
        }
        latch.wake_up();
    }

    #[inline]
    fn new_jobs(&self, n: usize, queue_was_empty: bool) {
        // Make the JEC odd ("active") if it is even: sleepy workers see it.
        let counters = self.counters.increment_jec_if(|c| !c.jec_is_active());
        let sleeping = counters.sleeping();
        if sleeping == 0 {
            return;
        }
        self.wake_for_new_jobs(counters, n, queue_was_empty);
    }

    #[cold]
    fn wake_for_new_jobs(&self, counters: JecCounters, n: usize, queue_was_empty: bool) {
        let sleeping = counters.sleeping();
        if !queue_was_empty {
            // The queue already had work nobody took: wake for all of it.
            self.wake_any(n.min(sleeping));
        } else {
            // Awake idle workers will find the new jobs; wake only for the rest.
            let awake_but_idle = counters.awake_but_idle();
            if awake_but_idle < n {
                self.wake_any((n - awake_but_idle).min(sleeping));
            }
        }
    }

    /// Wake worker `index` if it is asleep or about to be. True if it was.
    fn wake_specific(&self, index: usize) -> bool {
        let Worker {
            sleep: worker,
            idle,
        } = &*self.workers[index];
        match worker.claim() {
            Wake::WokeSleeper => {
                // The waker uncounts the sleeper, before the syscall, so
                // posters stop counting it at once.
                self.counters.sub_sleeping();
                idle.stamp_wake();
                worker.wake_claimed();
                true
            }
            Wake::WokeExternal => {
                // As above, with the hook for the syscall: after AWAKE, so
                // a sleeper that finds CLAIMED and parks again is unparked.
                self.counters.sub_sleeping();
                idle.stamp_wake();
                worker.count_external_wake();
                worker.release_claimed();
                if let Some(unpark) = &self.unpark {
                    unpark(index);
                }
                true
            }
            Wake::Stopped => true,
            Wake::NotSleeping => false,
        }
    }

    /// Wake up to `n` workers: the newest sleeper first, then any, scanning
    /// from index 0 as rayon-core does (docs/jec-sleep.md, "Which sleeper").
    fn wake_any(&self, mut n: usize) {
        if n == 0 {
            return;
        }
        if let Some(newest) = self.newest_sleeper() {
            if self.wake_specific(newest) {
                n -= 1;
                if n == 0 {
                    return;
                }
            }
        }
        for index in 0..self.workers.len() {
            if self.wake_specific(index) {
                n -= 1;
                if n == 0 {
                    return;
                }
            }
        }
    }

    /// The sleeping worker whose sleep began last, by the start it records
    /// for `SleepStats` (Relaxed: a hint; the claim decides). Unstamped
    /// sleepers are left to the index scan; under loom every stamp is 0.
    fn newest_sleeper(&self) -> Option<usize> {
        let mut newest = None;
        let mut latest = 0;
        for (index, worker) in self.workers.iter().enumerate() {
            let Some(since) = worker.idle.counters.asleep_since_ns() else {
                continue;
            };
            if (newest.is_none() || since > latest) && worker.sleep.is_sleeping() {
                newest = Some(index);
                latest = since;
            }
        }
        newest
    }

    /// Searcher slots taken right now (for the loom models' checks).
    #[cfg(all(test, loom))]
    pub(crate) fn searcher_slots_taken(&self) -> u32 {
        self.pool.slots.taken()
    }

    /// Test hook: see `AtomicCounters::add_jec_wrapping`.
    #[cfg(test)]
    pub(crate) fn add_jec_wrapping(&self, delta: u32) {
        self.counters.add_jec_wrapping(delta);
    }
}

impl Searcher for JecSleep {
    type Announced<'a> = u32;

    fn pool(&self) -> &PoolIdle {
        &self.pool
    }

    fn worker_idle(&self, worker: usize) -> &WorkerIdle {
        &self.workers[worker].idle
    }

    /// Every idle worker counts, a joining one included.
    fn idle_counts(&self) -> (usize, usize) {
        let c = self.counters.load();
        (
            c.awake_but_idle(),
            self.workers.len().saturating_sub(c.inactive()),
        )
    }

    /// The end of a search, from the state's drop: uncount the worker,
    /// give back its searcher slot, and wake helpers.
    #[inline]
    fn end_search(&self, idle: &mut Search<'_, Self>) {
        if !idle.counted {
            // Out of the count since its park returned with no wake: no
            // post counted on it, so there is nothing to hand off.
            self.pool.slots.release(&mut idle.period.slot);
            return;
        }
        let before = self.counters.sub_inactive();
        self.pool.slots.release(&mut idle.period.slot);
        let to_wake = if self.pool.capped() {
            // The hand-off: the last awake idle worker wakes one sleeper to
            // search in its place, since a post it covered woke nobody and it
            // may be taking other work, so that such a job never waits.
            if before.awake_but_idle() == 1 {
                before.sleeping().min(1)
            } else {
                0
            }
        } else {
            // Rayon's rule: up to two sleepers, whenever any worker leaves
            // its idle loop.
            before.sleeping().min(2)
        };
        if to_wake > 0 {
            self.wake_any(to_wake);
        }
    }
}

impl<'a> Rounds<JecIdle<'a>> for JecSleep {
    #[inline]
    #[track_caller]
    fn round(
        &self,
        operation: &str,
        idle: &mut JecIdle<'a>,
        latch: &CoreLatch,
        has_work: impl FnOnce() -> bool,
        deadline: Option<Instant>,
        park: Option<impl FnMut(Option<Instant>)>,
    ) -> Round {
        let idle = &mut idle.0;
        let (parks, hook) = (park.is_some(), self.unpark.is_some());
        check_round(operation, idle.sleep, self, idle.worker, parks, hook);
        if !idle.counted {
            // First round since the caller's park returned unwoken: counted
            // idle again, as `start_looking` counts, even if it goes no further.
            self.count_inactive(operation, idle.worker);
            idle.counted = true;
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            // Past the deadline: no search, no sleep, the state untouched, so a
            // later round goes on from here (a sleepy worker's next round tries
            // to sleep, and its remembered JEC still catches any post since).
            return Round::PastDeadline;
        }
        let step = idle
            .period
            .round(&self.workers[idle.worker].idle, &self.pool, latch, || {
                self.idle_counts()
            });
        match step {
            Step::Search => {
                sync::yield_now();
                Round::Searched
            }
            Step::Sleepy => {
                // The period gave back its searcher slot.
                idle.announced = Some(self.announce_sleepy());
                // rayon-core yields here, as in its search rounds; a phase that
                // searched no round (tokio's policy) does not: a worker that
                // sleeps at once gains nothing from the system call.
                if idle.period.rounds() > 0 {
                    sync::yield_now();
                }
                Round::Announced
            }
            Step::Sleep => self.sleep(operation, idle, latch, has_work, deadline, park),
        }
    }
}

impl SleepProtocol for JecSleep {
    type Idle<'a> = JecIdle<'a>;

    fn try_new(
        workers: usize,
        policy: IdlePolicy,
        unpark: Option<Unpark>,
    ) -> Result<Self, CapacityError> {
        JecSleep::with_initial_jec(workers, policy, 1, unpark)
    }

    fn capacity(&self) -> usize {
        self.workers.len()
    }

    // The counters are anonymous: a search left open (its state leaked)
    // is caught only once the inactive count is full.
    #[inline]
    #[track_caller]
    fn start_looking(&self, worker: usize) -> JecIdle<'_> {
        self.worker("start_looking", worker);
        self.count_inactive("start_looking", worker);
        JecIdle(Search::new(self, worker))
    }

    #[track_caller]
    fn may_search(&self, idle: &mut JecIdle<'_>, latch: &CoreLatch) -> bool {
        idle.0.may_search(self, latch)
    }

    // Ending a search wakes up to two sleepers to help, as rayon-core does;
    // under a searcher cap, one, and only from the last awake idle worker
    // (the hand-off: docs/jec-sleep.md, "work_found").
    #[inline]
    #[track_caller]
    fn work_found(&self, idle: JecIdle<'_>) {
        // Dropping the state ends the search: `end_search`.
        idle.0.found(self);
    }

    // No fence: missing these jobs costs parallelism, never liveness, since
    // the pushing worker is awake and runs them itself.
    #[inline]
    fn new_internal_jobs(&self, n: usize, queue_was_empty: bool) {
        self.new_jobs(n, queue_was_empty);
    }

    // The PushFence first: either it or a sleeper's SleepFence comes first,
    // and either way the job is not slept through.
    #[inline]
    fn new_injected_jobs(&self, n: usize, queue_was_empty: bool) {
        // PushFence: pairs with the SleepFence in `sleep`.
        fence(Ordering::SeqCst);
        self.new_jobs(n, queue_was_empty);
    }

    #[track_caller]
    fn notify_worker_latch_is_set(&self, worker: usize) {
        self.worker("notify_worker_latch_is_set", worker);
        self.wake_specific(worker);
    }

    #[track_caller]
    fn set_latch(&self, latch: &CoreLatch, owner: usize) {
        self.worker("set_latch", owner);
        if latch.set_owned_by(owner, "set_latch") {
            self.wake_specific(owner);
        }
    }

    fn wake_all(&self) {
        // WakeAllFence: pairs with the SleepFence as the PushFence does, so a
        // worker registering after it sees the shutdown in its final check.
        fence(Ordering::SeqCst);
        for index in 0..self.workers.len() {
            self.wake_specific(index);
        }
    }

    fn stats(&self) -> SleepStats {
        let now = shared_clock_ns();
        self.workers.iter().fold(SleepStats::default(), |s, w| {
            w.idle.counters.add_to(s.add(w.sleep.counts()), now)
        })
    }

    #[track_caller]
    fn worker_stats(&self, worker: usize) -> SleepStats {
        let w = self.worker("worker_stats", worker);
        w.idle.counters.add_to(
            SleepStats::default().add(w.sleep.counts()),
            shared_clock_ns(),
        )
    }

    fn num_sleeping(&self) -> usize {
        self.workers
            .iter()
            .filter(|w| w.sleep.is_sleeping())
            .count()
    }
}

/// Runs `unregister` if the caller's final check unwinds, leaving neither
/// a phantom sleeper in the counters nor the latch stuck at SLEEPING.
struct Unregister<'a> {
    sleep: &'a JecSleep,
    worker: &'a WorkerSleep,
    latch: &'a CoreLatch,
}

impl Drop for Unregister<'_> {
    fn drop(&mut self) {
        self.sleep.unregister(self.worker, self.latch);
    }
}

impl std::fmt::Debug for JecSleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JecSleep")
            .field("workers", &self.workers.len())
            .field("counters", &self.counters.load())
            .field("num_sleeping", &self.num_sleeping())
            .field("pool", &self.pool)
            .field("unpark_hook", &self.unpark.is_some())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

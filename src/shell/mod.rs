//! The idle side that both protocols share: what a pool's workers share
//! about idling ([`PoolIdle`]), what each worker keeps across its idle
//! periods ([`WorkerIdle`]), [`Period`], which drives the idle policy's
//! pure [`IdlePeriod`] on the clocks, and [`Search`], the idle state
//! between rounds that [`Period`] is part of. No wake depends on anything here
//! (docs/idle-policy.md, "Why no wake depends on the policy").

mod counters;
mod search;
mod searchers;
#[cfg(feature = "policy-tools")]
mod trace;

use crate::error::short_type_name;
use crate::idle::{IdlePeriod, IdlePolicy, Learner, Setup, Step};
use crate::latch::{CoreLatch, WaitKind};
use crate::sync::unmodeled::{AtomicU64, Mutex, Relaxed};
use crate::sync::{shared_clock_ns, thread_cpu_ns, IdleClock};
pub(crate) use counters::IdleCounters;
use counters::SearchEnd;
pub(crate) use search::{Search, Searcher};
use searchers::SearcherSlots;

/// Panics, naming `operation` and the protocol's type, unless the idle
/// state of worker `worker`, made by `owner`, belongs to `protocol`.
#[track_caller]
pub(crate) fn check_owner<P>(operation: &str, owner: &P, protocol: &P, worker: usize) {
    assert!(
        std::ptr::eq(owner, protocol),
        "{operation}: the idle state of worker {worker} belongs to a different {}",
        short_type_name::<P>()
    );
}

/// [`check_owner`], and then, for a round that would park in its caller's
/// park (`parks`), that the protocol has an unpark hook (`hook`) to wake
/// it through: both before the round writes anything.
#[track_caller]
pub(crate) fn check_round<P>(
    operation: &str,
    owner: &P,
    protocol: &P,
    worker: usize,
    parks: bool,
    hook: bool,
) {
    check_owner(operation, owner, protocol, worker);
    assert!(
        !parks || hook,
        "{operation}: worker {worker} would park externally, but this {} has no unpark hook \
         (build it with try_new and Some(unpark))",
        short_type_name::<P>()
    );
}

/// What a pool's workers share about idling: one per protocol.
#[derive(Debug)]
pub(crate) struct PoolIdle {
    pub(crate) setup: Setup,
    pub(crate) slots: SearcherSlots,
    /// The latest worker's estimates of a wake's costs (the two `f32`s'
    /// bits; 0 before any), for a worker that measured none. Relaxed, a hint.
    wake_costs: AtomicU64,
    #[cfg(feature = "policy-tools")]
    trace: trace::GapTrace,
}

impl PoolIdle {
    /// A pool of `workers` under `policy`.
    pub(crate) fn new(policy: IdlePolicy, workers: usize) -> Self {
        PoolIdle {
            setup: Setup::new(&policy, workers, available_cpus()),
            slots: SearcherSlots::new(&policy, workers),
            wake_costs: AtomicU64::new(0),
            #[cfg(feature = "policy-tools")]
            trace: trace::GapTrace::new(),
        }
    }

    /// Whether the pool caps its searchers: then the last awake idle worker
    /// to leave its search hands off to one sleeper, else rayon's rule wakes
    /// up to two (each protocol's `end_search`).
    pub(crate) fn capped(&self) -> bool {
        self.slots.is_capped() && !self.setup.oversized
    }

    /// The pool's estimates of a wake's costs, if a worker published any.
    fn wake_costs(&self) -> Option<(f32, f32)> {
        match self.wake_costs.load(Relaxed) {
            0 => None,
            bits => Some((
                f32::from_bits((bits >> 32) as u32),
                f32::from_bits(bits as u32),
            )),
        }
    }

    fn publish_wake_costs(&self, (latency, cpu): (f32, f32)) {
        let bits = (u64::from(latency.to_bits()) << 32) | u64::from(cpu.to_bits());
        self.wake_costs.store(bits, Relaxed);
    }

    /// Whether a phase of a wait of `kind` may search: the cap decides,
    /// but in an oversized pool, which has none.
    fn may_search(
        &self,
        kind: WaitKind,
        held: &mut bool,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) -> bool {
        self.setup.oversized || self.slots.may_search(kind, held, idle_counts)
    }
}

/// How many threads this process may run at once, if known. Under loom a
/// model must not depend on the machine: unknown, but what the crate's own
/// models set ([`with_model_cpus`]).
fn available_cpus() -> Option<usize> {
    #[cfg(all(test, loom))]
    return MODEL_CPUS.get();
    #[cfg(not(all(test, loom)))]
    {
        if cfg!(eventcount_loom) {
            return None;
        }
        std::thread::available_parallelism().ok().map(|n| n.get())
    }
}

#[cfg(all(test, loom))]
thread_local! {
    /// The CPUs the pools of a loom model see (loom runs a model's threads
    /// on the OS thread that started it).
    static MODEL_CPUS: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Run `model` with its pools seeing `cpus` CPUs.
#[cfg(all(test, loom))]
pub(crate) fn with_model_cpus(cpus: usize, model: impl FnOnce()) {
    MODEL_CPUS.set(Some(cpus));
    model();
    MODEL_CPUS.set(None);
}

/// What one worker keeps across its idle periods: its rule, its counters,
/// and when a waker last woke it (the only field its wakers write).
#[derive(Debug, Default)]
pub(crate) struct WorkerIdle {
    pub(crate) counters: IdleCounters,
    learner: Mutex<Learner>,
    woken_at: AtomicU64,
}

impl WorkerIdle {
    /// A waker is about to wake this worker: note when, on the shared
    /// clock, so that the worker can measure what its sleep cost.
    #[inline]
    pub(crate) fn stamp_wake(&self) {
        self.woken_at.store(shared_clock_ns(), Relaxed);
    }

    fn learner(&self) -> Learner {
        *self.learner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_learner(&self, learner: Learner) {
        *self.learner.lock().unwrap_or_else(|e| e.into_inner()) = learner;
    }
}

/// One idle period of one worker, on the clocks: the policy's
/// [`IdlePeriod`], the times it needs, and the counters it feeds.
#[derive(Debug)]
pub(crate) struct Period {
    machine: IdlePeriod,
    clock: IdleClock,
    /// The period has had an empty round (and loaded the worker's rule).
    began: bool,
    /// When this phase's search began (wall clock, thread CPU clock).
    search_since: Option<(u64, Option<u64>)>,
    /// The thread's CPU clock when the worker last got sleepy.
    sleepy_cpu: Option<u64>,
    /// When the sleep in progress began.
    sleep_started: u64,
    /// This worker holds one of the searcher cap's slots.
    pub(crate) slot: bool,
    /// The worker's index, for a trace of its gaps.
    #[cfg(feature = "policy-tools")]
    worker: usize,
}

impl Period {
    pub(crate) fn new(worker: usize) -> Self {
        #[cfg(not(feature = "policy-tools"))]
        let _ = worker;
        Period {
            machine: IdlePeriod::new(Learner::default()),
            clock: IdleClock::new(),
            began: false,
            search_since: None,
            sleepy_cpu: None,
            sleep_started: 0,
            slot: false,
            #[cfg(feature = "policy-tools")]
            worker,
        }
    }

    /// Empty rounds searched in this phase.
    pub(crate) fn rounds(&self) -> u32 {
        self.machine.rounds()
    }

    /// What this empty round does (docs/idle-policy.md, "Steps"). At the
    /// start of a phase the cap may give the worker a slot; it gives it
    /// back here when the worker gets sleepy.
    pub(crate) fn round(
        &mut self,
        worker: &WorkerIdle,
        pool: &PoolIdle,
        latch: &CoreLatch,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) -> Step {
        if !self.began {
            self.began = true;
            if pool.setup.learns() {
                let mut learner = worker.learner();
                if let Some(costs) = pool.wake_costs() {
                    learner.ln_wake.get_or_insert(costs);
                }
                self.machine.learner = learner;
            }
        }
        if self.machine.woke() {
            worker.counters.empty_wake();
        }
        let now = self.clock.now_ns();
        let was_searching = self.machine.searching();
        let slot = &mut self.slot;
        let step = self
            .machine
            .next_step(now, latch.waits_for(), &pool.setup, |kind| {
                pool.may_search(kind, slot, idle_counts)
            });
        self.trace(pool);
        match step {
            Step::Search if !was_searching => self.search_since = Some((now, thread_cpu_ns())),
            Step::Sleepy => {
                pool.slots.release(&mut self.slot);
                let cpu = (was_searching || pool.setup.learns())
                    .then(thread_cpu_ns)
                    .flatten();
                self.end_search(worker, SearchEnd::GaveUp, now, cpu);
                self.sleepy_cpu = cpu;
            }
            _ => {}
        }
        step
    }

    /// Whether the worker may search now, asked by its scheduler before a
    /// steal pass; at the start of a phase, what the phase's start will
    /// decide.
    pub(crate) fn may_search(
        &mut self,
        pool: &PoolIdle,
        latch: &CoreLatch,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) -> bool {
        match self.machine.will_search(&pool.setup) {
            Some(answer) => answer,
            None => pool.may_search(latch.waits_for(), &mut self.slot, idle_counts),
        }
    }

    /// A sleep begins (after the final check, just before parking).
    pub(crate) fn sleeping(&mut self, worker: &WorkerIdle) {
        let (now, shared) = self.clock.now_and_shared_ns();
        self.machine.sleeping(now);
        self.sleep_started = now;
        worker.counters.asleep(shared);
    }

    /// The sleep in progress ended at `now`: count it.
    fn parked(&mut self, worker: &WorkerIdle) -> u64 {
        let now = self.clock.now_ns();
        worker
            .counters
            .parked(now.saturating_sub(self.sleep_started));
        now
    }

    /// A wake ended the sleep.
    pub(crate) fn woken(&mut self, worker: &WorkerIdle, pool: &PoolIdle) {
        let now = self.parked(worker);
        let learns = pool.setup.learns();
        let sleep_cpu = match (self.sleepy_cpu.take(), learns) {
            (Some(since), true) => thread_cpu_ns().map_or(0, |cpu| cpu.saturating_sub(since)),
            _ => 0,
        };
        let stamp = learns.then(|| worker.woken_at.load(Relaxed));
        self.machine.woken(now, stamp, sleep_cpu, &pool.setup);
        if let Some(costs) = self.machine.learner.ln_wake.filter(|_| learns) {
            pool.publish_wake_costs(costs);
        }
    }

    /// The sleep's deadline ended it.
    pub(crate) fn timed_out(&mut self, worker: &WorkerIdle) {
        self.parked(worker);
        self.machine.timed_out();
    }

    /// The caller's park returned on its own (at its deadline or for an
    /// event of its own): the worker leaves its idle period.
    pub(crate) fn park_returned(&mut self, worker: &WorkerIdle) {
        let now = self.parked(worker);
        self.machine.park_returned(now);
    }

    /// The attempt to sleep ended without a sleep: a new phase next round.
    pub(crate) fn search_again(&mut self) {
        self.machine.search_again();
    }

    /// Sleepy again at the next round, without a new search.
    pub(crate) fn sleepy_again(&mut self) {
        self.machine.sleepy_again();
    }

    /// Work found (or the latch set): count the search, teach the rule.
    pub(crate) fn found(&mut self, worker: &WorkerIdle, pool: &PoolIdle) {
        if !self.began {
            return; // found at once: no empty round, nothing to learn
        }
        let now = self.clock.now_ns();
        if self.search_since.is_some() {
            self.end_search(worker, SearchEnd::FoundWork, now, thread_cpu_ns());
        }
        self.machine.found(now, &pool.setup);
        self.trace(pool);
        if pool.setup.learns() {
            worker.set_learner(self.machine.learner);
        }
    }

    /// Record the gap the rule just learned, with `policy-tools`.
    #[inline]
    fn trace(&mut self, pool: &PoolIdle) {
        #[cfg(feature = "policy-tools")]
        if let Some((kind, gap)) = self.machine.take_lesson() {
            let cost = self.machine.learner.sleep_cost_ns().unwrap_or(0);
            pool.trace.record(self.worker, kind, gap, cost);
        }
        #[cfg(not(feature = "policy-tools"))]
        let _ = pool;
    }

    /// The search rounds of this phase ended at `now` (the thread's CPU
    /// clock reading `cpu`), as `end`: count their time.
    fn end_search(&mut self, worker: &WorkerIdle, end: SearchEnd, now: u64, cpu: Option<u64>) {
        if let Some((wall_since, cpu_since)) = self.search_since.take() {
            let cpu = match (cpu, cpu_since) {
                (Some(now), Some(since)) => now.saturating_sub(since),
                _ => 0,
            };
            worker
                .counters
                .searched(end, now.saturating_sub(wall_since), cpu);
        }
    }
}

//! [`IdlePeriod`]: one worker's idle period, as both protocols step it:
//! which kind of wait it is, how long its search may last, and what its
//! sleeps teach the worker's budget
//! ([docs/idle-policy.md](crate::docs::idle_policy)).
//!
//! An idle period is a run of *phases*. Each phase searches (rounds that
//! pause), then gets sleepy, then tries to sleep; a wake starts a new
//! phase. The protocols decide what "sleepy" and "sleep" mean; this type
//! only decides when each comes, from the [`IdlePolicy`] and the searcher
//! cap, and learns.

use super::budget::{Budgets, PhaseEnd, SHORT_SLEEP_NS};
use super::counters::IdleCounters;
use super::policy::{IdlePolicy, SearchLength};
use super::searchers::SearcherSlots;
use crate::latch::{CoreLatch, WaitKind};
use crate::sync::Stopwatch;

/// What an empty round does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Search round `n` of this phase: pass the time with the policy.
    Search(u32),
    /// The search is over: announce sleepiness (the JEC protocol's sleepy
    /// round, the notifier's `prepare_wait`).
    Sleepy,
    /// Try to sleep.
    Sleep,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// A phase starts at the next round.
    Start,
    Search,
    Sleepy,
    Sleep,
}

/// What one worker keeps across its idle periods, on its own cache line:
/// the budgets it learned, and what its idle periods cost.
#[derive(Debug)]
pub(crate) struct WorkerIdle {
    pub(crate) budgets: Budgets,
    pub(crate) counters: IdleCounters,
}

impl WorkerIdle {
    pub(crate) fn new(policy: &IdlePolicy) -> Self {
        WorkerIdle {
            budgets: Budgets::new(policy),
            counters: IdleCounters::default(),
        }
    }
}

/// One idle period of one worker.
#[derive(Debug)]
pub(crate) struct IdlePeriod {
    /// Set at the first empty round, from the latch.
    kind: WaitKind,
    phase: Phase,
    /// Rounds searched in this phase.
    rounds: u32,
    /// This phase's budget (timed policies).
    budget_ns: u32,
    /// Started at the first empty round, so `None` until then: a search
    /// that finds work at once never reads the clock.
    clock: Option<Stopwatch>,
    phase_started_ns: u64,
    /// When this phase's search rounds began, while they last.
    searching_since: Option<u64>,
    sleep_started_ns: u64,
    /// A wake ended the last sleep, and no round has run since: if the next
    /// round comes, the wake found nothing.
    woke: bool,
    /// This worker holds one of the searcher cap's slots.
    pub(crate) slot: bool,
}

impl IdlePeriod {
    pub(crate) fn new() -> Self {
        IdlePeriod {
            kind: WaitKind::Idle,
            phase: Phase::Start,
            rounds: 0,
            budget_ns: 0,
            clock: None,
            phase_started_ns: 0,
            searching_since: None,
            sleep_started_ns: 0,
            woke: false,
            slot: false,
        }
    }

    /// Empty rounds searched in this phase.
    pub(crate) fn rounds(&self) -> u32 {
        self.rounds
    }

    fn now_ns(&mut self) -> u64 {
        self.clock.as_mut().map_or(0, Stopwatch::elapsed_ns)
    }

    /// What this empty round does. At the start of a phase, `slots` says
    /// whether the searcher cap lets the worker search (it may take a
    /// slot; `idle_counts` is for [`SearcherSlots::may_search`]); a phase
    /// right after an empty wake skips its search if the policy says so.
    pub(crate) fn next_step(
        &mut self,
        latch: &CoreLatch,
        policy: &IdlePolicy,
        worker: &WorkerIdle,
        slots: &SearcherSlots,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) -> Step {
        if self.phase == Phase::Start {
            self.start_phase(latch, policy, worker, slots, idle_counts);
        }
        if self.phase == Phase::Search {
            let within = match policy.search {
                SearchLength::Rounds { spin, yields, .. } => {
                    self.rounds < spin.saturating_add(yields)
                }
                SearchLength::Timed { .. } => {
                    let searched = self.now_ns().saturating_sub(self.phase_started_ns);
                    searched < u64::from(self.budget_ns)
                }
            };
            if within {
                let round = self.rounds;
                self.rounds = self.rounds.saturating_add(1);
                return Step::Search(round);
            }
            self.end_searching(&worker.counters);
            self.phase = Phase::Sleepy;
        }
        if self.phase == Phase::Sleepy {
            self.phase = Phase::Sleep;
            return Step::Sleepy;
        }
        Step::Sleep
    }

    fn start_phase(
        &mut self,
        latch: &CoreLatch,
        policy: &IdlePolicy,
        worker: &WorkerIdle,
        slots: &SearcherSlots,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) {
        if self.clock.is_none() {
            self.kind = latch.waits_for();
            self.clock = Some(Stopwatch::start());
        }
        // A round after a wake means the wake found nothing: with the
        // policy's rule, sleep again at once. The budget is not changed:
        // such a wake tells about whoever woke us, not about our search.
        let empty_wake = std::mem::take(&mut self.woke);
        if empty_wake {
            worker.counters.empty_wake();
        }
        self.rounds = 0;
        self.budget_ns = worker.budgets.get(self.kind);
        self.phase_started_ns = self.now_ns();
        let skip = empty_wake && policy.empty_wake_sleeps;
        if !skip && slots.may_search(self.kind, &mut self.slot, idle_counts) {
            self.phase = Phase::Search;
            self.searching_since = Some(self.phase_started_ns);
        } else {
            self.phase = Phase::Sleepy;
        }
    }

    /// Whether the worker may search (steal) now, asked by its scheduler
    /// before a steal pass: yes during this phase's search rounds; no once
    /// it is sleepy or trying to sleep; at the start of a phase, what the
    /// phase's start will decide (the searcher bound, which may take a
    /// slot for it here, and the empty-wake rule), without starting it.
    pub(crate) fn may_search(
        &mut self,
        latch: &CoreLatch,
        policy: &IdlePolicy,
        slots: &SearcherSlots,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) -> bool {
        match self.phase {
            Phase::Search => true,
            Phase::Sleepy | Phase::Sleep => false,
            Phase::Start => {
                // The kind is read from the latch at the first round; before
                // it, from the latch the rounds will wait on.
                let kind = if self.clock.is_some() {
                    self.kind
                } else {
                    latch.waits_for()
                };
                !(self.woke && policy.empty_wake_sleeps)
                    && slots.may_search(kind, &mut self.slot, idle_counts)
            }
        }
    }

    /// The search rounds of this phase are over: count their time.
    fn end_searching(&mut self, counters: &IdleCounters) {
        if let Some(since) = self.searching_since.take() {
            let now = self.now_ns();
            counters.searched(now.saturating_sub(since));
        }
    }

    /// A sleep begins now (after the final check, just before parking).
    pub(crate) fn sleeping(&mut self) {
        self.sleep_started_ns = self.now_ns();
    }

    /// A wake ended the sleep: a new phase starts at the next round, which,
    /// if it comes, means the wake found nothing.
    pub(crate) fn woken(&mut self, counters: &IdleCounters) {
        self.count_parked(counters);
        self.phase = Phase::Start;
        self.rounds = 0;
        self.woke = true;
    }

    /// The sleep's deadline ended it: a new phase starts at the next round.
    pub(crate) fn timed_out(&mut self, counters: &IdleCounters) {
        self.count_parked(counters);
        self.search_again();
    }

    fn count_parked(&mut self, counters: &IdleCounters) {
        let now = self.now_ns();
        counters.parked(now.saturating_sub(self.sleep_started_ns));
    }

    /// The attempt to sleep ended without a sleep (the latch, the final
    /// check, a waker that came first, or the deadline): a new phase starts
    /// at the next round.
    pub(crate) fn search_again(&mut self) {
        self.phase = Phase::Start;
        self.rounds = 0;
    }

    /// Get sleepy again at the next round, without a new search: work was
    /// posted while the worker registered (`JecSleep`), or it withdrew its
    /// announcement at a round past its deadline (`NotifierSleep`).
    pub(crate) fn sleepy_again(&mut self) {
        self.phase = Phase::Sleepy;
    }

    /// The idle period ended with work found (or the latch set): count the
    /// search's time, and learn whether the phase that found it was a hit
    /// or a miss (the policy learns only for timed searches).
    pub(crate) fn found(&mut self, policy: &IdlePolicy, worker: &WorkerIdle) {
        if self.clock.is_none() {
            return; // found at once: no empty round, nothing to learn
        }
        self.end_searching(&worker.counters);
        let now = self.now_ns();
        let outcome = if std::mem::take(&mut self.woke)
            && now.saturating_sub(self.sleep_started_ns) >= SHORT_SLEEP_NS
        {
            PhaseEnd::Miss
        } else {
            PhaseEnd::Hit {
                ns: now.saturating_sub(self.phase_started_ns),
            }
        };
        worker.budgets.learn(policy, self.kind, outcome);
    }
}

//! [`IdlePeriod`]: one worker's idle period, as both protocols step it:
//! which kind of wait it is, how long its search may last, and what its
//! sleeps teach the worker's budget
//! ([docs/idle-policy.md](crate::docs::idle_policy)).
//!
//! An idle period is a run of *phases*. Each phase searches (rounds that
//! pause), then gets sleepy, then tries to sleep; a wake starts a new
//! phase. The protocols decide what "sleepy" and "sleep" mean; this type
//! only decides when each comes, from the [`IdlePolicy`], the searcher
//! cap and whether the pool is oversubscribed (its size or its score),
//! and learns.
//!
//! A phase that starts while the pool is pressured
//! ([`Pressure`](super::pressure::Pressure)) runs as rayon's fixed policy
//! does, yield rounds even right after an empty wake, outside the searcher
//! cap, but learns how many: as many as the worker's pressured budget, from
//! the pool's floor to [`PRESSURED_ROUNDS`](super::pressure::PRESSURED_ROUNDS)
//! (rayon's 32), which pressured phases teach as the others teach a timed
//! policy's budget (and below the floor, to one round, during a streak of
//! misses). The floor is
//! [`PRESSURED_MIN_ROUNDS`](super::pressure::PRESSURED_MIN_ROUNDS) (8) in a
//! pool with more workers than CPUs, and
//! [`PRESSURED_FITTING_MIN_ROUNDS`](super::pressure::PRESSURED_FITTING_MIN_ROUNDS)
//! (2) in one that fits them, but 8 in any pool after a phase whose rounds
//! waited on CPU-bound threads. While the pool detects, the
//! yield rounds are timed and scored, and a search that is not pressured
//! makes at least one round (the probe) so that there is a yield to score.

use super::budget::{Budgets, PhaseEnd, QUICK_ROUND_NS, SHORT_SLEEP_NS};
use super::counters::{IdleCounters, SearchEnd};
use super::policy::{IdlePolicy, Pause, SearchLength};
use super::pool::PoolIdle;
use super::pressure::FastestRound;
#[cfg(all(test, not(loom)))]
use super::pressure::{PRESSURED_MIN_ROUNDS, PRESSURED_ROUNDS};
use crate::latch::{CoreLatch, WaitKind};
use crate::sync::{thread_cpu_ns, Stopwatch};

/// What an empty round does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// A search round of this phase: pass the time as it says.
    Search(Pause),
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
/// the budgets it learned, its fastest yield round, and what its idle
/// periods cost.
#[derive(Debug)]
pub(crate) struct WorkerIdle {
    pub(crate) budgets: Budgets,
    pub(crate) fastest_round: FastestRound,
    pub(crate) counters: IdleCounters,
}

impl WorkerIdle {
    /// A worker of `pool`, which sets its pressured budgets' floor.
    pub(crate) fn new(policy: &IdlePolicy, pool: &PoolIdle) -> Self {
        WorkerIdle {
            budgets: Budgets::new(policy, pool.pressure.floor_rounds()),
            fastest_round: FastestRound::default(),
            counters: IdleCounters::default(),
        }
    }
}

/// One idle period of one worker.
#[derive(Debug)]
pub(crate) struct IdlePeriod {
    /// Set at the first empty round, from the latch.
    kind: WaitKind,
    /// The period has had an empty round: `kind` is set.
    began: bool,
    phase: Phase,
    /// Rounds searched in this phase.
    rounds: u32,
    /// This phase's budget (timed policies).
    budget_ns: u32,
    /// This phase's yield rounds, if it is pressured.
    pressured_rounds: u32,
    /// The rounds the last phase searched, for a wake that comes after it.
    searched_rounds: u32,
    /// Started by its first read, when a phase, a sleep or a lesson first
    /// needs a time: a search that finds work at once never reads it, nor
    /// does a phase that cannot search.
    clock: Stopwatch,
    /// When this phase started, read only if it may run a search round
    /// (0 otherwise: a phase of no rounds measures nothing from it).
    phase_started_ns: u64,
    /// When this phase's search rounds began, while they last.
    searching_since: Option<u64>,
    /// The thread's CPU clock at the first search round, where the
    /// platform has one: read lazily, because the read is a system call,
    /// and a search of no rounds (tokio's policy) has nothing to measure.
    searching_cpu_since: Option<u64>,
    sleep_started_ns: u64,
    /// A wake ended the last sleep, and no round has run since: if the next
    /// round comes, the wake found nothing.
    woke: bool,
    /// This phase started while the pool was pressured.
    pressured: bool,
    /// This phase searches at least one round, whatever its budget (the
    /// pool detects pressure, and the phase is not pressured).
    probe: bool,
    /// When the last search round's yield began, if the pool scores it.
    round_started_ns: Option<u64>,
    /// This worker holds one of the searcher cap's slots.
    pub(crate) slot: bool,
}

impl IdlePeriod {
    pub(crate) fn new() -> Self {
        IdlePeriod {
            kind: WaitKind::Idle,
            began: false,
            phase: Phase::Start,
            rounds: 0,
            budget_ns: 0,
            pressured_rounds: 0,
            searched_rounds: 0,
            clock: Stopwatch::new(),
            phase_started_ns: 0,
            searching_since: None,
            searching_cpu_since: None,
            sleep_started_ns: 0,
            woke: false,
            pressured: false,
            probe: false,
            round_started_ns: None,
            slot: false,
        }
    }

    /// Empty rounds searched in this phase.
    pub(crate) fn rounds(&self) -> u32 {
        self.rounds
    }

    fn now_ns(&mut self) -> u64 {
        self.clock.elapsed_ns()
    }

    /// What this empty round does. At the start of a phase, `pool` says
    /// whether the phase is pressured and whether the searcher cap lets the
    /// worker search (it may take a slot; `idle_counts` is for
    /// [`PoolIdle::may_search`]); a phase right after an empty wake skips
    /// its search if the policy says so and the pool is not pressured.
    pub(crate) fn next_step(
        &mut self,
        latch: &CoreLatch,
        policy: &IdlePolicy,
        worker: &WorkerIdle,
        pool: &PoolIdle,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) -> Step {
        if self.phase == Phase::Start {
            self.start_phase(latch, policy, worker, pool, idle_counts);
        }
        if self.phase == Phase::Search {
            let timed = matches!(policy.search, SearchLength::Timed { .. }) && !self.pressured;
            let scores = pool.pressure.detects();
            // One clock read per round, shared by the budget and the score:
            // under loom the clock advances per read, and a model's rounds
            // must not depend on whether the pool scores them.
            let now = (timed || scores).then(|| self.now_ns());
            if let (Some(now), Some(since)) = (now, self.round_started_ns.take()) {
                pool.pressure
                    .observe(&worker.fastest_round, now.saturating_sub(since));
            }
            let within = if self.pressured {
                self.rounds < self.pressured_rounds
            } else {
                let within_budget = match policy.search {
                    SearchLength::Rounds { spin, yields, .. } => {
                        self.rounds < spin.saturating_add(yields)
                    }
                    SearchLength::Timed { .. } => {
                        let searched = now.unwrap_or(0).saturating_sub(self.phase_started_ns);
                        searched < u64::from(self.budget_ns)
                    }
                };
                within_budget || (self.probe && self.rounds == 0)
            };
            if within {
                let round = self.rounds;
                if round == 0 {
                    self.searching_cpu_since = thread_cpu_ns();
                }
                self.rounds = self.rounds.saturating_add(1);
                let pause = if self.pressured {
                    Pause::Yield
                } else {
                    policy.pause(round)
                };
                // Only a yield is scored: a spin hands nothing off.
                if pause == Pause::Yield {
                    self.round_started_ns = now.filter(|_| scores);
                }
                return Step::Search(pause);
            }
            // A search phase that ends in the call that began it searched
            // for no time: its end is its start, with no clock read.
            let now = if self.rounds == 0 {
                self.phase_started_ns
            } else {
                now.unwrap_or_else(|| self.now_ns())
            };
            self.end_searching(&worker.counters, SearchEnd::GaveUp, now);
            self.searched_rounds = self.rounds;
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
        pool: &PoolIdle,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) {
        if !self.began {
            self.began = true;
            self.kind = latch.waits_for();
        }
        // A round after a wake means the wake found nothing: with the
        // policy's rule, sleep again at once. The budget is not changed:
        // such a wake tells about whoever woke us, not about our search.
        let empty_wake = std::mem::take(&mut self.woke);
        if empty_wake {
            worker.counters.empty_wake();
        }
        self.rounds = 0;
        self.round_started_ns = None;
        self.budget_ns = worker.budgets.get(self.kind);
        self.pressured_rounds = worker.budgets.pressured_rounds(self.kind);
        // Under pressure a yield hands the CPU to a runnable peer, and a
        // sleep after an empty wake would cost a futex wake later: search.
        self.pressured = pool.pressure.is_pressured();
        self.probe = !self.pressured && pool.pressure.detects();
        self.phase_started_ns = if self.pressured || self.probe || policy.has_search_rounds() {
            self.now_ns()
        } else {
            0
        };
        let skip = empty_wake && policy.empty_wake_sleeps && !self.pressured;
        if !skip && pool.may_search(self.pressured, self.kind, &mut self.slot, idle_counts) {
            self.phase = Phase::Search;
            self.searching_since = Some(self.phase_started_ns);
            self.searching_cpu_since = None;
        } else {
            self.phase = Phase::Sleepy;
        }
    }

    /// Whether the worker may search (steal) now, asked by its scheduler
    /// before a steal pass: yes during this phase's search rounds; no once
    /// it is sleepy or trying to sleep; at the start of a phase, what the
    /// phase's start will decide (the pressure, the searcher bound, which
    /// may take a slot for it here, and the empty-wake rule), without starting it.
    pub(crate) fn may_search(
        &mut self,
        latch: &CoreLatch,
        policy: &IdlePolicy,
        pool: &PoolIdle,
        idle_counts: impl FnOnce() -> (usize, usize),
    ) -> bool {
        match self.phase {
            Phase::Search => true,
            Phase::Sleepy | Phase::Sleep => false,
            Phase::Start => {
                // The kind is read from the latch at the first round; before
                // it, from the latch the rounds will wait on.
                let kind = if self.began {
                    self.kind
                } else {
                    latch.waits_for()
                };
                // As the phase's start decides: under pressure the empty-wake
                // rule is off and the cap lifted.
                let pressured = pool.pressure.is_pressured();
                !(self.woke && policy.empty_wake_sleeps && !pressured)
                    && pool.may_search(pressured, kind, &mut self.slot, idle_counts)
            }
        }
    }

    /// The search rounds of this phase are over at `now`, as `end`: count
    /// their time, on the wall clock and on the thread's CPU clock (read
    /// at the first round, so a search of no rounds counts 0 on both).
    fn end_searching(&mut self, counters: &IdleCounters, end: SearchEnd, now: u64) {
        self.round_started_ns = None;
        if let Some(since) = self.searching_since.take() {
            let wall = now.saturating_sub(since);
            let cpu = self
                .searching_cpu_since
                .take()
                .and_then(|since| Some(thread_cpu_ns()?.saturating_sub(since)))
                .unwrap_or(0);
            counters.searched(end, wall, cpu);
        }
    }

    /// A sleep begins now (after the final check, just before parking).
    /// Every sleep ends in [`woken`](IdlePeriod::woken) or
    /// [`timed_out`](IdlePeriod::timed_out), which count it.
    pub(crate) fn sleeping(&mut self, counters: &IdleCounters) {
        let (now, shared) = self.clock.elapsed_and_shared_ns();
        self.sleep_started_ns = now;
        counters.asleep(shared);
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
    /// or a miss: a pressured phase for the pressured budget, in rounds,
    /// and any other for the policy's, in time (timed policies only).
    pub(crate) fn found(&mut self, policy: &IdlePolicy, worker: &WorkerIdle) {
        if !self.began {
            return; // found at once: no empty round, nothing to learn
        }
        let learns = Budgets::learns(policy, self.pressured);
        if self.searching_since.is_none() && !learns {
            return; // nothing to count, nothing to learn: no clock read
        }
        // One read for both: the end of the search and the lesson.
        let now = self.now_ns();
        self.end_searching(&worker.counters, SearchEnd::FoundWork, now);
        if !learns {
            return;
        }
        let woke = std::mem::take(&mut self.woke);
        let outcome = if woke && now.saturating_sub(self.sleep_started_ns) >= SHORT_SLEEP_NS {
            PhaseEnd::Miss
        } else if self.pressured {
            // Found in this phase's search, or just after its sleep: one
            // round more would have caught it.
            let needed = if woke {
                self.searched_rounds + 1
            } else {
                self.rounds
            };
            PhaseEnd::Hit {
                needed: u64::from(needed),
            }
        } else {
            PhaseEnd::Hit {
                needed: now.saturating_sub(self.phase_started_ns),
            }
        };
        // How long the phase's rounds took on average (a pressured phase
        // reads the clock at its start): up to its sleep, the sleepy round
        // and the final check included, if it slept; else up to now.
        let (rounds, searched) = if woke {
            (self.searched_rounds, self.sleep_started_ns)
        } else {
            (self.rounds, now)
        };
        let searched = searched.saturating_sub(self.phase_started_ns);
        let quick_rounds = rounds > 0 && searched / u64::from(rounds) < QUICK_ROUND_NS;
        worker
            .budgets
            .learn(policy, self.kind, self.pressured, outcome, quick_rounds);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The steps of one phase, until the worker gets sleepy.
    fn phase(
        period: &mut IdlePeriod,
        policy: &IdlePolicy,
        worker: &WorkerIdle,
        pool: &PoolIdle,
    ) -> Vec<Step> {
        let latch = CoreLatch::idle_loop();
        let mut steps = Vec::new();
        loop {
            let step = period.next_step(&latch, policy, worker, pool, || (0, 1));
            steps.push(step);
            if !matches!(step, Step::Search(_)) {
                return steps;
            }
        }
    }

    fn searches(steps: &[Step]) -> usize {
        steps
            .iter()
            .filter(|s| matches!(s, Step::Search(_)))
            .count()
    }

    #[test]
    fn a_pressured_phase_yields_rayons_rounds_outside_a_full_cap() {
        let policy = IdlePolicy::new().max_searching(1).assume_oversubscribed();
        let pool = PoolIdle::new(&policy, 4);
        let worker = WorkerIdle::new(&policy, &pool);
        worker.budgets.set(WaitKind::Idle, true, PRESSURED_ROUNDS);
        // The cap's one slot is taken by another worker.
        let mut other = false;
        assert!(pool.slots.may_search(WaitKind::Idle, &mut other, || (0, 0)));
        let mut period = IdlePeriod::new();
        let steps = phase(&mut period, &policy, &worker, &pool);
        assert_eq!(searches(&steps), PRESSURED_ROUNDS as usize);
        assert!(steps[..steps.len() - 1]
            .iter()
            .all(|s| *s == Step::Search(Pause::Yield)));
        assert_eq!(steps.last(), Some(&Step::Sleepy));
        assert!(!period.slot, "a pressured phase holds no slot");
        assert_eq!(pool.slots.taken(), 1);
        // After an empty wake it searches again: under pressure the
        // empty-wake rule is off.
        period.phase = Phase::Sleep;
        period.sleeping(&worker.counters);
        period.woken(&worker.counters);
        let steps = phase(&mut period, &policy, &worker, &pool);
        assert_eq!(searches(&steps), PRESSURED_ROUNDS as usize);
        // It teaches the pressured budget (a hit, which keeps all 32
        // rounds), and leaves the policy's alone.
        period.found(&policy, &worker);
        assert_eq!(worker.budgets.get(WaitKind::Idle), 0);
        assert_eq!(
            worker.budgets.pressured_rounds(WaitKind::Idle),
            PRESSURED_ROUNDS
        );
    }

    /// The default policy, every phase pressured, in a pool of four.
    fn always_pressured() -> (IdlePolicy, PoolIdle, WorkerIdle) {
        let policy = IdlePolicy::new().assume_oversubscribed();
        let pool = PoolIdle::new(&policy, 4);
        let worker = WorkerIdle::new(&policy, &pool);
        (policy, pool, worker)
    }

    #[test]
    fn a_fresh_worker_searches_the_floor_at_top_level_and_rayons_rounds_in_a_join() {
        let (policy, pool, worker) = always_pressured();
        let steps = phase(&mut IdlePeriod::new(), &policy, &worker, &pool);
        // The floor is the pool's: 8 or 2 rounds as four workers do or do
        // not outnumber this machine's CPUs.
        assert_eq!(searches(&steps), pool.pressure.floor_rounds() as usize);
        assert_eq!(
            worker.budgets.pressured_rounds(WaitKind::Join),
            PRESSURED_ROUNDS
        );
    }

    #[test]
    fn a_pressured_phase_searches_its_budget_of_rounds() {
        let (policy, pool, worker) = always_pressured();
        worker.budgets.set(WaitKind::Idle, true, 3);
        let steps = phase(&mut IdlePeriod::new(), &policy, &worker, &pool);
        assert_eq!(searches(&steps), 3);
        assert_eq!(steps.last(), Some(&Step::Sleepy));
        // The join budget is its own.
        assert_eq!(
            worker.budgets.pressured_rounds(WaitKind::Join),
            PRESSURED_ROUNDS
        );
    }

    #[test]
    fn a_pressured_phase_learns_its_rounds_from_misses_and_hits() {
        let (policy, pool, worker) = always_pressured();
        worker.budgets.set(WaitKind::Idle, true, PRESSURED_ROUNDS);
        // A long sleep, then work: the 32 rounds before it were spent for
        // nothing, and the budget loses a quarter.
        let mut period = IdlePeriod::new();
        phase(&mut period, &policy, &worker, &pool);
        period.phase = Phase::Sleep;
        period.sleeping(&worker.counters);
        std::thread::sleep(Duration::from_nanos(2 * SHORT_SLEEP_NS));
        period.woken(&worker.counters);
        period.found(&policy, &worker);
        assert_eq!(worker.budgets.pressured_rounds(WaitKind::Idle), 24);
        assert_eq!(worker.budgets.get(WaitKind::Idle), 0);
        // Work found after twelve rounds, by a worker whose budget is the
        // floor: it needed 12, and a quarter more is 15.
        worker
            .budgets
            .set(WaitKind::Idle, true, PRESSURED_MIN_ROUNDS);
        let mut period = IdlePeriod::new();
        let latch = CoreLatch::idle_loop();
        for _ in 0..12 {
            // The phase's own count is raised, so that it searches twelve.
            let step = period.next_step(&latch, &policy, &worker, &pool, || (0, 1));
            assert_eq!(step, Step::Search(Pause::Yield));
            period.pressured_rounds = 12;
        }
        period.found(&policy, &worker);
        assert_eq!(worker.budgets.pressured_rounds(WaitKind::Idle), 15);
    }

    #[test]
    fn a_detecting_phase_probes_one_round_and_a_fixed_one_none() {
        let zero = IdlePolicy::new().search_budget(Duration::ZERO, Duration::ZERO);
        let detecting = PoolIdle::new(&zero, 1);
        let worker = WorkerIdle::new(&zero, &detecting);
        let steps = phase(&mut IdlePeriod::new(), &zero, &worker, &detecting);
        assert_eq!(steps, [Step::Search(Pause::Yield), Step::Sleepy]);

        let fixed = zero.adapt_to_oversubscription(false);
        let off = PoolIdle::new(&fixed, 1);
        let steps = phase(&mut IdlePeriod::new(), &fixed, &worker, &off);
        assert_eq!(steps, [Step::Sleepy]);
    }

    #[test]
    fn spin_rounds_are_not_scored() {
        let policy = IdlePolicy::rayon()
            .spin_rounds(3)
            .yield_rounds(0)
            .adapt_to_oversubscription(true);
        let pool = PoolIdle::new(&policy, 1);
        let worker = WorkerIdle::new(&policy, &pool);
        let steps = phase(&mut IdlePeriod::new(), &policy, &worker, &pool);
        assert_eq!(searches(&steps), 3);
        assert_eq!(format!("{:?}", worker.fastest_round), "FastestRound(none)");
    }
}

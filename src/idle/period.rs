//! [`IdlePeriod`]: one idle period of one worker, as a state machine that
//! both protocols drive ([docs/idle-policy.md](crate::docs::idle_policy),
//! "Steps").
//!
//! A period is a run of *phases* (search rounds, a sleepy round, an attempt
//! to sleep); a wake, or an attempt without a sleep, starts a new one. It
//! teaches the worker's [`Learner`] the period's gap. Every event comes
//! with the time the protocol read (ns), so a simulator can drive it.

use super::learner::Learner;
use super::policy::{IdlePolicy, Search, RAYON_ROUNDS};
use crate::latch::WaitKind;

/// What an empty round does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A search round: yield the CPU, and come back.
    Search,
    /// Announce sleepiness (JEC's sleepy round, the notifier's
    /// `prepare_wait`).
    Sleepy,
    /// Try to sleep.
    Sleep,
}

/// What a pool's idle periods follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    search: Search,
    empty_wake_sleeps: bool,
    /// The default policy in a pool with more workers than CPUs, which
    /// idles as rayon does: its rounds, no cap, no sleep after an empty
    /// wake.
    pub oversized: bool,
}

impl Setup {
    /// The setup of a pool of `workers` under `policy`, on a machine that
    /// runs `cpus` threads at once (`None`: unknown).
    pub fn new(policy: &IdlePolicy, workers: usize, cpus: Option<usize>) -> Self {
        let oversized = policy.search == Search::Learned && cpus.is_some_and(|cpus| workers > cpus);
        Setup {
            search: if oversized {
                Search::Rounds(RAYON_ROUNDS)
            } else {
                policy.search
            },
            empty_wake_sleeps: policy.empty_wake_sleeps && !oversized,
            oversized,
        }
    }

    /// Whether the worker's rule learns (the default, in a pool that fits).
    pub fn learns(&self) -> bool {
        self.search == Search::Learned
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// A phase starts at the next round.
    Start,
    /// Searching for this many rounds.
    Rounds(u32),
    /// Searching until this time.
    Until(u64),
    Sleepy,
    Sleep,
}

/// One idle period of one worker.
#[derive(Clone, Copy, Debug)]
pub struct IdlePeriod {
    /// Set when the gap begins.
    kind: WaitKind,
    phase: Phase,
    /// Rounds searched in this phase.
    rounds: u32,
    /// When the gap this period learns from began: its first empty round,
    /// or the first after an empty wake or a park that returned.
    since: Option<u64>,
    /// A gap ended by the caller's park returning, taught at the next event.
    returned: Option<u64>,
    sleep_started: u64,
    /// When the work came that a wake brought (its waker's stamp, or an
    /// estimate), until the next round.
    woke_at: Option<u64>,
    /// The last sleep ended at its deadline, and no round has run since.
    timed_out: bool,
    /// The last gap taught, until taken (for a trace).
    #[cfg(feature = "policy-tools")]
    lesson: Option<(WaitKind, u64)>,
    /// The worker's rule, while the period runs.
    pub learner: Learner,
}

impl IdlePeriod {
    /// A period of a worker whose rule is `learner`.
    pub fn new(learner: Learner) -> Self {
        IdlePeriod {
            kind: WaitKind::Idle,
            phase: Phase::Start,
            rounds: 0,
            since: None,
            returned: None,
            sleep_started: 0,
            woke_at: None,
            timed_out: false,
            #[cfg(feature = "policy-tools")]
            lesson: None,
            learner,
        }
    }

    /// Empty rounds searched in this phase.
    pub fn rounds(&self) -> u32 {
        self.rounds
    }

    /// Whether this phase is in its search rounds.
    pub fn searching(&self) -> bool {
        matches!(self.phase, Phase::Rounds(_) | Phase::Until(_))
    }

    /// Whether a wake ended the last sleep and no round has run since (so
    /// the next round means it found nothing).
    pub fn woke(&self) -> bool {
        self.woke_at.is_some()
    }

    /// Whether the next round searches, where that is known before the cap
    /// is asked; `None` at the start of a phase the cap decides.
    pub fn will_search(&self, setup: &Setup) -> Option<bool> {
        match self.phase {
            Phase::Rounds(_) | Phase::Until(_) => Some(true),
            Phase::Sleepy | Phase::Sleep => Some(false),
            Phase::Start => (self.woke() && setup.empty_wake_sleeps).then_some(false),
        }
    }

    /// What the empty round at `now` does. At the start of a phase,
    /// `may_search` says whether the searcher cap lets a wait of its kind
    /// search (it may take a slot).
    pub fn next_step(
        &mut self,
        now: u64,
        kind: WaitKind,
        setup: &Setup,
        may_search: impl FnOnce(WaitKind) -> bool,
    ) -> Step {
        if let Some(gap) = self.returned.take() {
            self.learn(setup, gap);
        }
        if self.phase == Phase::Start {
            // After a wake, this round means the wake found nothing: the gap
            // it ended is not this worker's to learn, and another begins.
            let empty_wake = self.woke_at.take().is_some();
            self.timed_out = false;
            if empty_wake || self.since.is_none() {
                self.kind = kind;
                self.since = Some(now);
            }
            self.rounds = 0;
            let search = match setup.search {
                Search::Rounds(rounds) => Phase::Rounds(rounds),
                Search::Budget(ns) => Phase::Until(now.saturating_add(u64::from(ns))),
                // From the gap's start: a phase after an attempt that did
                // not sleep spends what is left.
                Search::Learned => Phase::Until(
                    (self.since.unwrap_or(now)).saturating_add(self.learner.budget_ns(self.kind)),
                ),
            };
            let skip = empty_wake && setup.empty_wake_sleeps;
            self.phase = if !skip && may_search(self.kind) {
                search
            } else {
                Phase::Sleepy
            };
        }
        let searching = match self.phase {
            Phase::Rounds(rounds) => Some(self.rounds < rounds),
            Phase::Until(end) => Some(now < end),
            _ => None,
        };
        match searching {
            Some(true) => {
                self.rounds += 1;
                return Step::Search;
            }
            Some(false) => self.phase = Phase::Sleepy,
            None => {}
        }
        if self.phase == Phase::Sleepy {
            self.phase = Phase::Sleep;
            return Step::Sleepy;
        }
        Step::Sleep
    }

    /// A sleep begins at `now` (after the final check, just before parking).
    pub fn sleeping(&mut self, now: u64) {
        self.sleep_started = now;
    }

    /// A wake ended the sleep, and the sleeper runs at `now`. `stamp` is
    /// when its waker made the wake, if it said, and `sleep_cpu` the CPU
    /// the sleep cost: the rule learns both.
    pub fn woken(&mut self, now: u64, stamp: Option<u64>, sleep_cpu: u64, setup: &Setup) {
        // A stamp from before this sleep is an earlier wake's.
        let stamp = stamp.filter(|&stamp| stamp >= self.sleep_started && stamp <= now);
        if let (Some(stamp), true) = (stamp, setup.learns()) {
            self.learner.wake(now - stamp, sleep_cpu);
        }
        self.woke_at = Some(stamp.unwrap_or_else(|| self.came_before(now)));
        self.phase = Phase::Start;
    }

    /// The sleep's deadline ended it: the gap goes on into a new phase.
    pub fn timed_out(&mut self) {
        self.timed_out = true;
        self.phase = Phase::Start;
    }

    /// The caller's park returned on its own at `now` (its deadline, or an
    /// event of its own): the gap ends, and the next round begins another.
    pub fn park_returned(&mut self, now: u64) {
        if let Some(since) = self.since.take() {
            self.returned = Some(self.came_before(now).saturating_sub(since));
        }
        self.phase = Phase::Start;
    }

    /// When the work came that a sleep without a waker's stamp ran at `now`
    /// for: one measured wake latency earlier.
    fn came_before(&self, now: u64) -> u64 {
        now.saturating_sub(self.learner.wake_ns().unwrap_or(0))
    }

    /// The attempt to sleep ended without a sleep (the latch, the final
    /// check, or a waker that came first): a new phase at the next round.
    pub fn search_again(&mut self) {
        self.phase = Phase::Start;
    }

    /// Get sleepy again at the next round, without a search: work was
    /// posted while the worker registered (`JecSleep`), or it withdrew at a
    /// round past its deadline (`NotifierSleep`).
    pub fn sleepy_again(&mut self) {
        self.phase = Phase::Sleepy;
    }

    /// The period ended with work found (or its latch set) at `now`: the
    /// rule learns how long the work took to come.
    pub fn found(&mut self, now: u64, setup: &Setup) {
        if let Some(gap) = self.returned.take() {
            self.learn(setup, gap);
        }
        if let Some(since) = self.since.take() {
            let came = match self.woke_at {
                Some(came) => came,
                None if self.timed_out => self.came_before(now),
                None => now,
            };
            self.learn(setup, came.saturating_sub(since));
        }
    }

    fn learn(&mut self, setup: &Setup, gap: u64) {
        if setup.learns() {
            self.learner.gap(self.kind, gap);
        }
        #[cfg(feature = "policy-tools")]
        {
            self.lesson = Some((self.kind, gap));
        }
    }

    /// The last gap the period ended, once, learned or not (for a trace).
    #[cfg(feature = "policy-tools")]
    pub fn take_lesson(&mut self) -> Option<(WaitKind, u64)> {
        self.lesson.take()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const US: u64 = 1_000;
    const IDLE: WaitKind = WaitKind::Idle;

    fn setup(policy: IdlePolicy) -> Setup {
        Setup::new(&policy, 2, Some(2))
    }

    /// The search rounds of one phase from `now`, a round every `round` ns,
    /// and the time the worker gets sleepy.
    fn phase(period: &mut IdlePeriod, setup: &Setup, mut now: u64, round: u64) -> (usize, u64) {
        let mut searches = 0;
        while period.next_step(now, IDLE, setup, |_| true) == Step::Search {
            searches += 1;
            now += round;
        }
        (searches, now)
    }

    /// A worker whose sleep costs 30 µs (a wake of 15 µs, weighed twice).
    fn measured() -> Learner {
        let mut learner = Learner::default();
        learner.wake(15 * US, 0);
        learner
    }

    #[test]
    fn rounds_then_sleepy_then_sleep_and_a_capped_phase_skips_its_search() {
        let setup = setup(IdlePolicy::rounds(3));
        let mut period = IdlePeriod::new(Learner::default());
        assert_eq!(phase(&mut period, &setup, 0, US), (3, 3 * US));
        assert_eq!(
            period.next_step(3 * US, IDLE, &setup, |_| true),
            Step::Sleep
        );
        period.search_again();
        assert_eq!(
            period.next_step(4 * US, IDLE, &setup, |_| false),
            Step::Sleepy
        );
    }

    #[test]
    fn an_empty_wake_searches_again_unless_the_policy_says_sleep() {
        let budget = IdlePolicy::fixed_budget(std::time::Duration::from_micros(10));
        let sleeps = setup(budget.sleep_after_empty_wake(true));
        let mut period = IdlePeriod::new(Learner::default());
        period.sleeping(2 * US);
        period.woken(50 * US, None, 0, &sleeps);
        assert!(period.woke());
        assert_eq!(
            period.next_step(51 * US, IDLE, &sleeps, |_| unreachable!()),
            Step::Sleepy
        );
        for (setup, searches) in [(setup(IdlePolicy::rounds(1)), 1), (setup(budget), 10)] {
            period.woken(60 * US, None, 0, &setup);
            assert_eq!(phase(&mut period, &setup, 61 * US, US).0, searches);
        }
    }

    #[test]
    fn an_oversized_pool_idles_as_rayon_with_the_default_only() {
        let oversized = Setup::new(&IdlePolicy::default(), 8, Some(2));
        assert!(oversized.oversized && !oversized.empty_wake_sleeps);
        let mut period = IdlePeriod::new(Learner::default());
        assert_eq!(
            phase(&mut period, &oversized, 0, US).0,
            RAYON_ROUNDS as usize
        );
        assert!(!Setup::new(&IdlePolicy::tokio(), 8, Some(2)).oversized);
        assert!(!Setup::new(&IdlePolicy::default(), 8, None).oversized);
    }

    #[test]
    fn the_learned_budget_runs_from_the_gaps_start() {
        let setup = setup(IdlePolicy::default());
        let mut learner = measured();
        learner.gap(IDLE, 20 * US); // teaches 0.71·C, 21.2 µs
        let mut period = IdlePeriod::new(learner);
        // Rounds at 0, 5, 10, 15 and 20 µs.
        let (searches, now) = phase(&mut period, &setup, 0, 5 * US);
        assert_eq!(searches, 5);
        // An attempt that did not sleep spends what is left: nothing.
        period.search_again();
        assert_eq!(phase(&mut period, &setup, now + US, 5 * US).0, 0);
    }

    #[test]
    fn a_gap_ends_at_the_wake_that_brought_work_or_when_work_is_found() {
        for policy in [IdlePolicy::default(), IdlePolicy::rayon()] {
            let mut period = IdlePeriod::new(measured());
            period.next_step(100 * US, WaitKind::Join, &setup(policy), |_| true);
            period.found(110 * US, &setup(policy));
            let mut expected = measured();
            if policy == IdlePolicy::default() {
                expected.gap(WaitKind::Join, 10 * US); // fixed policies learn nothing
            }
            assert_eq!(period.learner, expected);
        }
        let setup = setup(IdlePolicy::default());
        // A sleep, an empty wake, another sleep, a wake with work: the gap
        // runs from the empty wake to the waker's stamp, and both sleeps'
        // costs are learned.
        let mut period = IdlePeriod::new(measured());
        for (start, stamp, now) in [(US, 10, 40), (42 * US, 900, 930)] {
            period.next_step(start - US, IDLE, &setup, |_| true);
            period.next_step(start - US, IDLE, &setup, |_| true);
            period.sleeping(start);
            period.woken(now * US, Some(stamp * US), 2 * US, &setup);
        }
        period.found(935 * US, &setup);
        let mut expected = measured();
        expected.wake(30 * US, 2 * US);
        expected.wake(30 * US, 2 * US);
        expected.gap(IDLE, 859 * US);
        assert_eq!(period.learner, expected);
    }

    #[test]
    fn a_sleep_ended_by_its_deadline_or_a_park_return_is_a_long_gap() {
        // The timer bug: a worker whose work comes at its deadline, every
        // tick, learns ticks-long gaps and stops searching.
        let setup = setup(IdlePolicy::default());
        let mut learner = measured();
        for _ in 0..40 {
            learner.gap(IDLE, 10 * US); // a budget to lose
        }
        let mut last_search = None;
        for tick in 0..40 {
            let mut period = IdlePeriod::new(learner);
            let now = tick * 1_000 * US;
            let (searches, at) = phase(&mut period, &setup, now, US);
            if searches > 0 {
                last_search = Some(tick);
            }
            period.next_step(at, IDLE, &setup, |_| true);
            period.sleeping(at);
            if tick % 2 == 0 {
                period.timed_out();
            } else {
                period.park_returned(now + 1_000 * US);
            }
            period.found(now + 1_000 * US, &setup);
            learner = period.learner;
        }
        assert_eq!(learner.budget_ns(IDLE), 0);
        assert!(last_search.is_some_and(|tick| tick < 30), "{last_search:?}");
    }
}

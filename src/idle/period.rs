//! [`IdlePeriod`]: one idle period of one worker, as a state machine that
//! both protocols drive ([docs/idle-policy.md](crate::docs::idle_policy),
//! "Steps").
//!
//! An idle period is a run of *phases*. Each phase searches (rounds that
//! yield), then gets sleepy, then tries to sleep; a wake, or an attempt
//! that ends without a sleep, starts a new phase. The protocols decide what
//! "sleepy" and "sleep" mean; this type decides when each comes, and
//! teaches the worker's [`Learner`] the period's gap.
//!
//! Pure: no clock and no atomics. Every event comes with the time the
//! protocol read, in nanoseconds on one monotonic clock, so a simulator can
//! drive it on a virtual one.

use super::learner::Learner;
use super::policy::{IdlePolicy, Search, RAYON_ROUNDS};
use crate::latch::WaitKind;

/// What an empty round does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A search round: yield the CPU, and come back.
    Search,
    /// The search is over: announce sleepiness (the JEC protocol's sleepy
    /// round, the notifier's `prepare_wait`).
    Sleepy,
    /// Try to sleep.
    Sleep,
}

/// What a pool's idle periods follow: its policy, and whether the pool
/// idles as rayon does because it has more workers than CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    search: Search,
    empty_wake_sleeps: bool,
    /// The default policy in a pool with more workers than CPUs: rayon's
    /// rounds, no cap, no sleep after an empty wake.
    pub oversized: bool,
}

impl Setup {
    /// The setup of a pool of `workers` under `policy`, on a machine that
    /// lets it run `cpus` threads at once (`None`: unknown).
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

    /// Whether the worker's rule learns: the default, in a pool that fits
    /// its CPUs.
    pub fn learns(&self) -> bool {
        self.search == Search::Learned
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// A phase starts at the next round.
    Start,
    Search,
    Sleepy,
    Sleep,
}

/// When a phase's search ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    /// After this many rounds.
    Rounds(u32),
    /// At this time.
    Until(u64),
}

/// One idle period of one worker.
#[derive(Clone, Copy, Debug)]
pub struct IdlePeriod {
    /// Set at the first empty round.
    kind: WaitKind,
    phase: Phase,
    /// Rounds searched in this phase.
    rounds: u32,
    limit: Limit,
    /// When the gap this period learns from began: its first empty round,
    /// or the first after a wake or after its caller's park returned.
    since: Option<u64>,
    /// A gap that ended when the caller's park returned on its own, taught
    /// at the next event.
    returned: Option<u64>,
    sleep_started: u64,
    /// When the work that ended the last sleep came (the waker's stamp), if
    /// a wake ended it and no round has run since.
    woke_at: Option<u64>,
    /// The last sleep ended at its deadline, and no round has run since.
    timed_out: bool,
    /// The last gap taught to the rule, until taken (for a trace).
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
            limit: Limit::Rounds(0),
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
        self.phase == Phase::Search
    }

    /// Whether a wake ended the last sleep and no round has run since: the
    /// next round means that the wake found nothing.
    pub fn woke(&self) -> bool {
        self.woke_at.is_some()
    }

    /// Whether the next round searches, if that is known before the cap is
    /// asked: yes in a phase's search rounds, no once the worker is sleepy
    /// or after a wake that found nothing (where the policy says so); `None`
    /// at the start of any other phase, where the cap decides.
    pub fn will_search(&self, setup: &Setup) -> Option<bool> {
        match self.phase {
            Phase::Search => Some(true),
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
            // A round after a wake: the wake found nothing, and the gap it
            // ended is not this worker's to learn. Another begins.
            let empty_wake = self.woke_at.take().is_some();
            self.timed_out = false;
            if empty_wake {
                self.since = None;
            }
            if self.since.is_none() {
                self.kind = kind;
                self.since = Some(now);
            }
            self.start_phase(now, empty_wake, setup, may_search);
        }
        if self.phase == Phase::Search {
            let within = match self.limit {
                Limit::Rounds(rounds) => self.rounds < rounds,
                Limit::Until(end) => now < end,
            };
            if within {
                self.rounds += 1;
                return Step::Search;
            }
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
        now: u64,
        empty_wake: bool,
        setup: &Setup,
        may_search: impl FnOnce(WaitKind) -> bool,
    ) {
        self.rounds = 0;
        self.limit = match setup.search {
            Search::Rounds(rounds) => Limit::Rounds(rounds),
            Search::Budget(ns) => Limit::Until(now.saturating_add(u64::from(ns))),
            // Counted from the gap's start: a phase after an attempt that
            // did not sleep spends what is left.
            Search::Learned => {
                let since = self.since.unwrap_or(now);
                Limit::Until(since.saturating_add(self.learner.budget_ns(self.kind)))
            }
        };
        let skip = empty_wake && setup.empty_wake_sleeps;
        self.phase = if !skip && may_search(self.kind) {
            Phase::Search
        } else {
            Phase::Sleepy
        };
    }

    /// A sleep begins at `now` (after the final check, just before parking).
    pub fn sleeping(&mut self, now: u64) {
        self.sleep_started = now;
    }

    /// A wake ended the sleep; the sleeper runs at `now`. `stamp` is when
    /// its waker made the wake, if it said, and `sleep_cpu` the CPU the
    /// sleeper spent on the sleep: together the sleep's cost, which the
    /// rule learns. A new phase starts at the next round, which, if it
    /// comes, means the wake found nothing.
    pub fn woken(&mut self, now: u64, stamp: Option<u64>, sleep_cpu: u64, setup: &Setup) {
        // A stamp from before this sleep is an earlier wake's.
        let stamp = stamp.filter(|&stamp| stamp >= self.sleep_started && stamp <= now);
        if let (Some(stamp), true) = (stamp, setup.learns()) {
            self.learner.wake(now - stamp, sleep_cpu);
        }
        self.woke_at = Some(stamp.unwrap_or_else(|| self.came_before(now)));
        self.phase = Phase::Start;
    }

    /// The sleep's deadline ended it: a new phase starts at the next round,
    /// and the gap goes on, unless work is found then.
    pub fn timed_out(&mut self) {
        self.timed_out = true;
        self.phase = Phase::Start;
    }

    /// The caller's park returned on its own at `now` (its deadline, or an
    /// event of its own): the worker has work, so the gap ends here, and
    /// the next round begins another.
    pub fn park_returned(&mut self, now: u64) {
        if let Some(since) = self.since.take() {
            self.returned = Some(self.came_before(now).saturating_sub(since));
        }
        self.phase = Phase::Start;
    }

    /// When the work came that a sleep without a waker's stamp ran at
    /// `now` for (a deadline, a poller's event): a wake's latency earlier,
    /// as far as the worker has measured one.
    fn came_before(&self, now: u64) -> u64 {
        now.saturating_sub(self.learner.wake_ns().unwrap_or(0))
    }

    /// The attempt to sleep ended without a sleep (the latch, the final
    /// check, or a waker that came first): a new phase at the next round.
    pub fn search_again(&mut self) {
        self.phase = Phase::Start;
    }

    /// Get sleepy again at the next round, without a new search: work was
    /// posted while the worker registered (`JecSleep`), or it withdrew its
    /// announcement at a round past its deadline (`NotifierSleep`).
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

    /// The last gap the period ended, with its kind of wait, once (whether
    /// or not the rule learned it): for a trace of a run's gaps.
    #[cfg(feature = "policy-tools")]
    pub fn take_lesson(&mut self) -> Option<(WaitKind, u64)> {
        self.lesson.take()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const US: u64 = 1_000;
    const JOIN: WaitKind = WaitKind::Join;
    const IDLE: WaitKind = WaitKind::Idle;

    fn setup(policy: IdlePolicy) -> Setup {
        Setup::new(&policy, 2, Some(2))
    }

    /// The steps of one phase from `now`, a round every `round` ns, until
    /// the worker gets sleepy; and the time then.
    fn phase(period: &mut IdlePeriod, setup: &Setup, mut now: u64, round: u64) -> (Vec<Step>, u64) {
        let mut steps = Vec::new();
        loop {
            let step = period.next_step(now, IDLE, setup, |_| true);
            steps.push(step);
            if step != Step::Search {
                return (steps, now);
            }
            now += round;
        }
    }

    fn searches(steps: &[Step]) -> usize {
        steps.iter().filter(|&&s| s == Step::Search).count()
    }

    #[test]
    fn rounds_search_that_many_then_sleepy_then_sleep() {
        let setup = setup(IdlePolicy::rounds(3));
        let mut period = IdlePeriod::new(Learner::default());
        let (steps, now) = phase(&mut period, &setup, 0, US);
        assert_eq!(
            steps,
            [Step::Search, Step::Search, Step::Search, Step::Sleepy]
        );
        assert_eq!(period.next_step(now, IDLE, &setup, |_| true), Step::Sleep);
    }

    #[test]
    fn a_capped_or_empty_woken_phase_skips_its_search() {
        let budget = IdlePolicy::fixed_budget(std::time::Duration::from_micros(10));
        let setup = setup(budget.sleep_after_empty_wake(true));
        let mut period = IdlePeriod::new(Learner::default());
        assert_eq!(period.next_step(0, IDLE, &setup, |_| false), Step::Sleepy);
        period.sleeping(2 * US);
        period.woken(50 * US, None, 0, &setup);
        assert!(period.woke());
        // The wake found nothing: sleep again at once, without asking the cap.
        assert_eq!(
            period.next_step(51 * US, IDLE, &setup, |_| unreachable!()),
            Step::Sleepy
        );
        // Every other policy searches after every wake: rayon's rounds, and
        // the budget in full.
        let rounds = self::setup(IdlePolicy::rounds(1));
        period.woken(60 * US, None, 0, &rounds);
        let (steps, _) = phase(&mut period, &rounds, 61 * US, US);
        assert_eq!(searches(&steps), 1);
        let budget = self::setup(budget);
        period.woken(80 * US, None, 0, &budget);
        let (steps, _) = phase(&mut period, &budget, 81 * US, US);
        assert_eq!(searches(&steps), 10);
    }

    #[test]
    fn an_oversized_pool_idles_as_rayon_with_the_default_only() {
        let oversized = Setup::new(&IdlePolicy::new(), 8, Some(2));
        assert!(oversized.oversized);
        let (steps, _) = phase(&mut IdlePeriod::new(Learner::default()), &oversized, 0, US);
        assert_eq!(searches(&steps), RAYON_ROUNDS as usize);
        assert!(!oversized.empty_wake_sleeps);
        let tokio = Setup::new(&IdlePolicy::tokio(), 8, Some(2));
        assert!(!tokio.oversized);
        assert!(!Setup::new(&IdlePolicy::new(), 8, None).oversized);
    }

    /// A worker whose sleep costs 30 µs (a wake of 15 µs, twice), for the
    /// learned policy.
    fn measured() -> Learner {
        let mut learner = Learner::default();
        learner.wake(15 * US, 0);
        learner
    }

    #[test]
    fn the_learned_budget_runs_from_the_gaps_start() {
        let setup = setup(IdlePolicy::new());
        let mut learner = measured();
        learner.gap(IDLE, 20 * US); // teaches 0.71·C, 21.2 µs
        let mut period = IdlePeriod::new(learner);
        let (steps, now) = phase(&mut period, &setup, 0, 5 * US);
        assert_eq!(searches(&steps), 5); // at 0, 5, 10, 15 and 20 µs
                                         // An attempt that did not sleep: what is left of the budget, nothing.
        period.search_again();
        let (steps, _) = phase(&mut period, &setup, now + US, 5 * US);
        assert_eq!(steps, [Step::Sleepy]);
    }

    #[test]
    fn a_gap_ends_at_the_wake_that_brought_work_or_when_work_is_found() {
        let setup = setup(IdlePolicy::new());
        // Work found during the search: the gap is the time to find it.
        let mut period = IdlePeriod::new(measured());
        period.next_step(100 * US, JOIN, &setup, |_| true);
        period.found(110 * US, &setup);
        let mut expected = measured();
        expected.gap(JOIN, 10 * US);
        assert_eq!(period.learner, expected);
        // A sleep, an empty wake, another sleep, then a wake with work: the
        // gap runs from the empty wake to the waker's stamp, and the sleeps'
        // costs are learned.
        let mut period = IdlePeriod::new(measured());
        period.next_step(0, IDLE, &setup, |_| true);
        period.next_step(0, IDLE, &setup, |_| true);
        period.sleeping(US);
        period.woken(40 * US, Some(10 * US), 2 * US, &setup);
        period.next_step(41 * US, IDLE, &setup, |_| true);
        period.next_step(41 * US, IDLE, &setup, |_| true);
        period.sleeping(42 * US);
        period.woken(930 * US, Some(900 * US), 2 * US, &setup);
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
        let setup = setup(IdlePolicy::new());
        let mut learner = measured();
        for _ in 0..40 {
            learner.gap(IDLE, 10 * US); // a budget to lose
        }
        let mut now = 0;
        let mut searched_at = vec![];
        for tick in 0..40 {
            let mut period = IdlePeriod::new(learner);
            let (steps, at) = phase(&mut period, &setup, now, US);
            searched_at.extend(std::iter::repeat_n(tick, searches(&steps)));
            period.next_step(at, IDLE, &setup, |_| true);
            period.sleeping(at);
            now += 1_000 * US;
            if tick % 2 == 0 {
                period.timed_out();
                period.found(now, &setup);
            } else {
                period.park_returned(now);
                period.found(now, &setup);
            }
            learner = period.learner;
        }
        assert_eq!(learner.budget_ns(IDLE), 0);
        assert!(searched_at.iter().all(|&tick| tick < 40), "{searched_at:?}");
        let last = *searched_at.last().unwrap();
        assert!(last < 30, "searched until tick {last}");
    }

    #[test]
    fn fixed_policies_learn_nothing() {
        let setup = setup(IdlePolicy::rayon());
        let mut period = IdlePeriod::new(measured());
        period.next_step(0, IDLE, &setup, |_| true);
        period.sleeping(US);
        period.woken(40 * US, Some(10 * US), 0, &setup);
        period.found(50 * US, &setup);
        assert_eq!(period.learner, measured());
    }
}

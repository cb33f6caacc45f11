//! [`IdlePolicy`]: how long an idle worker searches before it sleeps, and
//! how many idle workers may search at once.

use std::time::Duration;

/// rayon-core's search: 32 rounds of `yield_now` before a worker gets
/// sleepy (its `ROUNDS_UNTIL_SLEEPY`); two in the crate's loom models, which
/// a round between two others is enough for.
pub(crate) const RAYON_ROUNDS: u32 = if cfg!(all(test, loom)) { 2 } else { 32 };

/// How an idle worker searches before it sleeps, and how many idle workers
/// may search at once.
///
/// Each call to `no_work_found` is one round: the worker has just searched
/// every queue and found nothing. While its search lasts, each round yields
/// the CPU (`yield_now`); then the worker announces that it is sleepy,
/// searches once more, and sleeps.
///
/// # The default: a budget each worker learns, from costs it measures
///
/// Searching costs CPU for as long as it lasts; sleeping costs a wake: the
/// CPU of the sleep and the latency of the wake, together `C`. Each worker
/// of [`IdlePolicy::new`] measures `C` on the machine it runs on (from a
/// waker's call to the woken worker running, plus the sleeper's CPU), and
/// keeps what each budget between 0 and `C` would have cost over its recent
/// idle periods. Each search then spends the budget that cost least. A
/// worker whose work comes at long gaps (a timer's ticks, bursts far apart)
/// sleeps at once; one whose work comes within `C` searches just long
/// enough to catch it. Its top-level idle loop and its waits on a job's
/// latch learn apart (see [`CoreLatch`](crate::CoreLatch)). A wake starts
/// a new search of the whole budget.
///
/// Every idle worker may search: the budget already bounds what each one
/// wastes. [`max_searching_half`](IdlePolicy::max_searching_half) caps the
/// searchers at half the pool, as tokio and Go do, which saves CPU in a
/// large pool and costs latency in a small one.
///
/// A pool with more workers than the CPUs it may run on (its affinity mask
/// and its cgroup's CPU quota, as
/// [`available_parallelism`](std::thread::available_parallelism) reads
/// them) idles as rayon does instead: 32 yield rounds, no cap, and a search
/// after every wake. There a yield hands the CPU to a runnable peer, and a
/// sleeper waits for a CPU after its wake.
///
/// No wake depends on the policy: it decides only how many rounds pass
/// before a worker gets sleepy, and the protocols are model-checked with the
/// smallest and the largest budgets. [docs/idle-policy.md](crate::docs::idle_policy)
/// states the rule, its cost model and its bound.
///
/// # Fixed policies
///
/// [`IdlePolicy::rayon`] is rayon-core's: 32 yield rounds, no cap.
/// [`IdlePolicy::tokio`] is tokio's: no search rounds, half the pool
/// searching at most. [`IdlePolicy::rounds`] and
/// [`IdlePolicy::fixed_budget`] fix the search in rounds or in time, for
/// baselines.
///
/// # Examples
///
/// ```
/// use eventcount::IdlePolicy;
///
/// assert_eq!(IdlePolicy::new(), IdlePolicy::default());
/// assert_eq!(IdlePolicy::new().max_searching_half().searcher_cap(8), Some(4));
/// assert_eq!(IdlePolicy::rayon(), IdlePolicy::rounds(32));
/// assert_eq!(IdlePolicy::rayon().searcher_cap(8), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct IdlePolicy {
    pub(crate) search: Search,
    pub(crate) searchers: Searchers,
    pub(crate) empty_wake_sleeps: bool,
}

/// How long one search lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Search {
    /// The budget each worker learns (`learner.rs`).
    Learned,
    /// This many yield rounds.
    Rounds(u32),
    /// This many nanoseconds.
    Budget(u32),
}

/// How many idle workers may search at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Searchers {
    /// Every idle worker searches (rayon).
    All,
    /// At most this many top-level searchers (at least 1).
    AtMost(usize),
    /// At most half the pool, rounded up (tokio's and Go's rule).
    Half,
    /// rayon PR #1314's bound: no more idle workers awake than busy ones
    /// (at least one), a joining one counted too.
    Busy,
}

impl IdlePolicy {
    /// The default: a budget each worker learns, and rayon's rounds in a
    /// pool with more workers than CPUs (see "The default" above).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::IdlePolicy::new().searcher_cap(3), None);
    /// ```
    pub const fn new() -> Self {
        IdlePolicy {
            search: Search::Learned,
            searchers: Searchers::All,
            empty_wake_sleeps: false,
        }
    }

    /// rayon-core's policy: 32 yield rounds, no cap: [`IdlePolicy::rounds(32)`](IdlePolicy::rounds).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::IdlePolicy::rayon(), eventcount::IdlePolicy::rounds(32));
    /// ```
    pub const fn rayon() -> Self {
        IdlePolicy::rounds(RAYON_ROUNDS)
    }

    /// tokio's policy: no search rounds (a worker gets sleepy at its first
    /// empty round, makes the protocol's final check and sleeps), and at
    /// most half the pool searching. A post wakes a worker to search.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::IdlePolicy;
    ///
    /// assert_eq!(IdlePolicy::tokio(), IdlePolicy::rounds(0).max_searching_half());
    /// ```
    pub const fn tokio() -> Self {
        IdlePolicy::rounds(0).max_searching_half()
    }

    /// `rounds` yield rounds before every sleep, whatever the machine, and
    /// every idle worker searching (rayon's shape, with another count).
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{CoreLatch, IdlePolicy, NotifierSleep, Round, SleepProtocol};
    ///
    /// let sleep = NotifierSleep::with_policy(1, IdlePolicy::rounds(1));
    /// let latch = CoreLatch::idle_loop();
    /// let mut idle = sleep.start_looking(0);
    /// assert_eq!(sleep.no_work_found(&mut idle, &latch, || false), Round::Searched);
    /// assert_eq!(sleep.no_work_found(&mut idle, &latch, || false), Round::Announced);
    /// sleep.work_found(idle);
    /// ```
    pub const fn rounds(rounds: u32) -> Self {
        IdlePolicy {
            search: Search::Rounds(rounds),
            searchers: Searchers::All,
            empty_wake_sleeps: false,
        }
    }

    /// The default with a fixed budget: every search lasts `budget`, on
    /// every machine, and nothing is learned. For baselines.
    ///
    /// # Panics
    ///
    /// If `budget` is more than one second: a search that long is a spin
    /// loop, not an idle policy. The message names the budget.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::IdlePolicy;
    /// use std::time::Duration;
    ///
    /// let fixed = IdlePolicy::fixed_budget(Duration::from_micros(25));
    /// assert_eq!(fixed.searcher_cap(8), None);
    /// ```
    #[track_caller]
    pub fn fixed_budget(budget: Duration) -> Self {
        let ns = u32::try_from(budget.as_nanos())
            .ok()
            .filter(|&ns| ns <= 1_000_000_000);
        let Some(ns) = ns else {
            panic!("IdlePolicy::fixed_budget({budget:?}): a budget may be one second at most");
        };
        IdlePolicy {
            search: Search::Budget(ns),
            ..IdlePolicy::new()
        }
    }

    /// At most `searchers` workers search from their top-level idle loop
    /// at once. A worker that starts looking while they do goes to sleep
    /// after the protocol's final check, and the last searcher to find work
    /// wakes one sleeper to search in its place. A worker waiting on a
    /// job's latch is never counted.
    ///
    /// # Panics
    ///
    /// If `searchers` is 0: at least one idle worker must search.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = eventcount::IdlePolicy::rayon().max_searching(2);
    /// assert_eq!(p.searcher_cap(8), Some(2));
    /// assert_eq!(p.searcher_cap(1), Some(1));
    /// ```
    #[track_caller]
    pub const fn max_searching(mut self, searchers: usize) -> Self {
        assert!(
            searchers > 0,
            "IdlePolicy::max_searching(0): at least one idle worker must be allowed to search"
        );
        self.searchers = Searchers::AtMost(searchers);
        self
    }

    /// At most half the pool (rounded up) searching at once: tokio's
    /// cap.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = eventcount::IdlePolicy::rayon().max_searching_half();
    /// assert_eq!(p.searcher_cap(7), Some(4));
    /// ```
    pub const fn max_searching_half(mut self) -> Self {
        self.searchers = Searchers::Half;
        self
    }

    /// No cap: every idle worker searches (rayon's way).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::IdlePolicy::new().max_searching_all().searcher_cap(8), None);
    /// ```
    pub const fn max_searching_all(mut self) -> Self {
        self.searchers = Searchers::All;
        self
    }

    /// rayon PR #1314's bound: a worker that starts looking searches only
    /// while the idle workers awake do not outnumber the busy ones (one may
    /// always search), every idle worker counted, a joining one too.
    ///
    /// # Examples
    ///
    /// ```
    /// let pr1314 = eventcount::IdlePolicy::rayon().max_searching_busy();
    /// assert_eq!(pr1314.searcher_cap(8), None); // it depends on who is busy
    /// ```
    pub const fn max_searching_busy(mut self) -> Self {
        self.searchers = Searchers::Busy;
        self
    }

    /// With `true`, a wake whose next search finds nothing sends the worker
    /// back to sleep without a search (rayon PR #1314's rule); with `false`,
    /// the default of every policy, each wake is followed by a search.
    ///
    /// # Examples
    ///
    /// ```
    /// let pr1314 = eventcount::IdlePolicy::rayon().sleep_after_empty_wake(true);
    /// assert_ne!(pr1314, eventcount::IdlePolicy::rayon());
    /// ```
    pub const fn sleep_after_empty_wake(mut self, on: bool) -> Self {
        self.empty_wake_sleeps = on;
        self
    }

    /// The most workers that may search from their top-level idle loop at
    /// once in a pool of `workers`, or `None` if that is not a fixed number
    /// (no cap, or [`max_searching_busy`](IdlePolicy::max_searching_busy)).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::IdlePolicy::tokio().searcher_cap(4), Some(2));
    /// ```
    #[must_use]
    pub const fn searcher_cap(&self, workers: usize) -> Option<usize> {
        match self.searchers {
            Searchers::All | Searchers::Busy => None,
            Searchers::AtMost(n) => Some(if n < workers { n } else { workers }),
            Searchers::Half => Some(workers.div_ceil(2)),
        }
    }
}

impl Default for IdlePolicy {
    fn default() -> Self {
        IdlePolicy::new()
    }
}

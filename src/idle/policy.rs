//! [`IdlePolicy`]: how idle workers search before they sleep.

use std::time::Duration;

/// rayon-core's `ROUNDS_UNTIL_SLEEPY`; two in the loom models, where a
/// round between two others is enough.
pub(crate) const RAYON_ROUNDS: u32 = if cfg!(all(test, loom)) { 2 } else { 32 };

/// How an idle worker searches before it sleeps, and how many idle workers
/// may search at once.
///
/// Each call to `no_work_found` is one round: the worker found no work.
/// While its search lasts, each round yields the CPU; then the worker
/// announces that it is sleepy, searches once more, and sleeps.
///
/// # The default
///
/// A sleep costs its CPU and the wake's latency, together `C`. Each worker
/// of [`IdlePolicy::new`] measures `C` where it runs, and searches for the
/// budget between 0 and `C` that would have cost least over its recent idle
/// gaps. Every idle worker may search. A pool with more workers than the
/// CPUs it may run on idles as rayon does instead.
///
/// No wake depends on the policy. [docs/idle-policy.md](crate::docs::idle_policy)
/// states the rule, its cost model and its bound.
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
    /// Every idle worker searches.
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
    /// The default (see "The default" above), as a `const fn` for a
    /// `static` or `const` configuration.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::IdlePolicy;
    ///
    /// const POLICY: IdlePolicy = IdlePolicy::new().max_searching(2);
    /// assert_eq!(POLICY, IdlePolicy::default().max_searching(2));
    /// ```
    pub const fn new() -> Self {
        IdlePolicy {
            search: Search::Learned,
            searchers: Searchers::All,
            empty_wake_sleeps: false,
        }
    }

    /// rayon-core's policy: 32 yield rounds, no cap.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{IdlePolicy, JecSleep, SleepProtocol};
    ///
    /// let sleep = JecSleep::try_new(4, IdlePolicy::rayon(), None).unwrap();
    /// assert_eq!(sleep.capacity(), 4);
    /// ```
    pub const fn rayon() -> Self {
        IdlePolicy::rounds(RAYON_ROUNDS)
    }

    /// tokio's policy: no search rounds (sleepy at the first empty round),
    /// and at most half the pool searching.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{CoreLatch, IdlePolicy, NotifierSleep, SleepProtocol};
    ///
    /// let sleep = NotifierSleep::try_new(2, IdlePolicy::tokio(), None).unwrap();
    /// let latch = CoreLatch::idle_loop();
    /// let (mut a, mut b) = (sleep.start_looking(0), sleep.start_looking(1));
    /// assert!(sleep.may_search(&mut a, &latch));
    /// assert!(!sleep.may_search(&mut b, &latch)); // half of 2 already searches
    /// # sleep.work_found(a);
    /// # sleep.work_found(b);
    /// ```
    pub const fn tokio() -> Self {
        IdlePolicy::rounds(0).max_searching_half()
    }

    internal! {
        /// `rounds` yield rounds before every sleep, on any machine, every idle
        /// worker searching.
        pub const fn rounds(rounds: u32) -> Self {
            IdlePolicy {
                search: Search::Rounds(rounds),
                searchers: Searchers::All,
                empty_wake_sleeps: false,
            }
        }
    }

    /// The default with a fixed budget: every search lasts `budget`, on
    /// every machine, and nothing is learned. For baselines.
    ///
    /// # Panics
    ///
    /// If `budget` is more than one second (a spin loop, not an idle policy).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let fixed = eventcount::IdlePolicy::fixed_budget(Duration::from_micros(25));
    /// assert_ne!(fixed, eventcount::IdlePolicy::default());
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

    /// At most `searchers` workers search from their top-level idle loop at
    /// once; others sleep after the final check, and the last searcher to
    /// find work wakes one in its place. Joining workers are not counted.
    ///
    /// # Panics
    ///
    /// If `searchers` is 0: at least one idle worker must search.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{CoreLatch, IdlePolicy, JecSleep, SleepProtocol};
    ///
    /// let policy = IdlePolicy::rayon().max_searching(1);
    /// let sleep = JecSleep::try_new(3, policy, None).unwrap();
    /// let latch = CoreLatch::idle_loop();
    /// let (mut a, mut b) = (sleep.start_looking(0), sleep.start_looking(1));
    /// assert!(sleep.may_search(&mut a, &latch));
    /// assert!(!sleep.may_search(&mut b, &latch)); // one searcher at most
    /// # sleep.work_found(a);
    /// # sleep.work_found(b);
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

    internal! {
        /// At most half the pool (rounded up) searching at once: tokio's and
        /// Go's cap.
        pub const fn max_searching_half(mut self) -> Self {
            self.searchers = Searchers::Half;
            self
        }
    }

    internal! {
        /// rayon PR #1314's cap: no more idle workers awake than busy ones (one
        /// may always search), joining workers counted too.
        pub const fn max_searching_busy(mut self) -> Self {
            self.searchers = Searchers::Busy;
            self
        }
    }

    internal! {
        /// With `true`, a wake that finds nothing sends the worker back to sleep
        /// without a search (rayon PR #1314's rule).
        pub const fn sleep_after_empty_wake(mut self, on: bool) -> Self {
            self.empty_wake_sleeps = on;
            self
        }
    }

    internal! {
        /// The most workers that may search from their top-level idle loop at
        /// once in a pool of `workers`, or `None` if that is not a fixed number.
        #[must_use]
        pub const fn searcher_cap(&self, workers: usize) -> Option<usize> {
            match self.searchers {
                Searchers::All | Searchers::Busy => None,
                Searchers::AtMost(n) => Some(if n < workers { n } else { workers }),
                Searchers::Half => Some(workers.div_ceil(2)),
            }
        }
    }
}

impl Default for IdlePolicy {
    fn default() -> Self {
        IdlePolicy::new()
    }
}

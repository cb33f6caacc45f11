//! [`IdlePolicy`]: how long an idle worker searches before it sleeps, and
//! how many idle workers may search at once.

use std::time::Duration;

use static_assertions::const_assert_eq;

use super::pressure::PressureMode;
use crate::sync;

/// The default policy's largest search budget, in nanoseconds (200 µs).
pub(crate) const DEFAULT_MAX_SEARCH_NS: u32 = 200_000;

// Under loom a stopwatch advances by a fixed step per read: a third of the
// largest default budget, so that budget lasts two search rounds in a model
// (`src/sync/clock.rs`, `src/models/protocols.rs`).
const_assert_eq!(sync::LOOM_STEP, (DEFAULT_MAX_SEARCH_NS as u64).div_ceil(3));

/// The largest search budget a policy may set: one second, in nanoseconds.
const MAX_SEARCH_NS: u32 = 1_000_000_000;

/// How an idle worker spends its search rounds before it announces it is
/// sleepy and, one round later, tries to sleep; and how many idle workers
/// may search at once.
///
/// Each call to `no_work_found` is one round: the worker has just searched
/// every queue and found nothing. While its search lasts, each round passes
/// the time with `yield_now` (or a spin, see below). Then the worker gets
/// sleepy, searches once more, and sleeps.
///
/// # The default: a learned budget in time, and a searcher cap
///
/// [`IdlePolicy::new`] (the default) bounds each search in time, not in
/// rounds: a yield costs 10 to 100 times more on one machine than on
/// another. Each worker learns its budget from how its idle periods end,
/// apart for its top-level idle loop and for its waits on a job's latch
/// (see [`CoreLatch::idle_loop`](crate::CoreLatch::idle_loop)):
///
/// - a *hit*, work found during the search or after a sleep shorter than a
///   sleep and a wake cost (50 µs: the wake latency of a halted vCPU, and
///   several futex round trips on bare metal), raises the budget to cover
///   that idle period with a quarter to spare;
/// - a *miss*, work found only after a longer sleep, lowers it by a
///   quarter. A budget that no short idle period needs fades within a few
///   dozen idle periods; one that short gaps keep hitting stays, even
///   between long gaps;
/// - after a wake whose next search finds nothing, the worker sleeps again
///   at once (the budget is left alone: such a wake says more about the
///   waker than about the search).
///
/// The budget stays within the bounds of
/// [`search_budget`](IdlePolicy::search_budget): 0 and 200 µs by default.
/// A worker's top-level budget starts at the lower bound, so an idle pool
/// sleeps at once until its workers have seen work arrive shortly after
/// they slept; a join's starts at a quarter of the upper bound (50 µs),
/// since the stolen half it waits for usually ends soon.
///
/// The default also caps the searchers at half the pool (see below): where
/// every searcher has a core, more of them only burn cores that the found
/// work does not need. A worker waiting on a job's latch is never counted.
/// None of this applies while the pool is pressured (see
/// "Oversubscription"), and so never to a pool with more workers than
/// CPUs.
///
/// The budget only decides how many rounds pass before a worker gets
/// sleepy. No wake depends on it: the sleep protocols are model-checked
/// with the smallest and the largest budget. [docs/idle-policy.md](crate::docs::idle_policy) has the
/// measurements behind these numbers.
///
/// # Oversubscription
///
/// With more runnable threads than CPUs (more workers than cores, two pools
/// in one process, a pool beside an async runtime, a container whose CPU
/// quota is below its thread count), a yield hands the CPU to a runnable
/// peer, while a sleep costs a futex wake and, in a VM, 25–35 µs before the
/// woken thread runs. There rayon's fixed policy measures best. So the
/// default measures its own search rounds: a round whose yield took more
/// than 5 µs and four times the worker's fastest was *handed off* to
/// another thread. While enough recent rounds were (a score over the
/// pool), each idle phase runs yield rounds, as rayon's does, with no
/// sleep after an empty wake and no searcher cap: 8 at first at the top
/// level and rayon's 32 in a join, and then as many as such phases learn
/// they need (up to 32), by the default's rule counted in rounds, so that
/// long gaps stop costing 32; when yields
/// come back at once again, it returns to its own rules within about 49
/// rounds. A pool with more workers than
/// [`available_parallelism`](std::thread::available_parallelism) is
/// pressured for as long as it lives, whatever it measures: its own
/// sleepers would make its yields come back at once. While a pool is not
/// pressured, each search of the default makes at least one round, so that
/// there is a yield to measure.
/// [`adapt_to_oversubscription`](IdlePolicy::adapt_to_oversubscription)
/// turns this on or off, and
/// [`assume_oversubscribed`](IdlePolicy::assume_oversubscribed) makes every
/// phase pressured, for a pool that knows it shares its CPUs; like the
/// budget, no wake depends on it.
///
/// # rayon's policy, and fixed rounds
///
/// [`IdlePolicy::rayon`] is rayon-core's fixed policy: 32 yield rounds, no
/// spinning and no cap, whatever the machine. [`IdlePolicy::tokio`] is tokio's:
/// no search rounds, and half the pool searching at most. [`spin_rounds`](IdlePolicy::spin_rounds),
/// [`spins_per_round`](IdlePolicy::spins_per_round) and
/// [`yield_rounds`](IdlePolicy::yield_rounds) give any count of rounds
/// instead (starting from rayon's values if the policy was timed).
///
/// # The searcher cap
///
/// What burns the CPU of an idle pool is how many workers search at once,
/// as much as how long each one does. [`max_searching`](IdlePolicy::max_searching)
/// and [`max_searching_half`](IdlePolicy::max_searching_half) cap the
/// workers searching from their top-level idle loop, as Go's scheduler and
/// Tokio do: a worker that starts looking while the cap is full skips its
/// search and goes to sleep after the protocol's usual final check, and the
/// last searcher to find work wakes one sleeper to search in its place. A
/// worker waiting on a job's latch is never counted: it waits for a job in
/// flight, and putting it to sleep would only make that job's thread wake
/// it. [`max_searching_all`](IdlePolicy::max_searching_all) removes the cap.
///
/// # rayon PR #1314's policies
///
/// Two policies proposed for rayon in 2026 are here, on rayon's fixed
/// rounds, so that benchmarks can run them against the default:
/// [`sleep_after_empty_wake`](IdlePolicy::sleep_after_empty_wake) (the
/// PR's default) and [`max_searching_busy`](IdlePolicy::max_searching_busy)
/// (its bounded searchers).
///
/// # Examples
///
/// ```
/// use eventcount::IdlePolicy;
/// use std::time::Duration;
///
/// let learned = IdlePolicy::new();
/// assert_eq!(learned.rounds_until_sleepy(), None); // bounded in time
/// assert_eq!(learned.search_bounds(), Some((Duration::ZERO, Duration::from_micros(200))));
/// assert_eq!(learned.searcher_cap(8), Some(4));
/// assert!(learned.adapts_to_oversubscription());
///
/// assert_eq!(IdlePolicy::rayon().rounds_until_sleepy(), Some(32));
/// assert_eq!(IdlePolicy::rayon().searcher_cap(8), None);
/// let eager_sleeper = IdlePolicy::rayon().yield_rounds(4);
/// assert_eq!(eager_sleeper.rounds_until_sleepy(), Some(4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct IdlePolicy {
    pub(crate) search: SearchLength,
    pub(crate) empty_wake_sleeps: bool,
    pub(crate) searchers: Searchers,
    pub(crate) pressure: PressureMode,
}

/// How long one search lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SearchLength {
    /// A fixed count of rounds: `spin` rounds of `spins_per_round` pause
    /// hints, then `yields` rounds of `yield_now` (rayon's shape).
    Rounds {
        spin: u32,
        spins_per_round: u32,
        yields: u32,
    },
    /// A budget in nanoseconds, learned per worker between the bounds
    /// (fixed when they are equal). Every round yields.
    Timed { min_ns: u32, max_ns: u32 },
}

/// How many idle workers may search at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Searchers {
    /// Every idle worker searches (rayon).
    All,
    /// At most this many top-level searchers (at least 1).
    AtMost(usize),
    /// At most half the pool, rounded up (Go's rule of thumb).
    Half,
    /// rayon PR #1314's bound: at most one idle worker per busy worker (at
    /// least one), every idle worker counted, a joining one included.
    Busy,
}

impl IdlePolicy {
    /// The default policy: a search budget in time, learned per worker
    /// between 0 and 200 µs, and at most half the pool searching (see "The
    /// default" above), except while the pool measures that the machine is
    /// oversubscribed, or has more workers than CPUs (see
    /// "Oversubscription" above).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::IdlePolicy::new(), eventcount::IdlePolicy::default());
    /// ```
    pub const fn new() -> Self {
        IdlePolicy {
            search: SearchLength::Timed {
                min_ns: 0,
                max_ns: DEFAULT_MAX_SEARCH_NS,
            },
            empty_wake_sleeps: true,
            searchers: Searchers::Half,
            pressure: PressureMode::Detect,
        }
    }

    /// rayon-core's policy: 32 yield rounds, no spinning, no cap, whatever
    /// the load.
    ///
    /// # Examples
    ///
    /// ```
    /// let rayon = eventcount::IdlePolicy::rayon();
    /// assert_eq!(rayon.rounds_until_sleepy(), Some(32));
    /// assert_eq!(rayon.search_bounds(), None);
    /// ```
    pub const fn rayon() -> Self {
        IdlePolicy {
            search: SearchLength::Rounds {
                spin: 0,
                spins_per_round: 64,
                yields: 32,
            },
            empty_wake_sleeps: false,
            searchers: Searchers::All,
            pressure: PressureMode::Off,
        }
    }

    /// tokio's policy: no search rounds at all, and at most half the
    /// pool (rounded up) searching from its top-level loop at once.
    ///
    /// A tokio worker that finds nothing in its queues and nothing to
    /// steal parks at once: it does not spin or yield first. What keeps a
    /// parked pool responsive is the searcher bound instead: a post wakes a
    /// worker to search, and at most half the workers search at once. Here
    /// the same shape is a policy of zero rounds (the worker gets sleepy at
    /// its first empty round, then makes the protocol's final check and
    /// sleeps) with the cap of [`max_searching_half`](IdlePolicy::max_searching_half).
    /// There is no empty-wake rule: with no search, it has nothing to skip.
    /// It does not adapt to oversubscription (tokio does not either).
    ///
    /// # Examples
    ///
    /// ```
    /// let tokio = eventcount::IdlePolicy::tokio();
    /// assert_eq!(tokio.rounds_until_sleepy(), Some(0)); // sleepy at the first empty round
    /// assert_eq!(tokio.search_bounds(), None);
    /// assert_eq!(tokio.searcher_cap(8), Some(4));
    /// assert_eq!(tokio.searcher_cap(7), Some(4));
    /// assert!(!tokio.sleeps_after_empty_wake());
    /// assert!(!tokio.adapts_to_oversubscription());
    /// ```
    pub const fn tokio() -> Self {
        IdlePolicy {
            search: SearchLength::Rounds {
                spin: 0,
                spins_per_round: 64,
                yields: 0,
            },
            empty_wake_sleeps: false,
            searchers: Searchers::Half,
            pressure: PressureMode::Off,
        }
    }

    /// The rounds of a policy with a fixed count of them, or rayon's if it
    /// had none.
    const fn rounds(self) -> (u32, u32, u32) {
        match self.search {
            SearchLength::Rounds {
                spin,
                spins_per_round,
                yields,
            } => (spin, spins_per_round, yields),
            SearchLength::Timed { .. } => (0, 64, 32),
        }
    }

    /// A fixed count of rounds that spin before the yielding rounds start
    /// (the other counts are kept, or rayon's if the policy was timed).
    ///
    /// # Examples
    ///
    /// ```
    /// let p = eventcount::IdlePolicy::rayon().spin_rounds(8).yield_rounds(0);
    /// assert_eq!(p.rounds_until_sleepy(), Some(8));
    /// ```
    pub const fn spin_rounds(mut self, rounds: u32) -> Self {
        let (_, spins_per_round, yields) = self.rounds();
        self.search = SearchLength::Rounds {
            spin: rounds,
            spins_per_round,
            yields,
        };
        self
    }

    /// CPU pause hints per spinning round (rayon's policy: 64). Makes the
    /// policy one of fixed rounds, like [`spin_rounds`](IdlePolicy::spin_rounds).
    ///
    /// # Examples
    ///
    /// ```
    /// let p = eventcount::IdlePolicy::rayon().spin_rounds(2).spins_per_round(16);
    /// assert_eq!(p.rounds_until_sleepy(), Some(34));
    /// ```
    pub const fn spins_per_round(mut self, spins: u32) -> Self {
        let (spin, _, yields) = self.rounds();
        self.search = SearchLength::Rounds {
            spin,
            spins_per_round: spins,
            yields,
        };
        self
    }

    /// A fixed count of rounds that yield the CPU after the spinning
    /// rounds (the other counts are kept, or rayon's if the policy was
    /// timed).
    ///
    /// # Examples
    ///
    /// ```
    /// let p = eventcount::IdlePolicy::rayon().yield_rounds(0);
    /// assert_eq!(p.rounds_until_sleepy(), Some(0)); // sleepy at the first empty round
    /// ```
    pub const fn yield_rounds(mut self, rounds: u32) -> Self {
        let (spin, spins_per_round, _) = self.rounds();
        self.search = SearchLength::Rounds {
            spin,
            spins_per_round,
            yields: rounds,
        };
        self
    }

    /// A search budget in time, learned per worker between `min` and `max`
    /// (see "The default" above); with `min == max`, a fixed budget. The
    /// searcher cap is kept as it was, and the empty-wake rule turned on
    /// (turn it off after this call with
    /// [`sleep_after_empty_wake(false)`](IdlePolicy::sleep_after_empty_wake)).
    ///
    /// # Panics
    ///
    /// If `min > max`, or if `max` is more than one second (a search that
    /// long is a spin loop, not an idle policy). The message names both.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::IdlePolicy;
    /// use std::time::Duration;
    ///
    /// let us = Duration::from_micros;
    /// let fixed = IdlePolicy::rayon().search_budget(us(20), us(20));
    /// assert_eq!(fixed.search_bounds(), Some((us(20), us(20))));
    /// assert_eq!(fixed.searcher_cap(8), None); // rayon's: no cap
    /// ```
    #[track_caller]
    pub const fn search_budget(mut self, min: Duration, max: Duration) -> Self {
        let (min_ns, max_ns) = (min.as_nanos(), max.as_nanos());
        assert!(
            min_ns <= max_ns,
            "IdlePolicy::search_budget: the lower bound is above the upper bound"
        );
        assert!(
            max_ns <= MAX_SEARCH_NS as u128,
            "IdlePolicy::search_budget: the upper bound is above one second"
        );
        self.search = SearchLength::Timed {
            min_ns: min_ns as u32,
            max_ns: max_ns as u32,
        };
        self.empty_wake_sleeps = true;
        self
    }

    /// With `true`: after a wake whose next search finds nothing, skip the
    /// search and sleep again at once; the next search that finds work
    /// restores the usual one. With `false`: search as usual after every
    /// wake (rayon's way). rayon PR #1314's default is
    /// `IdlePolicy::rayon().sleep_after_empty_wake(true)`. The default
    /// policy, and every policy [`search_budget`](IdlePolicy::search_budget)
    /// makes, start with it on.
    ///
    /// # Examples
    ///
    /// ```
    /// let pr1314 = eventcount::IdlePolicy::rayon().sleep_after_empty_wake(true);
    /// assert!(pr1314.sleeps_after_empty_wake());
    /// let always_search = eventcount::IdlePolicy::new().sleep_after_empty_wake(false);
    /// assert!(!always_search.sleeps_after_empty_wake());
    /// ```
    pub const fn sleep_after_empty_wake(mut self, on: bool) -> Self {
        self.empty_wake_sleeps = on;
        self
    }

    /// Whether a wake whose next search finds nothing sends the worker
    /// back to sleep without a search (see
    /// [`sleep_after_empty_wake`](IdlePolicy::sleep_after_empty_wake)).
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::IdlePolicy;
    /// assert!(IdlePolicy::new().sleeps_after_empty_wake());
    /// assert!(!IdlePolicy::rayon().sleeps_after_empty_wake());
    /// ```
    #[must_use]
    pub const fn sleeps_after_empty_wake(&self) -> bool {
        self.empty_wake_sleeps
    }

    /// With `true`: idle the way rayon's fixed policy does while the pool
    /// measures that the machine is oversubscribed (always, in a pool with
    /// more workers than CPUs), and by this policy's
    /// own rules otherwise (see "Oversubscription" above). With `false`:
    /// this policy's rules whatever the load. [`IdlePolicy::new`] starts
    /// with it on; [`IdlePolicy::rayon`] and [`IdlePolicy::tokio`] with it
    /// off. The other builders keep it as it was.
    ///
    /// A benchmark's fixed baselines (a fixed budget, a count of rounds)
    /// turn it off, so that they measure the budget they name.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::IdlePolicy;
    /// use std::time::Duration;
    ///
    /// let us = Duration::from_micros;
    /// let fixed = IdlePolicy::new().search_budget(us(50), us(50)).adapt_to_oversubscription(false);
    /// assert!(!fixed.adapts_to_oversubscription());
    /// let adaptive_rayon = IdlePolicy::rayon().adapt_to_oversubscription(true);
    /// assert!(adaptive_rayon.adapts_to_oversubscription());
    /// ```
    pub const fn adapt_to_oversubscription(mut self, on: bool) -> Self {
        self.pressure = if on {
            PressureMode::Detect
        } else {
            PressureMode::Off
        };
        self
    }

    /// Whether the policy idles differently when the pool measures that the
    /// machine is oversubscribed (see
    /// [`adapt_to_oversubscription`](IdlePolicy::adapt_to_oversubscription)).
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::IdlePolicy;
    /// assert!(IdlePolicy::new().adapts_to_oversubscription());
    /// assert!(!IdlePolicy::rayon().adapts_to_oversubscription());
    /// assert!(!IdlePolicy::tokio().adapts_to_oversubscription());
    /// ```
    #[must_use]
    pub const fn adapts_to_oversubscription(&self) -> bool {
        matches!(self.pressure, PressureMode::Detect)
    }

    /// Idle the way this policy idles when the machine is oversubscribed,
    /// always, whatever the pool measures: every idle phase searches yield
    /// rounds (as many as the worker has learned, from a floor of 8 in a
    /// pool with more workers than CPUs or 2 in one that fits them, to
    /// rayon's 32, and one during a streak of long gaps), searches again
    /// after a wake that found nothing, and ignores the searcher cap. For a
    /// pool that knows it shares its CPUs: two pools in one process, a pool
    /// beside an async runtime, a container whose CPU quota is below its
    /// thread count. It replaces
    /// [`adapt_to_oversubscription`](IdlePolicy::adapt_to_oversubscription),
    /// and that builder replaces it.
    ///
    /// It is not the default because it costs more where the pool has the
    /// CPUs to itself and goes idle for long, and because it lifts the
    /// searcher cap, which a large pool on a machine of its own relies on.
    /// Measured on this crate's 2-vCPU benchmark machine, a 2-thread pool
    /// spent about 1.4× the default's CPU after a burst of work (0.31–0.33×
    /// stock rayon's against 0.22–0.24×), while between short regions it
    /// wasted 10–26% less than the default, about as much as stock rayon
    /// (docs/benchmarks.md, "Measured: a pool that assumes it is
    /// oversubscribed" and "A pressured floor by the pool's size").
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::IdlePolicy;
    ///
    /// let shared = IdlePolicy::new().assume_oversubscribed();
    /// assert!(shared.assumes_oversubscribed());
    /// assert!(!shared.adapts_to_oversubscription());
    /// let measured = shared.adapt_to_oversubscription(true);
    /// assert!(!measured.assumes_oversubscribed());
    /// ```
    pub const fn assume_oversubscribed(mut self) -> Self {
        self.pressure = PressureMode::Always;
        self
    }

    /// Whether every idle phase idles as under oversubscription (see
    /// [`assume_oversubscribed`](IdlePolicy::assume_oversubscribed)).
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::IdlePolicy;
    /// assert!(!IdlePolicy::new().assumes_oversubscribed());
    /// assert!(IdlePolicy::rayon().assume_oversubscribed().assumes_oversubscribed());
    /// ```
    #[must_use]
    pub const fn assumes_oversubscribed(&self) -> bool {
        matches!(self.pressure, PressureMode::Always)
    }

    /// Let at most `searchers` workers search from their top-level idle
    /// loop at once (see "The searcher cap" above).
    ///
    /// # Panics
    ///
    /// If `searchers` is 0: at least one idle worker must search, or work
    /// posted to a worker's own queue while its owner is busy could wait
    /// for the owner.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = eventcount::IdlePolicy::new().max_searching(2);
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

    /// Let at most half the pool's workers (rounded up) search from their
    /// top-level idle loop at once: the default's cap.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = eventcount::IdlePolicy::new().max_searching_half();
    /// assert_eq!(p.searcher_cap(2), Some(1));
    /// assert_eq!(p.searcher_cap(7), Some(4));
    /// ```
    pub const fn max_searching_half(mut self) -> Self {
        self.searchers = Searchers::Half;
        self
    }

    /// No searcher cap: every idle worker searches (rayon's way).
    ///
    /// # Examples
    ///
    /// ```
    /// let uncapped = eventcount::IdlePolicy::new().max_searching_all();
    /// assert_eq!(uncapped.searcher_cap(8), None);
    /// ```
    pub const fn max_searching_all(mut self) -> Self {
        self.searchers = Searchers::All;
        self
    }

    /// rayon PR #1314's bounded searchers: a worker that starts looking
    /// searches only while the idle workers awake do not outnumber the busy
    /// ones (at least one may always search); otherwise it sleeps after
    /// the final check. Every idle worker counts, a worker waiting on a
    /// job's latch included, as in the PR. There is no hand-off beyond
    /// rayon's own rule (a worker that finds work wakes up to two
    /// sleepers).
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

    /// The most workers that may search from their top-level idle loop at
    /// once in a pool of `workers`, or `None` if that is not a fixed number
    /// (no cap, or [`max_searching_busy`](IdlePolicy::max_searching_busy)).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::IdlePolicy::rayon().searcher_cap(4), None);
    /// assert_eq!(eventcount::IdlePolicy::new().searcher_cap(4), Some(2));
    /// ```
    #[must_use]
    pub const fn searcher_cap(&self, workers: usize) -> Option<usize> {
        match self.searchers {
            Searchers::All | Searchers::Busy => None,
            Searchers::AtMost(n) => Some(if n < workers { n } else { workers }),
            Searchers::Half => Some(workers.div_ceil(2)),
        }
    }

    /// For a policy of fixed rounds: the round at which a worker announces
    /// it is sleepy (it tries to sleep at the round after). `None` for a
    /// search bounded in time.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::IdlePolicy;
    /// assert_eq!(IdlePolicy::rayon().rounds_until_sleepy(), Some(32));
    /// assert_eq!(IdlePolicy::new().rounds_until_sleepy(), None);
    /// ```
    #[must_use]
    pub const fn rounds_until_sleepy(&self) -> Option<u32> {
        match self.search {
            SearchLength::Rounds { spin, yields, .. } => Some(spin.saturating_add(yields)),
            SearchLength::Timed { .. } => None,
        }
    }

    /// For a search bounded in time: the lower and upper bounds of its
    /// budget. `None` for a policy of fixed rounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let (min, max) = eventcount::IdlePolicy::new().search_bounds().unwrap();
    /// assert_eq!((min, max), (Duration::ZERO, Duration::from_micros(200)));
    /// ```
    #[must_use]
    pub const fn search_bounds(&self) -> Option<(Duration, Duration)> {
        match self.search {
            SearchLength::Rounds { .. } => None,
            SearchLength::Timed { min_ns, max_ns } => Some((
                Duration::from_nanos(min_ns as u64),
                Duration::from_nanos(max_ns as u64),
            )),
        }
    }

    /// Whether a phase of this policy may run a search round at all (a
    /// pressured phase or a probe aside): a policy of no rounds never does.
    pub(crate) const fn has_search_rounds(&self) -> bool {
        match self.search {
            SearchLength::Rounds { spin, yields, .. } => spin > 0 || yields > 0,
            SearchLength::Timed { .. } => true,
        }
    }

    /// How search round `round` passes its time.
    #[inline]
    pub(crate) fn pause(&self, round: u32) -> Pause {
        match self.search {
            SearchLength::Rounds {
                spin,
                spins_per_round,
                ..
            } if round < spin => Pause::Spin(spins_per_round),
            _ => Pause::Yield,
        }
    }
}

/// How one search round passes its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pause {
    /// This many CPU pause hints.
    Spin(u32),
    /// One `yield_now`.
    Yield,
}

impl Pause {
    /// Pass the round's time.
    #[inline]
    pub(crate) fn run(self) {
        match self {
            Pause::Spin(spins) => {
                for _ in 0..spins {
                    sync::spin_loop();
                }
            }
            Pause::Yield => sync::yield_now(),
        }
    }
}

impl Default for IdlePolicy {
    fn default() -> Self {
        IdlePolicy::new()
    }
}

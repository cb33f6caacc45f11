//! [`IdlePolicy`]: how long an idle worker searches before it sleeps.

use crate::sync;

/// How an idle worker spends its search rounds before it announces it is
/// sleepy and, one round later, tries to sleep.
///
/// Each call to `no_work_found` is one round: the worker has just searched
/// every queue and found nothing. The first `spin_rounds` rounds each spin
/// `spins_per_round` times with a CPU pause hint (cheap, keeps the core, good
/// when work arrives within microseconds). The next `yield_rounds` rounds
/// each give the core away with `yield_now`. Then the worker gets sleepy.
///
/// The default is Rayon's: no spinning, 32 yield rounds. Fewer rounds burn
/// less CPU while idle and pick up work that arrives just after a worker
/// fell asleep more slowly. Measured on a 2-vCPU VM with 8 workers
/// (docs/benchmarks.md, "Idle policy trade-offs"), `yield_rounds(8)`
/// roughly halves the CPU per burst of small jobs against the default, for
/// up to 15 % more burst latency. `yield_rounds(2)` costs up to 2.4x latency
/// when bursts come 20 µs apart. Spinning rounds gained nothing over
/// yielding there.
///
/// # The searcher cap
///
/// What burns the CPU of an idle pool is how many workers search at once,
/// more than how long each one does. [`max_searching`](IdlePolicy::max_searching)
/// and [`max_searching_half`](IdlePolicy::max_searching_half) cap that
/// number, as Go's scheduler and Tokio do: a worker that starts looking
/// while the cap is full skips its spin and yield rounds and goes to sleep
/// after the protocol's usual final check, and the last searcher to find
/// work wakes one sleeper to take over. No cap is the default
/// (docs/benchmarks.md, "The searcher cap", says when to turn it on).
///
/// # Examples
///
/// ```
/// use eventcount::IdlePolicy;
///
/// let eager_sleeper = IdlePolicy::new().yield_rounds(4);
/// assert_eq!(eager_sleeper.rounds_until_sleepy(), 4);
/// assert_eq!(IdlePolicy::default().rounds_until_sleepy(), 32);
///
/// let capped = IdlePolicy::new().max_searching_half();
/// assert_eq!(capped.searcher_cap(8), Some(4));
/// assert_eq!(IdlePolicy::default().searcher_cap(8), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct IdlePolicy {
    spin_rounds: u32,
    spins_per_round: u32,
    yield_rounds: u32,
    searchers: Searchers,
}

/// How many idle workers may search at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Searchers {
    /// Every idle worker searches (Rayon).
    All,
    /// At most this many (at least 1).
    AtMost(u32),
    /// At most half the pool, rounded up (Go's rule of thumb).
    Half,
}

impl IdlePolicy {
    /// Rayon's policy: 32 yield rounds, no spinning.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::IdlePolicy::new(), eventcount::IdlePolicy::default());
    /// ```
    pub const fn new() -> Self {
        IdlePolicy {
            spin_rounds: 0,
            spins_per_round: 64,
            yield_rounds: 32,
            searchers: Searchers::All,
        }
    }

    /// Rounds that spin before the yielding rounds start.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = eventcount::IdlePolicy::new().spin_rounds(8).yield_rounds(0);
    /// assert_eq!(p.rounds_until_sleepy(), 8);
    /// ```
    pub const fn spin_rounds(mut self, rounds: u32) -> Self {
        self.spin_rounds = rounds;
        self
    }

    /// CPU pause hints per spinning round (default 64).
    ///
    /// # Examples
    ///
    /// ```
    /// let p = eventcount::IdlePolicy::new().spin_rounds(2).spins_per_round(16);
    /// assert_eq!(p.rounds_until_sleepy(), 34);
    /// ```
    pub const fn spins_per_round(mut self, spins: u32) -> Self {
        self.spins_per_round = spins;
        self
    }

    /// Rounds that yield the CPU after the spinning rounds.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = eventcount::IdlePolicy::new().yield_rounds(0);
    /// assert_eq!(p.rounds_until_sleepy(), 0); // sleepy at the first empty round
    /// ```
    pub const fn yield_rounds(mut self, rounds: u32) -> Self {
        self.yield_rounds = rounds;
        self
    }

    /// Let at most `searchers` idle workers search at once (see "The
    /// searcher cap" above).
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
    pub const fn max_searching(mut self, searchers: u32) -> Self {
        assert!(
            searchers > 0,
            "IdlePolicy::max_searching(0): at least one idle worker must be allowed to search"
        );
        self.searchers = Searchers::AtMost(searchers);
        self
    }

    /// Let at most half the pool's workers (rounded up) search at once.
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

    /// The most idle workers that may search at once in a pool of
    /// `workers`, or `None` if every idle worker may (no cap).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::IdlePolicy::new().searcher_cap(4), None);
    /// ```
    #[must_use]
    pub const fn searcher_cap(&self, workers: usize) -> Option<u32> {
        let workers = if workers > u32::MAX as usize {
            u32::MAX
        } else {
            workers as u32
        };
        match self.searchers {
            Searchers::All => None,
            Searchers::AtMost(n) => Some(if n < workers { n } else { workers }),
            Searchers::Half => Some(workers.div_ceil(2)),
        }
    }

    /// The round at which a worker announces it is sleepy; it tries to sleep
    /// at the round after.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::IdlePolicy::new().rounds_until_sleepy(), 32);
    /// ```
    #[must_use]
    pub const fn rounds_until_sleepy(&self) -> u32 {
        self.spin_rounds.saturating_add(self.yield_rounds)
    }

    /// Pass the time of round `round` (before the worker is sleepy).
    #[inline]
    pub(crate) fn pause(&self, round: u32) {
        if round < self.spin_rounds {
            for _ in 0..self.spins_per_round {
                sync::spin_loop();
            }
        } else {
            sync::yield_now();
        }
    }
}

impl Default for IdlePolicy {
    fn default() -> Self {
        IdlePolicy::new()
    }
}

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
/// # Examples
///
/// ```
/// use eventcount::IdlePolicy;
///
/// let eager_sleeper = IdlePolicy::new().yield_rounds(4);
/// assert_eq!(eager_sleeper.rounds_until_sleepy(), 4);
/// assert_eq!(IdlePolicy::default().rounds_until_sleepy(), 32);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdlePolicy {
    spin_rounds: u32,
    spins_per_round: u32,
    yield_rounds: u32,
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

    /// The round at which a worker announces it is sleepy; it tries to sleep
    /// at the round after.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::IdlePolicy::new().rounds_until_sleepy(), 32);
    /// ```
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

//! [`Pressure`]: whether the machine is oversubscribed, as a pool knows it
//! from its size or measures it from its own search rounds
//! ([docs/idle-policy.md](crate::docs::idle_policy), "Oversubscription").
//!
//! A search round yields the CPU. With a free core (or none of its own
//! threads runnable elsewhere) the yield comes back at once; with more
//! runnable threads than CPUs, it hands the CPU to one of them and comes
//! back a time slice or a peer's search later. A round that took much
//! longer than the worker's fastest is *handed off*; one that took a
//! scheduler's time slice waited behind a thread that does not give the CPU
//! back. The pool keeps one score of how many recent rounds were:
//!
//! | bits  | field   | meaning                                                  |
//! |-------|---------|----------------------------------------------------------|
//! | 0..32 | `score` | 0..=64: +4 per handed-off round, −1 per other, 64 after a round of a time slice; pressured at 16 and above |
//!
//! A pool with more workers than CPUs is pressured whatever its score: its
//! sleeping workers make the searchers' yields come back at once, and a
//! score alone would settle where they all sleep and every job waits for a
//! wake.
//!
//! While the pool is pressured, an idle phase passes its time the way
//! rayon's fixed policy does (yields, no sleep after an empty wake, no cap):
//! a yield then hands the CPU to a runnable peer, while a sleep costs a
//! futex wake. No wake depends on the score (see `period.rs`), so it is a
//! plain Relaxed cell that loom does not see.

use crossbeam_utils::CachePadded;

use crate::sync::unmodeled::{AtomicU32, AtomicU64, Relaxed};

/// Whether a policy adapts to oversubscription, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PressureMode {
    /// Never: the policy's own search and cap, whatever the load.
    Off,
    /// From the pool's size (more workers than CPUs: always), else from
    /// its measurements: the score below.
    Detect,
    /// Always pressured, whatever is measured
    /// (`IdlePolicy::assume_oversubscribed`): for a pool that knows it
    /// shares its CPUs, and the loom models' other extreme.
    Always,
}

/// A round that took longer than this is handed off, whatever the worker's
/// fastest round: a `sched_yield` that finds nobody else runnable returns
/// in well under a microsecond on bare metal and about one in this VM, and
/// a queue scan of a small pool takes about as long.
const HANDED_OFF_FLOOR_NS: u64 = 5_000;

/// A round that took longer than this many times the worker's fastest is
/// handed off: a large pool's scan of every queue can take longer than the
/// floor on its own, and is about as long every time.
const SLOWER_THAN_FASTEST: u64 = 4;

/// A round that took longer than this waited behind a thread that ran for
/// a scheduler's time slice: a CPU-bound thread, which a yield hands the CPU
/// to and which keeps it until the scheduler takes it back (0.75–3 ms of a
/// slice, rounded up to the next 1–4 ms tick). The pool's own searchers
/// give it back within microseconds. Such a round makes the pool pressured
/// at once, at the ceiling: behind CPU-bound threads a sleeper woken by a
/// post can wait a slice before it runs, while a worker that stays runnable
/// runs as soon as it is picked again, and yields that find the CPU-bound
/// thread not eligible (Linux's EEVDF scheduler) come back at once and
/// would score the load away.
const SLICE_ROUND_NS: u64 = 1_000_000;

/// What one handed-off round adds to the score.
const HANDED_OFF_GAIN: u32 = 4;

/// What one round that came back at once takes off.
const FAST_ROUND_LOSS: u32 = 1;

/// The score's ceiling: a pressured pool whose yields stop being handed off
/// is back below [`PRESSURED_AT`] after 49 rounds, a phase and a half of
/// rayon's 32.
const MAX_SCORE: u32 = 64;

/// The score from which the pool is pressured: four handed-off rounds from
/// zero, and it stays pressured while more than one round in five is.
const PRESSURED_AT: u32 = 16;

/// The yield rounds of a pressured phase: rayon's 32, and two under loom
/// (enough for a round to come between two others, small enough for the
/// models' state space).
pub(crate) const PRESSURED_ROUNDS: u32 = if cfg!(all(test, loom)) { 2 } else { 32 };

/// The fewest yield rounds a pressured phase learns to search in a pool
/// with more workers than CPUs, but during a streak of misses
/// ([`PRESSURED_MISS_STREAK`]): a quarter of rayon's 32 (one under loom).
/// Below it, the pool's workers are asleep when a region's jobs come, and
/// each job waits for a futex wake that, on a CPU shared with three other
/// workers, runs late (B8 at 8 threads).
pub(crate) const PRESSURED_MIN_ROUNDS: u32 = if cfg!(all(test, loom)) { 1 } else { 8 };

/// The same floor in a pool that fits its CPUs (or whose CPU count is
/// unknown), pressured by other load or by
/// `IdlePolicy::assume_oversubscribed`: two rounds (one under loom). There
/// each worker has a CPU of its own to come back to, and eight rounds were
/// what a burst's end cost (B6 at 2 threads: 0.49-0.59x stock rayon's CPU
/// with eight, 0.34x with two), while B8's light shape and B9's hogs
/// measured the same with either (docs/benchmarks.md).
pub(crate) const PRESSURED_FITTING_MIN_ROUNDS: u32 = if cfg!(all(test, loom)) { 1 } else { 2 };

/// After this many pressured phases in a row that missed (a long sleep
/// followed each), a pressured budget may fall below
/// [`PRESSURED_MIN_ROUNDS`], down to [`PRESSURED_FEWEST_ROUNDS`]. Gaps that
/// only come long (B7's 200 µs and 2 ms gaps with 8 workers on 2 vCPUs)
/// then cost one round, not eight; a worker whose misses are mixed with hits
/// (short gaps between long ones, as in B8) keeps the floor, and its first
/// hit restores it.
pub(crate) const PRESSURED_MISS_STREAK: u32 = 3;

/// The fewest rounds a pressured phase searches once its misses come in a
/// streak: one, so that the phase still yields once and the pool's score
/// still sees whether the machine is oversubscribed.
pub(crate) const PRESSURED_FEWEST_ROUNDS: u32 = 1;

/// A pool's oversubscription score (one per protocol, on its own cache
/// line).
pub(crate) struct Pressure {
    mode: PressureMode,
    /// The pool has more workers than the CPUs it may use (in `Detect`
    /// mode): pressured whatever the score, since its own sleeping workers
    /// are what makes the searchers' yields come back at once.
    oversized: bool,
    /// The fewest rounds a pressured phase learns to search, by the pool's
    /// size, whatever the mode: [`PRESSURED_MIN_ROUNDS`] with more workers
    /// than CPUs, else [`PRESSURED_FITTING_MIN_ROUNDS`].
    floor_rounds: u32,
    score: CachePadded<AtomicU32>,
}

impl Pressure {
    /// The score of a pool of `workers`. In [`PressureMode::Detect`] the
    /// pool is pressured for good when it has more workers than the CPUs
    /// this process may use (`available_parallelism` reads the affinity
    /// mask and the cgroup's CPU quota); otherwise, or when that is
    /// unknown, it starts unpressured and follows its score. Under loom it
    /// starts unpressured: a model must not depend on the machine that runs
    /// it.
    pub(crate) fn new(mode: PressureMode, workers: usize) -> Self {
        Self::with_cpus(mode, workers, available_cpus())
    }

    /// [`Pressure::new`] on a machine that lets the process run `cpus`
    /// threads at once (`None`: unknown).
    fn with_cpus(mode: PressureMode, workers: usize, cpus: Option<usize>) -> Self {
        let more_workers_than_cpus = cpus.is_some_and(|cpus| workers > cpus);
        Pressure {
            mode,
            oversized: mode == PressureMode::Detect && more_workers_than_cpus,
            floor_rounds: if more_workers_than_cpus {
                PRESSURED_MIN_ROUNDS
            } else {
                PRESSURED_FITTING_MIN_ROUNDS
            },
            score: CachePadded::new(AtomicU32::new(0)),
        }
    }

    /// The fewest rounds a pressured phase of this pool learns to search,
    /// but during a streak of misses.
    pub(crate) fn floor_rounds(&self) -> u32 {
        self.floor_rounds
    }

    /// Whether an idle phase starting now runs as a pressured one.
    #[inline]
    pub(crate) fn is_pressured(&self) -> bool {
        match self.mode {
            PressureMode::Off => false,
            PressureMode::Always => true,
            PressureMode::Detect => self.oversized || self.score.load(Relaxed) >= PRESSURED_AT,
        }
    }

    /// Whether the pool measures its rounds (in `Detect` mode). An
    /// oversized pool still does, though nothing reads its score: that is
    /// the policy the sweeps of docs/benchmarks.md measured.
    #[inline]
    pub(crate) fn detects(&self) -> bool {
        self.mode == PressureMode::Detect
    }

    /// A yield round of `ns` came back, on a worker whose fastest round so
    /// far is `fastest`: score it (a round of a time slice sets the
    /// ceiling).
    pub(crate) fn observe(&self, fastest: &FastestRound, ns: u64) {
        let handed_off = fastest.handed_off(ns);
        let score = self.score.load(Relaxed);
        let next = if ns > SLICE_ROUND_NS {
            MAX_SCORE
        } else if handed_off {
            (score + HANDED_OFF_GAIN).min(MAX_SCORE)
        } else {
            score.saturating_sub(FAST_ROUND_LOSS)
        };
        // Check before write: at either bound nothing is written, so a pool
        // that stays pressured (or unpressured) only reads the line. One
        // attempt: a round that loses the race to another worker's is not
        // counted, which delays a switch by a round and bends no bound.
        if next != score {
            let _ = self.score.compare_exchange(score, next, Relaxed, Relaxed);
        }
    }

    /// The score now (a snapshot, for tests and `Debug`).
    pub(crate) fn score(&self) -> u32 {
        self.score.load(Relaxed)
    }
}

impl std::fmt::Debug for Pressure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pressure")
            .field("mode", &self.mode)
            .field("oversized", &self.oversized)
            .field("floor_rounds", &self.floor_rounds)
            .field("score", &self.score())
            .field("pressured", &self.is_pressured())
            .finish()
    }
}

/// How many threads this process may run at once, if known. Under the loom
/// backend (the crate's models and a downstream crate's, `eventcount_loom`)
/// it is unknown: a model must not depend on the machine that runs it.
fn available_cpus() -> Option<usize> {
    if cfg!(any(all(test, loom), eventcount_loom)) {
        return None;
    }
    std::thread::available_parallelism()
        .ok()
        .map(|cpus| cpus.get())
}

/// One worker's fastest yield round so far, in nanoseconds (`u64::MAX`
/// until it has one). Only that worker reads and writes it.
pub(crate) struct FastestRound(AtomicU64);

impl Default for FastestRound {
    fn default() -> Self {
        FastestRound(AtomicU64::new(u64::MAX))
    }
}

impl FastestRound {
    /// Whether a round of `ns` was handed off: longer than the floor and
    /// than [`SLOWER_THAN_FASTEST`] times the fastest round before it (the
    /// floor alone for the first). It becomes the fastest if it is.
    fn handed_off(&self, ns: u64) -> bool {
        let fastest = self.0.load(Relaxed);
        if ns < fastest {
            self.0.store(ns, Relaxed);
        }
        let threshold = match fastest {
            u64::MAX => HANDED_OFF_FLOOR_NS,
            fastest => HANDED_OFF_FLOOR_NS.max(fastest.saturating_mul(SLOWER_THAN_FASTEST)),
        };
        ns > threshold
    }
}

impl std::fmt::Debug for FastestRound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.load(Relaxed) {
            u64::MAX => f.write_str("FastestRound(none)"),
            ns => write!(f, "FastestRound({ns} ns)"),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    fn detecting_from(score: u32) -> Pressure {
        let pressure = Pressure::with_cpus(PressureMode::Detect, 2, Some(2));
        pressure.score.store(score, Relaxed);
        pressure
    }

    #[test]
    fn a_round_past_the_floor_and_four_times_the_fastest_is_handed_off() {
        let fastest = FastestRound::default();
        assert!(!fastest.handed_off(US)); // the first, under the floor
        assert!(!fastest.handed_off(4 * US)); // under the floor
        assert!(fastest.handed_off(6 * US));
        // A large pool's scan: its fastest round is 3 µs, so 10 µs is not.
        let slow_scan = FastestRound::default();
        assert!(!slow_scan.handed_off(3 * US));
        assert!(!slow_scan.handed_off(10 * US));
        assert!(slow_scan.handed_off(13 * US));
        // The first round has only the floor to go by.
        assert!(FastestRound::default().handed_off(50 * US));
    }

    #[test]
    fn handed_off_rounds_raise_the_score_and_others_lower_it() {
        let pressure = detecting_from(0);
        let fastest = FastestRound::default();
        fastest.handed_off(US);
        for _ in 0..3 {
            pressure.observe(&fastest, 100 * US);
        }
        assert_eq!(pressure.score(), 12);
        assert!(!pressure.is_pressured());
        pressure.observe(&fastest, 100 * US);
        assert!(pressure.is_pressured()); // 16
        pressure.observe(&fastest, US);
        assert_eq!(pressure.score(), 15);
        assert!(!pressure.is_pressured());
    }

    #[test]
    fn a_round_of_a_time_slice_pressures_the_pool_at_once() {
        let fastest = FastestRound::default();
        fastest.handed_off(US);
        let pressure = detecting_from(0);
        pressure.observe(&fastest, 1_000 * US); // not more than a slice
        assert_eq!(pressure.score(), 4);
        pressure.observe(&fastest, 1_000 * US + 1);
        assert_eq!(pressure.score(), MAX_SCORE);
        assert!(pressure.is_pressured());
        // Only fast rounds bring it back: 49 of them, as from any ceiling.
        for _ in 0..48 {
            pressure.observe(&fastest, US);
        }
        assert!(pressure.is_pressured(), "{pressure:?}");
        pressure.observe(&fastest, US);
        assert!(!pressure.is_pressured(), "{pressure:?}");
    }

    #[test]
    fn the_score_stays_within_its_bounds() {
        let fastest = FastestRound::default();
        fastest.handed_off(US);
        let pressure = detecting_from(MAX_SCORE);
        pressure.observe(&fastest, 100 * US);
        assert_eq!(pressure.score(), MAX_SCORE);
        let calm = detecting_from(0);
        calm.observe(&fastest, US);
        assert_eq!(calm.score(), 0);
    }

    #[test]
    fn a_pressured_pool_switches_back_after_49_fast_rounds() {
        let fastest = FastestRound::default();
        let pressure = detecting_from(MAX_SCORE);
        let mut rounds = 0;
        while pressure.is_pressured() {
            pressure.observe(&fastest, US);
            rounds += 1;
        }
        assert_eq!(rounds, 49);
        // One handed-off round in five holds it; fewer let it go.
        let held = detecting_from(PRESSURED_AT);
        for _ in 0..20 {
            held.observe(&fastest, 100 * US);
            for _ in 0..4 {
                held.observe(&fastest, US);
            }
        }
        assert!(held.is_pressured(), "{held:?}");
    }

    #[test]
    fn the_modes() {
        let with = Pressure::with_cpus;
        assert!(!with(PressureMode::Off, 8, Some(2)).is_pressured());
        assert!(with(PressureMode::Always, 1, Some(2)).is_pressured());
        assert!(!with(PressureMode::Detect, 2, Some(2)).is_pressured());
        assert!(with(PressureMode::Detect, 3, Some(2)).is_pressured());
        // A CPU count that cannot be read oversizes nothing.
        assert!(!with(PressureMode::Detect, 8, None).is_pressured());
        assert!(!with(PressureMode::Off, 1, Some(2)).detects());
        assert!(!with(PressureMode::Always, 1, Some(2)).detects());
        assert!(with(PressureMode::Detect, 2, Some(2)).detects());
    }

    #[test]
    fn the_floor_is_eight_rounds_with_more_workers_than_cpus_and_two_otherwise() {
        let floor = |mode, workers, cpus| Pressure::with_cpus(mode, workers, cpus).floor_rounds();
        for mode in [PressureMode::Detect, PressureMode::Always] {
            assert_eq!(floor(mode, 8, Some(2)), PRESSURED_MIN_ROUNDS);
            assert_eq!(floor(mode, 3, Some(2)), 8);
            assert_eq!(floor(mode, 2, Some(2)), PRESSURED_FITTING_MIN_ROUNDS);
            assert_eq!(floor(mode, 2, Some(2)), 2);
            assert_eq!(floor(mode, 1, Some(2)), 2);
            assert_eq!(floor(mode, 8, None), 2);
        }
    }

    #[test]
    fn a_pool_with_more_workers_than_cpus_stays_pressured() {
        let fastest = FastestRound::default();
        let oversized = Pressure::with_cpus(PressureMode::Detect, 8, Some(2));
        // Were its rounds scored, its own sleepers would make every yield
        // come back at once and the score would stay at zero: the pool is
        // pressured all the same.
        for _ in 0..1_000 {
            oversized.observe(&fastest, US);
        }
        assert_eq!(oversized.score(), 0);
        assert!(oversized.is_pressured(), "{oversized:?}");
    }
}

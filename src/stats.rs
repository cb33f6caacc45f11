//! [`SleepStats`]: how often a protocol really slept and woke, and what its
//! workers' idle periods cost.

use std::fmt;
use std::ops::Sub;
use std::time::Duration;

/// What sleeping cost a protocol since it was built.
///
/// `waits` and `wakes` are its futex syscalls, and so its whole kernel cost
/// (on the park backend, every target but Linux and Android, its
/// `thread::park` calls and unparks). A waker makes its `futex_wake` once
/// the target has announced it is asleep, and the target may then never
/// reach `futex_wait`, so `wakes` can exceed `waits`.
///
/// The pool protocols ([`JecSleep`](crate::JecSleep),
/// [`NotifierSleep`](crate::NotifierSleep)) also count what their workers'
/// idle periods cost, which is what a pool is sized by
/// ([docs/guide.md](crate::guide), "Reading the counters"); a bare
/// [`Notifier`](crate::Notifier) counts only `waits` and `wakes`. Each
/// waiter keeps its counts on its own cache line, on the idle paths only.
/// [`SleepProtocol::worker_stats`](crate::SleepProtocol::worker_stats)
/// gives one worker's. Subtract two snapshots to measure a stretch of work;
/// `Display` is one line for a log. `non_exhaustive`: more counts may come.
///
/// # Examples
///
/// ```
/// let n = eventcount::Notifier::new(2);
/// let before = n.stats();
/// n.notify_one(); // nobody waits: no syscall
/// let during = n.stats() - before;
/// assert_eq!((during.waits, during.wakes), (0, 0));
/// assert_eq!(during.parked, std::time::Duration::ZERO);
/// assert_eq!(during.searching_cpu, None); // a bare Notifier does not search
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SleepStats {
    /// `futex_wait` calls: sleeps (a spurious return that sleeps again counts again).
    pub waits: u64,
    /// `futex_wake` calls: wakes of a thread registered as asleep.
    pub wakes: u64,
    /// Wakes after which the worker's next search found nothing.
    pub empty_wakes: u64,
    /// Wall time workers spent in search rounds.
    pub searching: Duration,
    /// CPU time the searching threads ran in those rounds; `None` without a
    /// per-thread CPU clock, and for a bare [`Notifier`](crate::Notifier).
    pub searching_cpu: Option<Duration>,
    /// Searches that ended with work found (or the latch set).
    pub searches_found_work: u64,
    /// Searches that spent their budget; the worker then went on to sleep.
    pub searches_gave_up: u64,
    /// Time workers spent asleep, the sleeps in progress included.
    pub parked: Duration,
}

impl SleepStats {
    pub(crate) fn add(mut self, (waits, wakes): (u64, u64)) -> Self {
        self.waits += waits;
        self.wakes += wakes;
        self
    }
}

/// The counts between two snapshots: `after - before`. Saturating, so a
/// pair taken in the wrong order gives zeros rather than a panic.
impl Sub for SleepStats {
    type Output = SleepStats;

    fn sub(self, before: SleepStats) -> SleepStats {
        SleepStats {
            waits: self.waits.saturating_sub(before.waits),
            wakes: self.wakes.saturating_sub(before.wakes),
            empty_wakes: self.empty_wakes.saturating_sub(before.empty_wakes),
            searching: self.searching.saturating_sub(before.searching),
            searching_cpu: match (self.searching_cpu, before.searching_cpu) {
                (Some(after), Some(before)) => Some(after.saturating_sub(before)),
                (after, _) => after,
            },
            searches_found_work: self
                .searches_found_work
                .saturating_sub(before.searches_found_work),
            searches_gave_up: self
                .searches_gave_up
                .saturating_sub(before.searches_gave_up),
            parked: self.parked.saturating_sub(before.parked),
        }
    }
}

/// One line: the syscalls, then the searches, then the sleeps.
///
/// ```
/// let stats = eventcount::SleepStats::default();
/// assert_eq!(
///     stats.to_string(),
///     "0 sleeps, 0 wakes (0 empty); searching 0ns wall, CPU time unknown, \
///      in 0 searches (0 found work, 0 gave up); parked 0ns"
/// );
/// ```
impl fmt::Display for SleepStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} sleeps, {} wakes ({} empty); searching {:?} wall, ",
            self.waits, self.wakes, self.empty_wakes, self.searching
        )?;
        match self.searching_cpu {
            Some(cpu) => write!(f, "{cpu:?} CPU, ")?,
            None => write!(f, "CPU time unknown, ")?,
        }
        write!(
            f,
            "in {} searches ({} found work, {} gave up); parked {:?}",
            self.searches_found_work + self.searches_gave_up,
            self.searches_found_work,
            self.searches_gave_up,
            self.parked
        )
    }
}

//! [`SleepStats`]: how often a protocol really slept and woke, and what its
//! workers' idle periods cost.

use std::fmt;
use std::ops::Sub;
use std::time::Duration;

/// What sleeping cost a protocol since it was built.
///
/// `waits` is how many times a thread went to sleep (a `futex_wait`; a
/// spurious return that sleeps again counts again), `wakes` how many
/// `futex_wake` calls wakers made. Every other path makes no syscall, so
/// these are the protocol's whole kernel cost. (On the park backend, every
/// target but Linux and Android, each count is a `thread::park` call, or
/// a wake that unparks whichever thread is registered on the word.)
///
/// The pool protocols ([`JecSleep`](crate::JecSleep),
/// [`NotifierSleep`](crate::NotifierSleep)) also count what their workers'
/// idle periods cost, which is what a pool is sized by:
/// - `empty_wakes`: wakes after which the worker's next search found
///   nothing. Many of them mean the pool wakes more workers than its work
///   needs: a smaller pool, or a searcher cap, would do;
/// - `searching`: wall time spent in search rounds, from the start of a
///   search (the first empty round of an idle period, or the first after a
///   wake) to its end (work found, or the budget spent), all workers
///   summed. `searching_cpu` is the CPU time the searching threads got in
///   those same stretches, read from each thread's own CPU clock where
///   the platform has one (Linux and Android), `None` elsewhere. Wall time
///   far above CPU time means the searchers wait for a CPU: the pool has
///   more threads than the machine has room for;
/// - `searches_found_work` and `searches_gave_up`: how the searches ended,
///   with work (or the latch set) or with the budget spent, after which the
///   worker went on to sleep. A search that finds work at its first round
///   is not counted: it never searched;
/// - `parked`: time spent asleep, from the start of a sleep to its end,
///   including the sleeps in progress when the snapshot was taken (up to
///   that moment). A pool that searches far longer than it parks burns CPU
///   waiting; one that parks a little at a time, over and over, pays a wake
///   each time.
///
/// [`SleepProtocol::worker_stats`](crate::SleepProtocol::worker_stats)
/// gives the same counts for one worker.
///
/// A [`Notifier`](crate::Notifier) on its own has no idle periods: it
/// counts `waits` and `wakes` only. `empty_wakes`, `searching`,
/// `searches_found_work`, `searches_gave_up` and `parked` stay zero for
/// it, and `searching_cpu` is `None`.
///
/// A waker makes its `futex_wake` once the target has announced it is
/// asleep; the target may still be on its way into `futex_wait` and then
/// never reach it, so `wakes` can exceed `waits` by the number of such
/// races.
///
/// The counts are kept on each waiter's own cache line, and only on the
/// idle paths (a post never touches them): the futex counts next to each
/// word, on the paths that make a syscall anyway; the idle ones by the
/// worker that idles, which reads a clock where a count needs a time: a
/// search that runs rounds, the start and end of each sleep (and its CPU
/// clock, a system call, at the first round and the end of each search
/// that runs a round). Subtract two snapshots to measure a stretch
/// of work. The struct is `non_exhaustive`: more counts may come. Its
/// `Display` is one line for a log.
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
    /// `futex_wait` calls: sleeps.
    pub waits: u64,
    /// `futex_wake` calls: wakes of a thread registered as asleep.
    pub wakes: u64,
    /// Wakes after which the worker's next search found nothing.
    pub empty_wakes: u64,
    /// Wall time workers spent in search rounds.
    pub searching: Duration,
    /// CPU time the searching threads ran in those rounds, where the
    /// platform has a per-thread CPU clock; `None` where it has not, and
    /// for a bare [`Notifier`](crate::Notifier).
    pub searching_cpu: Option<Duration>,
    /// Searches that ended with work found (or the latch set).
    pub searches_found_work: u64,
    /// Searches that spent their budget, after which the worker went on to
    /// sleep.
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

//! [`SleepStats`]: how often a protocol really slept and woke, and what its
//! workers' idle periods cost.

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
/// - `searching`: time spent in search rounds, from a worker's first empty
///   round to the end of its search (wall time, all workers summed);
/// - `parked`: time spent asleep, from the start of a sleep to the wake.
///   A pool that searches far longer than it parks burns CPU waiting; one
///   that parks a little at a time, over and over, pays a wake each time.
///
/// A [`Notifier`](crate::Notifier) on its own has no idle periods: those
/// three stay zero for it.
///
/// A waker makes its `futex_wake` once the target has announced it is
/// asleep; the target may still be on its way into `futex_wait` and then
/// never reach it, so `wakes` can exceed `waits` by the number of such
/// races.
///
/// The counts are kept on each waiter's own cache line, and only on the
/// idle paths (a post never touches them): the futex counts next to each
/// word, on the paths that make a syscall anyway; the idle ones by the
/// worker that idles, which reads a clock at the start and the end of each
/// search and each sleep. Subtract two snapshots to measure a stretch of
/// work. The struct is `non_exhaustive`: more counts may come.
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
    /// Time workers spent in search rounds.
    pub searching: Duration,
    /// Time workers spent asleep.
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
            parked: self.parked.saturating_sub(before.parked),
        }
    }
}

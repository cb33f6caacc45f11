//! [`SleepStats`]: how often a protocol really slept and woke.

use std::ops::Sub;

/// Futex calls made by a sleep protocol since it was built: `waits` is how
/// many times a thread went to sleep (a `futex_wait`; a spurious return that
/// sleeps again counts again), `wakes` how many `futex_wake` calls wakers
/// made. Every other path makes no syscall, so these are the protocol's
/// whole kernel cost. (On the park backend, every target but Linux and
/// Android, each count is a `thread::park` call, or a wake that unparks
/// whichever thread is registered on the word, instead.)
///
/// A waker makes its `futex_wake` once the target has announced it is
/// asleep; the target may still be on its way into `futex_wait` and then
/// never reach it, so `wakes` can exceed `waits` by the number of such
/// races.
///
/// The counts are kept next to each futex word, on the waiter's own cache
/// line, and only on the paths that make a syscall anyway. Subtract two
/// snapshots to measure a stretch of work. The struct is `non_exhaustive`:
/// more counts may come.
///
/// # Examples
///
/// ```
/// let n = eventcount::Notifier::new(2);
/// let before = n.stats();
/// n.notify_one(); // nobody waits: no syscall
/// let during = n.stats() - before;
/// assert_eq!((during.waits, during.wakes), (0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SleepStats {
    /// `futex_wait` calls: sleeps.
    pub waits: u64,
    /// `futex_wake` calls: wakes of a thread registered as asleep.
    pub wakes: u64,
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
        }
    }
}

//! [`SleepStats`]: how often a protocol really slept and woke.

/// Futex calls made by a sleep protocol since it was built: `waits` is how
/// many times a thread went to sleep (a `futex_wait`; a spurious return that
/// sleeps again counts again), `wakes` how many `futex_wake` calls wakers
/// made. Every other path makes no syscall, so these are the protocol's
/// whole kernel cost.
///
/// A waker makes its `futex_wake` once the target has announced it is
/// asleep; the target may still be on its way into `futex_wait` and then
/// never reach it, so `wakes` can exceed `waits` by the number of such
/// races.
///
/// The counts are kept next to each futex word, on the waiter's own cache
/// line, and only on the paths that make a syscall anyway.
///
/// # Examples
///
/// ```
/// let n = eventcount::Notifier::new(2);
/// n.notify_one(); // nobody waits: no syscall
/// assert_eq!(n.stats(), eventcount::SleepStats { waits: 0, wakes: 0 });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

//! [`Stopwatch`]: how long an idle worker has searched, and how long it
//! slept.
//!
//! Idle budgets are in time, so the protocols read a clock on their idle
//! paths (never on a post). In production that is `Instant`, a vDSO read
//! of tens of nanoseconds next to a search round that yields the CPU.
//!
//! loom has no clock, and a model must take the same path every time it
//! replays a schedule. Under loom (the crate's models, or a client's with
//! `--cfg eventcount_loom`) a stopwatch therefore advances by a fixed
//! step, [`LOOM_STEP`], each time it is read. A search phase reads it once
//! when it starts and once per round, so a budget of three steps lasts two
//! rounds in a model, and a budget under one step none; every sleep
//! measures a step or two. The idle policy sizes the step from its largest
//! default budget, and the models choose their budgets with that in mind
//! (`src/models/protocols.rs`).

/// A running measurement, started by [`Stopwatch::start`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stopwatch {
    #[cfg(not(any(all(test, loom), eventcount_loom)))]
    started: std::time::Instant,
    #[cfg(any(all(test, loom), eventcount_loom))]
    reads: u64,
}

/// Under loom, how far a stopwatch advances per read, in nanoseconds. The
/// idle policy checks at compile time that this is a third of its largest
/// default search budget, rounded up, so that budget lasts two rounds in a
/// model (`src/idle/policy.rs`).
#[cfg_attr(not(any(all(test, loom), eventcount_loom)), allow(dead_code))]
pub(crate) const LOOM_STEP: u64 = 66_667;

impl Stopwatch {
    /// A stopwatch reading zero now.
    #[inline]
    pub(crate) fn start() -> Self {
        Stopwatch {
            #[cfg(not(any(all(test, loom), eventcount_loom)))]
            started: std::time::Instant::now(),
            #[cfg(any(all(test, loom), eventcount_loom))]
            reads: 0,
        }
    }

    /// Nanoseconds since [`start`](Stopwatch::start), saturating at
    /// `u64::MAX`.
    #[inline]
    pub(crate) fn elapsed_ns(&mut self) -> u64 {
        #[cfg(not(any(all(test, loom), eventcount_loom)))]
        {
            u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX)
        }
        #[cfg(any(all(test, loom), eventcount_loom))]
        {
            self.reads += 1;
            self.reads * LOOM_STEP
        }
    }
}

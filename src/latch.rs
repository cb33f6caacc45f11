//! [`CoreLatch`]: the four-state latch a worker sleeps against.

use crate::sync::{AtomicU32, Ordering};

/// What a worker waiting on a latch waits for, which sets its search budget
/// and whether a searcher cap counts it (`src/idle/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitKind {
    /// The worker's top-level idle loop ([`CoreLatch::idle_loop`]).
    Idle,
    /// A job in flight ([`CoreLatch::new`]), which the worker helps with.
    Join,
}

/// No worker is known to hold the latch sleepy or sleeping (`holder`).
const NO_HOLDER: u32 = u32::MAX;

// The states of the table on `CoreLatch`.
const UNSET: u32 = 0;
const SLEEPY: u32 = 1;
const SLEEPING: u32 = 2;
const SET: u32 = 3;

/// A latch owned by one worker of a pool, which sleeps against it while it
/// waits for the latch (rayon-core's `CoreLatch`, with the same states). It
/// lives below the protocols, so any [`SleepProtocol`](crate::SleepProtocol)
/// can step it.
///
/// | state      | meaning                                                      |
/// |------------|--------------------------------------------------------------|
/// | `UNSET`    | not set; the owner is awake                                  |
/// | `SLEEPY`   | not set; the owner is about to sleep                         |
/// | `SLEEPING` | not set; the owner is asleep, so a setter must wake it       |
/// | `SET`      | set (final)                                                  |
///
/// [`set`](CoreLatch::set) tells the setter whether the owner was asleep,
/// and only then does it pay for a targeted wake:
/// [`SleepProtocol::set_latch`](crate::SleepProtocol::set_latch) does both.
/// The owner's sleep steps are public only with the `internals` feature.
///
/// # Two kinds of wait
///
/// - [`CoreLatch::new`]: set when a job ends (the stolen half of a `join`).
///   A worker waiting on it is *joining*: its search is sized for such
///   jobs, and no searcher cap counts it, since sending it to sleep only
///   makes the job's thread wake it.
/// - [`CoreLatch::idle_loop`]: a worker's top-level loop, set only to stop
///   the worker. A worker waiting on it waits for new work.
///
/// Getting the kind wrong costs CPU or latency, never a wake.
///
/// # Panics
///
/// A latch belongs to one worker. If a second worker waits on a latch that
/// another sleeps on, its sleep attempt panics ("no_work_found: worker 1
/// waits on a CoreLatch that worker 0 is asleep on …") before it writes
/// anything; without the check it would spin. Likewise
/// [`SleepProtocol::set_latch`](crate::SleepProtocol::set_latch)`(&latch, owner)`
/// panics, leaving the latch unset, if a worker other than `owner` is
/// asleep or about to sleep on it: a wake sent to the wrong worker would
/// leave the sleeper asleep for good.
///
/// # Examples
///
/// ```
/// use eventcount::{CoreLatch, JecSleep, SleepProtocol};
///
/// let sleep = JecSleep::new(2);
/// let latch = CoreLatch::new();
/// assert!(!latch.probe());
/// sleep.set_latch(&latch, 0); // wakes worker 0 only if it sleeps on it
/// assert!(latch.probe());
/// ```
pub struct CoreLatch {
    state: AtomicU32,
    /// Fixed at construction.
    waits_for: WaitKind,
    /// The worker that stepped the latch to SLEEPY through a protocol of this
    /// crate, or `NO_HOLDER`. Written only by the holder, before its AcqRel
    /// step to SLEEPING, so a setter whose Acquire load reads SLEEPING sees
    /// it. Read only to refuse a misuse, so the models need not see it.
    holder: crate::sync::unmodeled::AtomicU32,
}

impl CoreLatch {
    /// An unset latch that a job sets when it ends: its owner is joining
    /// (see "Two kinds of wait" above).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!eventcount::CoreLatch::new().probe());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        CoreLatch::with_kind(WaitKind::Join)
    }

    /// An unset latch for a worker's top-level loop, set only to stop the
    /// worker (see "Two kinds of wait" above); a pool whose workers stop
    /// some other way never sets it.
    ///
    /// # Examples
    ///
    /// ```
    /// let terminate = eventcount::CoreLatch::idle_loop();
    /// assert!(!terminate.probe());
    /// ```
    #[must_use]
    pub fn idle_loop() -> Self {
        CoreLatch::with_kind(WaitKind::Idle)
    }

    fn with_kind(waits_for: WaitKind) -> Self {
        CoreLatch {
            state: AtomicU32::new(UNSET),
            waits_for,
            holder: crate::sync::unmodeled::AtomicU32::new(NO_HOLDER),
        }
    }

    internal! {
        /// True for a latch made by [`CoreLatch::idle_loop`]. For protocol
        /// implementations.
        #[must_use]
        pub fn is_idle_loop(&self) -> bool {
            self.waits_for == WaitKind::Idle
        }
    }

    /// What a wait on this latch is.
    pub(crate) fn waits_for(&self) -> WaitKind {
        self.waits_for
    }

    /// True once the latch is set. Acquire: once it returns true, every
    /// write the setter made before [`set`](CoreLatch::set) is visible
    /// (loom model `latch_publishes_the_setters_writes`).
    ///
    /// # Examples
    ///
    /// ```
    /// let latch = eventcount::CoreLatch::new();
    /// assert!(!latch.probe());
    /// latch.set();
    /// assert!(latch.probe());
    /// ```
    #[inline]
    #[must_use]
    pub fn probe(&self) -> bool {
        // Load-bearing Acquire: with Relaxed, the
        // `*_latch_publishes_the_setters_writes` models read a stale payload.
        self.state.load(Ordering::Acquire) == SET
    }

    /// Set the latch. Returns true if the owner was asleep on it: the caller
    /// must then wake it with
    /// [`SleepProtocol::notify_worker_latch_is_set`](crate::SleepProtocol::notify_worker_latch_is_set);
    /// [`SleepProtocol::set_latch`](crate::SleepProtocol::set_latch) does both.
    ///
    /// A swap: the old value says whether the owner sleeps. AcqRel, and
    /// load-bearing: Release publishes the setter's writes to `probe` (with
    /// Relaxed, the `*_latch_publishes_the_setters_writes` models read a
    /// stale payload); Acquire orders the owner's registration, made before
    /// its SLEEPY → SLEEPING step, before the targeted wake.
    ///
    /// The swap is the last access: once SET is visible the owner may free
    /// the latch (rayon-core keeps latches on its stack), so a caller must
    /// not touch it after `set` either.
    ///
    /// # Examples
    ///
    /// ```
    /// let latch = eventcount::CoreLatch::new();
    /// assert!(!latch.set()); // nobody was asleep on it
    /// ```
    #[inline]
    pub fn set(&self) -> bool {
        self.state.swap(SET, Ordering::AcqRel) == SLEEPING
    }

    /// [`set`](CoreLatch::set) with the owner check of
    /// [`SleepProtocol::set_latch`](crate::SleepProtocol::set_latch): a panic
    /// naming `operation` and both workers, before anything is written, if a
    /// worker other than `owner` holds the latch sleepy or sleeping.
    ///
    /// A compare-exchange, not a swap: the check must see the state it
    /// replaces. Each retry follows one of the owner's (at most three) steps
    /// per sleep, so it never spins waiting. Failure is Acquire so that, on
    /// SLEEPING, the holder's record is visible; on SLEEPY it may not be yet,
    /// which costs nothing: a setter never wakes anyone from SLEEPY. Success
    /// is AcqRel, as `set`'s swap is.
    #[inline]
    #[track_caller]
    pub(crate) fn set_owned_by(&self, owner: usize, operation: &str) -> bool {
        // The common case, the owner awake: as cheap as `set`'s swap.
        match self
            .state
            .compare_exchange(UNSET, SET, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => false,
            Err(found) => self.set_owned_by_from(found, owner, operation),
        }
    }

    /// The rest of `set_owned_by` from `state`: out of line, since only an
    /// owner on its way to sleep, or asleep, leads here.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn set_owned_by_from(&self, mut state: u32, owner: usize, operation: &str) -> bool {
        loop {
            if state == SLEEPY || state == SLEEPING {
                self.check_owner(owner, operation, state);
            }
            match self
                .state
                .compare_exchange(state, SET, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(replaced) => return replaced == SLEEPING,
                Err(found) => state = found,
            }
        }
    }

    /// The owner check of `set_owned_by` on a latch found `held` (SLEEPY
    /// or SLEEPING).
    #[inline(never)]
    #[track_caller]
    fn check_owner(&self, owner: usize, operation: &str, held: u32) {
        let Some(holder) = self.holder() else {
            return;
        };
        if holder != owner {
            let how = if held == SLEEPY {
                "about to sleep on"
            } else {
                "asleep on"
            };
            panic!(
                "{operation}: the CoreLatch is set for worker {owner}, but worker {holder} is \
                 {how} it: a latch is set with the index of the worker that waits on it \
                 (nothing was written, so worker {holder} still waits)"
            );
        }
    }

    /// The worker recorded as holding the latch, if known.
    fn holder(&self) -> Option<usize> {
        match self.holder.load(crate::sync::unmodeled::Relaxed) {
            NO_HOLDER => None,
            holder => Some(holder as usize),
        }
    }

    internal! {
        /// The owner's first step towards sleeping: UNSET → SLEEPY. False if
        /// the latch is set, or held by another worker (a misuse that this
        /// step, with no worker index, cannot name). For protocol
        /// implementations.
        ///
        /// Success is AcqRel, defensively (every model passes with Relaxed):
        /// a setter acts only on SLEEPING, which `fall_asleep` writes. Failure
        /// is Relaxed, as in rayon-core: it means SET, and the caller reads the
        /// setter's writes only after `probe`'s Acquire.
        #[inline]
        pub fn get_sleepy(&self) -> bool {
            let stepped = self.step_to_sleepy().is_ok();
            if stepped {
                self.record_holder(None);
            }
            stepped
        }
    }

    /// [`get_sleepy`](CoreLatch::get_sleepy) for worker `worker`: false if
    /// the latch is set; a panic naming `operation` and both workers, with
    /// nothing written, if another worker holds it.
    #[inline]
    #[track_caller]
    pub(crate) fn get_sleepy_as(&self, worker: usize, operation: &str) -> bool {
        match self.step_to_sleepy() {
            Ok(()) => {
                self.record_holder(Some(worker));
                true
            }
            Err(SET) => false,
            Err(held) => self.held_by_another(operation, worker, held),
        }
    }

    /// UNSET → SLEEPY, or the state found. The orderings are `get_sleepy`'s.
    #[inline]
    fn step_to_sleepy(&self) -> Result<(), u32> {
        self.state
            .compare_exchange(UNSET, SLEEPY, Ordering::AcqRel, Ordering::Relaxed)
            .map(drop)
    }

    /// Note who holds the latch (`None`: unknown, or nobody). Relaxed: the
    /// owner's next AcqRel step on the latch publishes it to a setter.
    #[inline]
    fn record_holder(&self, worker: Option<usize>) {
        self.holder.store(
            worker.map_or(NO_HOLDER, |w| w as u32),
            crate::sync::unmodeled::Relaxed,
        );
    }

    /// The panic of `get_sleepy_as` on a latch another worker holds.
    #[cold]
    #[track_caller]
    fn held_by_another(&self, operation: &str, worker: usize, held: u32) -> ! {
        let holder = self.holder();
        let how = if held == SLEEPY {
            "about to sleep on"
        } else {
            "asleep on"
        };
        let who = match holder {
            // The same index used by two threads, a misuse of its own.
            Some(holder) if holder == worker => {
                format!("another thread, also as worker {holder},")
            }
            Some(holder) => format!("worker {holder}"),
            None => "another worker".to_string(),
        };
        panic!(
            "{operation}: worker {worker} waits on a CoreLatch that {who} is {how}: two \
             workers share one latch, and each CoreLatch belongs to one worker"
        )
    }

    internal! {
        /// The owner's second step, once it can be woken (on the notifier's
        /// waiter stack, or registering with the JEC protocol): SLEEPY →
        /// SLEEPING, after which [`set`](CoreLatch::set) returns true. False
        /// if the latch was set meanwhile. For protocol implementations.
        ///
        /// Success is AcqRel and load-bearing: its Release orders the owner's
        /// registration before a setter's view of SLEEPING (with Relaxed,
        /// `latch_set_while_owner_sleepy_or_sleeping` deadlocks). Failure is
        /// Relaxed, as at `get_sleepy`.
        #[inline]
        pub fn fall_asleep(&self) -> bool {
            self.state
                .compare_exchange(SLEEPY, SLEEPING, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        }
    }

    /// The owner backs out between `get_sleepy` and `fall_asleep`, on its
    /// way to a misuse panic: SLEEPY → UNSET, unless the latch was set.
    /// Relaxed: a setter never acts on SLEEPY, the owner publishes nothing,
    /// and a failure means SET, which it reads through `probe`.
    #[inline]
    pub(crate) fn stay_awake(&self) {
        self.record_holder(None);
        let _ = self
            .state
            .compare_exchange(SLEEPY, UNSET, Ordering::Relaxed, Ordering::Relaxed);
    }

    internal! {
        /// The owner is awake again: SLEEPING → UNSET, unless the latch was
        /// set meanwhile. For protocol implementations.
        #[inline]
        pub fn wake_up(&self) {
            // Before the step: once UNSET the latch may be stepped by another
            // worker, whose record must stand.
            self.record_holder(None);
            // A failure means SET, which stays. AcqRel is defensive (every
            // model passes with Relaxed): the owner publishes nothing.
            let _ = self
                .state
                .compare_exchange(SLEEPING, UNSET, Ordering::AcqRel, Ordering::Relaxed);
        }
    }
}

impl Default for CoreLatch {
    fn default() -> Self {
        CoreLatch::new()
    }
}

impl std::fmt::Debug for CoreLatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state.load(Ordering::Relaxed) {
            UNSET => "unset",
            SLEEPY => "sleepy",
            SLEEPING => "sleeping",
            SET => "set",
            _ => "invalid",
        };
        let waits_for = match self.waits_for {
            WaitKind::Idle => "new work",
            WaitKind::Join => "a job",
        };
        f.debug_struct("CoreLatch")
            .field("state", &state)
            .field("waits_for", &waits_for)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::CoreLatch;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    /// The message of the panic of worker `worker`'s `get_sleepy_as`.
    fn refusal(latch: &CoreLatch, worker: usize) -> String {
        let payload = catch_unwind(AssertUnwindSafe(|| {
            latch.get_sleepy_as(worker, "no_work_found");
        }))
        .expect_err("a held latch was taken by another worker");
        *payload.downcast::<String>().expect("a formatted message")
    }

    #[test]
    fn a_latch_another_worker_holds_is_refused_naming_both() {
        let latch = CoreLatch::new();
        assert!(latch.get_sleepy_as(0, "no_work_found"));
        let holder = "worker 0";
        let tail = "two workers share one latch, and each CoreLatch belongs to one worker";
        assert_eq!(
            refusal(&latch, 1),
            format!("no_work_found: worker 1 waits on a CoreLatch that {holder} is about to sleep on: {tail}")
        );
        assert!(
            latch.fall_asleep(),
            "the refusal changed the holder's latch"
        );
        assert_eq!(
            refusal(&latch, 1),
            format!(
                "no_work_found: worker 1 waits on a CoreLatch that {holder} is asleep on: {tail}"
            )
        );
        assert!(refusal(&latch, 0).contains("that another thread, also as worker 0, is asleep on"));
        // The public step takes no index: it only says no.
        assert!(!latch.get_sleepy());
        assert!(latch.set(), "the holder is still the one asleep");
        // A set latch is no misuse: its owner just does not sleep.
        assert!(!latch.get_sleepy_as(1, "no_work_found"));
    }

    #[test]
    fn a_latch_its_holder_released_may_be_taken_by_another_worker() {
        let latch = CoreLatch::new();
        assert!(latch.get_sleepy_as(0, "no_work_found"));
        latch.stay_awake();
        assert!(latch.get_sleepy_as(1, "no_work_found"));
        assert!(latch.fall_asleep());
        latch.wake_up();
        assert!(latch.get_sleepy());
        assert!(latch.fall_asleep());
        // Stepped through the public step: the holder is unknown.
        assert!(refusal(&latch, 2).contains("that another worker is asleep on"));
    }
}

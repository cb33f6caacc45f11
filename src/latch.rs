//! [`CoreLatch`]: the four-state latch a worker sleeps against.

use crate::sync::{AtomicU32, Ordering};

/// What a worker waiting on a latch waits for: it decides which search
/// budget the wait spends, and whether it counts against a searcher cap
/// (`src/idle/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitKind {
    /// The worker's top-level idle loop ([`CoreLatch::idle_loop`]): it
    /// waits for new work.
    Idle,
    /// A job's latch ([`CoreLatch::new`]): the worker waits for a job in
    /// flight (the stolen half of a join) and helps meanwhile.
    Join,
}

/// No worker is known to hold the latch sleepy or sleeping (`holder`).
const NO_HOLDER: u32 = u32::MAX;

/// Not set; the owner is not sleepy.
const UNSET: u32 = 0;
/// The owner is about to sleep (it will check the latch once more).
const SLEEPY: u32 = 1;
/// The owner is asleep, or registering to sleep: a setter must wake it.
const SLEEPING: u32 = 2;
/// Set. Final.
const SET: u32 = 3;

/// A latch owned by one worker of a pool, which sleeps against it while it
/// waits for the latch (rayon-core's `CoreLatch`, with the same states):
/// `UNSET → SLEEPY → SLEEPING → UNSET` as the owner dozes off and wakes, and
/// `SET` once any thread sets it. Both protocols step it; the latch lives
/// below them, so any [`SleepProtocol`](crate::SleepProtocol) can.
///
/// | state      | meaning                                                      |
/// |------------|--------------------------------------------------------------|
/// | `UNSET`    | not set; the owner is awake                                  |
/// | `SLEEPY`   | not set; the owner is about to sleep                         |
/// | `SLEEPING` | not set; the owner is asleep, so a setter must wake it       |
/// | `SET`      | set (final)                                                  |
///
/// The setter learns from [`set`](CoreLatch::set) whether the owner was
/// asleep and only then pays for a targeted wake:
/// [`SleepProtocol::notify_worker_latch_is_set`](crate::SleepProtocol::notify_worker_latch_is_set).
/// [`SleepProtocol::set_latch`](crate::SleepProtocol::set_latch) does both.
///
/// The owner's steps (`get_sleepy`, `fall_asleep`, `wake_up`) are for
/// implementations of `SleepProtocol`, public only with the `internals`
/// feature: the two in this crate call them inside `no_work_found`, and a
/// scheduler never does.
///
/// # Two kinds of wait
///
/// A latch also says what its owner waits for, which the idle policy needs
/// to know:
///
/// - [`CoreLatch::new`]: a latch that a job sets when it ends (the stolen
///   half of a `join`, the jobs of a scope). A worker waiting on it is
///   *joining*: its search is sized by how long such jobs take, and it never
///   counts against a searcher cap, since sending it to sleep only makes the
///   job's thread wake it.
/// - [`CoreLatch::idle_loop`]: the latch of a worker's top-level loop, set
///   only to stop the worker (rayon-core's `terminate`). A worker waiting on
///   it waits for new work.
///
/// Getting the kind wrong costs CPU or latency, never a wake.
///
/// # Panics
///
/// A latch belongs to one worker: only its owner sleeps against it. If two
/// workers wait on one latch and one of them sleeps, the other's sleep
/// attempt in either protocol of this crate panics ("no_work_found: worker
/// 1 waits on a CoreLatch that worker 0 is asleep on: two workers share one
/// latch …"), before it writes anything, so the sleeper is still woken
/// when the latch is set. The message names the sleeping worker, which
/// the protocols record as they step the latch. Without the check the
/// second worker would find the latch neither unset nor set at every round
/// and spin. (The owner's steps for other implementations take no worker
/// index and do not check: `get_sleepy` returns false, and a latch stepped
/// through it has no recorded holder.)
///
/// The setter names the owner too:
/// [`SleepProtocol::set_latch`](crate::SleepProtocol::set_latch)`(&latch, owner)`
/// panics if another worker is asleep or about to sleep on the latch
/// ("set_latch: the CoreLatch is set for worker 1, but worker 0 is asleep on
/// it …"), before it writes anything: the latch stays unset and its sleeper
/// asleep, where a wake sent to the wrong worker would leave the sleeper
/// asleep for good.
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
    /// What a wait on this latch is: set at construction, never changed.
    waits_for: WaitKind,
    /// The worker that stepped the latch to SLEEPY, through a protocol of
    /// this crate; `NO_HOLDER` when unknown (the latch was stepped through
    /// the public `get_sleepy`) or released. Only the holder writes it, on
    /// its way to sleep: after its step to SLEEPY and before its AcqRel step
    /// to SLEEPING, so a setter whose Acquire load reads SLEEPING sees it
    /// (one that reads SLEEPY may not yet, and lets the owner find SET). A
    /// setter reads it only then, and only to refuse a misuse. A correct program never acts on it, so the
    /// models need not see it.
    holder: crate::sync::unmodeled::AtomicU32,
}

impl CoreLatch {
    /// An unset latch that a job sets when it ends: its owner, waiting on
    /// it, is joining (see "Two kinds of wait" above).
    ///
    /// # Examples
    ///
    /// ```
    /// let latch = eventcount::CoreLatch::new();
    /// assert!(!latch.probe());
    /// latch.set();
    /// assert!(latch.probe());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        CoreLatch::with_kind(WaitKind::Join)
    }

    /// An unset latch for a worker's top-level loop, set only to stop the
    /// worker: its owner, waiting on it, waits for new work (see "Two kinds
    /// of wait" above). A pool whose workers stop some other way passes one
    /// it never sets.
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
        /// True for a latch made by [`CoreLatch::idle_loop`]: a wait on it is
        /// for new work, not for a job in flight. For protocol implementations.
        ///
        /// # Examples
        ///
        /// ```
        /// use eventcount::CoreLatch;
        /// assert!(CoreLatch::idle_loop().is_idle_loop());
        /// assert!(!CoreLatch::new().is_idle_loop());
        /// ```
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
    /// write the setter made before [`set`](CoreLatch::set) is visible to
    /// the caller (a job's result, in a scheduler). The loom model
    /// `latch_publishes_the_setters_writes` checks this, through a sleep
    /// and without one.
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
    /// must then wake the owner through its protocol's
    /// [`SleepProtocol::notify_worker_latch_is_set`](crate::SleepProtocol::notify_worker_latch_is_set)
    /// (`JecSleep`, `NotifierSleep` or any other implementation).
    /// [`SleepProtocol::set_latch`](crate::SleepProtocol::set_latch) does both.
    ///
    /// A swap, not a store: the old value is how the setter learns whether
    /// the owner sleeps. AcqRel: Release publishes the setter's writes to
    /// `probe`, Acquire orders the owner's registration (which precedes its
    /// SLEEPY → SLEEPING step) before the targeted wake that follows.
    /// Load-bearing: with Relaxed, the `*_latch_publishes_the_setters_writes`
    /// models read a stale payload.
    ///
    /// The swap is the last access to the latch: once SET is visible the
    /// owner may return and free it (rayon-core keeps latches on the
    /// owner's stack), so a caller must not touch the latch after `set`
    /// either. The targeted wake names the owner, not the latch.
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

    /// [`set`](CoreLatch::set) for a setter that names the latch's owner,
    /// as [`SleepProtocol::set_latch`](crate::SleepProtocol::set_latch)
    /// does: a panic naming `operation` and both workers if a worker other
    /// than `owner` holds the latch sleepy or sleeping, before anything is
    /// written. Otherwise the same step as `set`, with the same result.
    ///
    /// A compare-exchange from the state last read, not a swap: the check
    /// must see the state it replaces. Each retry follows a step of the
    /// owner's, which takes at most three (SLEEPY, SLEEPING, UNSET) per
    /// sleep, so the loop never spins waiting for another thread. A failed
    /// exchange reads with Acquire so that, on SLEEPING, the holder's record
    /// (written before its AcqRel step there) is visible; on SLEEPY the record may still be
    /// on its way, and the check is best effort, which costs nothing: a
    /// setter never wakes anyone from SLEEPY, and the owner finds SET.
    /// Success is AcqRel, as `set`'s swap is, and returns the state it
    /// replaced.
    #[inline]
    #[track_caller]
    pub(crate) fn set_owned_by(&self, owner: usize, operation: &str) -> bool {
        // The common case inline: the owner awake, one compare-exchange
        // from UNSET, as costly as `set`'s swap.
        match self
            .state
            .compare_exchange(UNSET, SET, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => false,
            Err(found) => self.set_owned_by_from(found, owner, operation),
        }
    }

    /// The rest of `set_owned_by` from a state read as `state`: out of
    /// line, since a setter reaches it only when the owner is on its way to
    /// sleep, or asleep and about to cost a wake.
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
    /// or SLEEPING). Out of line: a setter reaches it only when the owner
    /// is on its way to sleep or asleep, and then pays a wake anyway.
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
        /// the latch is set (do not sleep). For protocol implementations.
        ///
        /// It also returns false if another worker holds the latch sleepy or
        /// sleeping, which is a misuse: a latch belongs to one worker. This
        /// step takes no worker index, so it cannot say who; this crate's
        /// protocols check it and panic (see "Panics" on [`CoreLatch`]).
        ///
        /// Success is AcqRel, and defensive: every model passes with Relaxed. A
        /// setter acts only on SLEEPING (it wakes the owner), and that value is
        /// written by `fall_asleep`, whose Release is the one that orders the
        /// owner's registration before the setter's wake. Failure is
        /// Relaxed, as in rayon-core: it means SET (unless the latch is
        /// misused), and both callers (the two
        /// protocols' sleep attempts) then return at once without reading
        /// anything the setter wrote; whatever the owner reads next, it reads
        /// after `probe`, whose Acquire is what publishes the setter's writes.
        ///
        /// # Examples
        ///
        /// ```
        /// let latch = eventcount::CoreLatch::new();
        /// assert!(latch.get_sleepy());
        /// assert!(latch.fall_asleep()); // the owner is registered as a sleeper
        /// latch.wake_up(); // and woke up: UNSET again
        /// assert!(!latch.probe());
        /// ```
        #[inline]
        pub fn get_sleepy(&self) -> bool {
            let stepped = self.step_to_sleepy().is_ok();
            if stepped {
                self.record_holder(None);
            }
            stepped
        }
    }

    /// [`get_sleepy`](CoreLatch::get_sleepy) for worker `worker`, as this
    /// crate's protocols take it: false if the latch is set; a panic
    /// naming `operation` (the call the user made) and both workers if
    /// another worker holds it sleepy or sleeping. Nothing is written then:
    /// that worker's sleep is left as it was.
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

    /// Note who holds the latch now (`None`: unknown, or nobody). Relaxed:
    /// the owner's next step on the latch, AcqRel, publishes it to a
    /// setter; only the messages and the setter's owner check read it.
    #[inline]
    fn record_holder(&self, worker: Option<usize>) {
        self.holder.store(
            worker.map_or(NO_HOLDER, |w| w as u32),
            crate::sync::unmodeled::Relaxed,
        );
    }

    /// The panic of `get_sleepy_as` for worker `worker` finding the latch
    /// `held` (SLEEPY or SLEEPING) by another worker.
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
            // The same index: two threads use it (a misuse of its own, which
            // the protocols catch too when they get that far).
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
        /// The owner's second step, once it can be woken (for the notifier:
        /// once it is on the waiter stack; for the JEC protocol: while it is
        /// registering): SLEEPY → SLEEPING, after which a setter's
        /// [`set`](CoreLatch::set) returns true and the setter wakes it. False
        /// if the latch was set meanwhile. Failure is Relaxed for the reason
        /// given at `get_sleepy`: the caller only backs out and returns, and
        /// reads the setter's writes after `probe`. Success is AcqRel, and
        /// load-bearing: its Release orders the owner's registration before a
        /// setter's view of SLEEPING (with Relaxed,
        /// `latch_set_while_owner_sleepy_or_sleeping` deadlocks). For protocol
        /// implementations.
        ///
        /// # Examples
        ///
        /// ```
        /// let latch = eventcount::CoreLatch::new();
        /// assert!(latch.get_sleepy());
        /// latch.set(); // a setter got in between
        /// assert!(!latch.fall_asleep()); // so the owner must not sleep
        /// ```
        #[inline]
        pub fn fall_asleep(&self) -> bool {
            self.state
                .compare_exchange(SLEEPY, SLEEPING, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        }
    }

    /// The owner backs out between [`get_sleepy`](CoreLatch::get_sleepy)
    /// and [`fall_asleep`](CoreLatch::fall_asleep): SLEEPY → UNSET, unless
    /// the latch was set meanwhile (SET stays). Only a misuse that a
    /// protocol catches at that point takes this step, on its way to a
    /// panic. A setter never acts on SLEEPY (its `set` returns false), so
    /// the SLEEPY this undoes told nobody anything. Relaxed: the owner
    /// publishes nothing, and a failure means SET, which it reads through
    /// `probe`.
    #[inline]
    pub(crate) fn stay_awake(&self) {
        self.record_holder(None);
        let _ = self
            .state
            .compare_exchange(SLEEPY, UNSET, Ordering::Relaxed, Ordering::Relaxed);
    }

    internal! {
        /// The owner is awake again (after sleeping, or after backing out of a
        /// sleep): SLEEPING → UNSET, unless the latch was set meanwhile. For
        /// protocol implementations.
        ///
        /// # Examples
        ///
        /// ```
        /// let latch = eventcount::CoreLatch::new();
        /// latch.set();
        /// latch.wake_up(); // SET stays SET
        /// assert!(latch.probe());
        /// ```
        #[inline]
        pub fn wake_up(&self) {
            // Before the step: once the latch is UNSET another worker may step
            // it, and its record must stand.
            self.record_holder(None);
            // A failure means SET, which must stay. AcqRel is defensive (every
            // model passes with Relaxed): only the owner leaves SLEEPING this
            // way, and it publishes nothing; a setter that raced it wrote SET,
            // which the owner reads through `probe`'s Acquire.
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

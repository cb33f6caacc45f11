//! [`Notifier`], an event count with a lock-free stack of waiters on futex words,
//! and what is built on it; it follows [docs/notifier.md](crate::docs::notifier).

mod idle_count;
mod sleep;
mod slot;
mod state;
mod token;
mod waiter_ids;

use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::error::{check_capacity, CapacityError};
use crate::outcome::WaitOutcome;
use crate::stats::SleepStats;
use crate::sync::{fence, AtomicU64, Ordering};
use crate::unpark::Unpark;
use slot::{Claim, Delivery, ParkEnd, Slot, Withdrawal, CANCELLED, PARKED, PARKED_EXTERNAL};
use state::{stack_word, stack_word_top, State, MAX_SLOTS, ONE_EPOCH};

pub use sleep::{NotifierIdle, NotifierSleep};
pub use token::PreparedWait;
pub use waiter_ids::{WaiterId, WaiterIds};

/// An event count: lets worker threads sleep until a condition they check
/// themselves (usually "some queue is non-empty") may have become true,
/// without a mutex around the condition.
///
/// A waiter owns one of the `capacity()` slots, named by a waiter id
/// (`wid`), and follows the two-phase pattern:
///
/// ```text
/// waiter:   if cond() { act } else {
///               let w = n.prepare_wait(wid);
///               if cond() { n.cancel_wait(w); act } else { n.commit_wait(w) }  // sleeps
///           }
/// notifier: make cond() true; n.notify_one()   // or notify_n(k), notify_all()
/// ```
///
/// No wakeup is lost, and each notification goes to one waiter (passed on
/// if it cancels); wakes may be spurious. A notify with nobody waiting is
/// one `SeqCst` fence and one load. [The guide](crate::guide) has complete
/// examples, and [docs/notifier.md](crate::docs::notifier) the proof.
pub struct Notifier {
    /// The packed state word; layout in `state.rs` and [docs/notifier.md](crate::docs::notifier):
    ///
    /// | bits   | field                                    |
    /// |--------|------------------------------------------|
    /// | 0..16  | stack top (`0xFFFF` = empty)             |
    /// | 16..64 | epoch of the top slot's push (ABA guard) |
    state: CachePadded<AtomicU64>,
    slots: Box<[CachePadded<Slot>]>,
    /// Wakes a waiter parked in its caller's `park` (`commit_wait_parked`).
    unpark: Option<Unpark>,
}

/// How a commit ended, for a protocol's [`Round`](crate::Round).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// A notification reached the waiter before it slept.
    Notified,
    /// The waiter slept, and a notification ended the sleep.
    Woken,
    /// No notification came by its deadline or `park` return; it left the waiter set.
    Withdrew,
}

impl Notifier {
    /// A notifier with `slots` waiter slots, ids `0..slots`.
    ///
    /// # Panics
    ///
    /// If `slots` is 0 or over 65,535 ([`Notifier::try_new`] returns an error).
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(8);
    /// assert_eq!(n.capacity(), 8);
    /// ```
    #[track_caller]
    pub fn new(slots: usize) -> Notifier {
        match Notifier::try_new(slots) {
            Ok(notifier) => notifier,
            Err(err) => panic!("Notifier::new: {err}"),
        }
    }

    /// A notifier with `slots` waiter slots, or an error if `slots` is 0 or
    /// over 65,535.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(eventcount::Notifier::try_new(64).is_ok());
    /// assert!(eventcount::Notifier::try_new(0).is_err());
    /// ```
    pub fn try_new(slots: usize) -> Result<Notifier, CapacityError> {
        Notifier::with_slot_epoch(slots, 0, None)
    }

    internal! {
        /// A notifier whose waiters may also sleep in their caller's park, woken
        /// by `unpark(wid)` in place of a futex wake.
        ///
        /// # Panics
        ///
        /// If `slots` is 0 or over [`Notifier::MAX_CAPACITY`].
        pub fn with_unpark(slots: usize, unpark: Unpark) -> Notifier {
            match Notifier::try_with_unpark(slots, unpark) {
                Ok(notifier) => notifier,
                Err(err) => panic!("Notifier::with_unpark: {err}"),
            }
        }
    }

    internal! {
        /// [`with_unpark`](Notifier::with_unpark), or an error if `slots` is 0
        /// or over [`Notifier::MAX_CAPACITY`].
        pub fn try_with_unpark(slots: usize, unpark: Unpark) -> Result<Notifier, CapacityError> {
            Notifier::with_slot_epoch(slots, 0, Some(unpark))
        }
    }

    fn with_slot_epoch(
        slots: usize,
        epoch: u64,
        unpark: Option<Unpark>,
    ) -> Result<Notifier, CapacityError> {
        check_capacity("Notifier", "waiter slots", slots, MAX_SLOTS)?;
        Ok(Notifier {
            state: CachePadded::new(AtomicU64::new(State::EMPTY.0)),
            slots: (0..slots)
                .map(|_| CachePadded::new(Slot::new(epoch)))
                .collect(),
            unpark,
        })
    }

    /// Slot epochs two pushes below the 48-bit wrap, so that tests cross it.
    #[cfg(test)]
    pub(crate) fn with_epoch_near_wrap(slots: usize) -> Notifier {
        let epoch = state::EPOCH_MASK.wrapping_sub(ONE_EPOCH);
        Notifier::with_slot_epoch(slots, epoch, None).expect("with_epoch_near_wrap: too many slots")
    }

    internal! {
        /// The most waiter slots a notifier can have (65,535): a 16-bit stack index.
        pub const MAX_CAPACITY: usize = MAX_SLOTS;
    }

    /// The number of waiter slots: waiter ids are `0..capacity()`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::Notifier::new(3).capacity(), 3);
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many committed waiters no notify has released yet: a scan, not for a hot path.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::Notifier::new(4).num_sleeping(), 0);
    /// ```
    #[must_use]
    pub fn num_sleeping(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| matches!(slot.state(), PARKED | PARKED_EXTERNAL))
            .count()
    }

    /// How many times waiters slept and notifiers made a wake syscall.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::Notifier::new(1).stats().waits, 0);
    /// ```
    #[must_use]
    pub fn stats(&self) -> SleepStats {
        self.slots
            .iter()
            .fold(SleepStats::default(), |s, slot| s.add(slot.futex.counts()))
    }

    /// Slot `wid`'s share of [`stats`](Notifier::stats): its sleeps and the wakes made to it.
    pub(crate) fn slot_counts(&self, wid: usize) -> (u64, u64) {
        self.slots[wid].futex.counts()
    }

    /// Phase one: announce that slot `wid` is about to sleep. Re-check the
    /// condition, then pass the token to [`cancel_wait`](Notifier::cancel_wait)
    /// or [`commit_wait`](Notifier::commit_wait); dropping it cancels.
    ///
    /// # Panics
    ///
    /// If `wid >= self.capacity()`, or if slot `wid` already has a wait in
    /// progress (a live token, or a commit that has not returned).
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(2);
    /// let wait = n.prepare_wait(1);
    /// n.cancel_wait(wait);
    /// ```
    #[track_caller]
    pub fn prepare_wait(&self, wid: usize) -> PreparedWait<'_> {
        let size = self.slots.len();
        let Some(slot) = self.slots.get(wid) else {
            panic!(
                "prepare_wait: waiter id {wid} is out of range for a Notifier with {size} slots"
            );
        };
        let claim = slot.claim(wid);
        self.announce(wid, slot, claim)
    }

    /// [`prepare_wait`](Notifier::prepare_wait) for a protocol: a wait already in
    /// progress is an error naming its state. `before_push` runs before the push
    /// and the WaitFence, where `NotifierSleep` counts its awake idle workers.
    pub(crate) fn try_prepare_wait(
        &self,
        wid: usize,
        before_push: impl FnOnce(),
    ) -> Result<PreparedWait<'_>, &'static str> {
        let slot = &self.slots[wid];
        let claim = slot.try_claim().map_err(slot::state_name)?;
        before_push();
        Ok(self.announce(wid, slot, claim))
    }

    /// A prepare once slot `wid` is claimed: the push if needed, the WaitFence.
    fn announce(&self, wid: usize, slot: &Slot, claim: Claim) -> PreparedWait<'_> {
        if claim == Claim::Push {
            self.push(wid, slot);
        }
        // WaitFence, the waiter half of the handshake, pairs with every
        // notify's NotifyFence (docs/notifier.md, "No lost wakeup").
        fence(Ordering::SeqCst);
        PreparedWait::new(self, wid)
    }

    /// Push slot `wid` (already PREPARED) on the waiter stack.
    fn push(&self, wid: usize, slot: &Slot) {
        let epoch = slot.epoch.load(Ordering::Relaxed);
        let mut state = State(self.state.load(Ordering::Relaxed));
        loop {
            state.debug_check(self.slots.len());
            slot.next.store(state.0, Ordering::Relaxed);
            let new = State(stack_word(wid, epoch));
            // Release publishes the link (and PREPARED) to the popper's Acquire;
            // load-bearing (`aba_stale_pop_after_repush`). Every write to the state
            // word is an RMW, so later pushes and pops continue this release sequence.
            match self.state.compare_exchange_weak(
                state.0,
                new.0,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(current) => state = State(current),
            }
        }
        // The next push of this slot carries a new epoch, so a notifier that
        // read this push's link and stalled fails its CAS (docs, "Epoch").
        slot.epoch
            .store(epoch.wrapping_add(ONE_EPOCH), Ordering::Relaxed);
    }

    /// Phase two, condition true: leave the wait without sleeping. A
    /// notification already delivered here is passed on to the next waiter.
    ///
    /// # Panics
    ///
    /// If `wait` came from a different notifier.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(1);
    /// let wait = n.prepare_wait(0);
    /// n.cancel_wait(wait);
    /// let again = n.prepare_wait(0); // the slot is free again at once
    /// n.cancel_wait(again);
    /// ```
    #[track_caller]
    pub fn cancel_wait(&self, wait: PreparedWait<'_>) {
        let wid = wait.disarm_for(self, "cancel_wait");
        self.cancel(wid);
    }

    /// `cancel_wait`, but a notification already delivered is kept, not
    /// passed on: the caller counts as woken. Returns whether one was
    /// (docs/notifier.md, "A withdrawal keeps its notification").
    pub(crate) fn withdraw_keeping(&self, wait: PreparedWait<'_>, operation: &str) -> bool {
        let wid = wait.disarm_for(self, operation);
        self.withdraw(wid) != Withdrawal::Withdrawn
    }

    /// The cancel step itself; also run by `PreparedWait::drop`.
    fn cancel(&self, wid: usize) {
        if self.withdraw(wid) == Withdrawal::Signaled {
            // A notification came, but we will not sleep: pass it on. Load-bearing
            // Acquire: the pop reads the top slot's link (four models fail with
            // Relaxed, `cancel_racing_notify_keeps_signal_for_other_waiter` among them).
            let state = State(self.state.load(Ordering::Acquire));
            if !state.is_empty() {
                self.notify_slow(state, 1, |_| {});
            }
        }
    }

    /// Take slot `wid` out of the waiter set without sleeping: pop it if on
    /// top, else leave it stacked as CANCELLED; the slot word's CAS decides races.
    fn withdraw(&self, wid: usize) -> Withdrawal {
        let slot = &self.slots[wid];
        // Acquire, defensive: the only link read below is our own.
        let mut state = State(self.state.load(Ordering::Acquire));
        while state.top() == Some(wid) {
            // On top (the usual case): pop ourselves. AcqRel / Acquire, defensive:
            // the link we install is our own, and those below stay published.
            let next = slot.next.load(Ordering::Relaxed);
            match self.state.compare_exchange_weak(
                state.0,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return slot.leave_popped(),
                Err(current) => state = State(current),
            }
        }
        // Below the top, or popped by a notifier already.
        slot.leave_in_place(wid)
    }

    /// Phase two, condition still false: sleep until notified, or return at
    /// once if a notification already came. Re-check the condition after.
    ///
    /// # Panics
    ///
    /// If `wait` came from a different notifier.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(1);
    /// let wait = n.prepare_wait(0);
    /// n.notify_one(); // reaches the prepared waiter: no syscall
    /// n.commit_wait(wait); // finds the notification and returns at once
    /// ```
    #[track_caller]
    pub fn commit_wait(&self, wait: PreparedWait<'_>) {
        let wid = wait.disarm_for(self, "commit_wait");
        let _ = self.commit_on_futex(wid, None);
    }

    /// Park slot `wid` on its futex word until notified or `deadline`, then leave.
    fn commit_on_futex(&self, wid: usize, deadline: Option<Instant>) -> Ended {
        let slot = &self.slots[wid];
        match slot.commit(PARKED) {
            Ok(()) => self.finish_wait(wid, slot.park(deadline), Ended::Woken),
            Err(ended) => self.finish_wait(wid, ended, Ended::Notified),
        }
    }

    internal! {
        /// Phase two for a waiter that sleeps in a park of its own (an I/O
        /// driver's poll): `park(deadline)` runs once unless notified first, and a
        /// notify meanwhile calls the [`Unpark`] hook. A `park` that returns with
        /// nothing delivered withdraws the waiter, as a timeout does.
        ///
        /// # Panics
        ///
        /// If `wait` came from another notifier, or this one has no unpark
        /// hook; the wait is then cancelled and `park` is not called.
        pub fn commit_wait_parked(
            &self,
            wait: PreparedWait<'_>,
            deadline: Option<Instant>,
            park: impl FnMut(Option<Instant>),
        ) -> WaitOutcome {
            self.check_unpark("commit_wait_parked", &wait);
            let wid = wait.disarm_for(self, "commit_wait_parked");
            match self.commit_parked(wid, deadline, park) {
                Ended::Notified | Ended::Woken => WaitOutcome::Notified,
                Ended::Withdrew => WaitOutcome::TimedOut,
            }
        }
    }

    /// The panic of a parked commit on a notifier without a hook, before any write.
    #[track_caller]
    pub(crate) fn check_unpark(&self, operation: &str, wait: &PreparedWait<'_>) {
        assert!(
            self.unpark.is_some(),
            "{operation}: waiter slot {} would park externally, but this Notifier has no \
             unpark hook (build it with Notifier::with_unpark, or the protocol with \
             try_with_unpark)",
            wait.wid()
        );
    }

    /// Park slot `wid` in the caller's `park` (the hook is checked), then leave.
    fn commit_parked(
        &self,
        wid: usize,
        deadline: Option<Instant>,
        park: impl FnMut(Option<Instant>),
    ) -> Ended {
        let slot = &self.slots[wid];
        match slot.commit(PARKED_EXTERNAL) {
            Ok(()) => self.finish_wait(wid, slot.park_external(deadline, park), Ended::Woken),
            Err(ended) => self.finish_wait(wid, ended, Ended::Notified),
        }
    }

    /// A protocol's commit, for a [`Round`](crate::Round): on the futex word, or in `park`.
    pub(crate) fn commit_for_round(
        &self,
        wait: PreparedWait<'_>,
        operation: &str,
        deadline: Option<Instant>,
        park: Option<impl FnMut(Option<Instant>)>,
    ) -> Ended {
        let wid = wait.disarm_for(self, operation);
        match park {
            None => self.commit_on_futex(wid, deadline),
            Some(park) => self.commit_parked(wid, deadline, park),
        }
    }

    /// Phase two until notified or `deadline`. A [`WaitOutcome::TimedOut`] waiter
    /// took no notification, and its slot is free again at once.
    ///
    /// # Panics
    ///
    /// If `wait` came from a different notifier.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(1);
    /// let wait = n.prepare_wait(0);
    /// let deadline = std::time::Instant::now() + std::time::Duration::from_millis(5);
    /// let outcome = n.commit_wait_until(wait, deadline);
    /// assert_eq!(outcome, eventcount::WaitOutcome::TimedOut);
    /// ```
    #[track_caller]
    pub fn commit_wait_until(&self, wait: PreparedWait<'_>, deadline: Instant) -> WaitOutcome {
        self.commit_with_deadline("commit_wait_until", wait, deadline)
    }

    /// A commit that ends at `deadline`; `operation` names the call in messages.
    #[track_caller]
    fn commit_with_deadline(
        &self,
        operation: &str,
        wait: PreparedWait<'_>,
        deadline: Instant,
    ) -> WaitOutcome {
        let wid = wait.disarm_for(self, operation);
        outcome_of(self.commit_on_futex(wid, Some(deadline)))
    }

    /// The owner's side after its commit: `notified` is what a
    /// notification means here (it came before the sleep, or ended it).
    fn finish_wait(&self, wid: usize, ended: ParkEnd, notified: Ended) -> Ended {
        match ended {
            ParkEnd::Signaled => {
                self.slots[wid].release();
                notified
            }
            ParkEnd::Targeted => {
                // Still stacked: withdraw, not forwarding (the wake was ours).
                let _ = self.withdraw(wid);
                notified
            }
            ParkEnd::TimedOut => match self.withdraw(wid) {
                Withdrawal::Withdrawn => Ended::Withdrew,
                // A notification beat our deadline: report it, never swallow it.
                Withdrawal::Targeted | Withdrawal::Signaled => notified,
            },
        }
    }

    /// Call the hook for slot `wid`, which a notify found parked externally.
    #[cold]
    fn unpark(&self, wid: usize) {
        if let Some(unpark) = &self.unpark {
            self.slots[wid].count_external_wake();
            unpark(wid);
        }
    }

    /// Wake the waiter in slot `wid` alone, as a latch needs, if it is waiting;
    /// returns whether it was. Like every notify it starts with a `SeqCst`
    /// fence: make the owner's condition true first.
    ///
    /// # Panics
    ///
    /// If `wid >= self.capacity()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(2);
    /// let wait = n.prepare_wait(1);
    /// assert!(!n.notify_waiter(0)); // slot 0 is not waiting
    /// assert!(n.notify_waiter(1));
    /// n.commit_wait(wait); // returns at once
    /// ```
    #[track_caller]
    pub fn notify_waiter(&self, wid: usize) -> bool {
        let size = self.slots.len();
        let Some(slot) = self.slots.get(wid) else {
            panic!(
                "notify_waiter: waiter id {wid} is out of range for a Notifier with {size} slots"
            );
        };
        // NotifyFence: pairs with the WaitFence in `prepare_wait`.
        fence(Ordering::SeqCst);
        match slot.wake_in_place() {
            Delivery::Skipped => false,
            Delivery::Unpark => {
                self.unpark(wid);
                true
            }
            Delivery::Signalled | Delivery::Woken => true,
        }
    }

    /// Wake one waiter, if any; returns whether one was released. The last
    /// prepared goes first: it is often still awake, and its cache warm.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!eventcount::Notifier::new(1).notify_one()); // nobody waits
    /// ```
    #[inline]
    pub fn notify_one(&self) -> bool {
        // NotifyFence, the notifier half of the handshake (docs/notifier.md,
        // "No lost wakeup"): orders the condition change before the load.
        fence(Ordering::SeqCst);
        // Load-bearing Acquire: the slow path reads the top slot's link,
        // published by its push (with Relaxed, `aba_stale_pop_after_repush`
        // pops a slot in an impossible state).
        let state = State(self.state.load(Ordering::Acquire));
        if state.is_empty() {
            return false;
        }
        self.notify_slow(state, 1, |_| {}) == 1
    }

    /// Wake at most `n` waiters; returns how many were released.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(4);
    /// let (a, b) = (n.prepare_wait(0), n.prepare_wait(1));
    /// assert_eq!(n.notify_n(1), 1); // one of the two waiters is notified
    /// n.cancel_wait(a); // if it was `a`, the notification moves on to `b`
    /// n.commit_wait(b); // so this returns at once either way
    /// ```
    #[inline]
    pub fn notify_n(&self, n: usize) -> usize {
        self.notify_up_to(n, |n| n, |_| {})
    }

    /// `notify_n(n)`, but if somebody waits `how_many(n)` decides how many, after
    /// the NotifyFence (so it sees what waiters wrote before their WaitFence).
    /// `delivered(wid)` runs per waiter released, before its wake's syscall, so
    /// that posts made during the syscall already count on that worker.
    #[inline]
    pub(crate) fn notify_up_to(
        &self,
        n: usize,
        how_many: impl FnOnce(usize) -> usize,
        delivered: impl FnMut(usize),
    ) -> usize {
        if n == 0 {
            return 0;
        }
        // NotifyFence (see notify_one).
        fence(Ordering::SeqCst);
        // Load-bearing Acquire, as in notify_one
        // (`aba_stale_pop_after_repush_notify_n` fails with Relaxed).
        let state = State(self.state.load(Ordering::Acquire));
        if state.is_empty() {
            return 0;
        }
        self.notify_up_to_slow(state, n, how_many, delivered)
    }

    /// Out of line, so that the fast path above saves no registers for it.
    #[inline(never)]
    fn notify_up_to_slow(
        &self,
        state: State,
        n: usize,
        how_many: impl FnOnce(usize) -> usize,
        delivered: impl FnMut(usize),
    ) -> usize {
        let n = how_many(n);
        if n == 0 {
            return 0;
        }
        if n >= self.slots.len() {
            // At most one waiter per slot, so `n >= capacity` means "all",
            // and taking the whole stack in one CAS is cheaper than n pops.
            self.notify_all_slow(state, delivered)
        } else {
            self.notify_slow(state, n, delivered)
        }
    }

    /// Wake every waiter (one CAS takes the whole stack); returns how many.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(2);
    /// let wait = n.prepare_wait(0);
    /// assert_eq!(n.notify_all(), 1);
    /// n.commit_wait(wait); // returns at once: it was notified
    /// ```
    #[inline]
    pub fn notify_all(&self) -> usize {
        // NotifyFence (see notify_one).
        fence(Ordering::SeqCst);
        // Acquire, defensive (every model passes with Relaxed): the links are
        // read after notify_all_slow's CAS, whose own Acquire covers them.
        let state = State(self.state.load(Ordering::Acquire));
        if state.is_empty() {
            return 0;
        }
        self.notify_all_slow(state, |_| {})
    }

    /// Pop and notify waiters until `want` were released or none is left.
    #[cold]
    fn notify_slow(
        &self,
        mut state: State,
        want: usize,
        mut delivered: impl FnMut(usize),
    ) -> usize {
        let mut released = 0;
        loop {
            state.debug_check(self.slots.len());
            let Some(top) = state.top() else {
                return released;
            };
            // The Acquire that produced `state` makes this link visible.
            let popped = State(self.slots[top].next.load(Ordering::Relaxed));
            // AcqRel on success, defensive: the pushes' release sequences
            // already publish the next top's link. Acquire on failure is
            // load-bearing: the retry reads the new top's link (with Relaxed,
            // `cancel_racing_notify_keeps_signal_for_other_waiter` deadlocks).
            match self.state.compare_exchange_weak(
                state.0,
                popped.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    let slot = &self.slots[top];
                    let delivery = slot.deliver();
                    state = popped;
                    if !matches!(delivery, Delivery::Skipped) {
                        delivered(top);
                    }
                    match delivery {
                        Delivery::Skipped => continue,
                        Delivery::Signalled => {}
                        Delivery::Woken => slot.wake(),
                        Delivery::Unpark => self.unpark(top),
                    }
                    released += 1;
                    if released == want {
                        return released;
                    }
                }
                Err(current) => state = State(current),
            }
        }
    }

    /// Take the whole stack in one CAS and notify every waiter on it.
    #[cold]
    fn notify_all_slow(&self, mut state: State, mut delivered: impl FnMut(usize)) -> usize {
        loop {
            state.debug_check(self.slots.len());
            if state.is_empty() {
                return 0;
            }
            // AcqRel / Acquire, defensive one at a time: this CAS and the load
            // before it read the same word, and each one's Acquire covers the other.
            match self.state.compare_exchange_weak(
                state.0,
                State::EMPTY.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(current) => state = State(current),
            }
        }
        // The chain is ours now: no other notifier can reach it, and its
        // slots cannot be pushed again until we deliver to them. Read each
        // link before delivering, since a notified slot may re-push at once.
        let mut released = 0;
        let mut link = state.0;
        while let Some(wid) = stack_word_top(link) {
            let slot = &self.slots[wid];
            link = slot.next.load(Ordering::Relaxed);
            let delivery = slot.deliver();
            if !matches!(delivery, Delivery::Skipped) {
                delivered(wid);
            }
            match delivery {
                Delivery::Skipped => {}
                Delivery::Signalled => released += 1,
                Delivery::Woken => {
                    slot.wake();
                    released += 1;
                }
                Delivery::Unpark => {
                    self.unpark(wid);
                    released += 1;
                }
            }
        }
        released
    }
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("capacity", &self.slots.len())
            .field("state", &State(self.state.load(Ordering::Relaxed)))
            .field("unpark_hook", &self.unpark.is_some())
            .finish()
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        // Tokens and commits borrow the notifier: only cancelled slots (or a
        // leaked token's) can be stacked. Debug builds only, and never while
        // unwinding, where a second panic would abort and hide the first.
        if !cfg!(debug_assertions) || std::thread::panicking() {
            return;
        }
        let (stacked, _) = self.walk_stack();
        for wid in stacked {
            let state = self.slots[wid].state();
            if state != CANCELLED {
                panic!(
                    "Notifier dropped while slot {wid} is still {}: was a PreparedWait \
                     leaked? (A NotifierIdle leaked after its announcement holds one.)",
                    slot::state_name(state)
                );
            }
        }
    }
}

impl Notifier {
    /// The stacked slots, top first, by Relaxed loads (no other thread about),
    /// and the last link: empty unless a cycle stopped the walk.
    fn walk_stack(&self) -> (Vec<usize>, u64) {
        let mut stacked = Vec::new();
        let mut link = self.state.load(Ordering::Relaxed);
        while let Some(wid) = stack_word_top(link) {
            if stacked.len() > self.slots.len() {
                break;
            }
            stacked.push(wid);
            link = self.slots[wid].next.load(Ordering::Relaxed);
        }
        (stacked, link)
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

/// A commit's end as the public timed calls report it.
fn outcome_of(ended: Ended) -> WaitOutcome {
    match ended {
        Ended::Notified | Ended::Woken => WaitOutcome::Notified,
        Ended::Withdrew => WaitOutcome::TimedOut,
    }
}

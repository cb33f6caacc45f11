//! [`Notifier`]: a two-phase event count with a lock-free stack of prepared
//! waiters (every waiter from its `prepare_wait` on), each parked on its own
//! futex word; and what is built on it.
//!
//! The protocol, its orderings and the proof that no wakeup is lost are in
//! [docs/notifier.md](crate::docs::notifier); this file follows it step by step.
//!
//! | file            | what                                                        |
//! |-----------------|-------------------------------------------------------------|
//! | `mod.rs`        | [`Notifier`]: prepare, commit, cancel and the notifies       |
//! | `state.rs`      | the packed state word: the waiter stack's top and its epoch  |
//! | `slot.rs`       | one waiter slot: the futex word its owner sleeps on, its link |
//! | `token.rs`      | [`PreparedWait`], one prepare's commit-or-cancel, as a type   |
//! | `waiter_ids.rs` | [`WaiterIds`], slot ids for waiters that come and go          |
//! | `sleep.rs`      | [`NotifierSleep`], the notifier as a pool's sleep protocol    |

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
/// A waiter owns one of the notifier's `capacity()` slots, named by a
/// waiter id (`wid`) in `0..capacity()`. It follows the two-phase pattern:
///
/// ```text
/// waiter:   if cond() { act } else {
///               let w = n.prepare_wait(wid);
///               if cond() { n.cancel_wait(w); act } else { n.commit_wait(w) }  // sleeps
///           }
/// notifier: make cond() true; n.notify_one()   // or notify_n(k), notify_all()
/// ```
///
/// If a notifier makes the condition true and then notifies, every waiter
/// that re-checked the condition after its `prepare_wait` and found it false
/// is either woken or finds a signal at its commit; no wakeup is lost. Wakes
/// may be spurious (a woken waiter must check its condition again), never
/// missing.
///
/// Every notification is delivered to one particular waiter: a notify pops a
/// waiter off the notifier's lock-free stack and hands it the notification,
/// which no other waiter can take. A waiter that cancels after receiving one
/// passes it on to the next waiter.
///
/// Costs:
/// - a notify with nobody waiting is one `SeqCst` fence and one load: no
///   read-modify-write, no syscall, no write to a shared cache line. (One
///   exception: a waiter that cancels while another waiter sits above it in
///   the stack leaves its slot there, marked cancelled, until its own next
///   prepare revives it or a notify clears it; that notify pays one pop per
///   such slot and then the fast path is back. [docs/notifier.md](crate::docs::notifier), "the cost
///   of this design".)
/// - a notify that reaches a prepared-but-not-committed waiter costs two
///   compare-and-swaps (pop, deliver) and no syscall;
/// - a notify that reaches a committed waiter makes one `futex_wake`, and
///   only because that waiter is actually asleep;
/// - a notify that reaches a waiter parked in its caller's park (as
///   [`NotifierSleep`](crate::NotifierSleep)'s workers do in
///   `no_work_found_parked`) calls the [`Unpark`] hook instead, once;
/// - no thread ever waits for another thread's commit or cancel.
///
/// # Examples
///
/// A consumer that sleeps until a counter is non-zero:
///
/// ```
/// use eventcount::Notifier;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// use std::thread;
///
/// let notifier = Arc::new(Notifier::new(1));
/// let items = Arc::new(AtomicUsize::new(0));
///
/// let consumer = {
///     let (notifier, items) = (notifier.clone(), items.clone());
///     thread::spawn(move || loop {
///         // Fast check first: no protocol cost while there is work.
///         if items.load(Ordering::Acquire) > 0 {
///             return items.swap(0, Ordering::AcqRel);
///         }
///         let wait = notifier.prepare_wait(0);
///         // Re-check after preparing: a producer that made the condition
///         // true before this point is seen here; one after it will notify.
///         if items.load(Ordering::Acquire) > 0 {
///             notifier.cancel_wait(wait);
///         } else {
///             notifier.commit_wait(wait);
///         }
///     })
/// };
///
/// items.fetch_add(1, Ordering::Release);
/// notifier.notify_one();
/// assert_eq!(consumer.join().unwrap(), 1);
/// ```
pub struct Notifier {
    /// The packed state word; layout in `state.rs` and [docs/notifier.md](crate::docs::notifier):
    ///
    /// | bits   | field                                    |
    /// |--------|------------------------------------------|
    /// | 0..16  | stack top (`0xFFFF` = empty)             |
    /// | 16..64 | epoch of the top slot's push (ABA guard) |
    state: CachePadded<AtomicU64>,
    slots: Box<[CachePadded<Slot>]>,
    /// Wakes a waiter parked in its caller's `park`
    /// ([`commit_wait_parked`](Notifier::commit_wait_parked)); read only
    /// by a notify that finds one.
    unpark: Option<Unpark>,
}

/// How a commit ended, for a protocol's [`Round`](crate::Round).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// A notification reached the waiter before it slept.
    Notified,
    /// The waiter slept, and a notification ended the sleep.
    Woken,
    /// The waiter slept and no notification came: its deadline passed, or
    /// its caller's `park` returned. It has left the waiter set.
    Withdrew,
}

impl Notifier {
    /// A notifier with `slots` waiter slots, ids `0..slots`.
    ///
    /// # Panics
    ///
    /// If `slots` is 0 or exceeds 65,535,
    /// with the message of [`CapacityError`]. Use [`Notifier::try_new`] to
    /// get an error instead.
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
    /// the state layout cannot hold that many.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::Notifier;
    ///
    /// assert!(Notifier::try_new(64).is_ok());
    /// assert!(Notifier::try_new(65_536).is_err());
    /// assert!(Notifier::try_new(0).is_err());
    /// ```
    pub fn try_new(slots: usize) -> Result<Notifier, CapacityError> {
        Notifier::with_slot_epoch(slots, 0, None)
    }

    internal! {
        /// A notifier whose waiters may also sleep in a park of their caller's
        /// ([`commit_wait_parked`](Notifier::commit_wait_parked)): a notify
        /// that picks such a waiter calls `unpark(wid)` in place of a futex
        /// wake. Waiters that commit with `commit_wait` are woken as usual.
        ///
        /// # Panics
        ///
        /// If `slots` exceeds [`Notifier::MAX_CAPACITY`]. Use
        /// [`Notifier::try_with_unpark`] to get an error instead.
        ///
        /// # Examples
        ///
        /// ```
        /// use eventcount::Notifier;
        /// use std::sync::Arc;
        ///
        /// let n = Notifier::with_unpark(2, Arc::new(|_wid| {}));
        /// assert_eq!(n.capacity(), 2);
        /// ```
        pub fn with_unpark(slots: usize, unpark: Unpark) -> Notifier {
            match Notifier::try_with_unpark(slots, unpark) {
                Ok(notifier) => notifier,
                Err(err) => panic!("Notifier::with_unpark: {err}"),
            }
        }
    }

    internal! {
        /// [`with_unpark`](Notifier::with_unpark), or an error if the state
        /// layout cannot hold `slots` waiter slots.
        ///
        /// # Examples
        ///
        /// ```
        /// use eventcount::Notifier;
        /// use std::sync::Arc;
        ///
        /// assert!(Notifier::try_with_unpark(Notifier::MAX_CAPACITY + 1, Arc::new(|_| {})).is_err());
        /// ```
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

    /// A notifier whose slots start their push epochs two pushes below the
    /// wrap of the 48-bit epoch field, so that tests cross the wrap at once.
    #[cfg(test)]
    pub(crate) fn with_epoch_near_wrap(slots: usize) -> Notifier {
        let epoch = state::EPOCH_MASK.wrapping_sub(ONE_EPOCH);
        Notifier::with_slot_epoch(slots, epoch, None).expect("with_epoch_near_wrap: too many slots")
    }

    internal! {
        /// The most waiter slots any notifier can have: 65,535, set by the
        /// 16-bit stack index of the packed state word (see [docs/notifier.md](crate::docs::notifier)).
        ///
        /// # Examples
        ///
        /// ```
        /// assert_eq!(eventcount::Notifier::MAX_CAPACITY, 65_535);
        /// ```
        pub const MAX_CAPACITY: usize = MAX_SLOTS;
    }

    /// The number of waiter slots this notifier was built with: waiter ids
    /// are `0..capacity()`.
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

    /// The number of committed waiters that no notify has released yet:
    /// asleep, or about to fall asleep, on their futex word or in their
    /// caller's `park`. Prepared waiters are not counted.
    ///
    /// This scans every slot and is a snapshot: use it for tests, monitoring
    /// and shutdown checks, not in a hot path.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(4);
    /// assert_eq!(n.num_sleeping(), 0);
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
    /// let n = eventcount::Notifier::new(1);
    /// assert_eq!(n.stats().waits, 0);
    /// ```
    #[must_use]
    pub fn stats(&self) -> SleepStats {
        self.slots
            .iter()
            .fold(SleepStats::default(), |s, slot| s.add(slot.futex.counts()))
    }

    /// Slot `wid`'s share of [`stats`](Notifier::stats): the sleeps of its
    /// waiter and the wakes made to it.
    pub(crate) fn slot_counts(&self, wid: usize) -> (u64, u64) {
        self.slots[wid].futex.counts()
    }

    /// Phase one of a wait: announce that slot `wid` is about to sleep.
    ///
    /// After this call, re-check the wait condition; then pass the token to
    /// [`cancel_wait`](Notifier::cancel_wait) if it became true, or to
    /// [`commit_wait`](Notifier::commit_wait) to sleep. Dropping the token
    /// cancels, so a panic while re-checking leaves no waiter behind.
    ///
    /// Ordering: the slot is pushed on the waiter stack, then a `SeqCst`
    /// fence is issued before returning. Any notify whose own fence comes
    /// later sees this waiter; any condition change before that notify's
    /// fence is seen by the re-check.
    ///
    /// # Panics
    ///
    /// - if `wid >= self.capacity()`;
    /// - if slot `wid` already has a wait in progress (a live token, or a
    ///   commit that has not returned): each slot belongs to one waiter at a
    ///   time.
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

    /// [`prepare_wait`](Notifier::prepare_wait) for a protocol built on the
    /// notifier, whose message names its own call: if slot `wid` already
    /// has a wait in progress, its state's name is the error and nothing
    /// is written. Otherwise `before_push` runs once the slot is claimed,
    /// before the push and the WaitFence (`NotifierSleep` leaves its count
    /// of awake idle workers there), and the wait is prepared.
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

    /// The rest of a prepare once slot `wid` is claimed: on the stack (if
    /// it is not still there), then the WaitFence.
    fn announce(&self, wid: usize, slot: &Slot, claim: Claim) -> PreparedWait<'_> {
        if claim == Claim::Push {
            self.push(wid, slot);
        }
        // WaitFence, the waiter half of the handshake: pairs with the
        // NotifyFence at the top of every notify (docs/notifier.md, "No lost
        // wakeup").
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
            // Release publishes the link (and PREPARED) to the popper's Acquire.
            // Load-bearing: with Relaxed, a popper reads a stale link and finds
            // a popped slot in an impossible state (five notifier models
            // fail, `aba_stale_pop_after_repush` among them). Every write to the state word is an RMW, so this
            // Release heads a release sequence that later pushes and pops
            // continue: an Acquire of any later state sees this link too.
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

    /// Phase two, condition true: leave the wait without sleeping.
    ///
    /// A cancel never swallows a notification another waiter needs: if a
    /// notify had already delivered one to this waiter, it is passed on to
    /// the next waiter on the stack (the cancelling waiter may have re-checked
    /// before that notify and be leaving for other work; [docs/notifier.md](crate::docs::notifier),
    /// "cancel_wait(token)").
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

    /// Leave the wait without sleeping, like `cancel_wait`, but keep a
    /// notification that a notify (or a targeted wake) already delivered
    /// instead of passing it on: the caller counts as woken by it, and
    /// answers for what it was sent for. Returns whether one was delivered.
    /// `NotifierSleep`'s withdrawals (docs/notifier.md, "A withdrawal keeps
    /// its notification").
    pub(crate) fn withdraw_keeping(&self, wait: PreparedWait<'_>, operation: &str) -> bool {
        let wid = wait.disarm_for(self, operation);
        self.withdraw(wid) != Withdrawal::Withdrawn
    }

    /// The cancel step itself; also run by `PreparedWait::drop`.
    fn cancel(&self, wid: usize) {
        if self.withdraw(wid) == Withdrawal::Signaled {
            // A notify delivered to us, and we are not going to sleep: pass
            // the notification on to the next waiter. Load-bearing Acquire:
            // the pop reads the top slot's link (with Relaxed,
            // `cancel_racing_notify_keeps_signal_for_other_waiter` and three
            // other models pop a slot in an impossible state).
            let state = State(self.state.load(Ordering::Acquire));
            if !state.is_empty() {
                self.notify_slow(state, 1, |_| {});
            }
        }
    }

    /// Take slot `wid` (prepared, parked or targeted) out of the waiter set
    /// without sleeping: pop it if it is on top, else leave it on the stack
    /// as CANCELLED (a later pop skips it; its next prepare revives it). The
    /// slot word's CAS decides any race with a notifier that popped it.
    fn withdraw(&self, wid: usize) -> Withdrawal {
        let slot = &self.slots[wid];
        // Acquire, defensive (every model passes with Relaxed): the only link
        // read below is our own, which this thread wrote itself.
        let mut state = State(self.state.load(Ordering::Acquire));
        while state.top() == Some(wid) {
            // On top (the common case: we pushed last): pop ourselves. Nobody
            // else can pop us meanwhile without changing the state word.
            // The CAS's AcqRel / Acquire are defensive (every model passes
            // with Relaxed): the link we install is our own, and the links
            // below it stay published by their pushes' release sequences.
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

    /// Phase two, condition still false: sleep until notified.
    ///
    /// If a notification already reached this waiter (it was popped while
    /// prepared), this returns at once. Otherwise the thread parks on the
    /// slot's futex word until a notify pops it. Either way, the caller must
    /// re-check its condition after this returns: a notification says
    /// "something may have changed", not what.
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

    /// Park slot `wid`, prepared, on its futex word until notified or
    /// `deadline`, then leave the waiter set.
    fn commit_on_futex(&self, wid: usize, deadline: Option<Instant>) -> Ended {
        let slot = &self.slots[wid];
        match slot.commit(PARKED) {
            Ok(()) => self.finish_wait(wid, slot.park(deadline), Ended::Woken),
            Err(ended) => self.finish_wait(wid, ended, Ended::Notified),
        }
    }

    internal! {
        /// Phase two, condition still false, for a waiter that sleeps in a park
        /// of its own (an I/O driver's poll, say) instead of on its futex word:
        /// `park(deadline)` is called once, unless a notification already
        /// reached the waiter, and a notify that picks the waiter meanwhile
        /// calls the notifier's [`Unpark`] hook with its id
        /// ([`with_unpark`](Notifier::with_unpark)).
        ///
        /// `park` must keep a driver's contract with that hook: an unpark that
        /// came before the call makes it return at once, and it returns by
        /// `deadline` (if given) or after an unpark, or at any other time. When
        /// it returns with no notification delivered, for whatever reason, the
        /// waiter leaves the waiter set as a timed-out one does, and this
        /// returns [`WaitOutcome::TimedOut`]: no notification was taken from
        /// anyone. A notification that won the race gives
        /// [`WaitOutcome::Notified`]. Either way, re-check the condition.
        ///
        /// # Panics
        ///
        /// If `wait` came from a different notifier, or if this notifier has no
        /// unpark hook (it was not built with `with_unpark`); the wait is then
        /// cancelled, and `park` is not called.
        ///
        /// # Examples
        ///
        /// ```
        /// use eventcount::{Notifier, WaitOutcome};
        /// use std::sync::atomic::{AtomicBool, Ordering};
        /// use std::sync::Arc;
        ///
        /// // A token per waiter, as a driver's wake-up descriptor keeps one.
        /// let token = Arc::new(AtomicBool::new(false));
        /// let n = Notifier::with_unpark(1, {
        ///     let token = token.clone();
        ///     Arc::new(move |_wid| token.store(true, Ordering::Release))
        /// });
        /// let wait = n.prepare_wait(0);
        /// // Nobody notifies: the park returns (here at once), and the waiter
        /// // withdraws as on a timeout.
        /// let outcome = n.commit_wait_parked(wait, None, |_deadline| {});
        /// assert_eq!(outcome, WaitOutcome::TimedOut);
        /// assert!(!token.load(Ordering::Acquire));
        /// ```
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

    /// The panic of a parked commit on a notifier without a hook, before
    /// anything is written (dropping `wait` as the caller unwinds cancels
    /// it).
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

    /// Park slot `wid`, prepared, in the caller's `park`, then leave the
    /// waiter set. The notifier has a hook (`check_unpark`).
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

    /// A protocol's commit: on the futex word, or in `park` if given (the
    /// caller checked the hook), with the detail a [`Round`](crate::Round)
    /// needs.
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

    /// Phase two with a deadline: sleep until notified or until `deadline`,
    /// whichever comes first.
    ///
    /// On [`WaitOutcome::TimedOut`] the waiter has left the waiter set
    /// without taking a notification from anyone: a notify that races with
    /// the timeout either reaches this waiter first (then the result is
    /// `Notified`) or finds it gone and moves on to the next waiter. The slot
    /// can be prepared again at once.
    ///
    /// # Panics
    ///
    /// If `wait` came from a different notifier.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{Notifier, WaitOutcome};
    /// use std::time::{Duration, Instant};
    ///
    /// let n = Notifier::new(1);
    /// let deadline = Instant::now() + Duration::from_millis(5);
    /// let wait = n.prepare_wait(0);
    /// assert_eq!(n.commit_wait_until(wait, deadline), WaitOutcome::TimedOut);
    /// let again = n.prepare_wait(0); // free again at once
    /// n.notify_one();
    /// assert_eq!(n.commit_wait_until(again, deadline), WaitOutcome::Notified);
    /// ```
    #[track_caller]
    pub fn commit_wait_until(&self, wait: PreparedWait<'_>, deadline: Instant) -> WaitOutcome {
        self.commit_with_deadline("commit_wait_until", wait, deadline)
    }

    /// A commit that ends at `deadline`; `operation` is the public call,
    /// for the messages.
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
                // Still stacked: leave the waiter set like a cancel (no
                // forwarding: the wake was addressed to us).
                let _ = self.withdraw(wid);
                notified
            }
            ParkEnd::TimedOut => match self.withdraw(wid) {
                Withdrawal::Withdrawn => Ended::Withdrew,
                // A notification won the race with our deadline: report it,
                // never swallow it.
                Withdrawal::Targeted | Withdrawal::Signaled => notified,
            },
        }
    }

    /// Call the hook for slot `wid`, which a notify found parked
    /// externally. Only a waiter of a notifier with a hook parks so.
    #[cold]
    fn unpark(&self, wid: usize) {
        if let Some(unpark) = &self.unpark {
            self.slots[wid].count_external_wake();
            unpark(wid);
        }
    }

    /// Wake the waiter in slot `wid` if it is waiting (prepared or asleep),
    /// without disturbing any other waiter. Returns whether it was waiting.
    ///
    /// This is the wake a latch needs: its owner, and nobody else. The slot
    /// stays on the waiter stack until its owner withdraws it; other notifies
    /// skip it meanwhile and never count it as a delivery. It starts with a
    /// `SeqCst` fence, like every notify: make the owner's condition true
    /// first.
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
        // NotifyFence: pairs with the WaitFence in `prepare_wait`, as in
        // every notify.
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

    /// Wake one waiter, if any is waiting. Returns whether one was released.
    ///
    /// The most recently prepared waiter goes first: it is often still awake
    /// (then this costs no syscall) and its cache is warm.
    ///
    /// With nobody waiting this is one `SeqCst` fence and one load (see the
    /// type's docs for the one exception, cancelled slots left in the stack).
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(1);
    /// assert!(!n.notify_one()); // nobody waits: the fast path
    /// ```
    #[inline]
    pub fn notify_one(&self) -> bool {
        // NotifyFence, the notifier half of the handshake (docs/notifier.md,
        // "No lost wakeup"): orders the caller's condition change before the
        // state load.
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

    /// Wake at most `n` waiters. Returns how many were released.
    ///
    /// With nobody waiting this is one `SeqCst` fence and one load; with
    /// `n == 0` it does nothing at all.
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

    /// `notify_n(n)`, except that when somebody is waiting, `how_many(n)`
    /// decides how many to release. It runs after the NotifyFence, so it
    /// may read what waiters wrote before their WaitFence: `NotifierSleep`
    /// reads its count of awake idle workers there, and releases only as
    /// many sleepers as the awake ones cannot cover. With nobody waiting it
    /// is not called, and this is `notify_n`'s fence and load.
    ///
    /// `delivered(wid)` runs once per waiter released, with its slot, after
    /// the slot took the notification and before the wake's system call:
    /// `NotifierSleep` stamps and counts the wake there, so that posts made
    /// during the system call (microseconds; tens on a loaded virtual
    /// machine) already rely on the worker it wakes.
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
        // Load-bearing Acquire, as in notify_one: the pop reads the top
        // slot's link (with Relaxed, `aba_stale_pop_after_repush_notify_n`
        // pops a slot in an impossible state).
        let state = State(self.state.load(Ordering::Acquire));
        if state.is_empty() {
            return 0;
        }
        self.notify_up_to_slow(state, n, how_many, delivered)
    }

    /// `notify_up_to` once a waiter was seen. Out of line, so that the
    /// fast path above saves no registers for it.
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

    /// Wake every waiter. Returns how many were released.
    ///
    /// One CAS takes the whole stack; its waiters are then notified one by
    /// one (a `futex_wake` each, only for those asleep). With nobody waiting
    /// this is one `SeqCst` fence and one load.
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

    /// Pop and notify waiters until `want` were released or none is left,
    /// calling `delivered(wid)` for each before its wake (see `notify_up_to`).
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
            // AcqRel on success, defensive (every model passes with
            // Relaxed): the next top's link was published by its push, whose
            // release sequence the Acquire that produced `state` already
            // joined, and the pops after us join it the same way. Acquire on
            // failure is load-bearing: the retry reads the new top's link
            // (with Relaxed,
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

    /// Take the whole stack in one CAS and notify every waiter on it,
    /// calling `delivered(wid)` for each before its wake (see `notify_up_to`).
    #[cold]
    fn notify_all_slow(&self, mut state: State, mut delivered: impl FnMut(usize)) -> usize {
        loop {
            state.debug_check(self.slots.len());
            if state.is_empty() {
                return 0;
            }
            // AcqRel / Acquire, defensive one at a time (every model passes
            // with either weakened): the links are read after the successful
            // CAS, and its Acquire and the load's that read the same stack
            // word each cover the other. Both stay.
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
        // Tokens and commits borrow the notifier, so nobody can be waiting;
        // only cancelled slots may still sit on the stack, unless a token
        // was leaked with `mem::forget`. A debug check: release builds skip
        // the walk. And never while the thread unwinds, where a second panic
        // would abort the process and hide the first.
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
    /// The slots on the waiter stack, top first, read with Relaxed loads
    /// (for a drop or a test, when no other thread touches the notifier),
    /// and the link the walk ended on: the empty stack word, unless the
    /// stack was corrupt (cyclic, so the walk stopped after `capacity() + 1`
    /// slots, one more than a sound stack can hold).
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

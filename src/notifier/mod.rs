//! [`Notifier`]: a two-phase event count with a lock-free stack of committed
//! waiters, each parked on its own futex word.
//!
//! The protocol, its orderings and the proof that no wakeup is lost are in
//! docs/notifier.md; this file follows it step by step.

mod slot;
mod state;
mod token;

use crossbeam_utils::CachePadded;

use crate::error::CapacityError;
use crate::sync::{fence, AtomicU64, Ordering};
use slot::{Slot, COMMITTED, IDLE, PARKED, PREPARED};
use state::{stack_word, stack_word_top, State, MAX_SLOTS, ONE_EPOCH, ONE_PRE_WAITER, ONE_SIGNAL};

pub use token::PreparedWait;

/// An event count: lets worker threads sleep until a condition they check
/// themselves (usually "some queue is non-empty") may have become true,
/// without a mutex around the condition.
///
/// A waiter owns one of the notifier's `size()` slots, named by a waiter id
/// (`wid`) in `0..size()`. It follows the two-phase pattern:
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
/// Costs:
/// - a notify with nobody waiting is one `SeqCst` fence and one load: no
///   read-modify-write, no syscall, no write to a shared cache line;
/// - a notify that reaches a prepared-but-not-committed waiter is one CAS and
///   no syscall;
/// - a notify that pops a committed waiter makes a `futex_wake` only if that
///   waiter is actually asleep;
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
    /// The packed state word; layout in `state.rs` and docs/notifier.md:
    ///
    /// | bits   | field         |
    /// |--------|---------------|
    /// | 0..14  | stack top (`0x3FFF` = empty) |
    /// | 14..28 | pre-waiters   |
    /// | 28..42 | signals       |
    /// | 42..64 | epoch of top  |
    state: CachePadded<AtomicU64>,
    slots: Box<[CachePadded<Slot>]>,
}

impl Notifier {
    /// A notifier with `slots` waiter slots, ids `0..slots`.
    ///
    /// # Panics
    ///
    /// If `slots` exceeds [`Notifier::capacity()`] (16,383). Use
    /// [`Notifier::try_new`] to get an error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(8);
    /// assert_eq!(n.size(), 8);
    /// ```
    pub fn new(slots: usize) -> Notifier {
        match Notifier::try_new(slots) {
            Ok(notifier) => notifier,
            Err(err) => panic!("Notifier::new: {err}"),
        }
    }

    /// A notifier with `slots` waiter slots, or an error if the state layout
    /// cannot hold that many.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::Notifier;
    ///
    /// assert!(Notifier::try_new(64).is_ok());
    /// assert!(Notifier::try_new(Notifier::capacity() + 1).is_err());
    /// ```
    pub fn try_new(slots: usize) -> Result<Notifier, CapacityError> {
        Notifier::with_slot_epoch(slots, 0)
    }

    fn with_slot_epoch(slots: usize, epoch: u64) -> Result<Notifier, CapacityError> {
        if slots > MAX_SLOTS {
            return Err(CapacityError::new("Notifier", slots, MAX_SLOTS));
        }
        Ok(Notifier {
            state: CachePadded::new(AtomicU64::new(State::IDLE.0)),
            slots: (0..slots)
                .map(|_| CachePadded::new(Slot::new(epoch)))
                .collect(),
        })
    }

    /// A notifier whose slots start their push epochs three pushes below the
    /// wrap of the 22-bit epoch field, so that tests cross the wrap at once.
    #[cfg(test)]
    pub(crate) fn with_epoch_near_wrap(slots: usize) -> Notifier {
        let epoch = state::EPOCH_MASK.wrapping_sub(2 * ONE_EPOCH);
        Notifier::with_slot_epoch(slots, epoch).expect("with_epoch_near_wrap: too many slots")
    }

    /// The most waiter slots any notifier can have: 16,383, set by the 14-bit
    /// fields of the packed state word (see docs/notifier.md).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::Notifier::capacity(), 16_383);
    /// ```
    pub const fn capacity() -> usize {
        MAX_SLOTS
    }

    /// The number of waiter slots this notifier was built with.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(eventcount::Notifier::new(3).size(), 3);
    /// ```
    pub fn size(&self) -> usize {
        self.slots.len()
    }

    /// The number of committed waiters that no notify has released yet:
    /// asleep, or about to fall asleep. Prepared waiters are not counted.
    ///
    /// This scans every slot and is a snapshot: use it for tests, monitoring
    /// and shutdown checks, not in a hot path.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(4);
    /// assert_eq!(n.num_waiters(), 0);
    /// ```
    pub fn num_waiters(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| matches!(slot.state(), COMMITTED | PARKED))
            .count()
    }

    /// Phase one of a wait: announce that slot `wid` is about to sleep.
    ///
    /// After this call, re-check the wait condition; then pass the token to
    /// [`cancel_wait`](Notifier::cancel_wait) if it became true, or to
    /// [`commit_wait`](Notifier::commit_wait) to sleep. Dropping the token
    /// cancels, so a panic while re-checking leaves no pre-waiter behind.
    ///
    /// Ordering: the pre-waiter count is raised, then a `SeqCst` fence is
    /// issued before returning. Any notify whose own fence comes later sees
    /// this waiter; any condition change before that notify's fence is seen
    /// by the re-check.
    ///
    /// # Panics
    ///
    /// - if `wid >= self.size()`;
    /// - if slot `wid` already has a wait in progress (a live token, or a
    ///   commit that has not returned): each slot belongs to one waiter at a
    ///   time.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(2);
    /// let wait = n.prepare_wait(1);
    /// assert_eq!(wait.wid(), 1);
    /// n.cancel_wait(wait);
    /// ```
    pub fn prepare_wait(&self, wid: usize) -> PreparedWait<'_> {
        let size = self.slots.len();
        let Some(slot) = self.slots.get(wid) else {
            panic!(
                "prepare_wait: waiter id {wid} is out of range for a Notifier with {size} slots"
            );
        };
        // Claim the slot first, so a misuse panics before the shared state
        // is touched. Acquire pairs with the Release that returned the slot
        // to IDLE, carrying the slot's epoch from its previous holder.
        if let Err(found) =
            slot.futex
                .word()
                .compare_exchange(IDLE, PREPARED, Ordering::Acquire, Ordering::Relaxed)
        {
            panic!(
                "prepare_wait: waiter slot {wid} already has a wait in progress (slot is {}); \
                 each slot may be used by one waiter at a time",
                slot::state_name(found)
            );
        }
        // Cannot overflow into the signal field: at most one pre-waiter per
        // slot, and the slot count fits the field.
        self.state.fetch_add(ONE_PRE_WAITER, Ordering::Relaxed);
        // The waiter half of the handshake: pairs with the fence at the top
        // of every notify (docs/notifier.md, "No lost wakeup").
        fence(Ordering::SeqCst);
        PreparedWait::new(self, wid)
    }

    /// Phase two, condition true: leave the wait without sleeping.
    ///
    /// A cancel never swallows a notification another waiter needs. If not
    /// every pre-waiter holds a signal, it leaves the signals to the waiters
    /// still preparing. If every pre-waiter does (this one included), its
    /// signal is forwarded: a committed waiter, if any, is popped and woken
    /// in the same CAS. This matters when the cancelling waiter re-checked
    /// before the notify and leaves for other work (docs/notifier.md,
    /// "Cancel forwards").
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
    pub fn cancel_wait(&self, wait: PreparedWait<'_>) {
        let wid = wait.disarm_for(self, "cancel_wait");
        self.cancel(wid);
    }

    /// The cancel step itself; also run by `PreparedWait::drop`.
    ///
    /// If every pre-waiter holds a signal, this one holds one too, and it is
    /// not going to sleep: its notification must not die with it. When a
    /// committed waiter is asleep on the stack, the same CAS pops it and the
    /// signal is forwarded as a wake; otherwise every remaining waiter is a
    /// signalled pre-waiter and the surplus signal is dropped.
    fn cancel(&self, wid: usize) {
        // Acquire: a forwarding cancel reads the top slot's link.
        let mut state = State(self.state.load(Ordering::Acquire));
        loop {
            state.debug_check(self.slots.len());
            debug_assert!(
                state.pre_waiters() > 0,
                "cancel with no pre-waiter: {state:?}"
            );
            let holds_signal = state.signals() == state.pre_waiters();
            let forward = holds_signal && !state.stack_is_empty();
            let mut new = State(state.0 - ONE_PRE_WAITER);
            if holds_signal {
                new = State(new.0 - ONE_SIGNAL);
            }
            if forward {
                let next = self.slots[state.top() as usize]
                    .next
                    .load(Ordering::Relaxed);
                new = new.with_stack_word(next);
            }
            // AcqRel/Acquire as for any pop (see `notify_slow`).
            match self.state.compare_exchange_weak(
                state.0,
                new.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(current) => state = State(current),
            }
        }
        self.slots[wid].release();
        // `state` is the value our CAS replaced.
        if state.signals() == state.pre_waiters() && !state.stack_is_empty() {
            self.slots[state.top() as usize].unpark();
        }
    }

    /// Phase two, condition still false: sleep until notified.
    ///
    /// If a notification already reached this pre-waiter (a signal is
    /// pending), it is consumed and this returns at once. Otherwise the slot
    /// is pushed on the committed-waiter stack and the thread parks on the
    /// slot's futex word until a notify pops it. Either way, the caller must
    /// re-check its condition after this returns: a signal says "something
    /// may have changed", not what.
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
    /// n.notify_one(); // reaches the pre-waiter: no syscall
    /// n.commit_wait(wait); // consumes the signal and returns at once
    /// ```
    pub fn commit_wait(&self, wait: PreparedWait<'_>) {
        let wid = wait.disarm_for(self, "commit_wait");
        let slot = &self.slots[wid];
        let mut state = State(self.state.load(Ordering::Relaxed));
        loop {
            state.debug_check(self.slots.len());
            debug_assert!(
                state.pre_waiters() > 0,
                "commit with no pre-waiter: {state:?}"
            );
            if state.signals() > 0 {
                // A notification reached the pre-waiters: take one, do not sleep.
                let new = state.0 - ONE_PRE_WAITER - ONE_SIGNAL;
                match self.state.compare_exchange_weak(
                    state.0,
                    new,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        slot.release();
                        return;
                    }
                    Err(current) => state = State(current),
                }
            } else {
                // Push this slot: link to the current stack word, mark the slot
                // COMMITTED, then publish both with the CAS (Release half).
                let epoch = slot.epoch.load(Ordering::Relaxed);
                slot.next.store(state.stack_word(), Ordering::Relaxed);
                slot.futex.word().store(COMMITTED, Ordering::Relaxed);
                let new = state
                    .with_stack_word(stack_word(wid, epoch))
                    .0
                    .wrapping_sub(ONE_PRE_WAITER);
                match self.state.compare_exchange_weak(
                    state.0,
                    new,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // The next push of this slot carries a new epoch, so a
                        // notifier holding a stale view of this push fails its CAS.
                        slot.epoch
                            .store(epoch.wrapping_add(ONE_EPOCH), Ordering::Relaxed);
                        slot.park();
                        slot.release();
                        return;
                    }
                    Err(current) => state = State(current),
                }
            }
        }
    }

    /// Wake one waiter, if any is waiting. Returns whether one was released.
    ///
    /// Prefers a pre-waiter (it is awake; a signal costs one CAS and no
    /// syscall) over a committed waiter (popped from the stack and woken with
    /// one `futex_wake`, only if it is asleep).
    ///
    /// With nobody waiting this is one `SeqCst` fence and one load.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(1);
    /// assert!(!n.notify_one()); // nobody waits: the fast path
    /// ```
    #[inline]
    pub fn notify_one(&self) -> bool {
        // The notifier half of the handshake (docs/notifier.md): orders the
        // caller's condition change before the state load.
        fence(Ordering::SeqCst);
        let state = State(self.state.load(Ordering::Acquire));
        if state.nobody_to_wake() {
            return false;
        }
        self.notify_slow(state, 1) == 1
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
    /// assert_eq!(n.notify_n(1), 1); // one of the two pre-waiters is signalled
    /// n.cancel_wait(a);
    /// n.cancel_wait(b);
    /// ```
    #[inline]
    pub fn notify_n(&self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        fence(Ordering::SeqCst);
        let state = State(self.state.load(Ordering::Acquire));
        if state.nobody_to_wake() {
            return 0;
        }
        if n >= self.slots.len() {
            // Every waiter is either a pre-waiter or on the stack, one per
            // slot, so `n >= size` is "all" and one CAS does it.
            return self.notify_all_slow(state);
        }
        self.notify_slow(state, n)
    }

    /// Wake every waiter. Returns how many were released.
    ///
    /// One CAS signals every pre-waiter and empties the stack; the popped
    /// waiters are then woken one by one (a `futex_wake` each, only for those
    /// asleep). With nobody waiting this is one `SeqCst` fence and one load.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = eventcount::Notifier::new(2);
    /// let wait = n.prepare_wait(0);
    /// assert_eq!(n.notify_all(), 1);
    /// n.commit_wait(wait); // returns at once: it was signalled
    /// ```
    #[inline]
    pub fn notify_all(&self) -> usize {
        fence(Ordering::SeqCst);
        let state = State(self.state.load(Ordering::Acquire));
        if state.nobody_to_wake() {
            return 0;
        }
        self.notify_all_slow(state)
    }

    /// Release up to `want` waiters, starting from the observed `state`.
    #[cold]
    fn notify_slow(&self, mut state: State, want: usize) -> usize {
        let mut released = 0;
        loop {
            state.debug_check(self.slots.len());
            if state.nobody_to_wake() {
                return released;
            }
            let unsignalled = state.unsignalled();
            let new = if unsignalled > 0 {
                // Signal pre-waiters: they are awake, so no syscall.
                let give = unsignalled.min((want - released) as u64);
                State(state.0 + give * ONE_SIGNAL)
            } else {
                // Everyone preparing is signalled already: pop a committed
                // waiter. The Acquire load (or failed CAS) that produced
                // `state` makes the top slot's link visible.
                let top = state.top() as usize;
                let next = self.slots[top].next.load(Ordering::Relaxed);
                state.with_stack_word(next)
            };
            // AcqRel: Acquire to read links of the new top on the next round;
            // Release so a later pop of what we leave sees our view.
            match self.state.compare_exchange_weak(
                state.0,
                new.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if unsignalled > 0 {
                        released += (new.signals() - state.signals()) as usize;
                    } else {
                        self.slots[state.top() as usize].unpark();
                        released += 1;
                    }
                    if released == want {
                        return released;
                    }
                    state = new;
                }
                Err(current) => state = State(current),
            }
        }
    }

    /// Signal every pre-waiter and pop the whole stack in one CAS.
    #[cold]
    fn notify_all_slow(&self, mut state: State) -> usize {
        loop {
            state.debug_check(self.slots.len());
            if state.nobody_to_wake() {
                return 0;
            }
            let pre_waiters = state.pre_waiters();
            let new =
                State(State::IDLE.0 | (pre_waiters * ONE_PRE_WAITER) | (pre_waiters * ONE_SIGNAL));
            match self.state.compare_exchange_weak(
                state.0,
                new.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(current) => state = State(current),
            }
        }
        let mut released = state.unsignalled() as usize;
        // The chain is ours now: no other notifier can reach it, and its
        // slots cannot be pushed again until we signal them. Read each link
        // before signalling, since a signalled slot may re-push at once.
        let mut link = state.stack_word();
        while let Some(wid) = stack_word_top(link) {
            let slot = &self.slots[wid];
            link = slot.next.load(Ordering::Relaxed);
            slot.unpark();
            released += 1;
        }
        released
    }
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("size", &self.slots.len())
            .field("state", &State(self.state.load(Ordering::Relaxed)))
            .finish()
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        // Tokens and commits borrow the notifier, so nobody can be waiting.
        debug_assert_eq!(
            State(self.state.load(Ordering::Relaxed)),
            State::IDLE,
            "Notifier dropped with waiters recorded"
        );
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;

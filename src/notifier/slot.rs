//! One waiter slot: the futex word its owner sleeps on, its link in the
//! waiter stack, and its push epoch.
//!
//! The futex word is also the slot's protocol state; each transition has one
//! writer, and the word's compare-and-swaps decide every race:
//!
//! | value       | on the stack?             | meaning                                         |
//! |-------------|---------------------------|-------------------------------------------------|
//! | `IDLE`      | no                        | no wait in progress                              |
//! | `PREPARED`  | yes (or being popped)     | a `PreparedWait` token is out                    |
//! | `PARKED`    | yes (or being popped)     | committed: asleep on the futex, or about to be   |
//! | `CANCELLED` | yes, or being popped      | cancelled below the top; the owner may revive it |
//! | `SIGNALED`  | no                        | popped and notified; the token holder will see it |
//! | `TARGETED`  | yes (or being popped)     | woken by `notify_waiter` without a pop; token out |
//! | `PARKED_EXTERNAL` | yes (or being popped) | committed to the caller's `park`: a wake calls the `Unpark` hook |
//!
//! The owner and a notifier that popped the slot move it as the table says;
//! a failed CAS means the other side moved first (docs/notifier.md, "Steps,
//! with orderings and why").
//!
//! Orderings: atomicity, not ordering, decides every race on the word, and
//! each Acquire and Release on it is defensive (every loom model passes
//! with it weakened to Relaxed). They stay for what the models cannot show:
//! docs/notifier.md, "Every ordering".

use crate::sync::{AtomicU64, Futex, Ordering};

pub(crate) const IDLE: u32 = 0;
pub(crate) const PREPARED: u32 = 1;
pub(crate) const PARKED: u32 = 2;
pub(crate) const CANCELLED: u32 = 3;
pub(crate) const SIGNALED: u32 = 4;
pub(crate) const TARGETED: u32 = 5;
pub(crate) const PARKED_EXTERNAL: u32 = 6;

/// The name of a slot state, for messages.
pub(crate) fn state_name(state: u32) -> &'static str {
    match state {
        IDLE => "idle",
        PREPARED => "prepared",
        PARKED => "parked",
        CANCELLED => "cancelled",
        SIGNALED => "signaled",
        TARGETED => "targeted",
        PARKED_EXTERNAL => "parked externally",
        _ => "invalid",
    }
}

/// What a notifier's pop delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// The owner was prepared and awake: it finds the signal itself.
    Signalled,
    /// The owner was asleep: woken with one futex wake.
    Woken,
    /// The owner was asleep in its caller's `park`: one call of the `Unpark` hook.
    Unpark,
    /// Cancelled, or already woken by a targeted wake: nobody newly notified.
    Skipped,
}

/// What the owner's claim of its slot found (`prepare_wait`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// The slot was off the stack: it is PREPARED now and must be pushed.
    Push,
    /// Still stacked, cancelled below the top: PREPARED again in place, no push.
    Revived,
}

/// How an owner's withdrawal from the waiter set ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Withdrawal {
    /// Out of the waiter set with nothing delivered.
    Withdrawn,
    /// A targeted wake had landed (the slot is withdrawn too).
    Targeted,
    /// A notifier had popped and notified the slot (now freed).
    Signaled,
}

/// Why a parked owner stopped sleeping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParkEnd {
    /// Popped and notified: the slot is off the stack.
    Signaled,
    /// Woken by `notify_waiter`: the slot is still on the stack.
    Targeted,
    /// The deadline passed first: the word still says PARKED.
    TimedOut,
}

pub(crate) struct Slot {
    /// The protocol state above; the owner sleeps on it.
    pub(crate) futex: Futex,
    /// The stack word that was on top when this slot was pushed: the link a
    /// pop restores. The owner writes it before its push CAS (Release, which
    /// publishes it); notifiers read it after an Acquire load of the state.
    pub(crate) next: AtomicU64,
    /// This slot's epoch, pre-shifted into the state's epoch field. Only the
    /// token holder touches it (Relaxed); the Release that ends a wait and
    /// the next claim's Acquire carry it between holders.
    pub(crate) epoch: AtomicU64,
}

impl Slot {
    pub(crate) fn new(epoch: u64) -> Self {
        Slot {
            futex: Futex::new(IDLE),
            next: AtomicU64::new(0),
            epoch: AtomicU64::new(epoch),
        }
    }

    #[inline]
    pub(crate) fn state(&self) -> u32 {
        self.futex.word().load(Ordering::Relaxed)
    }

    /// The owner starts a wait on slot `wid`: IDLE → PREPARED (the caller
    /// then pushes it) or CANCELLED → PREPARED (revived in place).
    ///
    /// # Panics
    ///
    /// If the slot already has a wait in progress; the word is left as it was.
    #[track_caller]
    pub(crate) fn claim(&self, wid: usize) -> Claim {
        match self.try_claim() {
            Ok(claim) => claim,
            Err(found) => slot_in_use(wid, found),
        }
    }

    /// [`claim`](Slot::claim), with the state found as the error; the word is left as it was.
    pub(crate) fn try_claim(&self) -> Result<Claim, u32> {
        let word = self.futex.word();
        // Acquire: pairs with the Release that ended the slot's last wait
        // (carrying `epoch`) or with the CAS that popped it. Defensive, as
        // are the CASes below (module docs, "Orderings").
        let mut current = word.load(Ordering::Acquire);
        loop {
            let claim = match current {
                IDLE => Claim::Push,
                CANCELLED => Claim::Revived,
                other => return Err(other),
            };
            // A failed CAS means a notifier popped the cancelled slot and
            // skipped it (CANCELLED → IDLE) meanwhile: claim what it became.
            match word.compare_exchange(current, PREPARED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(claim),
                Err(now) => current = now,
            }
        }
    }

    /// The owner popped its own slot off the top: free it. A swap, as a
    /// targeted wake may have landed; defensive (module docs, "Orderings").
    pub(crate) fn leave_popped(&self) -> Withdrawal {
        match self.futex.word().swap(IDLE, Ordering::AcqRel) {
            TARGETED => Withdrawal::Targeted,
            _ => Withdrawal::Withdrawn,
        }
    }

    /// The owner withdraws a slot below the top, or already popped: CANCELLED
    /// (a later pop skips it, the next claim revives it), or, if a notifier
    /// signalled it first, take the signal and free the slot; the CAS decides.
    /// Defensive orderings (module docs, "Orderings").
    pub(crate) fn leave_in_place(&self, wid: usize) -> Withdrawal {
        let word = self.futex.word();
        let mut current = word.load(Ordering::Acquire);
        loop {
            let outcome = match current {
                PREPARED | PARKED | PARKED_EXTERNAL => Withdrawal::Withdrawn,
                TARGETED => Withdrawal::Targeted,
                SIGNALED => {
                    // Popped and notified: off the stack, ours to free.
                    self.release();
                    return Withdrawal::Signaled;
                }
                other => unreachable!("withdrawing slot {wid} found it {}", state_name(other)),
            };
            match word.compare_exchange(current, CANCELLED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return outcome,
                Err(now) => current = now,
            }
        }
    }

    /// End a wait after the slot left the stack. Release carries `epoch` to
    /// the next claim; defensive (module docs, "Orderings").
    #[inline]
    pub(crate) fn release(&self) {
        self.futex.word().store(IDLE, Ordering::Release);
    }

    /// The owner's commit, PREPARED → `parked` (PARKED or PARKED_EXTERNAL).
    /// If a notifier got here first it never sleeps: the error says how its
    /// wait ended. Acquire here and on the loads after the sleep, so a
    /// delivery's Release comes first; defensive (module docs, "Orderings").
    #[inline]
    pub(crate) fn commit(&self, parked: u32) -> Result<(), ParkEnd> {
        self.futex
            .word()
            .compare_exchange(PREPARED, parked, Ordering::Acquire, Ordering::Acquire)
            .map(drop)
            .map_err(end_of_wait)
    }

    /// After a successful [`commit`](Slot::commit) to PARKED: sleep until
    /// notified (popped, or targeted), or until `deadline` if one is given.
    pub(crate) fn park(&self, deadline: Option<std::time::Instant>) -> ParkEnd {
        let word = self.futex.word();
        loop {
            // Loop over spurious returns: only a notifier lets us go.
            let now = word.load(Ordering::Acquire);
            if now != PARKED {
                return end_of_wait(now);
            }
            match deadline {
                None => self.futex.wait(PARKED),
                Some(deadline) => {
                    if self.futex.wait_until(PARKED, deadline)
                        && word.load(Ordering::Acquire) == PARKED
                    {
                        return ParkEnd::TimedOut;
                    }
                }
            }
        }
    }

    /// After a [`commit`](Slot::commit) to PARKED_EXTERNAL: sleep once in the
    /// caller's `park`, then read how the wait ended. Still PARKED_EXTERNAL
    /// means no wake came: [`ParkEnd::TimedOut`], and the owner withdraws.
    pub(crate) fn park_external(
        &self,
        deadline: Option<std::time::Instant>,
        mut park: impl FnMut(Option<std::time::Instant>),
    ) -> ParkEnd {
        self.futex.count_external_wait();
        park(deadline);
        // Defensive Acquire (module docs, "Orderings"): a stale PARKED_EXTERNAL
        // only sends the owner to withdraw, whose CAS finds what the notifier wrote.
        match self.futex.word().load(Ordering::Acquire) {
            PARKED_EXTERNAL => ParkEnd::TimedOut,
            now => end_of_wait(now),
        }
    }

    /// Count a wake through the notifier's unpark hook among this slot's wakes.
    pub(crate) fn count_external_wake(&self) {
        self.futex.count_external_wake();
    }

    /// Deliver to a slot this notifier just popped. Then, for
    /// [`Delivery::Woken`], the caller calls [`Slot::wake`]; for [`Delivery::Unpark`], the hook.
    pub(crate) fn deliver(&self) -> Delivery {
        let word = self.futex.word();
        let mut current = word.load(Ordering::Relaxed);
        loop {
            // A cancelled slot goes back to IDLE (free, off the stack); a
            // waiting one gets SIGNALED, which only its token holder clears.
            let (new, delivery) = match current {
                PREPARED => (SIGNALED, Delivery::Signalled),
                PARKED => (SIGNALED, Delivery::Woken),
                PARKED_EXTERNAL => (SIGNALED, Delivery::Unpark),
                CANCELLED => (IDLE, Delivery::Skipped),
                // Already woken by a targeted wake: off the stack now, and
                // the owner (still holding its token) sees SIGNALED.
                TARGETED => (SIGNALED, Delivery::Skipped),
                _ => unreachable!("popped a slot in state {}", state_name(current)),
            };
            // Release pairs with the owner's Acquire in `park`, `claim` and
            // `leave_in_place`; defensive (module docs, "Orderings"). A failure
            // means the owner moved first (a revive, a commit): deliver to that.
            match word.compare_exchange(current, new, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return delivery,
                Err(now) => current = now,
            }
        }
    }

    /// Targeted wake, without popping: what it delivered to a waiting owner,
    /// or [`Delivery::Skipped`]. It makes the futex wake for [`Delivery::Woken`];
    /// for [`Delivery::Unpark`] the caller calls the hook.
    pub(crate) fn wake_in_place(&self) -> Delivery {
        let word = self.futex.word();
        let mut current = word.load(Ordering::Acquire);
        loop {
            let delivery = match current {
                PREPARED => Delivery::Signalled,
                PARKED => Delivery::Woken,
                PARKED_EXTERNAL => Delivery::Unpark,
                _ => return Delivery::Skipped,
            };
            // Release pairs with the owner's Acquire in `park`; defensive,
            // as is the load above (module docs, "Orderings").
            match word.compare_exchange(current, TARGETED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    if delivery == Delivery::Woken {
                        self.futex.wake_one();
                    }
                    return delivery;
                }
                Err(now) => current = now,
            }
        }
    }

    /// The wake syscall for a slot whose owner `deliver` found asleep.
    #[inline]
    pub(crate) fn wake(&self) {
        self.futex.wake_one();
    }
}

/// The panic for a slot claimed twice.
#[cold]
#[track_caller]
fn slot_in_use(wid: usize, found: u32) -> ! {
    panic!(
        "prepare_wait: waiter slot {wid} already has a wait in progress (slot is {}); \
         each slot may be used by one waiter at a time",
        state_name(found)
    )
}

/// What a word other than PARKED means to the owner that was waiting.
fn end_of_wait(word: u32) -> ParkEnd {
    match word {
        SIGNALED => ParkEnd::Signaled,
        TARGETED => ParkEnd::Targeted,
        other => unreachable!("a waiting slot found in state {}", state_name(other)),
    }
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("state", &state_name(self.state()))
            .finish_non_exhaustive()
    }
}

//! One waiter slot: the futex word its owner sleeps on, its link in the
//! waiter stack, and its push epoch.
//!
//! The futex word doubles as the slot's protocol state. Each transition has
//! exactly one writer, and the word's compare-and-swaps decide every race
//! between the owner and a notifier:
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
//! Owner: IDLE → PREPARED (claim, then push); CANCELLED → PREPARED (revive,
//! no push); PREPARED → PARKED (commit); PREPARED → PARKED_EXTERNAL
//! (`commit_wait_parked`); PREPARED → CANCELLED (cancel below the top);
//! PREPARED → IDLE (cancel by popping itself from the top); SIGNALED → IDLE
//! (its wait ends).
//!
//! Notifier, after popping the slot: PREPARED → SIGNALED (a notification
//! the owner finds at its commit or cancel, no syscall); PARKED → SIGNALED
//! then one `futex_wake`; PARKED_EXTERNAL → SIGNALED then one call of the
//! notifier's `Unpark` hook; CANCELLED → IDLE and TARGETED → SIGNALED
//! (nobody newly notified: the notifier pops again). It uses a CAS, so an
//! owner's concurrent revive or commit simply changes what gets delivered.
//!
//! Targeted waker (`notify_waiter`), without popping: PREPARED → TARGETED,
//! PARKED → TARGETED then one `futex_wake`, or PARKED_EXTERNAL → TARGETED
//! then one call of the hook. The slot stays stacked; its owner withdraws
//! it like a cancel (pops itself from the top, or leaves it CANCELLED for a
//! later pop or its own revive).
//!
//! Timed-out owner: withdraws the same way, from PARKED. Whoever's CAS on
//! the word comes first wins: the owner's (timed out, nothing was
//! delivered) or a notifier's (notified, and the owner reports that). An
//! owner whose `park` returned, for whatever reason, withdraws from
//! PARKED_EXTERNAL the same way: a park's return is a timeout to the slot,
//! unless a notifier's CAS came first.
//!
//! Orderings on the word: atomicity, not ordering, decides every race
//! above, and each Acquire and Release on it is *defensive*. Each was
//! weakened to Relaxed on its own, and every loom model still passed. No
//! payload rides on this word: the contract makes a returning commit mean
//! "re-check", and the waiter reads what a notifier published through its
//! own condition. They stay for two things the models cannot show. A slot
//! handed between threads needs the claim's Acquire to carry `epoch` from
//! its last holder (every model keeps a slot on one thread). And a
//! notifier's read of `next`, before its pop, must happen before the owner
//! sees SIGNALED and pushes again over that link: the delivery's Release
//! and the owner's Acquire forbid that load-buffering outcome, which loom
//! does not explore.

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
    /// The owner was asleep in its caller's `park`: woken with one call of
    /// the notifier's `Unpark` hook.
    Unpark,
    /// The slot had been cancelled or already woken by a targeted wake:
    /// nobody was newly notified.
    Skipped,
}

/// What the owner's claim of its slot found (`prepare_wait`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// The slot was off the stack: it is PREPARED now and must be pushed.
    Push,
    /// The slot was still stacked, cancelled below the top: it is PREPARED
    /// again where it stands, with no push.
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
    /// The stack word (top and epoch) that was on the stack when this slot
    /// was pushed: the link a pop restores. Written by the owner before its
    /// push CAS (which publishes it, Release); read by notifiers after an
    /// Acquire load of the state.
    pub(crate) next: AtomicU64,
    /// This slot's epoch, pre-shifted into the state's epoch field. Only the
    /// token holder touches it (Relaxed); the slot claim's Acquire and the
    /// Release stores that end a wait carry it between holders.
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

    /// The owner starts a wait on slot `wid`: IDLE → PREPARED (then the
    /// caller pushes it), or CANCELLED → PREPARED (still stacked: revived
    /// in place).
    ///
    /// # Panics
    ///
    /// If the slot already has a wait in progress; the word is left as it
    /// was.
    #[track_caller]
    pub(crate) fn claim(&self, wid: usize) -> Claim {
        match self.try_claim() {
            Ok(claim) => claim,
            Err(found) => slot_in_use(wid, found),
        }
    }

    /// [`claim`](Slot::claim), with the state found as the error when the
    /// slot already has a wait in progress; the word is then left as it
    /// was.
    pub(crate) fn try_claim(&self) -> Result<Claim, u32> {
        let word = self.futex.word();
        // Acquire: pairs with the Release that ended the slot's previous
        // wait (carrying its epoch) or with the notifier's CAS that popped
        // it. Defensive, as are the CAS's below (module docs, "Orderings").
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

    /// The owner popped its own slot off the top of the stack: free it. A
    /// swap, not a store: a targeted wake may have landed on the word.
    /// AcqRel is defensive (module docs, "Orderings").
    pub(crate) fn leave_popped(&self) -> Withdrawal {
        match self.futex.word().swap(IDLE, Ordering::AcqRel) {
            TARGETED => Withdrawal::Targeted,
            _ => Withdrawal::Withdrawn,
        }
    }

    /// The owner leaves the waiter set while its slot is below the top of
    /// the stack, or already popped by a notifier: mark it CANCELLED (a
    /// later pop skips it, the owner's next claim revives it), or, if a
    /// notifier got here first and signalled it, take the signal and free
    /// the slot. The word's CAS decides the race. Its orderings and the
    /// load's are defensive (module docs, "Orderings").
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

    /// End a wait after the slot left the stack: it may be prepared again.
    /// Release carries `epoch` to the next claim; defensive (module docs,
    /// "Orderings").
    #[inline]
    pub(crate) fn release(&self) {
        self.futex.word().store(IDLE, Ordering::Release);
    }

    /// The owner's commit: PREPARED → `parked` (PARKED or
    /// PARKED_EXTERNAL) announces that it is about to sleep. If a notifier
    /// got here first it never sleeps: the error says how its wait ended.
    /// Acquire on both outcomes, and on the loads after the sleep: a
    /// delivery's Release happens before whatever the owner does next.
    /// Defensive (module docs, "Orderings").
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

    /// After a successful [`commit`](Slot::commit) to PARKED_EXTERNAL:
    /// sleep once in the caller's `park`, then read how the wait ended. A
    /// word still PARKED_EXTERNAL means no wake came (the park timed out,
    /// returned spuriously or for its own reason): that is
    /// [`ParkEnd::TimedOut`], and the owner withdraws as on a timeout.
    pub(crate) fn park_external(
        &self,
        deadline: Option<std::time::Instant>,
        mut park: impl FnMut(Option<std::time::Instant>),
    ) -> ParkEnd {
        self.futex.count_external_wait();
        park(deadline);
        // Acquire, defensive as the others (module docs, "Orderings"); a
        // stale PARKED_EXTERNAL only sends the owner to withdraw, whose CAS
        // then finds what the notifier wrote.
        match self.futex.word().load(Ordering::Acquire) {
            PARKED_EXTERNAL => ParkEnd::TimedOut,
            now => end_of_wait(now),
        }
    }

    /// Count a wake through the notifier's unpark hook among this slot's
    /// wakes.
    pub(crate) fn count_external_wake(&self) {
        self.futex.count_external_wake();
    }

    /// Deliver a notification to a slot this notifier has just popped. For
    /// [`Delivery::Woken`] the caller must then call [`Slot::wake`], and for
    /// [`Delivery::Unpark`] the notifier's hook.
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
            // Release pairs with the owner's Acquire in `park`, `claim`
            // and `leave_in_place`; defensive (module docs, "Orderings"). A
            // failure means the owner moved first (a revive or a commit):
            // deliver to what it became.
            match word.compare_exchange(current, new, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return delivery,
                Err(now) => current = now,
            }
        }
    }

    /// Targeted wake, without popping: what it delivered to an owner that
    /// was waiting (prepared, parked or parked externally), or
    /// [`Delivery::Skipped`] if it was not. For [`Delivery::Woken`] the
    /// futex wake is made here; for [`Delivery::Unpark`] the caller calls
    /// the notifier's hook.
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

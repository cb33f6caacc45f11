//! One worker's sleep word: what a waker needs to know about a sleeper,
//! without Rayon's per-worker mutex.
//!
//! | value            | counted in `sleeping`? | meaning                                             |
//! |------------------|------------------------|-----------------------------------------------------|
//! | `AWAKE`          | no                     | not trying to sleep                                  |
//! | `REGISTERING`    | not yet (maybe soon)   | between the sleepy latch step and the counters CAS   |
//! | `WAKE_REQUESTED` | maybe                  | a waker found it registering: it must not sleep      |
//! | `SLEEPING`       | yes                    | registered; asleep on this futex word, or about to be |
//! | `CLAIMED`        | yes, until the waker uncounts it | a waker took it; it must wait for AWAKE     |
//! | `SLEEPING_EXTERNAL` | yes                 | registered; asleep in its caller's `park`, or about to be: a waker calls the `Unpark` hook |
//!
//! The sleeper moves AWAKE → REGISTERING before it can be counted, and
//! REGISTERING → SLEEPING (a CAS) only after its counters CAS succeeded. So
//! a waker that saw `sleeping > 0` finds every counted sleeper in
//! REGISTERING or SLEEPING, never half-registered and invisible (the lost
//! wake in Blitz's port, which reads a flag set after the count):
//! - SLEEPING: the waker claims it (CAS → CLAIMED), takes it off the count
//!   (the waker decrements, as in Rayon), then stores AWAKE and makes the
//!   futex wake. The sleeper leaves only on AWAKE, so it is never running
//!   while still counted (Rayon gets the same from holding the sleeper's
//!   mutex across the decrement);
//! - REGISTERING: the waker leaves WAKE_REQUESTED and decrements nothing.
//!   The sleeper's REGISTERING → SLEEPING CAS then fails; if it had counted
//!   itself it uncounts itself, and it goes back to searching.
//!
//! Every counted sleeper is uncounted exactly once: by the waker that wins
//! the CAS out of SLEEPING, or by the sleeper itself when it never reached
//! SLEEPING or left it by its own CAS (the final injected-jobs check).
//!
//! A sleeper that parks in its caller's `park` makes its final check as
//! SLEEPING, like any other, then moves SLEEPING → SLEEPING_EXTERNAL (a
//! CAS) and calls `park`. A waker claims SLEEPING_EXTERNAL as it claims
//! SLEEPING (→ CLAIMED, uncount, AWAKE), and then calls the `Unpark` hook
//! in place of the futex wake. When `park` returns, the sleeper's CAS
//! SLEEPING_EXTERNAL → AWAKE races the wakers as a timed-out sleeper's
//! does: if it wins, the sleeper uncounts itself; if it finds CLAIMED, a
//! waker is between its claim and its AWAKE, and the hook comes after that
//! AWAKE, so the sleeper parks again (with no deadline) until it does. If
//! the SLEEPING → SLEEPING_EXTERNAL CAS fails, a waker claimed the worker
//! as a futex sleeper: it waits for AWAKE on the futex word, as a sleeper
//! does.

use crate::sync::{Futex, Ordering};

const AWAKE: u32 = 0;
const REGISTERING: u32 = 1;
const WAKE_REQUESTED: u32 = 2;
const SLEEPING: u32 = 3;
const CLAIMED: u32 = 4;
const SLEEPING_EXTERNAL: u32 = 5;

/// What the sleeper's attempt to reach SLEEPING found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Registration {
    Sleeping,
    WakeRequested,
}

/// What a waker's claim found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// It was asleep (counted): claimed; the waker uncounts and wakes it.
    WokeSleeper,
    /// It was asleep in its caller's `park` (counted): claimed; the waker
    /// uncounts it, lets it go ([`WorkerSleep::release_claimed`]) and calls
    /// the `Unpark` hook.
    WokeExternal,
    /// It was registering: told not to sleep.
    Stopped,
    /// It was awake or already told: nothing to do.
    NotSleeping,
}

pub(crate) struct WorkerSleep {
    futex: Futex,
}

impl WorkerSleep {
    pub(crate) fn new() -> Self {
        WorkerSleep {
            futex: Futex::new(AWAKE),
        }
    }

    /// Sleeper: about to register, AWAKE → REGISTERING. A CAS, not a
    /// store: the word is AWAKE whenever its worker is not in a sleep
    /// attempt, so finding anything else means another thread is in one
    /// with the same worker index. Then the word is left as it was (that
    /// thread's sleep and its count stay intact) and its state is the
    /// error, for the caller's panic. Relaxed on both sides: the counters
    /// CAS that follows (AcqRel) publishes REGISTERING to any waker that
    /// sees the count, and a failure writes nothing.
    #[inline]
    pub(crate) fn begin_registering(&self) -> Result<(), &'static str> {
        self.futex
            .word()
            .compare_exchange(AWAKE, REGISTERING, Ordering::Relaxed, Ordering::Relaxed)
            .map(drop)
            .map_err(state_name)
    }

    /// Sleeper: abandon a registration it was not counted for. Defensive
    /// Release (every model passes with Relaxed): nobody reads anything
    /// through this store; the worker goes back to its queues.
    #[inline]
    pub(crate) fn abandon(&self) {
        // A waker's WAKE_REQUESTED is moot: we are going back to work.
        self.futex.word().store(AWAKE, Ordering::Release);
    }

    /// Sleeper, counted: REGISTERING → SLEEPING, unless a waker got here.
    /// Defensive AcqRel and Acquire (every model passes with Relaxed): the
    /// CAS decides whether the sleeper or its waker uncounts it, which is a
    /// matter of atomicity; the job a waker posted reaches the worker through
    /// its queue and the SleepFence.
    #[inline]
    pub(crate) fn finish_registering(&self) -> Registration {
        match self.futex.word().compare_exchange(
            REGISTERING,
            SLEEPING,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Registration::Sleeping,
            Err(WAKE_REQUESTED) => {
                self.futex.word().store(AWAKE, Ordering::Relaxed);
                Registration::WakeRequested
            }
            Err(other) => unreachable!("worker sleep word {other} while registering"),
        }
    }

    /// Sleeper, counted and SLEEPING, changing its mind (work showed up in
    /// the final check). True if it left SLEEPING itself (so it must uncount
    /// itself); false if a waker claimed it first (and uncounted it).
    /// Defensive AcqRel and Acquire, as in `finish_registering`.
    #[inline]
    pub(crate) fn cancel_sleep(&self) -> bool {
        match self.futex.word().compare_exchange(
            SLEEPING,
            AWAKE,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => true,
            Err(_) => {
                self.sleep(None);
                false
            }
        }
    }

    /// Sleeper, counted and SLEEPING after its final check: commit to its
    /// caller's `park`, SLEEPING → SLEEPING_EXTERNAL. False if a waker
    /// claimed it first: it then waits for AWAKE with
    /// [`sleep`](WorkerSleep::sleep), and that waker made a futex wake.
    /// Defensive AcqRel and Acquire, as in `finish_registering`.
    #[inline]
    pub(crate) fn park_externally(&self) -> bool {
        self.futex
            .word()
            .compare_exchange(
                SLEEPING,
                SLEEPING_EXTERNAL,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// Count a sleep in the caller's `park` among this word's sleeps.
    pub(crate) fn count_external_park(&self) {
        self.futex.count_external_wait();
    }

    /// Count a wake through the unpark hook among this word's wakes.
    pub(crate) fn count_external_wake(&self) {
        self.futex.count_external_wake();
    }

    /// Sleeper, after its caller's `park` returned: leave
    /// SLEEPING_EXTERNAL. True if it left by its own CAS (no waker came: it
    /// must uncount itself, as after a timeout); false if a waker claimed
    /// it (and uncounted it). A CLAIMED word means the waker has yet to
    /// store AWAKE and then call the hook: park again, with no deadline,
    /// until it has. Each retry is a CAS, which reads the newest value of
    /// the word. Defensive AcqRel and Acquire, as in `finish_registering`.
    pub(crate) fn leave_external(&self, mut park: impl FnMut(Option<std::time::Instant>)) -> bool {
        let word = self.futex.word();
        loop {
            match word.compare_exchange(
                SLEEPING_EXTERNAL,
                AWAKE,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(AWAKE) => return false,
                Err(CLAIMED) => park(None),
                Err(other) => unreachable!("worker sleep word {other} while parked externally"),
            }
        }
    }

    /// Sleeper: block until a waker has claimed us and uncounted us (the
    /// word reads AWAKE), or until `deadline`. Loops over spurious returns.
    /// Returns true if the deadline passed while still SLEEPING (the caller
    /// then races the wakers with `cancel_sleep`). The Acquire loads are
    /// defensive (every model passes with Relaxed): what the waker wrote
    /// reaches the worker through its queues and its latch (`probe`
    /// acquires), and its uncount through the counters' RMWs.
    pub(crate) fn sleep(&self, deadline: Option<std::time::Instant>) -> bool {
        let word = self.futex.word();
        loop {
            let current = word.load(Ordering::Acquire);
            match (current, deadline) {
                (AWAKE, _) => return false,
                (SLEEPING, Some(deadline)) => {
                    if self.futex.wait_until(SLEEPING, deadline)
                        && word.load(Ordering::Acquire) == SLEEPING
                    {
                        return true;
                    }
                }
                // CLAIMED: the waker stores AWAKE right after uncounting us.
                (SLEEPING | CLAIMED, _) => self.futex.wait(current),
                (other, _) => unreachable!("worker sleep word {other} while asleep"),
            }
        }
    }

    /// Waker: claim this worker if it is asleep or registering. For
    /// [`Wake::WokeSleeper`] the caller uncounts it and then calls
    /// [`WorkerSleep::wake_claimed`] (in that order, so posters see the
    /// count drop as early as possible).
    pub(crate) fn claim(&self) -> Wake {
        let word = self.futex.word();
        let mut current = word.load(Ordering::Acquire);
        loop {
            let (new, outcome) = match current {
                SLEEPING => (CLAIMED, Wake::WokeSleeper),
                SLEEPING_EXTERNAL => (CLAIMED, Wake::WokeExternal),
                REGISTERING => (WAKE_REQUESTED, Wake::Stopped),
                AWAKE | WAKE_REQUESTED | CLAIMED => return Wake::NotSleeping,
                _ => unreachable!("worker sleep word {current}"),
            };
            // AcqRel: Release hands our writes (the job, the latch) to the
            // sleeper's Acquire; Acquire orders its registration before us.
            // Defensive, like the load above (every model passes with
            // Relaxed): the latch and the queues carry the waker's writes
            // themselves, and only one CAS out of SLEEPING can win.
            match word.compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return outcome,
                Err(now) => current = now,
            }
        }
    }

    /// Waker, after uncounting a worker it claimed asleep in its caller's
    /// `park`: let it go; the caller then calls the `Unpark` hook. Release,
    /// defensive, as in `wake_claimed`.
    #[inline]
    pub(crate) fn release_claimed(&self) {
        self.futex.word().store(AWAKE, Ordering::Release);
    }

    /// Waker, after uncounting a worker it claimed: let it go.
    #[inline]
    pub(crate) fn wake_claimed(&self) {
        // Release: the sleeper's Acquire load of AWAKE sees the decrement.
        // Defensive (every model passes with Relaxed): the decrement is an
        // RMW on the counters word, and the sleeper's next step there
        // (work_found) is an RMW too, which reads it in modification order.
        self.futex.word().store(AWAKE, Ordering::Release);
        self.futex.wake_one();
    }

    /// (futex waits, futex wakes) on this worker's word.
    pub(crate) fn counts(&self) -> (u64, u64) {
        self.futex.counts()
    }

    /// True if the worker is registered asleep (for the wakers' choice of
    /// the newest sleeper, tests and monitoring).
    pub(crate) fn is_sleeping(&self) -> bool {
        matches!(
            self.futex.word().load(Ordering::Relaxed),
            SLEEPING | SLEEPING_EXTERNAL
        )
    }
}

/// The name of a sleep word's value, for messages.
fn state_name(word: u32) -> &'static str {
    match word {
        AWAKE => "awake",
        REGISTERING => "registering",
        WAKE_REQUESTED => "wake requested",
        SLEEPING => "sleeping",
        CLAIMED => "claimed",
        SLEEPING_EXTERNAL => "sleeping externally",
        _ => "invalid",
    }
}

impl std::fmt::Debug for WorkerSleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = state_name(self.futex.word().load(Ordering::Relaxed));
        f.debug_tuple("WorkerSleep").field(&state).finish()
    }
}

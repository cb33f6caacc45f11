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
//! A waker that saw `sleeping > 0` finds every counted sleeper REGISTERING
//! or SLEEPING, never half-registered (Blitz's lost wake), and whoever wins
//! the CAS out of SLEEPING (or SLEEPING_EXTERNAL) uncounts it once:
//! [docs/jec-sleep.md](crate::docs::jec_sleep), "Why nothing is lost".

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
    /// uncounts it, [releases](WorkerSleep::release_claimed) it and calls the hook.
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

    /// Sleeper: AWAKE → REGISTERING, before it can be counted. A CAS: any
    /// other value means another thread is in a sleep attempt as this
    /// worker, whose word stays as it was; its state is the error. Relaxed:
    /// the counters CAS that follows (AcqRel) publishes REGISTERING to any
    /// waker that sees the count, and a failure writes nothing.
    #[inline]
    pub(crate) fn begin_registering(&self) -> Result<(), &'static str> {
        self.futex
            .word()
            .compare_exchange(AWAKE, REGISTERING, Ordering::Relaxed, Ordering::Relaxed)
            .map(drop)
            .map_err(state_name)
    }

    /// Sleeper: abandon a registration it was not counted for (a waker's
    /// WAKE_REQUESTED is moot). Defensive Release: nobody reads through it.
    #[inline]
    pub(crate) fn abandon(&self) {
        self.futex.word().store(AWAKE, Ordering::Release);
    }

    /// Sleeper, counted: REGISTERING → SLEEPING, unless a waker got here.
    /// Defensive AcqRel and Acquire: atomicity decides who uncounts, and the
    /// queues and the SleepFence carry the job.
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

    /// Sleeper, counted and SLEEPING, changing its mind after the final
    /// check: true if it left SLEEPING itself (it uncounts itself), false if
    /// a waker claimed it first. Defensive, as in `finish_registering`.
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

    /// Sleeper, after its final check: SLEEPING → SLEEPING_EXTERNAL. False if
    /// a waker claimed it first: it waits for AWAKE with
    /// [`sleep`](WorkerSleep::sleep). Defensive, as in `finish_registering`.
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

    /// Sleeper, after its caller's `park` returned: leave SLEEPING_EXTERNAL.
    /// True if its own CAS won (it uncounts itself, as after a timeout);
    /// false if a waker claimed it. On CLAIMED the waker's AWAKE and hook are
    /// still to come: park again, with no deadline. Defensive, as above.
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

    /// Sleeper: block until a waker has claimed and uncounted us (AWAKE), or
    /// until `deadline`; true if it passed while SLEEPING (the caller then
    /// races the wakers with `cancel_sleep`). Defensive Acquire: the waker's
    /// writes reach us through the queues, the latch and the counters' RMWs.
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
    /// [`Wake::WokeSleeper`] the caller uncounts it, then calls
    /// [`WorkerSleep::wake_claimed`], so posters see the count drop early.
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
            // Defensive AcqRel, like the load above (every model passes with
            // Relaxed): the latch and the queues carry the waker's writes, and
            // only one CAS out of SLEEPING can win.
            match word.compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return outcome,
                Err(now) => current = now,
            }
        }
    }

    /// Waker, after uncounting a worker it claimed in its caller's `park`:
    /// let it go, before the `Unpark` hook. Defensive Release, as below.
    #[inline]
    pub(crate) fn release_claimed(&self) {
        self.futex.word().store(AWAKE, Ordering::Release);
    }

    /// Waker, after uncounting a worker it claimed: let it go.
    #[inline]
    pub(crate) fn wake_claimed(&self) {
        // Defensive Release (every model passes with Relaxed): the decrement
        // is an RMW on the counters word, and so is the sleeper's next step
        // there (work_found), which reads it in modification order.
        self.futex.word().store(AWAKE, Ordering::Release);
        self.futex.wake_one();
    }

    /// (futex waits, futex wakes) on this worker's word.
    pub(crate) fn counts(&self) -> (u64, u64) {
        self.futex.counts()
    }

    /// True if the worker is registered asleep (for `newest_sleeper`, tests).
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

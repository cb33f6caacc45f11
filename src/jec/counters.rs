//! The packed counters word of [`JecSleep`](crate::JecSleep).
//!
//! | bits   | field      | meaning                                                     |
//! |--------|------------|-------------------------------------------------------------|
//! | 0..16  | `sleeping` | workers registered as asleep (the waker takes them off)     |
//! | 16..32 | `inactive` | workers between `start_looking` and `work_found` (idle + sleeping) |
//! | 32..64 | `jec`      | jobs event counter: even = some worker got sleepy since the last post, odd = work was posted since |
//!
//! One `AtomicU64` on every target, so the JEC has 32 bits where Rayon's may
//! have 16; it is the top field, so its wrap leaves the thread counts alone.

use static_assertions::const_assert;

use crate::sync::{AtomicU64, Ordering};

const THREAD_BITS: u32 = 16;
const SLEEPING_SHIFT: u32 = 0;
const INACTIVE_SHIFT: u32 = THREAD_BITS;
const JEC_SHIFT: u32 = 2 * THREAD_BITS;

const THREAD_MASK: u64 = (1 << THREAD_BITS) - 1;
const ONE_SLEEPING: u64 = 1 << SLEEPING_SHIFT;
const ONE_INACTIVE: u64 = 1 << INACTIVE_SHIFT;
const ONE_JEC: u64 = 1 << JEC_SHIFT;

/// The most workers the counters can count.
pub(crate) const MAX_WORKERS: usize = THREAD_MASK as usize;

const_assert!(JEC_SHIFT + 32 == u64::BITS);
const_assert!(MAX_WORKERS == 65_535);

internal! {
    /// A snapshot of [`JecSleep`](crate::JecSleep)'s counters word, decoded
    /// (the layout is in [docs/jec-sleep.md](crate::docs::jec_sleep)).
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub struct JecCounters(u64);
}

impl JecCounters {
    /// Workers registered as asleep and not yet claimed by a waker.
    #[must_use]
    pub fn sleeping(self) -> usize {
        ((self.0 >> SLEEPING_SHIFT) & THREAD_MASK) as usize
    }

    /// Workers looking for work or asleep.
    #[must_use]
    pub fn inactive(self) -> usize {
        ((self.0 >> INACTIVE_SHIFT) & THREAD_MASK) as usize
    }

    /// Workers looking for work and not asleep: they find new work unwoken.
    /// Saturating, so that a decoder never panics on a word it is handed.
    #[must_use]
    pub fn awake_but_idle(self) -> usize {
        self.inactive().saturating_sub(self.sleeping())
    }

    /// The jobs event counter.
    #[must_use]
    pub fn jec(self) -> u32 {
        (self.0 >> JEC_SHIFT) as u32
    }

    /// True when work was posted since the last worker got sleepy (odd JEC).
    #[must_use]
    pub fn jec_is_active(self) -> bool {
        self.jec() & 1 == 1
    }
}

impl std::fmt::Debug for JecCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JecCounters")
            .field("sleeping", &self.sleeping())
            .field("inactive", &self.inactive())
            .field("jec", &self.jec())
            .field(
                "jec_state",
                &if self.jec_is_active() {
                    "active"
                } else {
                    "sleepy"
                },
            )
            .finish()
    }
}

/// The counters word: every RMW AcqRel, every load Acquire; the two
/// handshakes that need sequential consistency are explicit `fence(SeqCst)`
/// calls in `JecSleep`, which loom models exactly.
pub(crate) struct AtomicCounters {
    value: AtomicU64,
}

impl AtomicCounters {
    pub(crate) fn new(jec: u32) -> Self {
        // JEC starts odd ("active"): nobody is sleepy yet.
        AtomicCounters {
            value: AtomicU64::new(u64::from(jec | 1) << JEC_SHIFT),
        }
    }

    /// Defensive Acquire (every model passes with Relaxed): the PushFence,
    /// the SleepFence and the CASes on this word carry the handshakes.
    #[inline]
    pub(crate) fn load(&self) -> JecCounters {
        JecCounters(self.value.load(Ordering::Acquire))
    }

    /// A worker starts looking, unless `workers` already are (a search was
    /// never ended): then the word is left as it was, so that no thread acts
    /// on a count above `workers`, and the counters are the error. Defensive
    /// AcqRel: an RMW reads the latest count whatever its ordering.
    #[inline]
    pub(crate) fn try_add_inactive(&self, workers: usize) -> Result<JecCounters, JecCounters> {
        let mut current = self.load();
        loop {
            if current.inactive() >= workers {
                return Err(current);
            }
            match self.value.compare_exchange_weak(
                current.0,
                current.0 + ONE_INACTIVE,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(current),
                Err(now) => current = JecCounters(now),
            }
        }
    }

    /// A worker's search ended; returns the old counters, from which
    /// `JecSleep` picks whom to wake. Each idle state holds one count, so no
    /// underflow. Load-bearing AcqRel: Relaxed deadlocks `two_posters_two_sleepers`.
    #[inline]
    pub(crate) fn sub_inactive(&self) -> JecCounters {
        let old = JecCounters(self.value.fetch_sub(ONE_INACTIVE, Ordering::AcqRel));
        // The ending worker is awake: a sleeper let go before its waker
        // uncounted it would break this (CLAIMED prevents it).
        debug_assert!(
            old.inactive() > old.sleeping(),
            "sub_inactive: {old:?} has no awake inactive worker"
        );
        old
    }

    /// One worker off the sleeping count, by its waker or by itself undoing
    /// its registration. Defensive AcqRel: the sleep word's CAS decides who.
    #[inline]
    pub(crate) fn sub_sleeping(&self) {
        let old = JecCounters(self.value.fetch_sub(ONE_SLEEPING, Ordering::AcqRel));
        debug_assert!(
            old.sleeping() > 0,
            "sub_sleeping: {old:?} had no sleeping worker"
        );
    }

    /// Off the sleeping and inactive counts in one RMW: a sleeper whose park
    /// returned unwoken leaves its idle period, and no poster may see it
    /// awake and idle on the way out. Defensive AcqRel, as `sub_sleeping`.
    #[inline]
    pub(crate) fn sub_sleeping_and_inactive(&self) {
        let old = JecCounters(
            self.value
                .fetch_sub(ONE_SLEEPING + ONE_INACTIVE, Ordering::AcqRel),
        );
        debug_assert!(
            old.sleeping() > 0 && old.inactive() >= old.sleeping(),
            "sub_sleeping_and_inactive: {old:?} had no sleeping worker"
        );
    }

    /// Register one sleeper if the word still equals `old` (the JEC has not
    /// moved). Load-bearing AcqRel on success: Relaxed deadlocks
    /// `internal_job_between_sleepy_and_sleeping`. Relaxed on failure: the caller reloads.
    #[inline]
    pub(crate) fn try_add_sleeping(&self, old: JecCounters) -> bool {
        debug_assert!(old.sleeping() < old.inactive(), "try_add_sleeping: {old:?}");
        self.value
            .compare_exchange(
                old.0,
                old.0 + ONE_SLEEPING,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Bump the JEC if `increment(current)` says so; returns the counters as
    /// left. Defensive AcqRel and Acquire: the modification order of this one
    /// word decides the race with the registration CAS.
    #[inline]
    pub(crate) fn increment_jec_if(&self, increment: impl Fn(JecCounters) -> bool) -> JecCounters {
        let mut current = self.load();
        loop {
            if !increment(current) {
                return current;
            }
            // wrapping_add: the JEC is the top field, so its wrap drops off
            // the word and leaves the thread counts alone.
            let new = JecCounters(current.0.wrapping_add(ONE_JEC));
            match self.value.compare_exchange_weak(
                current.0,
                new.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return new,
                Err(now) => current = JecCounters(now),
            }
        }
    }

    /// Test hook: move the JEC by `delta`, wrapping, as `delta` posts would:
    /// `u32::MAX` is a rollover minus one, which no loom model could reach.
    #[cfg(test)]
    pub(crate) fn add_jec_wrapping(&self, delta: u32) {
        let mut current = self.value.load(Ordering::Relaxed);
        loop {
            let new = current.wrapping_add(u64::from(delta) << JEC_SHIFT);
            match self.value.compare_exchange_weak(
                current,
                new,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => current = now,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_fields() {
        let c = JecCounters(3 | (5 << INACTIVE_SHIFT) | (7 << JEC_SHIFT));
        assert_eq!((c.sleeping(), c.inactive(), c.jec()), (3, 5, 7));
        assert_eq!(c.awake_but_idle(), 2);
        assert!(c.jec_is_active());
        assert_eq!(
            format!("{c:?}"),
            "JecCounters { sleeping: 3, inactive: 5, jec: 7, jec_state: \"active\" }"
        );
    }

    #[cfg(not(loom))]
    #[test]
    fn jec_wraps_without_touching_thread_counts() {
        let counters = AtomicCounters::new(u32::MAX);
        counters.try_add_inactive(1).unwrap();
        assert_eq!(counters.load().jec(), u32::MAX);
        let after = counters.increment_jec_if(|c| c.jec_is_active());
        assert_eq!(after.jec(), 0);
        assert_eq!(after.inactive(), 1);
        assert_eq!(after.sleeping(), 0);
    }
}

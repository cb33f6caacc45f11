//! [`IdleClock`]: the clock an idle worker reads for its policy and its
//! counters; the shared clock a waker stamps its wake with; and the calling
//! thread's CPU clock, where the platform has one.
//!
//! loom has no clock, and a model must take the same path every time it
//! replays a schedule. Under loom (the crate's models, or a client's with
//! `--cfg eventcount_loom`) an idle clock therefore advances by a fixed
//! step, [`LOOM_STEP`], each time it is read, and the shared clock reads 0.

/// The clock an idle worker reads: the monotonic clock, in nanoseconds
/// ([`shared_clock_ns`]); under loom, a fixed step per read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IdleClock {
    #[cfg(any(all(test, loom), eventcount_loom))]
    reads: u64,
}

/// Under loom, how far an [`IdleClock`] advances per read, in nanoseconds:
/// half the largest budget the models search (`src/models/protocols.rs`),
/// which then lasts two rounds.
#[cfg_attr(not(any(all(test, loom), eventcount_loom)), allow(dead_code))]
pub(crate) const LOOM_STEP: u64 = 100_000;

impl IdleClock {
    /// A clock for one idle period.
    #[inline]
    pub(crate) const fn new() -> Self {
        IdleClock {
            #[cfg(any(all(test, loom), eventcount_loom))]
            reads: 0,
        }
    }

    /// Now, in nanoseconds. Under loom, one more step at every read.
    #[inline]
    pub(crate) fn now_ns(&mut self) -> u64 {
        #[cfg(not(any(all(test, loom), eventcount_loom)))]
        {
            monotonic_ns()
        }
        #[cfg(any(all(test, loom), eventcount_loom))]
        {
            self.reads += 1;
            self.reads * LOOM_STEP
        }
    }

    /// [`now_ns`](IdleClock::now_ns), and the same moment on
    /// [`shared_clock_ns`], from one read of the clock.
    #[inline]
    pub(crate) fn now_and_shared_ns(&mut self) -> (u64, u64) {
        let now = self.now_ns();
        #[cfg(not(any(all(test, loom), eventcount_loom)))]
        {
            (now, now)
        }
        #[cfg(any(all(test, loom), eventcount_loom))]
        {
            (now, shared_clock_ns())
        }
    }
}

/// Nanoseconds on the monotonic clock, one clock for every thread of the
/// process: `CLOCK_MONOTONIC` through rustix's vDSO call on Linux and
/// Android, kept as a `u64` so a difference is one subtraction; `Instant`
/// from the process's first reading elsewhere.
#[cfg(all(
    not(any(all(test, loom), eventcount_loom)),
    any(target_os = "linux", target_os = "android")
))]
#[inline]
fn monotonic_ns() -> u64 {
    timespec_ns(rustix::time::clock_gettime(
        rustix::time::ClockId::Monotonic,
    ))
}

#[cfg(all(
    not(any(all(test, loom), eventcount_loom)),
    not(any(target_os = "linux", target_os = "android"))
))]
#[inline]
fn monotonic_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let elapsed = EPOCH.get_or_init(std::time::Instant::now).elapsed();
    u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
}

/// A reading of a clock in nanoseconds; 0 for a negative one, which the
/// monotonic and CPU clocks never give.
#[cfg(all(not(all(test, loom)), any(target_os = "linux", target_os = "android")))]
#[inline]
fn timespec_ns(t: rustix::time::Timespec) -> u64 {
    u64::try_from(t.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(t.tv_nsec).unwrap_or(0))
}

/// Nanoseconds on one monotonic clock shared by every thread of the process
/// ([`monotonic_ns`]), for moments that one thread records and another
/// reads. Under loom, always 0: a waker's choice of the newest sleeper reads
/// these moments, so a real clock would give one schedule two paths.
#[inline]
pub(crate) fn shared_clock_ns() -> u64 {
    #[cfg(not(any(all(test, loom), eventcount_loom)))]
    {
        monotonic_ns()
    }
    #[cfg(any(all(test, loom), eventcount_loom))]
    {
        0
    }
}

/// Whether [`thread_cpu_ns`] reads a clock in this build: Linux and
/// Android, but not in this crate's own loom models. A client's loom build
/// reads the real clock: its readings feed only the counters, never a
/// decision.
pub(crate) const HAS_THREAD_CPU_CLOCK: bool = cfg!(all(
    not(all(test, loom)),
    any(target_os = "linux", target_os = "android")
));

/// The CPU time the calling thread has used, in nanoseconds, where the
/// platform gives a per-thread CPU clock; `None` elsewhere. A system call
/// on most kernels (the vDSO serves only the wall clocks), so it is read
/// on idle paths only.
#[inline]
pub(crate) fn thread_cpu_ns() -> Option<u64> {
    #[cfg(all(not(all(test, loom)), any(target_os = "linux", target_os = "android")))]
    {
        Some(timespec_ns(rustix::time::clock_gettime(
            rustix::time::ClockId::ThreadCPUTime,
        )))
    }
    #[cfg(not(all(not(all(test, loom)), any(target_os = "linux", target_os = "android"))))]
    {
        None
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_thread_cpu_clock_moves_with_work_where_there_is_one() {
        assert_eq!(thread_cpu_ns().is_some(), HAS_THREAD_CPU_CLOCK);
        let Some(before) = thread_cpu_ns() else {
            return;
        };
        let mut x = 1u64;
        while thread_cpu_ns().unwrap() == before {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let shared = shared_clock_ns();
        assert!(shared_clock_ns() >= shared);
    }
}

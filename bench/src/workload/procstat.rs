//! CPU time, context switches and thread states of this process, from
//! /proc (Linux): nanosecond CPU time without unsafe `getrusage`.
//! Elsewhere every reading is zero and every thread counts as asleep.
//!
//! A thread's schedstat is brought up to date when the thread is switched
//! out, and otherwise only at the scheduler tick: for a thread that is
//! running right now it can be a few milliseconds stale. Read it for
//! threads that are blocked, never for the calling thread, when the
//! difference matters ([`cpu_of_other_threads`]); the calling thread's
//! own CPU time is [`calling_thread_cpu`], from the clock instead.

use std::time::Duration;

/// CPU time and voluntary context switches summed over the live threads.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcUsage {
    /// On-CPU time.
    pub cpu: Duration,
    /// Times a thread blocked (slept, waited on a lock or a syscall).
    pub voluntary_switches: u64,
}

impl ProcUsage {
    /// The sum over this process's live threads right now.
    pub fn now() -> Self {
        let mut usage = ProcUsage::default();
        for tid in thread_ids() {
            usage.cpu += thread_cpu(tid);
            usage.voluntary_switches += thread_switches(tid);
        }
        usage
    }

    /// What a measurement of a pool reads from the thread that drives it:
    /// the CPU time of every thread but the caller ([`cpu_of_other_threads`]),
    /// and the voluntary switches of every thread, the caller's waits for
    /// results included.
    pub fn for_pool() -> Self {
        ProcUsage {
            cpu: cpu_of_other_threads(),
            voluntary_switches: voluntary_switches(),
        }
    }

    /// Usage since `earlier` (threads that exited in between are lost, so
    /// take both readings while the measured pool is alive).
    pub fn since(&self, earlier: &ProcUsage) -> ProcUsage {
        ProcUsage {
            cpu: self.cpu.saturating_sub(earlier.cpu),
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
        }
    }
}

/// Kernel thread ids of this process's live threads.
pub fn thread_ids() -> Vec<u64> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| task.file_name().to_str()?.parse().ok())
        .collect()
}

/// How many threads this process has right now.
pub fn live_threads() -> usize {
    thread_ids().len()
}

/// The calling thread's kernel thread id, from the /proc/thread-self link.
pub fn current_tid() -> Option<u64> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// On-CPU time of thread `tid` of this process (zero for one that has
/// exited). Stale by up to a tick while the thread runs: see the module
/// docs.
pub fn thread_cpu(tid: u64) -> Duration {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// On-CPU time of each live thread of this process, by thread id.
pub fn cpu_by_thread() -> Vec<(u64, Duration)> {
    thread_ids()
        .into_iter()
        .map(|tid| (tid, thread_cpu(tid)))
        .collect()
}

/// The CPU time the threads alive at both readings spent between them: a
/// thread that started or ended in between is left out, rather than
/// counted with all or none of its time.
pub fn cpu_between(before: &[(u64, Duration)], after: &[(u64, Duration)]) -> Duration {
    after
        .iter()
        .filter_map(|(tid, later)| {
            let (_, earlier) = before.iter().find(|(t, _)| t == tid)?;
            Some(later.saturating_sub(*earlier))
        })
        .sum()
}

/// On-CPU time of every live thread of this process but the caller (whose
/// own reading would be stale): a pool's workers, measured from outside.
pub fn cpu_of_other_threads() -> Duration {
    let me = current_tid();
    thread_ids()
        .into_iter()
        .filter(|&tid| Some(tid) != me)
        .map(thread_cpu)
        .sum()
}

/// True if thread `tid` of this process is asleep ('S') right now, or if
/// /proc cannot tell.
pub fn thread_sleeping(tid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) {
        // The state is the first field after the parenthesised name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| state == "S"),
        Err(_) => true,
    }
}

/// Voluntary context switches of every live thread of this process.
pub fn voluntary_switches() -> u64 {
    thread_ids().into_iter().map(thread_switches).sum()
}

/// The calling thread's CPU time so far, from the thread's CPU clock: not
/// stale like its schedstat. Useful work is timed with it, not with wall
/// time, which another process on the machine would stretch. Zero where
/// there is no such clock to read safely (every target but Linux and
/// Android).
pub fn calling_thread_cpu() -> Duration {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        Duration::ZERO
    }
}

fn thread_switches(tid: u64) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")) else {
        return 0;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

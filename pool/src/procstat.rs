//! Process CPU time and context switches from /proc (Linux), summed over
//! the live threads: nanosecond CPU time without unsafe `getrusage`.
//! Elsewhere every reading is zero.

use std::time::Duration;

#[derive(Clone, Copy, Debug, Default)]
pub struct ProcUsage {
    pub cpu: Duration,
    pub voluntary_switches: u64,
}

impl ProcUsage {
    pub fn now() -> Self {
        let mut usage = ProcUsage::default();
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
            return usage;
        };
        for task in tasks.flatten() {
            let path = task.path();
            if let Ok(schedstat) = std::fs::read_to_string(path.join("schedstat")) {
                if let Some(ns) = schedstat
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse().ok())
                {
                    usage.cpu += Duration::from_nanos(ns);
                }
            }
            if let Ok(status) = std::fs::read_to_string(path.join("status")) {
                for line in status.lines() {
                    if let Some(v) = line.strip_prefix("voluntary_ctxt_switches:") {
                        usage.voluntary_switches += v.trim().parse::<u64>().unwrap_or(0);
                    }
                }
            }
        }
        usage
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

//! [`LoadReading`]: how much of the machine other processes took while a
//! benchmark ran (their load distorts the numbers).

use std::time::Instant;

/// CPU used on the whole machine and by this process (with the children
/// it has waited for), at one instant.
#[derive(Debug)]
pub struct LoadReading {
    at: Instant,
    machine_busy: u64,
    own: u64,
}

impl LoadReading {
    /// Clock ticks (USER_HZ, 100 per second) from /proc/stat and
    /// /proc/self/stat; `None` off Linux.
    pub fn now() -> Option<LoadReading> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let cpu: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|v| v.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal: all but idle and
        // iowait are busy.
        let machine_busy = cpu.iter().take(8).sum::<u64>() - cpu.get(3)? - cpu.get(4)?;
        let own_stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let fields: Vec<&str> = own_stat.rsplit_once(')')?.1.split_whitespace().collect();
        let ticks = |field: usize| -> Option<u64> { fields.get(field)?.parse().ok() };
        // utime and stime, then cutime and cstime: the children this
        // process has waited for, which are B9's CPU hogs (dropped, so
        // waited for, before the reading after the benchmark). Without
        // them, the hogs B9 starts on purpose counted as foreign load.
        let own = ticks(11)? + ticks(12)? + ticks(13)? + ticks(14)?;
        Some(LoadReading {
            at: Instant::now(),
            machine_busy,
            own,
        })
    }

    /// Percent of the machine's CPUs that other processes kept busy since
    /// `earlier`.
    pub fn foreign_percent(&self, earlier: &LoadReading, cpus: usize) -> f64 {
        let ticks = self.machine_busy.saturating_sub(earlier.machine_busy) as f64
            - self.own.saturating_sub(earlier.own) as f64;
        let capacity = self.at.duration_since(earlier.at).as_secs_f64() * 100.0 * cpus as f64;
        (ticks.max(0.0) / capacity.max(1e-9) * 100.0).min(100.0)
    }
}

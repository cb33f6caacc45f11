//! [`Machine`]: what the numbers were measured on.

use std::process::{Command, Stdio};
use std::thread;

use serde::Serialize;

/// The CPU, kernel and compiler of this run.
#[derive(Debug, Serialize)]
pub struct Machine {
    pub cpu: String,
    #[serde(rename = "vcpus")]
    pub cpus: usize,
    pub kernel: String,
    pub rustc: String,
}

impl Machine {
    /// Read them from /proc and `rustc --version`.
    pub fn probe() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find_map(|l| l.strip_prefix("model name"))
                    .map(|rest| rest.trim_start_matches([' ', '\t', ':']).trim().to_string())
            })
            .unwrap_or_else(|| "unknown CPU".to_string());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".to_string());
        let rustc = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string()))
            .arg("--version")
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|| "rustc (unknown version)".to_string());
        Machine {
            cpu,
            cpus: thread::available_parallelism().map_or(0, |n| n.get()),
            kernel,
            rustc,
        }
    }
}

//! With the `policy-tools` feature: the idle gaps a pool's workers learn
//! from, appended to the file that `EVENTCOUNT_GAP_TRACE` names (nothing is
//! kept without it), a block at a time and the rest when the pool is
//! dropped (a process that exits first loses its last block). One line
//! per gap, `worker kind gap_ns sleep_cost_ns`, `kind` being `idle` or
//! `join` and `sleep_cost_ns` the worker's estimate then (0 before any):
//! the traces the repository's simulator replays.

use std::io::Write as _;
use std::path::PathBuf;

use crate::latch::WaitKind;
use crate::sync::unmodeled::Mutex;

/// One pool's gaps, and where they go.
#[derive(Debug)]
pub(crate) struct GapTrace {
    path: Option<PathBuf>,
    lines: Mutex<String>,
}

impl GapTrace {
    pub(crate) fn new() -> Self {
        GapTrace {
            path: std::env::var_os("EVENTCOUNT_GAP_TRACE").map(PathBuf::from),
            lines: Mutex::new(String::new()),
        }
    }

    /// Worker `worker` learned a gap of `gap_ns` in a wait of `kind`, its
    /// sleep's cost being `sleep_cost_ns` then.
    pub(crate) fn record(&self, worker: usize, kind: WaitKind, gap_ns: u64, sleep_cost_ns: u64) {
        if self.path.is_none() {
            return;
        }
        let kind = match kind {
            WaitKind::Idle => "idle",
            WaitKind::Join => "join",
        };
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.push_str(&format!("{worker} {kind} {gap_ns} {sleep_cost_ns}\n"));
        if lines.len() >= BLOCK {
            self.write(&std::mem::take(&mut *lines));
        }
    }

    /// Append `lines` to the file; say so if that fails, without a panic.
    fn write(&self, lines: &str) {
        let Some(path) = &self.path else {
            return;
        };
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| file.write_all(lines.as_bytes()));
        if let Err(err) = written {
            let _ = writeln!(
                std::io::stderr(),
                "eventcount: could not write the gap trace to {}: {err}",
                path.display()
            );
        }
    }
}

/// How much of the trace is kept before it is written: a write per few
/// thousand gaps.
const BLOCK: usize = 64 * 1024;

impl Drop for GapTrace {
    fn drop(&mut self) {
        let lines = std::mem::take(self.lines.get_mut().unwrap_or_else(|e| e.into_inner()));
        self.write(&lines);
    }
}

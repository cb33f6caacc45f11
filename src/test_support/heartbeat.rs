//! How a long test body tells its watchdog that it is still making progress.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Progress reports from a test body to its watchdog
/// ([`with_progress_watchdog`](super::with_progress_watchdog)). Clone it
/// into every thread that makes progress.
#[derive(Clone, Debug, Default)]
pub struct Heartbeat(Arc<AtomicU64>);

impl Heartbeat {
    /// Report progress: the watchdog's quiet-period clock restarts.
    pub fn beat(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// How many beats so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

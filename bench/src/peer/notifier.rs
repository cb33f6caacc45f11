//! [`NotifierPeer`]: the crate's `Notifier`, with its check / prepare /
//! re-check / commit loop.

use std::sync::atomic::AtomicU32;

use eventcount::{Notifier, SleepStats};

use super::Peer;

/// A `Notifier` with one waiter slot per sleeper.
#[derive(Debug)]
pub struct NotifierPeer(Notifier);

impl Peer for NotifierPeer {
    fn new(slots: usize) -> Self {
        NotifierPeer(Notifier::new(slots))
    }

    fn wait_until(&self, slot: usize, _signal: &AtomicU32, ready: impl Fn() -> bool) {
        let notifier = &self.0;
        loop {
            if ready() {
                return;
            }
            let wait = notifier.prepare_wait(slot);
            if ready() {
                notifier.cancel_wait(wait);
                return;
            }
            notifier.commit_wait(wait);
        }
    }

    fn wake_one(&self, _signal: &AtomicU32) {
        self.0.notify_one();
    }

    fn wake_all(&self, _signal: &AtomicU32) {
        self.0.notify_all();
    }

    fn stats(&self) -> Option<SleepStats> {
        Some(self.0.stats())
    }

    fn num_sleeping(&self) -> Option<usize> {
        Some(self.0.num_sleeping())
    }
}

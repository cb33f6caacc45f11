//! [`EventListener`]: the event-listener crate's `Event`, with its listen /
//! check / wait pattern.

use std::sync::atomic::AtomicU32;

use event_listener::{Event, IntoNotification, Listener};

use super::Peer;

/// An `Event`; its listeners queue up in it.
#[derive(Debug, Default)]
pub struct EventListener(Event);

impl Peer for EventListener {
    fn new(_slots: usize) -> Self {
        EventListener::default()
    }

    fn wait_until(&self, _slot: usize, _signal: &AtomicU32, ready: impl Fn() -> bool) {
        while !ready() {
            let listener = self.0.listen();
            if ready() {
                return;
            }
            listener.wait();
        }
    }

    fn wake_one(&self, _signal: &AtomicU32) {
        // `additional`: one more listener per wake, even if another one was
        // notified and has not woken yet (each posted item wants a taker).
        self.0.notify(1.additional());
    }

    fn wake_all(&self, _signal: &AtomicU32) {
        self.0.notify(usize::MAX);
    }
}

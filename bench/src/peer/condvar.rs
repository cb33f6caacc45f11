//! The condition-variable peers: [`StdCondvar`] and [`ParkingLotCondvar`],
//! one `Peer` implementation over any mutex + condvar pair.

use std::sync::atomic::AtomicU32;

use super::Peer;

/// A mutex guarding no data and its condition variable.
///
/// The condition lives in the workload's atomics. A waker changes it, then
/// notifies while it holds the lock: a waiter that checked under the lock
/// is then either inside `wait` (and is notified) or checks after the
/// change (and sees it). Notifying under the lock, as the per-peer copies
/// of B2 and B3 did, keeps their numbers comparable: the woken thread may
/// then wait for the lock, which is part of what a condvar costs.
pub trait LockAndCondvar: Default + Send + Sync + 'static {
    /// Under the lock, wait on the condvar until `ready()` holds.
    fn wait_until(&self, ready: impl Fn() -> bool);

    /// Under the lock, notify one waiter, or all of them.
    fn notify(&self, all: bool);
}

/// The peer over a [`LockAndCondvar`].
#[derive(Debug, Default)]
pub struct Condvar<L>(L);

impl<L: LockAndCondvar> Peer for Condvar<L> {
    fn new(_slots: usize) -> Self {
        Condvar::default()
    }

    fn wait_until(&self, _slot: usize, _signal: &AtomicU32, ready: impl Fn() -> bool) {
        self.0.wait_until(ready);
    }

    fn wake_one(&self, _signal: &AtomicU32) {
        self.0.notify(false);
    }

    fn wake_all(&self, _signal: &AtomicU32) {
        self.0.notify(true);
    }
}

/// std's `Mutex` and `Condvar`, as most code would wait.
pub type StdCondvar = Condvar<StdPair>;

/// parking_lot's `Mutex` and `Condvar`.
pub type ParkingLotCondvar = Condvar<ParkingLotPair>;

/// std's mutex and condvar.
#[derive(Debug, Default)]
pub struct StdPair(std::sync::Mutex<()>, std::sync::Condvar);

impl LockAndCondvar for StdPair {
    fn wait_until(&self, ready: impl Fn() -> bool) {
        let mut guard = self.0.lock().unwrap();
        while !ready() {
            guard = self.1.wait(guard).unwrap();
        }
    }

    fn notify(&self, all: bool) {
        let _guard = self.0.lock().unwrap();
        if all {
            self.1.notify_all();
        } else {
            self.1.notify_one();
        }
    }
}

/// parking_lot's mutex and condvar.
#[derive(Debug, Default)]
pub struct ParkingLotPair(parking_lot::Mutex<()>, parking_lot::Condvar);

impl LockAndCondvar for ParkingLotPair {
    fn wait_until(&self, ready: impl Fn() -> bool) {
        let mut guard = self.0.lock();
        while !ready() {
            self.1.wait(&mut guard);
        }
    }

    fn notify(&self, all: bool) {
        let _guard = self.0.lock();
        if all {
            self.1.notify_all();
        } else {
            self.1.notify_one();
        }
    }
}

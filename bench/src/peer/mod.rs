//! [`Peer`]: one way for threads to sleep until a condition holds and to
//! wake each other. The wake workloads (B2-B4) are written once over it, and
//! each alternative the Notifier is measured against implements it in a few
//! lines: the raw futex, the Notifier and event-listener on their own, the
//! condition variables and the per-thread parkers as two families that
//! share one implementation each (`condvar.rs`, `parking.rs`).

mod condvar;
mod event_listener;
mod futex;
mod notifier;
mod parking;

use std::sync::atomic::AtomicU32;

use eventcount::SleepStats;

pub use self::condvar::{
    Condvar, LockAndCondvar, ParkingLotCondvar, ParkingLotPair, StdCondvar, StdPair,
};
pub use self::event_listener::EventListener;
pub use self::futex::RawFutex;
pub use self::notifier::NotifierPeer;
pub use self::parking::{
    CrossbeamParker, CrossbeamThread, ParkThread, Parking, StdPark, StdThread,
};

/// A way to sleep and wake, shared by the threads of one workload.
///
/// Every workload keeps the state its sleepers wait on in atomics, and
/// before each wake it changes one 32-bit word of it, the *signal* (a turn
/// counter, a generation, a count of items posted). A futex sleeps on
/// exactly that word, which is what makes [`RawFutex`] the floor; the other
/// peers ignore it.
pub trait Peer: Send + Sync + 'static {
    /// A peer for threads that sleep on slots `0..slots`.
    fn new(slots: usize) -> Self;

    /// Called once by each thread that will sleep on `slot`, before it first
    /// does: the parking primitives need to know whom to unpark.
    fn register(&self, _slot: usize) {}

    /// Sleep on `slot` until `ready()` holds. Wakers make `ready()` true,
    /// change `signal`, then call [`wake_one`](Peer::wake_one) or
    /// [`wake_all`](Peer::wake_all).
    fn wait_until(&self, slot: usize, signal: &AtomicU32, ready: impl Fn() -> bool);

    /// Wake one sleeper (at least one, for the peers that cannot choose).
    fn wake_one(&self, signal: &AtomicU32);

    /// Wake every sleeper.
    fn wake_all(&self, signal: &AtomicU32);

    /// Futex waits and wakes so far, for the peers that count them (the
    /// Notifier).
    fn stats(&self) -> Option<SleepStats> {
        None
    }

    /// Threads committed to sleep right now, for the peers that know (the
    /// Notifier).
    fn num_sleeping(&self) -> Option<usize> {
        None
    }
}

/// The peers by name, to choose one at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerKind {
    /// [`RawFutex`]: the baseline.
    RawFutex,
    /// [`NotifierPeer`]: the crate's `Notifier`.
    Notifier,
    /// [`StdCondvar`].
    StdCondvar,
    /// [`ParkingLotCondvar`].
    ParkingLotCondvar,
    /// [`EventListener`].
    EventListener,
    /// [`CrossbeamParker`].
    CrossbeamParker,
    /// [`StdPark`].
    StdPark,
}

impl PeerKind {
    /// The name in tables and criterion ids.
    pub fn name(self) -> &'static str {
        match self {
            PeerKind::RawFutex => "raw_futex",
            PeerKind::Notifier => "notifier",
            PeerKind::StdCondvar => "std_condvar",
            PeerKind::ParkingLotCondvar => "parking_lot_condvar",
            PeerKind::EventListener => "event_listener",
            PeerKind::CrossbeamParker => "crossbeam_parker",
            PeerKind::StdPark => "std_park",
        }
    }
}

/// `$body` with the type name `$P` standing for the peer type of `$kind`:
/// the one place where a choice made at run time becomes a type.
macro_rules! with_peer {
    ($kind:expr, $P:ident => $body:expr) => {
        $crate::peer::with_peer!(@each $kind, $P, $body, [
            RawFutex => RawFutex,
            Notifier => NotifierPeer,
            StdCondvar => StdCondvar,
            ParkingLotCondvar => ParkingLotCondvar,
            EventListener => EventListener,
            CrossbeamParker => CrossbeamParker,
            StdPark => StdPark,
        ])
    };
    (@each $kind:expr, $P:ident, $body:expr, [$($variant:ident => $peer:ident,)*]) => {
        match $kind {
            $($crate::peer::PeerKind::$variant => {
                type $P = $crate::peer::$peer;
                $body
            })*
        }
    };
}
pub(crate) use with_peer;

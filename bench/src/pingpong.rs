//! B2, ping-pong: the calling thread (side A) and a partner thread (side B)
//! take turns, each sleeping until the other has woken it. One round trip
//! is "A wakes B, B wakes A": two sleeps and two wakes.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};

use crate::workload::procstat::current_tid;
use eventcount::SleepStats;

use crate::peer::{with_peer, Peer, PeerKind};
use crate::threads::stop_and_join;

/// The peers compared in B2, the baseline first.
pub const PEERS: [PeerKind; 7] = [
    PeerKind::RawFutex,
    PeerKind::Notifier,
    PeerKind::StdCondvar,
    PeerKind::ParkingLotCondvar,
    PeerKind::EventListener,
    PeerKind::CrossbeamParker,
    PeerKind::StdPark,
];

const SIDE_A: usize = 0;
const SIDE_B: usize = 1;

/// What both sides share. The turn counter is the signal: odd means B's
/// turn, even A's.
struct Table<P> {
    turn: AtomicU32,
    stop: AtomicBool,
    peer: P,
}

impl<P: Peer> Table<P> {
    fn turn(&self) -> u32 {
        self.turn.load(Ordering::Acquire)
    }

    /// Pass the turn to the other side and wake it; returns the new turn.
    fn pass(&self) -> u32 {
        let turn = self.turn.fetch_add(1, Ordering::AcqRel) + 1;
        self.peer.wake_one(&self.turn);
        turn
    }

    /// Sleep as `side` until the turn is no longer `turn`.
    fn wait_past(&self, side: usize, turn: u32) {
        self.peer
            .wait_until(side, &self.turn, || self.turn() != turn);
    }

    /// Side B: answer every pass until told to stop.
    fn partner(&self) {
        let mut seen = 0;
        loop {
            self.wait_past(SIDE_B, seen);
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            seen = self.pass();
        }
    }
}

/// A running ping-pong pair over peer `P`. Dropping it stops and joins B.
pub struct PingPong<P: Peer> {
    table: Arc<Table<P>>,
    partner: Option<JoinHandle<()>>,
    partner_tid: Option<u64>,
    /// Side A is the thread that started the pair (it registered there).
    same_thread: PhantomData<*const ()>,
}

impl<P: Peer> PingPong<P> {
    /// Register the calling thread as side A and start side B.
    pub fn start() -> Self {
        let table = Arc::new(Table {
            turn: AtomicU32::new(0),
            stop: AtomicBool::new(false),
            peer: P::new(2),
        });
        table.peer.register(SIDE_A);
        let (tid_tx, tid_rx) = mpsc::channel();
        let partner = {
            let table = table.clone();
            thread::Builder::new()
                .name("ping-pong-partner".to_string())
                .spawn(move || {
                    table.peer.register(SIDE_B);
                    let _ = tid_tx.send(current_tid());
                    table.partner();
                })
                .expect("spawn the ping-pong partner")
        };
        let partner_tid = tid_rx.recv().ok().flatten();
        PingPong {
            table,
            partner: Some(partner),
            partner_tid,
            same_thread: PhantomData,
        }
    }
}

/// A ping-pong pair of any peer (see [`start`]).
pub trait RoundTrips {
    /// One round trip: wake B, sleep until B has woken us.
    fn round_trip(&mut self);

    /// The kernel thread id of side B (for pinning with taskset).
    fn partner_tid(&self) -> Option<u64>;

    /// The peer's futex counts so far (the Notifier only).
    fn stats(&self) -> Option<SleepStats>;
}

impl<P: Peer> RoundTrips for PingPong<P> {
    #[inline]
    fn round_trip(&mut self) {
        let turn = self.table.pass();
        self.table.wait_past(SIDE_A, turn);
    }

    fn partner_tid(&self) -> Option<u64> {
        self.partner_tid
    }

    fn stats(&self) -> Option<SleepStats> {
        self.table.peer.stats()
    }
}

impl<P: Peer> Drop for PingPong<P> {
    fn drop(&mut self) {
        let table = &self.table;
        let pass = || {
            table.pass();
        };
        stop_and_join(
            &table.stop,
            pass,
            self.partner.take(),
            "the ping-pong partner",
        );
    }
}

/// Start a pair over the peer `kind` names, on the calling thread.
pub fn start(kind: PeerKind) -> Box<dyn RoundTrips> {
    with_peer!(kind, P => Box::new(PingPong::<P>::start()))
}

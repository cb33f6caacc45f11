//! B3, fan-out: N sleepers wait for a generation counter to move; the
//! calling thread moves it, wakes them all, and times until all N have
//! acknowledged. Only the wake is timed: before each round, the sleepers
//! are given time to be really asleep.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::workload::procstat::{current_tid, thread_sleeping};
use eventcount::SleepStats;

use crate::peer::{with_peer, Peer, PeerKind};
use crate::threads::{settle, stop_and_join};

/// The peers compared in B3, the baseline first: those with a wake-all of
/// their own (the per-thread parkers have none).
pub const PEERS: [PeerKind; 5] = [
    PeerKind::RawFutex,
    PeerKind::Notifier,
    PeerKind::StdCondvar,
    PeerKind::ParkingLotCondvar,
    PeerKind::EventListener,
];

/// What the sleepers and the waker share. The generation is the signal.
struct Crowd<P> {
    peer: P,
    generation: AtomicU32,
    /// Cumulative: incremented once per generation by each sleeper just
    /// before it waits.
    ready: AtomicUsize,
    /// Cumulative: incremented once per generation by each woken sleeper.
    acks: AtomicUsize,
    stop: AtomicBool,
    tids: Mutex<Vec<u64>>,
}

impl<P: Peer> Crowd<P> {
    /// Sleeper `slot`: acknowledge every generation until told to stop.
    fn sleeper(&self, slot: usize) {
        self.peer.register(slot);
        self.tids.lock().unwrap().extend(current_tid());
        loop {
            let generation = self.generation.load(Ordering::Acquire);
            self.ready.fetch_add(1, Ordering::Release);
            self.peer.wait_until(slot, &self.generation, || {
                self.generation.load(Ordering::Acquire) != generation
                    || self.stop.load(Ordering::Acquire)
            });
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            self.acks.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Move the generation and wake every sleeper.
    fn advance_and_wake_all(&self) {
        self.generation.fetch_add(1, Ordering::Release);
        self.peer.wake_all(&self.generation);
    }
}

/// N sleeper threads over peer `P`. Dropping it stops and joins them.
pub struct FanOut<P: Peer> {
    crowd: Arc<Crowd<P>>,
    threads: Vec<JoinHandle<()>>,
    rounds: usize,
}

impl<P: Peer> FanOut<P> {
    /// Start `n` sleepers.
    pub fn start(n: usize) -> Self {
        let crowd = Arc::new(Crowd {
            peer: P::new(n),
            generation: AtomicU32::new(0),
            ready: AtomicUsize::new(0),
            acks: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            tids: Mutex::new(Vec::new()),
        });
        let threads = (0..n)
            .map(|slot| {
                let crowd = crowd.clone();
                thread::Builder::new()
                    .name(format!("fan-out-{slot}"))
                    .spawn(move || crowd.sleeper(slot))
                    .expect("spawn a fan-out sleeper")
            })
            .collect();
        FanOut {
            crowd,
            threads,
            rounds: 0,
        }
    }
}

/// A fan-out of any peer (see [`start`]).
pub trait WakeAlls {
    /// Wait (untimed) until every sleeper is asleep, then time one wake-all
    /// until all of them acknowledged.
    fn round(&mut self) -> Duration;

    /// The peer's futex counts so far (the Notifier only).
    fn stats(&self) -> Option<SleepStats>;
}

impl<P: Peer> WakeAlls for FanOut<P> {
    fn round(&mut self) -> Duration {
        let n = self.threads.len();
        let target = (self.rounds + 1) * n;
        let crowd = &*self.crowd;
        while crowd.ready.load(Ordering::Acquire) < target {
            thread::yield_now();
        }
        // Everyone announced itself; now wait until each is really asleep
        // in the kernel (and, for the Notifier, committed), at most 100 ms.
        let tids = crowd.tids.lock().unwrap().clone();
        settle(Duration::from_millis(100), || {
            crowd.peer.num_sleeping().is_none_or(|asleep| asleep == n)
                && tids.iter().all(|&tid| thread_sleeping(tid))
        });
        let start = Instant::now();
        crowd.advance_and_wake_all();
        while crowd.acks.load(Ordering::Acquire) < target {
            thread::yield_now();
        }
        let elapsed = start.elapsed();
        self.rounds += 1;
        elapsed
    }

    fn stats(&self) -> Option<SleepStats> {
        self.crowd.peer.stats()
    }
}

impl<P: Peer> Drop for FanOut<P> {
    fn drop(&mut self) {
        let crowd = &self.crowd;
        let wake = || crowd.advance_and_wake_all();
        stop_and_join(
            &crowd.stop,
            wake,
            self.threads.drain(..),
            "a fan-out sleeper",
        );
    }
}

/// Start `n` sleepers over the peer `kind` names.
pub fn start(kind: PeerKind, n: usize) -> Box<dyn WakeAlls> {
    with_peer!(kind, P => Box::new(FanOut::<P>::start(n)))
}

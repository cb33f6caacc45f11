//! The sleep/wake workloads B2 (ping-pong), B3 (fan-out) and B4 (bursty
//! producer/consumer), each written once per implementation.
//!
//! Shared by `benches/wake.rs` (criterion) and `examples/bench_report.rs`
//! (the alternating report), which include it with `#[path]`, so both
//! measure exactly the same code. Nothing here asserts a timing.

#![allow(dead_code)] // each includer uses a different part

use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use event_listener::{Event, IntoNotification, Listener};
use eventcount::{Notifier, SleepStats};

// ---------------------------------------------------------------------------
// Waiting helpers: the check / prepare / re-check / commit loop per API.

/// Sleep on slot `wid` of `notifier` until `cond()` holds.
#[inline]
pub fn notifier_wait_until(notifier: &Notifier, wid: usize, cond: impl Fn() -> bool) {
    loop {
        if cond() {
            return;
        }
        let wait = notifier.prepare_wait(wid);
        if cond() {
            notifier.cancel_wait(wait);
            return;
        }
        notifier.commit_wait(wait);
    }
}

/// Sleep on `event` until `cond()` holds (event-listener's listen / check /
/// wait pattern).
#[inline]
pub fn event_wait_until(event: &Event, cond: impl Fn() -> bool) {
    loop {
        if cond() {
            return;
        }
        let listener = event.listen();
        if cond() {
            return;
        }
        listener.wait();
    }
}

/// On-CPU time of thread `tid` of this process, from its schedstat (Linux;
/// zero elsewhere or for a thread that has exited).
///
/// The kernel brings this number up to date when the thread is switched
/// out, and otherwise only at the scheduler tick: for a thread that is
/// running right now it can be a few milliseconds stale. Read it for
/// threads that are blocked (or yielding), never for the calling thread.
pub fn task_cpu(tid: u64) -> Duration {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// On-CPU time of every live thread of this process except `except` (the
/// calling thread, whose own reading would be stale; see [`task_cpu`]).
pub fn other_threads_cpu(except: Option<u64>) -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    tasks
        .flatten()
        .filter_map(|t| t.file_name().to_str().and_then(|n| n.parse::<u64>().ok()))
        .filter(|&tid| Some(tid) != except)
        .map(task_cpu)
        .sum()
}

/// The calling thread's kernel thread id, from the /proc/thread-self link.
pub fn current_tid() -> Option<u64> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// True if thread `tid` of this process is asleep ('S') right now, or if
/// /proc cannot tell.
fn thread_sleeping(tid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) {
        // The state is the first field after the parenthesised name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| state == "S"),
        Err(_) => true,
    }
}

fn diff_stats(after: SleepStats, before: SleepStats) -> SleepStats {
    after - before
}

// ---------------------------------------------------------------------------
// B2: ping-pong. One partner thread; each round trip is "A wakes B, B wakes
// A". A turn counter `seq` says whose turn it is (odd: B's, even: A's).

/// The implementations compared in B2, baseline first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PingImpl {
    RawFutex,
    Notifier,
    StdCondvar,
    ParkingLotCondvar,
    EventListener,
    CrossbeamParker,
    StdPark,
}

impl PingImpl {
    pub const ALL: [PingImpl; 7] = [
        PingImpl::RawFutex,
        PingImpl::Notifier,
        PingImpl::StdCondvar,
        PingImpl::ParkingLotCondvar,
        PingImpl::EventListener,
        PingImpl::CrossbeamParker,
        PingImpl::StdPark,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PingImpl::RawFutex => "raw_futex",
            PingImpl::Notifier => "notifier",
            PingImpl::StdCondvar => "std_condvar",
            PingImpl::ParkingLotCondvar => "parking_lot_condvar",
            PingImpl::EventListener => "event_listener",
            PingImpl::CrossbeamParker => "crossbeam_parker",
            PingImpl::StdPark => "std_park",
        }
    }
}

/// A running ping-pong pair: the calling thread is side A, a spawned thread
/// is side B. Dropping it stops and joins B.
pub struct PingPong {
    trip: Box<dyn FnMut()>,
    stop: Option<Box<dyn FnOnce()>>,
    notifier: Option<Arc<Notifier>>,
    partner_tid: Option<u64>,
}

impl PingPong {
    /// Spawn side B of `imp`. Must be used on the thread that created it.
    pub fn start(imp: PingImpl) -> PingPong {
        let (tid, tid_rx) = mpsc::channel();
        let mut pair = match imp {
            PingImpl::RawFutex => raw_futex_pair(tid),
            PingImpl::Notifier => notifier_pair(tid),
            PingImpl::StdCondvar => std_condvar_pair(tid),
            PingImpl::ParkingLotCondvar => parking_lot_pair(tid),
            PingImpl::EventListener => event_listener_pair(tid),
            PingImpl::CrossbeamParker => parker_pair(tid),
            PingImpl::StdPark => park_pair(tid),
        };
        pair.partner_tid = tid_rx.recv().ok().flatten();
        pair
    }

    /// The kernel thread id of side B (for pinning with taskset).
    pub fn partner_tid(&self) -> Option<u64> {
        self.partner_tid
    }

    /// One round trip: wake B, sleep until B has woken us.
    #[inline]
    pub fn round_trip(&mut self) {
        (self.trip)();
    }

    /// Futex waits and wakes so far (the Notifier only).
    pub fn stats(&self) -> Option<SleepStats> {
        self.notifier.as_ref().map(|n| n.stats())
    }
}

impl Drop for PingPong {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop();
        }
    }
}

struct Turn {
    seq: AtomicU32,
    stop: AtomicBool,
}

impl Turn {
    fn new() -> Arc<Turn> {
        Arc::new(Turn {
            seq: AtomicU32::new(0),
            stop: AtomicBool::new(false),
        })
    }
    fn seq(&self) -> u32 {
        self.seq.load(Ordering::Acquire)
    }
    /// Pass the turn; returns the new value.
    fn pass(&self) -> u32 {
        self.seq.fetch_add(1, Ordering::AcqRel) + 1
    }
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// Where side B reports its kernel thread id.
type TidSender = mpsc::Sender<Option<u64>>;

fn spawn_b(name: &str, tid: TidSender, body: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let _ = tid.send(current_tid());
            body()
        })
        .expect("spawn ping-pong partner")
}

fn raw_futex_pair(tid: TidSender) -> PingPong {
    let turn = Turn::new();
    let b = {
        let turn = turn.clone();
        spawn_b("pp-futex", tid, move || {
            let mut seen = 0;
            loop {
                while turn.seq() == seen {
                    atomic_wait::wait(&turn.seq, seen);
                }
                if turn.stopping() {
                    return;
                }
                seen = turn.pass();
                atomic_wait::wake_one(&turn.seq);
            }
        })
    };
    let a = turn.clone();
    PingPong {
        trip: Box::new(move || {
            let s = a.pass();
            atomic_wait::wake_one(&a.seq);
            while a.seq() == s {
                atomic_wait::wait(&a.seq, s);
            }
        }),
        stop: Some(Box::new(move || {
            turn.stop.store(true, Ordering::Release);
            turn.pass();
            atomic_wait::wake_one(&turn.seq);
            b.join().expect("ping-pong partner panicked");
        })),
        notifier: None,
        partner_tid: None,
    }
}

fn notifier_pair(tid: TidSender) -> PingPong {
    let turn = Turn::new();
    let notifier = Arc::new(Notifier::new(2));
    let b = {
        let (turn, notifier) = (turn.clone(), notifier.clone());
        spawn_b("pp-notifier", tid, move || {
            let mut seen = 0;
            loop {
                notifier_wait_until(&notifier, 1, || turn.seq() != seen);
                if turn.stopping() {
                    return;
                }
                seen = turn.pass();
                notifier.notify_one();
            }
        })
    };
    let (a, an) = (turn.clone(), notifier.clone());
    PingPong {
        trip: Box::new(move || {
            let s = a.pass();
            an.notify_one();
            notifier_wait_until(&an, 0, || a.seq() != s);
        }),
        stop: Some({
            let notifier = notifier.clone();
            Box::new(move || {
                turn.stop.store(true, Ordering::Release);
                turn.pass();
                notifier.notify_one();
                b.join().expect("ping-pong partner panicked");
            })
        }),
        notifier: Some(notifier),
        partner_tid: None,
    }
}

fn std_condvar_pair(tid: TidSender) -> PingPong {
    // (seq, stop) under one mutex.
    let shared = Arc::new((Mutex::new((0u32, false)), Condvar::new()));
    let b = {
        let shared = shared.clone();
        spawn_b("pp-condvar", tid, move || {
            let (lock, cv) = &*shared;
            let mut guard = lock.lock().unwrap();
            let mut seen = 0;
            loop {
                while guard.0 == seen && !guard.1 {
                    guard = cv.wait(guard).unwrap();
                }
                if guard.1 {
                    return;
                }
                guard.0 += 1;
                seen = guard.0;
                cv.notify_one();
            }
        })
    };
    let a = shared.clone();
    PingPong {
        trip: Box::new(move || {
            let (lock, cv) = &*a;
            let mut guard = lock.lock().unwrap();
            guard.0 += 1;
            let s = guard.0;
            cv.notify_one();
            while guard.0 == s {
                guard = cv.wait(guard).unwrap();
            }
        }),
        stop: Some(Box::new(move || {
            let (lock, cv) = &*shared;
            lock.lock().unwrap().1 = true;
            cv.notify_one();
            b.join().expect("ping-pong partner panicked");
        })),
        notifier: None,
        partner_tid: None,
    }
}

fn parking_lot_pair(tid: TidSender) -> PingPong {
    let shared = Arc::new((
        parking_lot::Mutex::new((0u32, false)),
        parking_lot::Condvar::new(),
    ));
    let b = {
        let shared = shared.clone();
        spawn_b("pp-parking-lot", tid, move || {
            let (lock, cv) = &*shared;
            let mut guard = lock.lock();
            let mut seen = 0;
            loop {
                while guard.0 == seen && !guard.1 {
                    cv.wait(&mut guard);
                }
                if guard.1 {
                    return;
                }
                guard.0 += 1;
                seen = guard.0;
                cv.notify_one();
            }
        })
    };
    let a = shared.clone();
    PingPong {
        trip: Box::new(move || {
            let (lock, cv) = &*a;
            let mut guard = lock.lock();
            guard.0 += 1;
            let s = guard.0;
            cv.notify_one();
            while guard.0 == s {
                cv.wait(&mut guard);
            }
        }),
        stop: Some(Box::new(move || {
            let (lock, cv) = &*shared;
            lock.lock().1 = true;
            cv.notify_one();
            b.join().expect("ping-pong partner panicked");
        })),
        notifier: None,
        partner_tid: None,
    }
}

fn event_listener_pair(tid: TidSender) -> PingPong {
    let turn = Turn::new();
    let event = Arc::new(Event::new());
    let b = {
        let (turn, event) = (turn.clone(), event.clone());
        spawn_b("pp-event-listener", tid, move || {
            let mut seen = 0;
            loop {
                event_wait_until(&event, || turn.seq() != seen);
                if turn.stopping() {
                    return;
                }
                seen = turn.pass();
                event.notify(1);
            }
        })
    };
    let (a, ae) = (turn.clone(), event.clone());
    PingPong {
        trip: Box::new(move || {
            let s = a.pass();
            ae.notify(1);
            event_wait_until(&ae, || a.seq() != s);
        }),
        stop: Some(Box::new(move || {
            turn.stop.store(true, Ordering::Release);
            turn.pass();
            event.notify(usize::MAX);
            b.join().expect("ping-pong partner panicked");
        })),
        notifier: None,
        partner_tid: None,
    }
}

fn parker_pair(tid: TidSender) -> PingPong {
    use crossbeam_utils::sync::Parker;
    let turn = Turn::new();
    let parker_a = Parker::new();
    let unparker_a = parker_a.unparker().clone();
    let parker_b = Parker::new();
    let unparker_b = parker_b.unparker().clone();
    let b = {
        let turn = turn.clone();
        spawn_b("pp-parker", tid, move || {
            let mut seen = 0;
            loop {
                while turn.seq() == seen {
                    parker_b.park();
                }
                if turn.stopping() {
                    return;
                }
                seen = turn.pass();
                unparker_a.unpark();
            }
        })
    };
    let (a, wake_b) = (turn.clone(), unparker_b.clone());
    PingPong {
        trip: Box::new(move || {
            let s = a.pass();
            wake_b.unpark();
            while a.seq() == s {
                parker_a.park();
            }
        }),
        stop: Some(Box::new(move || {
            turn.stop.store(true, Ordering::Release);
            turn.pass();
            unparker_b.unpark();
            b.join().expect("ping-pong partner panicked");
        })),
        notifier: None,
        partner_tid: None,
    }
}

fn park_pair(tid: TidSender) -> PingPong {
    let turn = Turn::new();
    let a_thread = thread::current();
    let b = {
        let turn = turn.clone();
        spawn_b("pp-park", tid, move || {
            let mut seen = 0;
            loop {
                while turn.seq() == seen {
                    thread::park();
                }
                if turn.stopping() {
                    return;
                }
                seen = turn.pass();
                a_thread.unpark();
            }
        })
    };
    let b_thread = b.thread().clone();
    let a = turn.clone();
    PingPong {
        trip: Box::new(move || {
            let s = a.pass();
            b_thread.unpark();
            while a.seq() == s {
                thread::park();
            }
        }),
        stop: Some(Box::new(move || {
            turn.stop.store(true, Ordering::Release);
            turn.pass();
            b.thread().unpark();
            b.join().expect("ping-pong partner panicked");
        })),
        notifier: None,
        partner_tid: None,
    }
}

// ---------------------------------------------------------------------------
// B3: fan-out. N sleepers wait for a generation counter to move; the
// calling thread moves it, wakes them all, and times until all N have
// acknowledged.

/// The implementations compared in B3, baseline first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FanImpl {
    RawFutex,
    Notifier,
    StdCondvar,
    ParkingLotCondvar,
    EventListener,
}

impl FanImpl {
    pub const ALL: [FanImpl; 5] = [
        FanImpl::RawFutex,
        FanImpl::Notifier,
        FanImpl::StdCondvar,
        FanImpl::ParkingLotCondvar,
        FanImpl::EventListener,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FanImpl::RawFutex => "raw_futex_wake_all",
            FanImpl::Notifier => "notifier",
            FanImpl::StdCondvar => "std_condvar",
            FanImpl::ParkingLotCondvar => "parking_lot_condvar",
            FanImpl::EventListener => "event_listener",
        }
    }
}

// One instance per run, never moved: the size difference is harmless.
#[allow(clippy::large_enum_variant)]
enum FanWaker {
    RawFutex,
    Notifier(Notifier),
    Std(Mutex<()>, Condvar),
    ParkingLot(parking_lot::Mutex<()>, parking_lot::Condvar),
    Event(Event),
}

struct FanShared {
    imp: FanWaker,
    /// The futex word for the raw futex; the generation for all.
    gen: AtomicU32,
    /// Cumulative: incremented once per generation by each sleeper just
    /// before it waits.
    ready: AtomicUsize,
    /// Cumulative: incremented once per generation by each woken sleeper.
    ack: AtomicUsize,
    stop: AtomicBool,
    tids: Mutex<Vec<u64>>,
}

impl FanShared {
    fn gen_is_not(&self, g: u32) -> bool {
        self.gen.load(Ordering::Acquire) != g || self.stop.load(Ordering::Acquire)
    }

    /// A sleeper's wait for the generation to move past `g`.
    fn wait_past(&self, wid: usize, g: u32) {
        match &self.imp {
            FanWaker::RawFutex => {
                self.ready.fetch_add(1, Ordering::Release);
                while !self.gen_is_not(g) {
                    atomic_wait::wait(&self.gen, g);
                }
            }
            FanWaker::Notifier(n) => {
                self.ready.fetch_add(1, Ordering::Release);
                notifier_wait_until(n, wid, || self.gen_is_not(g));
            }
            FanWaker::Std(lock, cv) => {
                let mut guard = lock.lock().unwrap();
                self.ready.fetch_add(1, Ordering::Release);
                while !self.gen_is_not(g) {
                    guard = cv.wait(guard).unwrap();
                }
            }
            FanWaker::ParkingLot(lock, cv) => {
                let mut guard = lock.lock();
                self.ready.fetch_add(1, Ordering::Release);
                while !self.gen_is_not(g) {
                    cv.wait(&mut guard);
                }
            }
            FanWaker::Event(event) => {
                self.ready.fetch_add(1, Ordering::Release);
                event_wait_until(event, || self.gen_is_not(g));
            }
        }
    }

    /// Move the generation and wake every sleeper.
    fn advance_and_wake_all(&self) {
        match &self.imp {
            FanWaker::RawFutex => {
                self.gen.fetch_add(1, Ordering::Release);
                atomic_wait::wake_all(&self.gen);
            }
            FanWaker::Notifier(n) => {
                self.gen.fetch_add(1, Ordering::Release);
                n.notify_all();
            }
            FanWaker::Std(lock, cv) => {
                let _guard = lock.lock().unwrap();
                self.gen.fetch_add(1, Ordering::Release);
                cv.notify_all();
            }
            FanWaker::ParkingLot(lock, cv) => {
                let _guard = lock.lock();
                self.gen.fetch_add(1, Ordering::Release);
                cv.notify_all();
            }
            FanWaker::Event(event) => {
                self.gen.fetch_add(1, Ordering::Release);
                event.notify(usize::MAX);
            }
        }
    }
}

/// N sleeper threads and the state to fan out to them. Dropping it stops
/// and joins them.
pub struct Fanout {
    shared: Arc<FanShared>,
    threads: Vec<JoinHandle<()>>,
    tids: Vec<u64>,
    rounds: usize,
    n: usize,
}

impl Fanout {
    pub fn start(imp: FanImpl, n: usize) -> Fanout {
        let shared = Arc::new(FanShared {
            imp: match imp {
                FanImpl::RawFutex => FanWaker::RawFutex,
                FanImpl::Notifier => FanWaker::Notifier(Notifier::new(n)),
                FanImpl::StdCondvar => FanWaker::Std(Mutex::new(()), Condvar::new()),
                FanImpl::ParkingLotCondvar => {
                    FanWaker::ParkingLot(parking_lot::Mutex::new(()), parking_lot::Condvar::new())
                }
                FanImpl::EventListener => FanWaker::Event(Event::new()),
            },
            gen: AtomicU32::new(0),
            ready: AtomicUsize::new(0),
            ack: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            tids: Mutex::new(Vec::new()),
        });
        let threads = (0..n)
            .map(|wid| {
                let shared = shared.clone();
                thread::Builder::new()
                    .name(format!("fanout-{wid}"))
                    .spawn(move || {
                        if let Some(tid) = current_tid() {
                            shared.tids.lock().unwrap().push(tid);
                        }
                        loop {
                            let g = shared.gen.load(Ordering::Acquire);
                            shared.wait_past(wid, g);
                            if shared.stop.load(Ordering::Acquire) {
                                return;
                            }
                            shared.ack.fetch_add(1, Ordering::AcqRel);
                        }
                    })
                    .expect("spawn fan-out sleeper")
            })
            .collect();
        Fanout {
            shared,
            threads,
            tids: Vec::new(),
            rounds: 0,
            n,
        }
    }

    /// Wait (untimed) until every sleeper is asleep, then time one
    /// wake-all until all N acknowledged.
    pub fn round(&mut self) -> Duration {
        let target = (self.rounds + 1) * self.n;
        let shared = &*self.shared;
        while shared.ready.load(Ordering::Acquire) < target {
            thread::yield_now();
        }
        if self.tids.len() < self.n {
            self.tids = shared.tids.lock().unwrap().clone();
        }
        // Everyone announced itself; now wait until each is really asleep
        // in the kernel (or, for ours, committed), at most 100 ms.
        let deadline = Instant::now() + Duration::from_millis(100);
        loop {
            let committed = match &shared.imp {
                FanWaker::Notifier(n) => n.num_sleeping() == self.n,
                _ => true,
            };
            if committed && self.tids.iter().all(|&tid| thread_sleeping(tid)) {
                break;
            }
            if Instant::now() > deadline {
                break;
            }
            thread::yield_now();
        }
        let start = Instant::now();
        shared.advance_and_wake_all();
        while shared.ack.load(Ordering::Acquire) < target {
            thread::yield_now();
        }
        let elapsed = start.elapsed();
        self.rounds += 1;
        elapsed
    }

    /// Futex waits and wakes so far (the Notifier only).
    pub fn stats(&self) -> Option<SleepStats> {
        match &self.shared.imp {
            FanWaker::Notifier(n) => Some(n.stats()),
            _ => None,
        }
    }

    /// How many fan-outs `round` has timed.
    pub fn rounds(&self) -> usize {
        self.rounds
    }
}

impl Drop for Fanout {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.advance_and_wake_all();
        for t in self.threads.drain(..) {
            t.join().expect("fan-out sleeper panicked");
        }
    }
}

// ---------------------------------------------------------------------------
// B4: bursty producer/consumer over one Mutex<VecDeque>.

/// The implementations compared in B4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BurstImpl {
    Notifier,
    StdCondvar,
    EventListener,
}

impl BurstImpl {
    pub const ALL: [BurstImpl; 3] = [
        BurstImpl::Notifier,
        BurstImpl::StdCondvar,
        BurstImpl::EventListener,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BurstImpl::Notifier => "notifier",
            BurstImpl::StdCondvar => "std_condvar",
            BurstImpl::EventListener => "event_listener",
        }
    }
}

/// The shape of one B4 run.
#[derive(Clone, Copy, Debug)]
pub struct BurstConfig {
    pub producers: usize,
    pub consumers: usize,
    /// Bursts per producer.
    pub bursts: usize,
    pub burst_items: usize,
    /// Sleep between a producer's bursts.
    pub gap: Duration,
}

impl BurstConfig {
    /// 2 producers, 4 consumers, bursts of 32 items, 50 us gaps.
    pub const fn small(bursts: usize) -> BurstConfig {
        BurstConfig {
            producers: 2,
            consumers: 4,
            bursts,
            burst_items: 32,
            gap: Duration::from_micros(50),
        }
    }

    pub fn items(&self) -> usize {
        self.producers * self.bursts * self.burst_items
    }
}

/// What one B4 run measured.
#[derive(Clone, Copy, Debug)]
pub struct BurstResult {
    /// From the start barrier to the last item consumed.
    pub elapsed: Duration,
    pub items: usize,
    /// On-CPU time of the producer and consumer threads.
    pub cpu: Duration,
    /// Futex waits and wakes (the Notifier only).
    pub stats: Option<SleepStats>,
    /// Checksum of the consumed items (the same for every implementation).
    pub checksum: u64,
}

// One instance per run, never moved: the size difference is harmless.
#[allow(clippy::large_enum_variant)]
enum BurstWaker {
    Notifier(Notifier),
    Std(Condvar),
    Event(Event),
}

struct BurstShared {
    queue: Mutex<VecDeque<u64>>,
    waker: BurstWaker,
    consumed: AtomicUsize,
    /// Set (under the queue lock) when the last item was consumed.
    done: AtomicBool,
    end: Mutex<Option<Instant>>,
    tids: Mutex<Vec<u64>>,
    /// Threads that finished their work and block at the finish line.
    arrived: AtomicUsize,
    checksum: AtomicU64,
    total: usize,
}

impl BurstShared {
    fn has_work_or_done(&self) -> bool {
        !self.queue.lock().unwrap().is_empty() || self.done.load(Ordering::Acquire)
    }

    fn produce(&self, item: u64) {
        self.queue.lock().unwrap().push_back(item);
        match &self.waker {
            BurstWaker::Notifier(n) => {
                n.notify_one();
            }
            BurstWaker::Std(cv) => cv.notify_one(),
            BurstWaker::Event(e) => {
                e.notify(1.additional());
            }
        }
    }

    /// Count one consumed item; the last one ends the run.
    fn consumed_one(&self, item: u64) {
        self.checksum.fetch_add(item, Ordering::Relaxed);
        if self.consumed.fetch_add(1, Ordering::AcqRel) + 1 == self.total {
            *self.end.lock().unwrap() = Some(Instant::now());
            {
                let _queue = self.queue.lock().unwrap();
                self.done.store(true, Ordering::Release);
            }
            match &self.waker {
                BurstWaker::Notifier(n) => {
                    n.notify_all();
                }
                BurstWaker::Std(cv) => cv.notify_all(),
                BurstWaker::Event(e) => {
                    e.notify(usize::MAX);
                }
            }
        }
    }

    fn consume(&self, wid: usize) {
        match &self.waker {
            BurstWaker::Std(cv) => {
                let mut queue = self.queue.lock().unwrap();
                loop {
                    if let Some(item) = queue.pop_front() {
                        drop(queue);
                        self.consumed_one(black_box(item));
                        queue = self.queue.lock().unwrap();
                        continue;
                    }
                    if self.done.load(Ordering::Acquire) {
                        return;
                    }
                    queue = cv.wait(queue).unwrap();
                }
            }
            BurstWaker::Notifier(n) => loop {
                let item = self.queue.lock().unwrap().pop_front();
                if let Some(item) = item {
                    self.consumed_one(black_box(item));
                    continue;
                }
                if self.done.load(Ordering::Acquire) {
                    return;
                }
                notifier_wait_until(n, wid, || self.has_work_or_done());
            },
            BurstWaker::Event(e) => loop {
                let item = self.queue.lock().unwrap().pop_front();
                if let Some(item) = item {
                    self.consumed_one(black_box(item));
                    continue;
                }
                if self.done.load(Ordering::Acquire) {
                    return;
                }
                event_wait_until(e, || self.has_work_or_done());
            },
        }
    }
}

/// One B4 run: spawn the threads, release them together, and time until
/// the last item was consumed.
pub fn run_bursty(imp: BurstImpl, cfg: &BurstConfig) -> BurstResult {
    let shared = Arc::new(BurstShared {
        queue: Mutex::new(VecDeque::with_capacity(cfg.items())),
        waker: match imp {
            BurstImpl::Notifier => BurstWaker::Notifier(Notifier::new(cfg.consumers)),
            BurstImpl::StdCondvar => BurstWaker::Std(Condvar::new()),
            BurstImpl::EventListener => BurstWaker::Event(Event::new()),
        },
        consumed: AtomicUsize::new(0),
        done: AtomicBool::new(false),
        end: Mutex::new(None),
        tids: Mutex::new(Vec::new()),
        arrived: AtomicUsize::new(0),
        checksum: AtomicU64::new(0),
        total: cfg.items(),
    });
    // Every thread blocks on `start` before and on `finish` after its work,
    // so the caller reads their CPU time while none of them runs (exact).
    let start_line = Arc::new(Barrier::new(cfg.producers + cfg.consumers + 1));
    let finish_line = Arc::new(Barrier::new(cfg.producers + cfg.consumers + 1));
    let mut threads = Vec::new();
    for wid in 0..cfg.consumers {
        let (shared, start_line, finish_line) =
            (shared.clone(), start_line.clone(), finish_line.clone());
        threads.push(thread::spawn(move || {
            shared.tids.lock().unwrap().extend(current_tid());
            start_line.wait();
            shared.consume(wid);
            shared.arrived.fetch_add(1, Ordering::AcqRel);
            finish_line.wait();
        }));
    }
    for p in 0..cfg.producers {
        let (shared, start_line, finish_line, cfg) = (
            shared.clone(),
            start_line.clone(),
            finish_line.clone(),
            *cfg,
        );
        threads.push(thread::spawn(move || {
            shared.tids.lock().unwrap().extend(current_tid());
            start_line.wait();
            let mut item = (p * cfg.bursts * cfg.burst_items) as u64;
            for burst in 0..cfg.bursts {
                for _ in 0..cfg.burst_items {
                    item += 1;
                    shared.produce(item);
                }
                if burst + 1 < cfg.bursts {
                    thread::sleep(cfg.gap);
                }
            }
            shared.arrived.fetch_add(1, Ordering::AcqRel);
            finish_line.wait();
        }));
    }
    let stats_before = match &shared.waker {
        BurstWaker::Notifier(n) => Some(n.stats()),
        _ => None,
    };
    // Every thread has registered its id once all of them wait at the line.
    let tids = loop {
        let tids = shared.tids.lock().unwrap().clone();
        if tids.len() == threads.len() || current_tid().is_none() {
            break tids;
        }
        thread::yield_now();
    };
    let wait_asleep = |tids: &[u64]| {
        let deadline = Instant::now() + Duration::from_millis(100);
        while !tids.iter().all(|&t| thread_sleeping(t)) && Instant::now() < deadline {
            thread::yield_now();
        }
    };
    wait_asleep(&tids);
    let cpu_before: Duration = tids.iter().map(|&t| task_cpu(t)).sum();
    start_line.wait();
    let start = Instant::now();
    // Once all items are consumed every thread heads for the finish line.
    while shared.arrived.load(Ordering::Acquire) < threads.len() {
        thread::sleep(Duration::from_micros(200));
    }
    wait_asleep(&tids);
    let cpu_after: Duration = tids.iter().map(|&t| task_cpu(t)).sum();
    finish_line.wait();
    for t in threads {
        t.join().expect("bursty worker panicked");
    }
    let end = shared.end.lock().unwrap().expect("all items consumed");
    let stats = match &shared.waker {
        BurstWaker::Notifier(n) => stats_before.map(|before| diff_stats(n.stats(), before)),
        _ => None,
    };
    BurstResult {
        elapsed: end.saturating_duration_since(start),
        items: cfg.items(),
        cpu: cpu_after.saturating_sub(cpu_before),
        stats,
        checksum: shared.checksum.load(Ordering::Relaxed),
    }
}

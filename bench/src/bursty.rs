//! B4, bursty producer/consumer: producers push bursts of items into one
//! `Mutex<VecDeque>` with gaps between bursts; consumers drain it and sleep
//! when it is empty.

use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::workload::procstat::{current_tid, thread_cpu, thread_sleeping};
use eventcount::SleepStats;

use crate::peer::{with_peer, Peer, PeerKind};
use crate::threads::settle;

/// The peers compared in B4, the baseline (std's condvar) second: what a
/// queue of jobs would usually sleep on.
pub const PEERS: [PeerKind; 3] = [
    PeerKind::Notifier,
    PeerKind::StdCondvar,
    PeerKind::EventListener,
];

/// The shape of one run.
#[derive(Clone, Copy, Debug)]
pub struct BurstConfig {
    /// Producer threads.
    pub producers: usize,
    /// Consumer threads.
    pub consumers: usize,
    /// Bursts per producer.
    pub bursts: usize,
    /// Items per burst.
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

    /// Items produced in all.
    pub fn items(&self) -> usize {
        self.producers * self.bursts * self.burst_items
    }
}

/// What one run measured.
#[derive(Clone, Copy, Debug)]
pub struct BurstResult {
    /// From the start barrier to the last item consumed.
    pub elapsed: Duration,
    /// Items consumed.
    pub items: usize,
    /// On-CPU time of the producer and consumer threads.
    pub cpu: Duration,
    /// Futex waits and wakes (the Notifier only).
    pub stats: Option<SleepStats>,
    /// Checksum of the consumed items (the same for every peer).
    pub checksum: u64,
}

/// What the producers and consumers share. `posted` is the signal: it
/// moves with every item pushed and when the run is done.
struct Queue<P> {
    items: Mutex<VecDeque<u64>>,
    peer: P,
    posted: AtomicU32,
    consumed: AtomicUsize,
    /// Set (under the queue lock) when the last item was consumed.
    done: AtomicBool,
    end: Mutex<Option<Instant>>,
    checksum: AtomicU64,
    total: usize,
}

impl<P: Peer> Queue<P> {
    fn has_work_or_done(&self) -> bool {
        !self.items.lock().unwrap().is_empty() || self.done.load(Ordering::Acquire)
    }

    fn produce(&self, item: u64) {
        self.items.lock().unwrap().push_back(item);
        self.posted.fetch_add(1, Ordering::Release);
        self.peer.wake_one(&self.posted);
    }

    /// Count one consumed item; the last one ends the run.
    fn consumed_one(&self, item: u64) {
        self.checksum.fetch_add(item, Ordering::Relaxed);
        if self.consumed.fetch_add(1, Ordering::AcqRel) + 1 == self.total {
            *self.end.lock().unwrap() = Some(Instant::now());
            {
                let _items = self.items.lock().unwrap();
                self.done.store(true, Ordering::Release);
            }
            self.posted.fetch_add(1, Ordering::Release);
            self.peer.wake_all(&self.posted);
        }
    }

    /// Consumer `slot`: take items until the run is done.
    fn consume(&self, slot: usize) {
        loop {
            let item = self.items.lock().unwrap().pop_front();
            if let Some(item) = item {
                self.consumed_one(black_box(item));
                continue;
            }
            if self.done.load(Ordering::Acquire) {
                return;
            }
            self.peer
                .wait_until(slot, &self.posted, || self.has_work_or_done());
        }
    }
}

/// One run over the peer `kind` names: spawn the threads, release them
/// together, and time until the last item was consumed.
pub fn run(kind: PeerKind, cfg: &BurstConfig) -> BurstResult {
    with_peer!(kind, P => run_with::<P>(cfg))
}

fn run_with<P: Peer>(cfg: &BurstConfig) -> BurstResult {
    let queue = Arc::new(Queue {
        items: Mutex::new(VecDeque::with_capacity(cfg.items())),
        peer: P::new(cfg.consumers),
        posted: AtomicU32::new(0),
        consumed: AtomicUsize::new(0),
        done: AtomicBool::new(false),
        end: Mutex::new(None),
        checksum: AtomicU64::new(0),
        total: cfg.items(),
    });
    let threads = cfg.consumers + cfg.producers;
    // Every thread blocks on `start` before and on `finish` after its work,
    // so the caller reads their CPU time while none of them runs (exact).
    let start_line = Arc::new(Barrier::new(threads + 1));
    let finish_line = Arc::new(Barrier::new(threads + 1));
    let arrived = Arc::new(AtomicUsize::new(0));
    let (tid_tx, tid_rx) = mpsc::channel();
    let handles: Vec<_> = (0..threads)
        .map(|index| {
            let (queue, start_line, finish_line, arrived, tid_tx, cfg) = (
                queue.clone(),
                start_line.clone(),
                finish_line.clone(),
                arrived.clone(),
                tid_tx.clone(),
                *cfg,
            );
            thread::spawn(move || {
                if index < cfg.consumers {
                    queue.peer.register(index);
                }
                let _ = tid_tx.send(current_tid());
                start_line.wait();
                match index.checked_sub(cfg.consumers) {
                    None => queue.consume(index),
                    Some(producer) => produce_bursts(&queue, producer, &cfg),
                }
                arrived.fetch_add(1, Ordering::AcqRel);
                finish_line.wait();
            })
        })
        .collect();
    // One message per thread, a `None` where /proc has no id for it.
    let tids: Vec<u64> = tid_rx.iter().take(threads).flatten().collect();
    let stats_before = queue.peer.stats();
    let all_asleep = || tids.iter().all(|&tid| thread_sleeping(tid));
    let cpu = || -> Duration { tids.iter().map(|&tid| thread_cpu(tid)).sum() };
    settle(Duration::from_millis(100), all_asleep);
    let cpu_before = cpu();
    start_line.wait();
    let start = Instant::now();
    // Once all items are consumed every thread heads for the finish line.
    while arrived.load(Ordering::Acquire) < threads {
        thread::sleep(Duration::from_micros(200));
    }
    settle(Duration::from_millis(100), all_asleep);
    let cpu_after = cpu();
    finish_line.wait();
    for handle in handles {
        handle.join().expect("a bursty worker panicked");
    }
    let end = queue.end.lock().unwrap().expect("all items consumed");
    BurstResult {
        elapsed: end.saturating_duration_since(start),
        items: cfg.items(),
        cpu: cpu_after.saturating_sub(cpu_before),
        stats: stats_before
            .zip(queue.peer.stats())
            .map(|(before, after)| after - before),
        checksum: queue.checksum.load(Ordering::Relaxed),
    }
}

/// Producer `index`: its bursts of distinct items, with gaps between them.
fn produce_bursts<P: Peer>(queue: &Queue<P>, index: usize, cfg: &BurstConfig) {
    let mut item = (index * cfg.bursts * cfg.burst_items) as u64;
    for burst in 0..cfg.bursts {
        for _ in 0..cfg.burst_items {
            item += 1;
            queue.produce(item);
        }
        if burst + 1 < cfg.bursts {
            thread::sleep(cfg.gap);
        }
    }
}

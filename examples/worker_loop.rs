//! The smallest hand-rolled worker loop on a `Notifier`: a few workers
//! drain a shared queue and sleep when it is empty; a producer pushes
//! bursts of jobs with pauses between them, then tells the workers to stop.
//!
//! `cargo run --release --example worker_loop`
//!
//! The whole pattern is in `worker`: check, prepare, re-check, then commit
//! (sleep) or cancel. The producer makes the condition true first and
//! notifies second.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use eventcount::Notifier;

struct Shared {
    queue: Mutex<VecDeque<u64>>,
    stop: AtomicBool,
    notifier: Notifier,
    done: AtomicU64,
}

impl Shared {
    /// The wait condition: something to do (a job, or the stop request).
    fn pop_or_stop(&self) -> Option<Option<u64>> {
        if let Some(job) = self.queue.lock().unwrap().pop_front() {
            return Some(Some(job));
        }
        self.stop.load(Ordering::Acquire).then_some(None)
    }
}

fn worker(shared: &Shared, wid: usize) {
    loop {
        // 1. Check: the fast path costs nothing from the notifier.
        match shared.pop_or_stop() {
            Some(Some(job)) => {
                shared.done.fetch_add(job, Ordering::Relaxed);
                continue;
            }
            Some(None) => return,
            None => {}
        }
        // 2. Prepare: from here on, a notify cannot be missed.
        let wait = shared.notifier.prepare_wait(wid);
        // 3. Re-check: work that arrived before the prepare is seen here.
        let something_to_do =
            !shared.queue.lock().unwrap().is_empty() || shared.stop.load(Ordering::Acquire);
        if something_to_do {
            shared.notifier.cancel_wait(wait);
        } else {
            // 4. Commit: sleep until a notify reaches this waiter.
            shared.notifier.commit_wait(wait);
        }
    }
}

fn main() {
    const WORKERS: usize = 4;
    let shared = Arc::new(Shared {
        queue: Mutex::new(VecDeque::new()),
        stop: AtomicBool::new(false),
        notifier: Notifier::new(WORKERS),
        done: AtomicU64::new(0),
    });

    let workers: Vec<_> = (0..WORKERS)
        .map(|wid| {
            let shared = shared.clone();
            thread::spawn(move || worker(&shared, wid))
        })
        .collect();

    let mut expected = 0;
    for burst in 0..20u64 {
        for job in 1..=50 {
            let value = burst * 100 + job;
            expected += value;
            shared.queue.lock().unwrap().push_back(value); // condition first,
            shared.notifier.notify_one(); //                  notify second
        }
        thread::sleep(Duration::from_millis(2)); // the workers fall asleep here
    }

    shared.stop.store(true, Ordering::Release);
    shared.notifier.notify_all();
    for worker in workers {
        worker.join().unwrap();
    }

    let done = shared.done.load(Ordering::Relaxed);
    let stats = shared.notifier.stats();
    println!(
        "{WORKERS} workers ran jobs summing to {done} (expected {expected}); \
         they slept {} times and were woken {} times",
        stats.waits, stats.wakes
    );
    assert_eq!(done, expected);
}

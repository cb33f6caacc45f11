#![cfg(not(loom))]
//! Multi-threaded stress tests of `Notifier`, through its public API only.
//!
//! Every test that could hang runs its body under a watchdog (tests/common),
//! which fails the test (naming it) if the body stops making progress for
//! `WATCHDOG`. Long tests report progress through a `Heartbeat` (once per
//! round or per item, `with_progress_watchdog`), so a loaded machine that
//! merely runs them slowly is not mistaken for a hang; tests without
//! heartbeats (`with_watchdog`) get `WATCHDOG` in total. The watchdog only
//! detects hangs (a lost wakeup shows up as one); no test asserts on a
//! duration or a speed.

mod common;
use common::{
    assert_nobody_waits, assert_stack_empty, join_all, sleep_until, spawn_each, take_permit,
    try_take, wait_until, with_progress_watchdog, with_watchdog,
};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use eventcount::{Notifier, PreparedWait};

/// A consumer in slot `wid`: it takes items with `take` (which says whether
/// it got one) as long as there are any, sleeps when there are none, and
/// returns once `stop` is set and it found nothing. `available` is the
/// re-check between prepare and commit.
fn consume_until_stopped(
    notifier: &Notifier,
    wid: usize,
    stop: &AtomicBool,
    mut take: impl FnMut() -> bool,
    available: impl Fn() -> bool,
) {
    loop {
        // 1. check
        if take() {
            continue;
        }
        if stop.load(Ordering::Acquire) {
            return;
        }
        // 2. prepare
        let wait = notifier.prepare_wait(wid);
        // 3. re-check
        if available() || stop.load(Ordering::Acquire) {
            notifier.cancel_wait(wait);
        } else {
            // 4. commit
            notifier.commit_wait(wait);
        }
    }
}

/// `count` bystander threads in slots `first_wid..`: until `stop` is set,
/// each prepares a wait over and over, and `leave` ends each one (cancels,
/// drops or commits it), given the number of waits the thread prepared
/// before and the stop flag.
fn spawn_bystanders<F>(
    notifier: &Arc<Notifier>,
    stop: &Arc<AtomicBool>,
    count: usize,
    first_wid: usize,
    leave: F,
) -> Vec<JoinHandle<()>>
where
    F: Fn(&Notifier, PreparedWait<'_>, usize, &AtomicBool) + Send + Sync + 'static,
{
    let (notifier, stop) = (notifier.clone(), stop.clone());
    spawn_each(count, move |k| {
        let mut i = 0usize;
        while !stop.load(Ordering::Acquire) {
            let wait = notifier.prepare_wait(first_wid + k);
            leave(&notifier, wait, i, &stop);
            i += 1;
        }
    })
}

/// A thread that waits in slot `wid` once and leaves when woken.
fn spawn_sleeper(notifier: &Arc<Notifier>, wid: usize) -> JoinHandle<()> {
    let notifier = notifier.clone();
    thread::spawn(move || {
        let wait = notifier.prepare_wait(wid);
        notifier.commit_wait(wait);
    })
}

/// Release the waiter through one of the three entry points, in turn by
/// `round`; returns how many waiters were released.
fn notify_one_by_turns(notifier: &Notifier, round: usize) -> usize {
    match round % 3 {
        0 => usize::from(notifier.notify_one()),
        1 => notifier.notify_n(1),
        _ => notifier.notify_all(),
    }
}

// ---------------------------------------------------------------------------
// Producers and consumers over a shared queue
// ---------------------------------------------------------------------------

const CONSUMERS: usize = 16;
const PRODUCERS: usize = 4;

/// Free-running producers: each pushes `ITEMS_PER_PRODUCER` distinct items
/// into a mutex-protected queue, with a `notify_one` after every push. The
/// test waits until every item has been consumed *before* it raises the
/// shutdown flag, so a lost wakeup that strands items hangs (watchdog)
/// instead of being rescued by the final `notify_all`.
#[test]
fn producers_consumers_mutex_queue() {
    const ITEMS_PER_PRODUCER: u64 = 250_000;
    with_progress_watchdog("producers_consumers_mutex_queue", |hb| {
        let total = ITEMS_PER_PRODUCER * PRODUCERS as u64;
        let notifier = Arc::new(Notifier::new(CONSUMERS));
        let queue = Arc::new(Mutex::new(VecDeque::<u64>::new()));
        let consumed = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));

        let consumers = spawn_each(CONSUMERS, {
            let (notifier, queue, consumed, done) = (
                notifier.clone(),
                queue.clone(),
                consumed.clone(),
                done.clone(),
            );
            move |wid| {
                let mut got = Vec::new();
                let take = || {
                    let item = queue.lock().unwrap().pop_front();
                    let Some(item) = item else {
                        return false;
                    };
                    got.push(item);
                    consumed.fetch_add(1, Ordering::AcqRel);
                    if got.len() % 256 == 0 {
                        hb.beat();
                    }
                    true
                };
                let available = || !queue.lock().unwrap().is_empty();
                consume_until_stopped(&notifier, wid, &done, take, available);
                got
            }
        });

        let producers = spawn_each(PRODUCERS, {
            let (notifier, queue) = (notifier.clone(), queue.clone());
            move |p| {
                let p = p as u64;
                for i in 0..ITEMS_PER_PRODUCER {
                    // Items 1..=total, each exactly once across producers.
                    queue
                        .lock()
                        .unwrap()
                        .push_back(p * ITEMS_PER_PRODUCER + i + 1);
                    notifier.notify_one();
                }
            }
        });
        join_all(producers);

        // No shutdown help yet: the consumers must drain the queue on the
        // notifications the producers sent.
        wait_until(|| consumed.load(Ordering::Acquire) == total);
        assert!(queue.lock().unwrap().is_empty());

        done.store(true, Ordering::Release);
        notifier.notify_all();

        let mut all: Vec<u64> = join_all(consumers).into_iter().flatten().collect();
        assert_eq!(all.len() as u64, total, "item count");
        assert_eq!(all.iter().sum::<u64>(), total * (total + 1) / 2, "item sum");
        all.sort_unstable();
        assert!(
            all.iter().copied().eq(1..=total),
            "every item must be consumed exactly once"
        );
        assert_nobody_waits(&notifier);
    });
}

/// Lock-step producers over atomic counters: each producer pushes a small
/// burst, with a `notify_one` after every item, then waits until its burst
/// has been consumed before the next one. Consumers are mostly asleep, so
/// nearly every item needs its notification to get through: one lost wakeup
/// with all producers waiting is a deadlock, which the watchdog reports.
#[test]
fn producers_consumers_lockstep_bursts() {
    const ITEMS_PER_PRODUCER: usize = 100_000;
    with_progress_watchdog("producers_consumers_lockstep_bursts", |hb| {
        let notifier = Arc::new(Notifier::new(CONSUMERS));
        // Per-producer count of items pushed but not consumed yet, and per
        // producer totals taken by consumers.
        let pending: Arc<Vec<AtomicUsize>> =
            Arc::new((0..PRODUCERS).map(|_| AtomicUsize::new(0)).collect());
        let taken: Arc<Vec<AtomicUsize>> =
            Arc::new((0..PRODUCERS).map(|_| AtomicUsize::new(0)).collect());
        let done = Arc::new(AtomicBool::new(false));

        let consumers = spawn_each(CONSUMERS, {
            let (notifier, pending, taken, done) = (
                notifier.clone(),
                pending.clone(),
                taken.clone(),
                done.clone(),
            );
            move |wid| {
                let mut count = 0usize;
                // Starting at a different producer per consumer.
                let take = || {
                    for k in 0..PRODUCERS {
                        let p = (wid + k) % PRODUCERS;
                        if try_take(&pending[p]) {
                            taken[p].fetch_add(1, Ordering::AcqRel);
                            count += 1;
                            return true;
                        }
                    }
                    false
                };
                let any_pending = || pending.iter().any(|p| p.load(Ordering::Acquire) > 0);
                consume_until_stopped(&notifier, wid, &done, take, any_pending);
                count
            }
        });

        let producers = spawn_each(PRODUCERS, {
            let (notifier, pending, taken) = (notifier.clone(), pending.clone(), taken.clone());
            move |p| {
                let mut pushed = 0;
                let mut burst = p % 5;
                while pushed < ITEMS_PER_PRODUCER {
                    burst = burst % 5 + 1; // 1..=5
                    let n = burst.min(ITEMS_PER_PRODUCER - pushed);
                    for _ in 0..n {
                        pending[p].fetch_add(1, Ordering::AcqRel);
                        notifier.notify_one();
                    }
                    pushed += n;
                    // Wait for this burst to be consumed: needs the
                    // notifications above to have woken someone.
                    while taken[p].load(Ordering::Acquire) < pushed {
                        thread::yield_now();
                    }
                    hb.beat();
                }
            }
        });
        join_all(producers);

        done.store(true, Ordering::Release);
        notifier.notify_all();
        let total: usize = join_all(consumers).into_iter().sum();
        assert_eq!(total, ITEMS_PER_PRODUCER * PRODUCERS);
        for p in 0..PRODUCERS {
            assert_eq!(pending[p].load(Ordering::Relaxed), 0);
            assert_eq!(taken[p].load(Ordering::Relaxed), ITEMS_PER_PRODUCER);
        }
        assert_nobody_waits(&notifier);
    });
}

// ---------------------------------------------------------------------------
// Notify between prepare and commit
// ---------------------------------------------------------------------------

/// One thread: a notify that lands between prepare and commit reaches the
/// pre-waiter, and the commit returns at once instead of sleeping.
#[test]
fn notify_between_prepare_and_commit_single_thread() {
    with_watchdog("notify_between_prepare_and_commit_single_thread", || {
        let n = Notifier::new(1);
        let wait = n.prepare_wait(0);
        assert_eq!(n.num_sleeping(), 0, "a prepared waiter is not committed");
        assert!(n.notify_one(), "the prepared waiter must be reached");
        assert!(
            !n.notify_one(),
            "the only waiter already holds a notification"
        );
        n.commit_wait(wait); // must not sleep
        assert_nobody_waits(&n);

        // The same through notify_n and notify_all.
        let wait = n.prepare_wait(0);
        assert_eq!(n.notify_n(1), 1);
        assert_eq!(n.notify_n(1), 0);
        n.commit_wait(wait);

        let wait = n.prepare_wait(0);
        assert_eq!(n.notify_all(), 1);
        assert_eq!(n.notify_all(), 0);
        n.commit_wait(wait);
        assert!(!n.notify_one());
    });
}

/// Several prepared waiters on one thread: each notify reaches one of them,
/// and every commit that finds a notification returns without sleeping.
#[test]
fn notify_n_reaches_pre_waiters_single_thread() {
    with_watchdog("notify_n_reaches_pre_waiters_single_thread", || {
        let n = Notifier::new(4);
        let (a, b, c) = (n.prepare_wait(0), n.prepare_wait(1), n.prepare_wait(2));
        assert_eq!(n.notify_n(2), 2);
        assert_eq!(
            n.notify_n(3),
            1,
            "only one prepared waiter is left un-notified"
        );
        assert_eq!(n.notify_n(3), 0);
        assert!(!n.notify_one());
        assert_eq!(n.notify_all(), 0);
        n.commit_wait(a);
        n.commit_wait(b);
        n.commit_wait(c);
        assert!(!n.notify_one());
        assert_stack_empty(&n, "nothing may stay stacked");
    });
}

/// Two threads, the notify always between the waiter's prepare and commit:
/// the waiter prepares, tells the notifier, and commits only once the notify
/// has returned `true`. Every commit must return.
#[test]
fn notify_between_prepare_and_commit_threaded() {
    const ROUNDS: usize = 10_000;
    with_progress_watchdog("notify_between_prepare_and_commit_threaded", |hb| {
        let n = Arc::new(Notifier::new(2));
        let (prepared_tx, prepared_rx) = mpsc::channel::<()>();
        let (notified_tx, notified_rx) = mpsc::channel::<()>();
        let waiter = {
            let n = n.clone();
            thread::spawn(move || {
                for round in 0..ROUNDS {
                    let wid = round % 2;
                    let wait = n.prepare_wait(wid);
                    prepared_tx.send(()).unwrap();
                    notified_rx.recv().unwrap();
                    n.commit_wait(wait); // already notified: returns at once
                }
            })
        };
        for round in 0..ROUNDS {
            prepared_rx.recv().unwrap();
            assert_eq!(
                notify_one_by_turns(&n, round),
                1,
                "round {round}: the prepared waiter must be reached"
            );
            notified_tx.send(()).unwrap();
            hb.beat();
        }
        waiter.join().unwrap();
        assert_nobody_waits(&n);
    });
}

/// Two threads racing: the waiter prepares, reports, and commits at once;
/// the notifier notifies as soon as it hears of the prepare, so the notify
/// lands anywhere in the prepare → commit → park sequence. The waiter is
/// waiting throughout, so every notify must report one release, and every
/// commit must return.
#[test]
fn notify_races_commit_threaded() {
    const ROUNDS: usize = 20_000;
    with_progress_watchdog("notify_races_commit_threaded", |hb| {
        let n = Arc::new(Notifier::new(1));
        let (prepared_tx, prepared_rx) = mpsc::channel::<()>();
        let (returned_tx, returned_rx) = mpsc::channel::<()>();
        let waiter = {
            let n = n.clone();
            thread::spawn(move || {
                for _ in 0..ROUNDS {
                    let wait = n.prepare_wait(0);
                    prepared_tx.send(()).unwrap();
                    n.commit_wait(wait);
                    returned_tx.send(()).unwrap();
                }
            })
        };
        for round in 0..ROUNDS {
            prepared_rx.recv().unwrap();
            assert_eq!(
                notify_one_by_turns(&n, round),
                1,
                "round {round}: the waiter must be released"
            );
            returned_rx.recv().unwrap();
            hb.beat();
        }
        waiter.join().unwrap();
        assert_nobody_waits(&n);
    });
}

/// "Cancel forwards": a committed waiter C sleeps; a prepared waiter P, on
/// top of the stack, takes the only notification, then cancels. Its
/// notification must not die with it: the cancel wakes C.
#[test]
fn cancel_of_signalled_pre_waiter_forwards_to_sleeper() {
    const ROUNDS: usize = 200;
    with_progress_watchdog("cancel_of_signalled_pre_waiter_forwards_to_sleeper", |hb| {
        let n = Arc::new(Notifier::new(2));
        for _ in 0..ROUNDS {
            let sleeper = spawn_sleeper(&n, 0);
            wait_until(|| n.num_sleeping() == 1);
            let p = n.prepare_wait(1);
            // The most recent waiter goes first: the notification goes
            // to `p`, and the sleeper stays committed and stacked.
            assert!(n.notify_one());
            assert_eq!(n.num_sleeping(), 1, "the sleeper must not be popped");
            let dbg = format!("{n:?}");
            assert!(
                dbg.contains("top: 0"),
                "the sleeper is still stacked: {dbg}"
            );
            n.cancel_wait(p); // forwards the signal to the sleeper
            sleeper.join().unwrap();
            assert_nobody_waits(&n);
            hb.beat();
        }
    });
}

/// Same as above, with the pre-waiter's token dropped instead of cancelled.
#[test]
fn dropped_signalled_token_forwards_to_sleeper() {
    with_watchdog("dropped_signalled_token_forwards_to_sleeper", || {
        let n = Arc::new(Notifier::new(2));
        let sleeper = spawn_sleeper(&n, 0);
        wait_until(|| n.num_sleeping() == 1);
        {
            let _p = n.prepare_wait(1);
            assert!(n.notify_one());
            assert_eq!(n.num_sleeping(), 1, "the sleeper must not be popped");
        }
        sleeper.join().unwrap();
        assert!(!n.notify_one());
    });
}

// ---------------------------------------------------------------------------
// notify_n exactness
// ---------------------------------------------------------------------------

/// Park 8 waiters, release exactly 3 with `notify_n(3)`, and check that the
/// other 5 stay committed; then release them with `notify_all`.
///
/// A waiter leaves only with a permit, so a spurious return re-waits; the
/// permits are handed out before each notify.
#[test]
fn notify_n_releases_exactly_n() {
    const WAITERS: usize = 8;
    for size in [WAITERS, 2 * WAITERS] {
        with_watchdog("notify_n_releases_exactly_n", move || {
            let n = Arc::new(Notifier::new(size));
            let permits = Arc::new(AtomicUsize::new(0));
            let exited = Arc::new(AtomicUsize::new(0));
            let waiters = spawn_each(WAITERS, {
                let (n, permits, exited) = (n.clone(), permits.clone(), exited.clone());
                move |wid| {
                    take_permit(&n, wid, &permits);
                    exited.fetch_add(1, Ordering::AcqRel);
                }
            });

            wait_until(|| n.num_sleeping() == WAITERS);

            permits.store(3, Ordering::Release);
            assert_eq!(n.notify_n(3), 3, "size {size}: notify_n(3) with 8 asleep");
            wait_until(|| exited.load(Ordering::Acquire) == 3);
            wait_until(|| n.num_sleeping() == WAITERS - 3);
            // Stays at 5 for a while: nobody else was released.
            let until = Instant::now() + Duration::from_millis(50);
            while Instant::now() < until {
                let now = n.num_sleeping();
                assert_eq!(now, WAITERS - 3, "size {size}: waiters changed to {now}");
                assert_eq!(exited.load(Ordering::Acquire), 3);
                thread::sleep(Duration::from_millis(1));
            }
            assert_eq!(permits.load(Ordering::Acquire), 0);

            permits.store(WAITERS - 3, Ordering::Release);
            assert_eq!(n.notify_all(), WAITERS - 3, "size {size}: notify_all");
            join_all(waiters);
            assert_eq!(exited.load(Ordering::Acquire), WAITERS);
            assert_nobody_waits(&n);
            assert_eq!(n.notify_n(WAITERS), 0);
        });
    }
}

/// `notify_n(k)` with `k >= size` is "all": with 4 of 4 slots asleep,
/// `notify_n(100)` releases exactly 4.
#[test]
fn notify_n_larger_than_size_releases_all() {
    with_watchdog("notify_n_larger_than_size_releases_all", || {
        let n = Arc::new(Notifier::new(4));
        let permits = Arc::new(AtomicUsize::new(0));
        let waiters = spawn_each(4, {
            let (n, permits) = (n.clone(), permits.clone());
            move |wid| take_permit(&n, wid, &permits)
        });
        wait_until(|| n.num_sleeping() == 4);
        permits.store(4, Ordering::Release);
        assert_eq!(n.notify_n(100), 4);
        join_all(waiters);
        assert_eq!(n.num_sleeping(), 0);
        assert_eq!(n.notify_n(100), 0);
    });
}

// ---------------------------------------------------------------------------
// Prepare / cancel storms
// ---------------------------------------------------------------------------

/// Many threads prepare and cancel (or drop) in tight loops, a few commit,
/// while others notify with every entry point. Afterwards nothing must be
/// left behind: a fresh waiter sleeps and is woken, and a notify with nobody
/// waiting reports false.
#[test]
fn prepare_cancel_storm() {
    const CANCELLERS: usize = 12;
    const COMMITTERS: usize = 2;
    const NOTIFIERS: usize = 4;
    const ITERS: usize = 300_000;
    with_progress_watchdog("prepare_cancel_storm", |hb| {
        // One spare slot for the final check.
        let n = Arc::new(Notifier::new(CANCELLERS + COMMITTERS + 1));
        let stop = Arc::new(AtomicBool::new(false));
        let start = Arc::new(Barrier::new(CANCELLERS + COMMITTERS + NOTIFIERS));

        let cancellers = spawn_each(CANCELLERS, {
            let (n, start) = (n.clone(), start.clone());
            move |wid| {
                start.wait();
                for i in 0..ITERS {
                    if i % 1024 == 0 {
                        hb.beat();
                    }
                    let wait = n.prepare_wait(wid);
                    assert_eq!(wait.wid(), wid);
                    match i % 3 {
                        0 => n.cancel_wait(wait),
                        1 => drop(wait),
                        _ => {
                            // Re-check something, then cancel.
                            std::hint::black_box(n.num_sleeping());
                            n.cancel_wait(wait);
                        }
                    }
                }
            }
        });

        // Committers sleep until notified; they leave once `stop` is set.
        let wakeups = Arc::new(AtomicUsize::new(0));
        let committers = spawn_each(COMMITTERS, {
            let (n, start, stop, wakeups) =
                (n.clone(), start.clone(), stop.clone(), wakeups.clone());
            move |k| {
                let wid = CANCELLERS + k;
                start.wait();
                while !stop.load(Ordering::Acquire) {
                    let wait = n.prepare_wait(wid);
                    if stop.load(Ordering::Acquire) {
                        n.cancel_wait(wait);
                        break;
                    }
                    n.commit_wait(wait);
                    wakeups.fetch_add(1, Ordering::Relaxed);
                }
            }
        });

        let cancellers_done = Arc::new(AtomicBool::new(false));
        let notifiers = spawn_each(NOTIFIERS, {
            let (n, start, cancellers_done) = (n.clone(), start.clone(), cancellers_done.clone());
            move |k| {
                start.wait();
                let mut i = k;
                while !cancellers_done.load(Ordering::Acquire) {
                    let size = n.capacity();
                    match i % 4 {
                        0 | 1 => assert!(usize::from(n.notify_one()) <= 1),
                        2 => assert!(n.notify_n(1 + i % 5) <= size),
                        _ => assert!(n.notify_all() <= size),
                    }
                    i += 1;
                    if i % 64 == 0 {
                        thread::yield_now();
                    }
                }
            }
        });

        join_all(cancellers);
        cancellers_done.store(true, Ordering::Release);
        join_all(notifiers);
        stop.store(true, Ordering::Release);
        n.notify_all();
        join_all(committers);

        // Nothing left behind. (Waits cancelled below the top may still sit
        // on the stack, marked cancelled; a notify skips them and reports
        // that nobody was released.)
        assert_eq!(n.num_sleeping(), 0);
        assert!(!n.notify_one(), "nobody waits after the storm");
        assert_stack_empty(&n, "after the storm");
        assert_eq!(n.notify_n(3), 0);
        assert_eq!(n.notify_all(), 0);

        // A fresh waiter (spare slot, and a slot the storm used) can still
        // sleep and be woken.
        for wid in [CANCELLERS + COMMITTERS, 0] {
            let woken = Arc::new(AtomicBool::new(false));
            let waiter = {
                let (n, woken) = (n.clone(), woken.clone());
                thread::spawn(move || sleep_until(&n, wid, || woken.load(Ordering::Acquire)))
            };
            wait_until(|| n.num_sleeping() == 1);
            woken.store(true, Ordering::Release);
            assert!(n.notify_one(), "the sleeping waiter must be released");
            waiter.join().unwrap();
            assert_eq!(n.num_sleeping(), 0);
            assert!(!n.notify_one(), "nobody waits any more");
        }
    });
}

/// A storm where every waiter sometimes cancels and sometimes commits, and
/// every wake is accounted for with permits: `WAITERS` threads each take
/// `PER_WAITER` permits, posted one at a time by notifier threads that use
/// all three notify entry points. A cancel that swallowed a needed
/// notification would strand a sleeping waiter with permits available.
#[test]
fn permit_storm_mixed_notifies() {
    const WAITERS: usize = 16;
    const POSTERS: usize = 4;
    const PER_WAITER: usize = 25_000;
    with_progress_watchdog("permit_storm_mixed_notifies", |hb| {
        let n = Arc::new(Notifier::new(WAITERS));
        let permits = Arc::new(AtomicUsize::new(0));
        let total = WAITERS * PER_WAITER;
        let per_poster = total / POSTERS;
        assert_eq!(per_poster * POSTERS, total);

        let waiters = spawn_each(WAITERS, {
            let (n, permits) = (n.clone(), permits.clone());
            move |wid| {
                for i in 0..PER_WAITER {
                    take_permit(&n, wid, &permits);
                    if i % 64 == 0 {
                        hb.beat();
                    }
                }
            }
        });
        let posters = spawn_each(POSTERS, {
            let (n, permits) = (n.clone(), permits.clone());
            move |k| {
                for i in 0..per_poster {
                    permits.fetch_add(1, Ordering::AcqRel);
                    match (i + k) % 8 {
                        0 => {
                            n.notify_n(2);
                        }
                        1 => {
                            n.notify_all();
                        }
                        _ => {
                            n.notify_one();
                        }
                    }
                    if i % 16 == 0 {
                        thread::yield_now();
                    }
                }
            }
        });
        join_all(posters);
        join_all(waiters);
        assert_eq!(permits.load(Ordering::Acquire), 0);
        assert_nobody_waits(&n);
    });
}

/// Bystanders that prepare and then leave for other work (cancel or drop
/// without consuming anything) must not swallow a notification a sleeper
/// needs. A bystander that has just prepared is on top of the stack, so many
/// notifications land on one first; its cancel has to forward them ("cancel
/// forwards").
/// Producers post one permit at a time and wait until it has been taken, so
/// a swallowed notification deadlocks (watchdog).
#[test]
fn bystander_cancels_forward_to_sleepers() {
    const CONSUMERS: usize = 2;
    const BYSTANDERS: usize = 12;
    const PRODUCERS: usize = 2;
    const PER_PRODUCER: usize = 15_000;
    with_progress_watchdog("bystander_cancels_forward_to_sleepers", |hb| {
        let n = Arc::new(Notifier::new(CONSUMERS + BYSTANDERS));
        let permits = Arc::new(AtomicUsize::new(0));
        let taken = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let total = PRODUCERS * PER_PRODUCER;

        let consumers = spawn_each(CONSUMERS, {
            let (n, permits, taken, stop) =
                (n.clone(), permits.clone(), taken.clone(), stop.clone());
            move |wid| {
                let take = || {
                    let got = try_take(&permits);
                    if got {
                        taken.fetch_add(1, Ordering::AcqRel);
                    }
                    got
                };
                let available = || permits.load(Ordering::Acquire) > 0;
                consume_until_stopped(&n, wid, &stop, take, available);
            }
        });
        let bystanders = spawn_bystanders(&n, &stop, BYSTANDERS, CONSUMERS, |n, wait, i, _| {
            if i % 2 == 0 {
                n.cancel_wait(wait);
            } else {
                drop(wait);
            }
            // Every eighth wait.
            if (i + 1) % 8 == 0 {
                thread::yield_now();
            }
        });
        let producers = spawn_each(PRODUCERS, {
            let (n, permits, taken) = (n.clone(), permits.clone(), taken.clone());
            move |_| {
                for _ in 0..PER_PRODUCER {
                    hb.beat();
                    let before = taken.load(Ordering::Acquire);
                    permits.fetch_add(1, Ordering::AcqRel);
                    n.notify_one();
                    // Lock-step: some permit must be taken before the
                    // next post (the other producer's, possibly).
                    while taken.load(Ordering::Acquire) == before {
                        thread::yield_now();
                    }
                }
            }
        });
        join_all(producers);
        // Every permit is taken on the notifications sent so far.
        wait_until(|| taken.load(Ordering::Acquire) == total);
        stop.store(true, Ordering::Release);
        n.notify_all();
        join_all(consumers);
        join_all(bystanders);
        assert_eq!(permits.load(Ordering::Acquire), 0);
        assert_nobody_waits(&n);
    });
}

/// `notify_all` must reach every waiter that was waiting when it ran, even
/// when each waiter waits for its *own* condition (so no other waiter's
/// wakeup can stand in for it), while bystanders keep preparing, cancelling
/// and committing around it. A bystander that prepares after the
/// `notify_all` and commits must not take the notification of a waiter that
/// prepared before it. Each round the test raises every waiter's private
/// generation, calls `notify_all` once, and waits for all of them to
/// acknowledge; a waiter left asleep deadlocks the round (watchdog). The
/// bystanders that commit are woken by the next round's `notify_all`.
#[test]
fn notify_all_reaches_waiters_with_private_conditions() {
    const WAITERS: usize = 8;
    const BYSTANDERS: usize = 8;
    const ROUNDS: usize = 5_000;
    with_progress_watchdog("notify_all_reaches_waiters_with_private_conditions", |hb| {
        let n = Arc::new(Notifier::new(WAITERS + BYSTANDERS));
        let generation: Arc<Vec<AtomicUsize>> =
            Arc::new((0..WAITERS).map(|_| AtomicUsize::new(0)).collect());
        let acked: Arc<Vec<AtomicUsize>> =
            Arc::new((0..WAITERS).map(|_| AtomicUsize::new(0)).collect());
        let stop = Arc::new(AtomicBool::new(false));

        let waiters = spawn_each(WAITERS, {
            let (n, generation, acked) = (n.clone(), generation.clone(), acked.clone());
            move |wid| {
                for round in 1..=ROUNDS {
                    while generation[wid].load(Ordering::Acquire) < round {
                        let wait = n.prepare_wait(wid);
                        if generation[wid].load(Ordering::Acquire) >= round {
                            n.cancel_wait(wait);
                        } else {
                            // Legal, and it widens the window in which a
                            // later waiter could commit first and take our
                            // notification.
                            thread::yield_now();
                            n.commit_wait(wait);
                        }
                    }
                    acked[wid].store(round, Ordering::Release);
                }
            }
        });
        let bystanders = spawn_bystanders(&n, &stop, BYSTANDERS, WAITERS, |n, wait, i, stop| {
            if i % 2 == 1 {
                // Let others push on top, so this cancel is often below the
                // top and leaves a cancelled slot stacked above the waiters.
                thread::yield_now();
            }
            if stop.load(Ordering::Acquire) || i % 3 != 0 {
                n.cancel_wait(wait);
            } else {
                n.commit_wait(wait); // woken by the next notify_all
            }
            // "Other work": a wait cancelled below the top stays stacked,
            // marked cancelled, until a notify skips it or this slot is
            // prepared again.
            thread::yield_now();
        });
        for round in 1..=ROUNDS {
            for g in generation.iter() {
                g.store(round, Ordering::Release);
            }
            n.notify_all();
            for a in acked.iter() {
                while a.load(Ordering::Acquire) < round {
                    thread::yield_now();
                }
            }
            hb.beat();
        }
        join_all(waiters);
        stop.store(true, Ordering::Release);
        n.notify_all();
        join_all(bystanders);
        assert_nobody_waits(&n);
    });
}

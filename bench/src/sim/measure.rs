//! What idling costs on the machine this runs on, measured the way the
//! simulator's [`Machine`] describes it: a search round, a wake's latency,
//! and the CPU a sleep and a wake take on either side.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use eventcount::Notifier;

use super::Machine;

/// Nanoseconds on the monotonic clock, shared by both threads.
fn now_ns(epoch: Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64
}

/// The calling thread's CPU time, in nanoseconds.
fn cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The median, 0 of none.
fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(0)
}

/// Measure this machine, with `trips` wakes each way: the median of each
/// cost.
pub fn this_machine(trips: usize) -> Machine {
    // A round: a `yield_now` that finds nothing else to run.
    let rounds = 100_000;
    let start = Instant::now();
    for _ in 0..rounds {
        thread::yield_now();
    }
    let round_ns = start.elapsed().as_nanos() as u64 / rounds;

    // Ping-pong on a notifier: each side stamps its wake just before the
    // notify, and the woken side reads the clock as it runs again.
    let epoch = Instant::now();
    let notifier = Arc::new(Notifier::new(2));
    let turn = Arc::new(AtomicU64::new(0));
    let stamp = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let side = |me: u64| {
        let (notifier, turn, stamp, stop) =
            (notifier.clone(), turn.clone(), stamp.clone(), stop.clone());
        move || {
            let (mut wakes, mut sleep_cpu, mut waker_cpu) = (Vec::new(), Vec::new(), Vec::new());
            for trip in 0..trips as u64 {
                // Wait for my turn (2·trip + me), sleeping.
                let mine = 2 * trip + me;
                let before = cpu_ns();
                let mut slept = false;
                while turn.load(Ordering::Acquire) != mine && !stop.load(Ordering::Acquire) {
                    let wait = notifier.prepare_wait(me as usize);
                    if turn.load(Ordering::Acquire) == mine {
                        notifier.cancel_wait(wait);
                        break;
                    }
                    notifier.commit_wait(wait);
                    slept = true;
                }
                if slept {
                    wakes.push(now_ns(epoch).saturating_sub(stamp.load(Ordering::Acquire)));
                    sleep_cpu.push(cpu_ns() - before);
                }
                // Hand the turn over and wake the other side.
                let before = cpu_ns();
                stamp.store(now_ns(epoch), Ordering::Release);
                turn.store(mine + 1, Ordering::Release);
                if notifier.notify_one() {
                    waker_cpu.push(cpu_ns() - before);
                }
            }
            stop.store(true, Ordering::Release);
            notifier.notify_all();
            [wakes, sleep_cpu, waker_cpu]
        }
    };
    let other = thread::spawn(side(1));
    let mine = side(0)();
    let theirs = other.join().expect("the other side");
    let all = |i: usize| median(mine[i].iter().chain(&theirs[i]).copied().collect());
    Machine {
        name: "this machine",
        wake_ns: all(0),
        sleep_cpu_ns: all(1),
        waker_cpu_ns: all(2),
        round_ns,
    }
}

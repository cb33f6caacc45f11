//! B1: the cost of a notify with nobody waiting, against its floor: a bare
//! `fence(SeqCst)` plus one load, in the same round.

use std::hint::black_box;
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use event_listener::Event;
use eventcount::{JecSleep, Notifier, NotifierSleep, SleepProtocol};

use crate::options::Options;
use crate::report::Report;
use eventcount_bench::workload::stats::{median, rotated};

/// The paths B1 times, the floor first: ours, then each peer's wake with
/// nobody waiting.
#[derive(Clone, Copy, PartialEq, Eq)]
enum B1 {
    Floor,
    FetchAdd,
    NotifyOne,
    NotifyN,
    NotifyAll,
    JecInternal,
    JecInjected,
    TraitNotifierSleep,
    StdCondvar,
    ParkingLotCondvar,
    EventListener,
    CrossbeamUnpark,
    StdUnpark,
}

impl B1 {
    const ALL: [B1; 13] = [
        B1::Floor,
        B1::FetchAdd,
        B1::NotifyOne,
        B1::NotifyN,
        B1::NotifyAll,
        B1::JecInternal,
        B1::JecInjected,
        B1::TraitNotifierSleep,
        B1::StdCondvar,
        B1::ParkingLotCondvar,
        B1::EventListener,
        B1::CrossbeamUnpark,
        B1::StdUnpark,
    ];
    /// The rows measured with two threads calling at once.
    const CONCURRENT: [B1; 5] = [
        B1::Floor,
        B1::FetchAdd,
        B1::NotifyOne,
        B1::JecInternal,
        B1::JecInjected,
    ];

    fn name(self) -> &'static str {
        match self {
            B1::Floor => "floor: fence+load",
            B1::FetchAdd => "folly-style fetch_add",
            B1::NotifyOne => "notifier.notify_one",
            B1::NotifyN => "notifier.notify_n(4)",
            B1::NotifyAll => "notifier.notify_all",
            B1::JecInternal => "jec.new_internal_jobs",
            B1::JecInjected => "jec.new_injected_jobs",
            B1::TraitNotifierSleep => "trait: notifier_sleep post",
            B1::StdCondvar => "std condvar.notify_one",
            B1::ParkingLotCondvar => "parking_lot condvar.notify_one",
            B1::EventListener => "event_listener.notify(1)",
            B1::CrossbeamUnpark => "crossbeam unparker.unpark",
            B1::StdUnpark => "std thread.unpark",
        }
    }

    /// Calls per timing: fewer for the paths that make a syscall.
    fn calls(self, quick: bool) -> u64 {
        let full = match self {
            B1::StdCondvar => 1_000_000,
            _ => 10_000_000,
        };
        if quick {
            full / 10
        } else {
            full
        }
    }
}

/// Everything B1 notifies, built once.
struct B1Targets {
    word: AtomicU64,
    notifier: Notifier,
    jec: JecSleep,
    notifier_sleep: NotifierSleep,
    condvar: std::sync::Condvar,
    pl_condvar: parking_lot::Condvar,
    event: Event,
    unparker: crossbeam_utils::sync::Unparker,
    thread: thread::Thread,
}

/// One call of each path, never inlined: every row of B1 pays the same
/// call, loop and `black_box` overhead as the floor, so the ratios
/// compare the paths themselves.
mod paths {
    use super::*;

    #[inline(never)]
    pub fn floor(word: &AtomicU64) -> u64 {
        fence(Ordering::SeqCst);
        word.load(Ordering::Acquire)
    }
    #[inline(never)]
    pub fn fetch_add(word: &AtomicU64) -> u64 {
        word.fetch_add(1, Ordering::SeqCst)
    }
    #[inline(never)]
    pub fn notify_one(n: &Notifier) -> bool {
        n.notify_one()
    }
    #[inline(never)]
    pub fn notify_n(n: &Notifier) -> usize {
        n.notify_n(4)
    }
    #[inline(never)]
    pub fn notify_all(n: &Notifier) -> usize {
        n.notify_all()
    }
    #[inline(never)]
    pub fn jec_internal(s: &JecSleep) {
        s.new_internal_jobs(1, true)
    }
    #[inline(never)]
    pub fn jec_injected(s: &JecSleep) {
        s.new_injected_jobs(1, true)
    }
    #[inline(never)]
    pub fn trait_post<S: SleepProtocol>(s: &S) {
        s.new_internal_jobs(1, true)
    }
    #[inline(never)]
    pub fn std_condvar(c: &std::sync::Condvar) {
        c.notify_one()
    }
    #[inline(never)]
    pub fn pl_condvar(c: &parking_lot::Condvar) -> bool {
        c.notify_one()
    }
    #[inline(never)]
    pub fn event(e: &Event) -> usize {
        e.notify(1)
    }
    #[inline(never)]
    pub fn crossbeam_unpark(u: &crossbeam_utils::sync::Unparker) {
        u.unpark()
    }
    #[inline(never)]
    pub fn std_unpark(t: &thread::Thread) {
        t.unpark()
    }
}

/// `calls` calls of `f` on `x`; ns per call (wall time: on this VM a
/// thread's own CPU-time reading only moves at the 4 ms scheduler tick).
#[inline(always)]
fn time_calls<T, R>(x: &T, calls: u64, f: fn(&T) -> R) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        black_box(f(black_box(x)));
    }
    start.elapsed().as_nanos() as f64 / calls as f64
}

/// ns per call of `which`, over `calls` calls.
fn time_b1(t: &B1Targets, which: B1, calls: u64) -> f64 {
    match which {
        B1::Floor => time_calls(&t.word, calls, paths::floor),
        B1::FetchAdd => time_calls(&t.word, calls, paths::fetch_add),
        B1::NotifyOne => time_calls(&t.notifier, calls, paths::notify_one),
        B1::NotifyN => time_calls(&t.notifier, calls, paths::notify_n),
        B1::NotifyAll => time_calls(&t.notifier, calls, paths::notify_all),
        B1::JecInternal => time_calls(&t.jec, calls, paths::jec_internal),
        B1::JecInjected => time_calls(&t.jec, calls, paths::jec_injected),
        B1::TraitNotifierSleep => {
            time_calls(&t.notifier_sleep, calls, paths::trait_post::<NotifierSleep>)
        }
        B1::StdCondvar => time_calls(&t.condvar, calls, paths::std_condvar),
        B1::ParkingLotCondvar => time_calls(&t.pl_condvar, calls, paths::pl_condvar),
        B1::EventListener => time_calls(&t.event, calls, paths::event),
        B1::CrossbeamUnpark => time_calls(&t.unparker, calls, paths::crossbeam_unpark),
        B1::StdUnpark => time_calls(&t.thread, calls, paths::std_unpark),
    }
}

/// Every path, `opts.rounds()` times in rotated order; on one thread,
/// then on two at once.
pub fn run(report: &mut Report, opts: &Options) {
    let parker = crossbeam_utils::sync::Parker::new();
    let finished = thread::spawn(|| {});
    let other = finished.thread().clone();
    finished.join().expect("empty thread");
    let targets = Arc::new(B1Targets {
        word: AtomicU64::new(0),
        notifier: Notifier::new(8),
        jec: JecSleep::new(8),
        notifier_sleep: NotifierSleep::new(8),
        condvar: std::sync::Condvar::new(),
        pl_condvar: parking_lot::Condvar::new(),
        event: Event::new(),
        unparker: parker.unparker().clone(),
        thread: other,
    });
    // Warm-up: every path once, briefly.
    for which in B1::ALL {
        time_b1(&targets, which, 10_000);
    }
    let case = "1 thread";
    for round in 0..opts.rounds() {
        let mut values = Vec::new();
        for which in rotated(&B1::ALL, round) {
            values.push((
                which.name().to_string(),
                time_b1(&targets, which, which.calls(opts.quick)),
            ));
        }
        report.add_round("B1", case, "ns/call", &values, B1::Floor.name(), "x floor");
    }
    // Two threads posting at once: a path that writes a shared line slows
    // down; fence+load does not.
    let case2 = "2 threads at once";
    for round in 0..opts.rounds() {
        let mut values = Vec::new();
        for which in rotated(&B1::CONCURRENT, round) {
            let calls = which.calls(opts.quick);
            let per_call: Vec<f64> = thread::scope(|s| {
                let handles: Vec<_> = (0..2)
                    .map(|_| {
                        let t = &targets;
                        s.spawn(move || time_b1(t, which, calls))
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            values.push((which.name().to_string(), median(&per_call)));
        }
        report.add_round("B1", case2, "ns/call", &values, B1::Floor.name(), "x floor");
    }
    if targets.notifier.stats().wakes != 0 || targets.jec.stats().wakes != 0 {
        report.note("B1: a fast path made a wake syscall with nobody waiting".to_string());
    }
    for (which, limit) in [
        (B1::NotifyOne, 1.3),
        (B1::NotifyN, 1.3),
        (B1::NotifyAll, 1.3),
        (B1::JecInternal, 1.5),
        (B1::JecInjected, 1.5),
    ] {
        let ratios = report.values("B1", case, which.name(), "x floor");
        report.check_ratios(
            "B1",
            format!("{} <= {limit}x floor (1 thread)", which.name()),
            &ratios,
            limit,
            false,
            "floor",
        );
    }
}

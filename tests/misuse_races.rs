#![cfg(not(loom))]
//! A misusing thread raced against correct use: the misuse must be caught
//! without ever publishing a count that another thread could see or act
//! on.
//!
//! The misuse is a search that is never ended (its idle state leaked with
//! `mem::forget`). The counts are anonymous, so a leak is caught only once
//! the count is full: the next `start_looking` panics. The protocols check
//! the count before they write it (a CAS loop). The alternative, adding one
//! and taking it back when the sum is too high, publishes an impossible
//! count for a moment: more workers idle than the protocol has (and on a
//! `JecSleep` of 65,535 workers, a carry into the jobs event counter), which
//! any other thread may read and act on. These tests race leaks and
//! refused starts against 16 threads that start and end searches correctly
//! and against a thread that only reads the counts, and demand that no
//! read ever sees such a count and that no correct thread ever panics.
//!
//! A misusing thread holds a gate's read lock around each of its attempts,
//! and a correct thread takes its write lock between the end of one search
//! and the start of the next. An attempt that landed in that gap would take
//! the count the correct thread just gave back, and the correct thread's
//! next start would then be refused for real. The gate keeps the misuse to
//! the moments when the count is full, which are the only moments a leak
//! can be caught at; the misusing threads' attempts overlap each other.
//!
//! Watchdogs only catch hangs; nothing asserts a duration.

mod common;
use common::{with_progress_watchdog, Heartbeat};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Once, PoisonError, RwLock};
use std::thread;

use eventcount::{CoreLatch, IdlePolicy, JecSleep, NotifierSleep, SleepProtocol};

/// The most workers either protocol takes (`SleepProtocol::try_new`).
const MAX_WORKERS: usize = 65_535;

/// Threads that start and end searches correctly: more than the 2 cores.
const CORRECT: usize = 16;

/// Threads that leak searches, then make refused starts. A check that
/// writes and then undoes opens a window of a few nanoseconds per refusal,
/// so the attempts are many, and several threads make them, so that they
/// overlap and a reader lands in one.
const MISUSERS: usize = 6;

/// Refused starts each misusing thread makes once the leaks filled the
/// count.
const REFUSED: usize = 50_000;

/// What the reader checks of a protocol's counts during the race.
trait Counts: SleepProtocol + 'static {
    /// `Err` naming the counts if they are impossible for a protocol of
    /// `capacity` workers with at least `leaked` searches leaked: more
    /// workers idle than it has, fewer than were leaked, or (`JecSleep`)
    /// more asleep than idle.
    fn check_counts(&self, capacity: usize, leaked: usize) -> Result<(), String>;
}

impl Counts for JecSleep {
    fn check_counts(&self, capacity: usize, leaked: usize) -> Result<(), String> {
        let c = self.counters();
        let inactive = c.inactive();
        if inactive > capacity || inactive < leaked || c.sleeping() > c.inactive() {
            return Err(format!(
                "{c:?} with {leaked} searches leaked, for {capacity} workers"
            ));
        }
        Ok(())
    }
}

impl Counts for NotifierSleep {
    fn check_counts(&self, capacity: usize, leaked: usize) -> Result<(), String> {
        let awake_idle = self.awake_idle();
        if awake_idle > capacity || awake_idle < leaked {
            return Err(format!(
                "awake idle {awake_idle} with {leaked} searches leaked, for {capacity} workers"
            ));
        }
        Ok(())
    }
}

/// The refused `start_looking` panics by the tens of thousands: keep them
/// off stderr, and let every other panic through to the default hook.
fn quiet_refusals() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .unwrap_or("");
            if !message.starts_with("start_looking: worker") {
                default(info);
            }
        }));
    });
}

/// A panic's message.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Shared by the threads of one race.
struct Race<S> {
    sleep: S,
    capacity: usize,
    gate: RwLock<()>,
    started: Barrier,
    /// Searches the misusing threads leaked so far (after each leak).
    leaked: AtomicUsize,
    stop: AtomicBool,
    /// The first impossible count any thread read.
    bad: std::sync::Mutex<Option<String>>,
}

impl<S: Counts> Race<S> {
    /// Read the counts once; remember the first impossible reading.
    fn check(&self) {
        let leaked = self.leaked.load(Ordering::Acquire);
        if let Err(counts) = self.sleep.check_counts(self.capacity, leaked) {
            self.bad.lock().unwrap().get_or_insert(counts);
        }
    }

    /// A correct thread, worker `me`: searches that each run two empty
    /// rounds (yield rounds: never sleepy) and read the counts, ended with
    /// `work_found` and started again inside the gate's write lock.
    fn correct(&self, me: usize) {
        let latch = CoreLatch::idle_loop();
        let mut idle = self.sleep.start_looking(me);
        // The misuse starts once every correct thread holds its search.
        self.started.wait();
        while !self.stop.load(Ordering::Acquire) {
            for _ in 0..2 {
                self.check();
                self.sleep.no_work_found(&mut idle, &latch, || false);
            }
            // A poisoned gate only means some thread failed: that failure is
            // the one to report.
            let _gap = self.gate.write().unwrap_or_else(PoisonError::into_inner);
            self.sleep.work_found(idle);
            idle = self.sleep.start_looking(me);
        }
        self.sleep.work_found(idle);
    }

    /// A misusing thread, worker `me`: leaks searches until `start_looking`
    /// refuses one, then makes [`REFUSED`] more attempts, each of which
    /// must be refused. Returns how many it leaked.
    fn misuse(&self, me: usize, heartbeat: &Heartbeat) -> usize {
        self.started.wait();
        let attempt = || {
            let _full = self.gate.read().unwrap_or_else(PoisonError::into_inner);
            panic::catch_unwind(AssertUnwindSafe(|| {
                std::mem::forget(self.sleep.start_looking(me));
            }))
            .is_ok()
        };
        let mut leaked = 0;
        while attempt() {
            leaked += 1;
            self.leaked.fetch_add(1, Ordering::AcqRel);
        }
        for n in 0..REFUSED {
            assert!(!attempt(), "attempt {n} on a full count was let through");
            if n % 256 == 0 {
                heartbeat.beat();
            }
        }
        leaked
    }
}

/// The race on a protocol of `CORRECT + spare` workers: the correct
/// threads are workers `0..CORRECT`, and the misusing threads, workers
/// `CORRECT..`, leak the `spare` counts left.
fn race<S: Counts>(name: &'static str, spare: usize, make: fn(usize) -> S) {
    quiet_refusals();
    with_progress_watchdog(name, move |heartbeat| {
        let capacity = CORRECT + spare;
        let race = Arc::new(Race {
            sleep: make(capacity),
            capacity,
            gate: RwLock::new(()),
            started: Barrier::new(CORRECT + MISUSERS),
            leaked: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            bad: std::sync::Mutex::new(None),
        });
        let correct: Vec<_> = (0..CORRECT)
            .map(|me| {
                let race = race.clone();
                thread::spawn(move || race.correct(me))
            })
            .collect();
        let reader = {
            let race = race.clone();
            thread::spawn(move || {
                while !race.stop.load(Ordering::Acquire) {
                    race.check();
                }
            })
        };
        let misusers: Vec<_> = (0..MISUSERS)
            .map(|j| {
                let (race, heartbeat) = (race.clone(), heartbeat.clone());
                thread::spawn(move || race.misuse(CORRECT + j % spare, &heartbeat))
            })
            .collect();
        let misused: Vec<_> = misusers.into_iter().map(|t| t.join()).collect();
        // Stop the others before any check below can fail.
        race.stop.store(true, Ordering::Release);
        let correct: Vec<_> = correct.into_iter().map(|t| t.join()).collect();
        reader.join().unwrap();
        for (me, joined) in correct.into_iter().enumerate() {
            if let Err(payload) = joined {
                panic!("correct thread {me} panicked: {}", message(&*payload));
            }
        }
        let mut leaked = 0;
        for joined in misused {
            match joined {
                Ok(n) => leaked += n,
                Err(payload) => panic!("a misusing thread: {}", message(&*payload)),
            }
        }
        assert_eq!(leaked, spare, "the leaks filled the count exactly");
        if let Some(counts) = race.bad.lock().unwrap().take() {
            panic!("an impossible count was published: {counts}");
        }
        race.check();
    });
}

/// Rayon's 32 yield rounds: a correct thread's two rounds never get sleepy.
fn yields() -> IdlePolicy {
    IdlePolicy::rayon()
}

#[test]
fn jec_sleep_leaks_raced_against_correct_searches() {
    race("jec_sleep_leaks_raced_against_correct_searches", 8, |n| {
        JecSleep::try_new(n, yields(), None).unwrap()
    });
}

/// At the counters' limit, adding one to a full count of 65,535 would carry
/// into the jobs event counter, and read as no worker idle at all.
#[test]
fn jec_sleep_leaks_raced_against_correct_searches_at_max_capacity() {
    race(
        "jec_sleep_leaks_raced_against_correct_searches_at_max_capacity",
        MAX_WORKERS - CORRECT,
        |n| JecSleep::try_new(n, yields(), None).unwrap(),
    );
}

#[test]
fn notifier_sleep_leaks_raced_against_correct_searches() {
    race(
        "notifier_sleep_leaks_raced_against_correct_searches",
        8,
        |n| NotifierSleep::try_new(n, yields(), None).unwrap(),
    );
}

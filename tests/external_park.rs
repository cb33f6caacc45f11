//! Workers that sleep in a park of their caller's (`no_work_found_parked`,
//! `commit_wait_parked`) and are woken through the `Unpark` hook, on real
//! threads: mixed with workers that sleep on the crate's own parker, with
//! parks that return spuriously, with unparks that come before the park,
//! and with deadlines. Deadlines only bound how long a test waits; nothing
//! asserts how long anything took.

#![cfg(not(loom))]

mod common;
use common::{
    panic_message, rounds_until_slept, wait_until, with_progress_watchdog, with_watchdog,
};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use eventcount::{
    CoreLatch, IdlePolicy, JecSleep, Notifier, NotifierSleep, Round, SleepProtocol, Unpark,
    WaitOutcome,
};

/// A driver's park and unpark for each worker: a token that an unpark
/// leaves and a park takes, so an unpark before the park makes it return
/// at once. `spurious` makes every other park return at once without a
/// token.
struct Parkers {
    tokens: Vec<(Mutex<bool>, Condvar)>,
    unparks: AtomicUsize,
    parks: AtomicUsize,
    spurious: bool,
}

impl Parkers {
    fn new(workers: usize, spurious: bool) -> Arc<Parkers> {
        Arc::new(Parkers {
            tokens: (0..workers)
                .map(|_| (Mutex::new(false), Condvar::new()))
                .collect(),
            unparks: AtomicUsize::new(0),
            parks: AtomicUsize::new(0),
            spurious,
        })
    }

    fn hook(self: &Arc<Parkers>) -> Unpark {
        let parkers = self.clone();
        Arc::new(move |worker| parkers.unpark(worker))
    }

    fn unpark(&self, worker: usize) {
        self.unparks.fetch_add(1, Ordering::Relaxed);
        let (token, cv) = &self.tokens[worker];
        *token.lock().unwrap() = true;
        cv.notify_one();
    }

    fn park(&self, worker: usize, deadline: Option<Instant>) {
        let parks = self.parks.fetch_add(1, Ordering::Relaxed);
        if self.spurious && parks % 2 == 0 {
            return;
        }
        let (token, cv) = &self.tokens[worker];
        let mut set = token.lock().unwrap();
        while !*set {
            match deadline {
                None => set = cv.wait(set).unwrap(),
                Some(deadline) => {
                    let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                        return;
                    };
                    set = cv.wait_timeout(set, left).unwrap().0;
                }
            }
        }
        *set = false;
    }
}

/// Jobs in one injected counter; `stop` ends the workers.
struct Shared<S> {
    sleep: S,
    jobs: AtomicUsize,
    done: AtomicUsize,
    stop: AtomicBool,
    parkers: Arc<Parkers>,
}

impl<S: SleepProtocol> Shared<S> {
    fn has_work(&self) -> bool {
        self.jobs.load(Ordering::Acquire) > 0 || self.stop.load(Ordering::Acquire)
    }

    fn take(&self) -> bool {
        self.jobs
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Even workers park externally (some with a deadline), odd ones on
    /// the protocol's own parker.
    fn worker(&self, me: usize) {
        let latch = CoreLatch::idle_loop();
        let mut rounds = 0u64;
        loop {
            let mut idle = self.sleep.start_looking(me);
            loop {
                if self.take() {
                    self.sleep.work_found(idle);
                    self.done.fetch_add(1, Ordering::AcqRel);
                    break;
                }
                if self.stop.load(Ordering::Acquire) {
                    self.sleep.work_found(idle);
                    return;
                }
                rounds += 1;
                if me % 2 == 0 {
                    let deadline =
                        (rounds % 3 == 0).then(|| Instant::now() + Duration::from_micros(200));
                    let round = self.sleep.no_work_found_parked(
                        &mut idle,
                        &latch,
                        || self.has_work(),
                        deadline,
                        |until| self.parkers.park(me, until),
                    );
                    // A round returns PastDeadline only if it started
                    // after its deadline: on a loaded machine this thread
                    // may be preempted for longer than 200 us between
                    // setting the deadline and starting the round.
                    if round == Round::PastDeadline {
                        let deadline = deadline.expect("no deadline, yet PastDeadline");
                        assert!(
                            Instant::now() >= deadline,
                            "worker {me}: PastDeadline before its deadline"
                        );
                    }
                } else {
                    let _ = self
                        .sleep
                        .no_work_found(&mut idle, &latch, || self.has_work());
                }
            }
        }
    }
}

fn every_job_runs<S: SleepProtocol + 'static>(name: &str, spurious: bool) {
    const WORKERS: usize = 16;
    const POSTERS: usize = 2;
    const JOBS: usize = 2_000;
    with_progress_watchdog(name, move |heartbeat| {
        let parkers = Parkers::new(WORKERS, spurious);
        let policy = IdlePolicy::rounds(1);
        let shared = Arc::new(Shared {
            sleep: S::try_new(WORKERS, policy, Some(parkers.hook())).unwrap(),
            jobs: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            parkers,
        });
        let workers: Vec<_> = (0..WORKERS)
            .map(|me| {
                let shared = shared.clone();
                thread::spawn(move || shared.worker(me))
            })
            .collect();
        let posters: Vec<_> = (0..POSTERS)
            .map(|_| {
                let shared = shared.clone();
                thread::spawn(move || {
                    for i in 0..JOBS {
                        let was_empty = shared.jobs.fetch_add(1, Ordering::Release) == 0;
                        shared.sleep.new_injected_jobs(1, was_empty);
                        if i % 64 == 0 {
                            thread::sleep(Duration::from_micros(50));
                        }
                    }
                })
            })
            .collect();
        for poster in posters {
            poster.join().unwrap();
        }
        // Every job is taken without a further post: a lost wake hangs
        // here, and the watchdog reports it.
        let mut done = 0;
        while done < POSTERS * JOBS {
            thread::sleep(Duration::from_millis(1));
            let now = shared.done.load(Ordering::Acquire);
            if now > done {
                heartbeat.beat();
            }
            done = now;
        }
        shared.stop.store(true, Ordering::Release);
        shared.sleep.wake_all();
        for worker in workers {
            worker.join().unwrap();
        }
        assert_eq!(shared.jobs.load(Ordering::Acquire), 0);
        assert_eq!(shared.sleep.num_sleeping(), 0);
    });
}

#[test]
fn notifier_sleep_mixed_parking_runs_every_job() {
    every_job_runs::<NotifierSleep>("notifier_sleep_mixed_parking_runs_every_job", false);
}

#[test]
fn jec_sleep_mixed_parking_runs_every_job() {
    every_job_runs::<JecSleep>("jec_sleep_mixed_parking_runs_every_job", false);
}

#[test]
fn notifier_sleep_spurious_parks_lose_no_job() {
    every_job_runs::<NotifierSleep>("notifier_sleep_spurious_parks_lose_no_job", true);
}

#[test]
fn jec_sleep_spurious_parks_lose_no_job() {
    every_job_runs::<JecSleep>("jec_sleep_spurious_parks_lose_no_job", true);
}

/// A notify that lands between the commit and the park: the hook runs
/// first, and the park returns at once on its token.
#[test]
fn an_unpark_before_the_park_makes_it_return() {
    with_watchdog("an_unpark_before_the_park_makes_it_return", || {
        let parkers = Parkers::new(1, false);
        let n = Notifier::with_unpark(1, parkers.hook());
        let wait = n.prepare_wait(0);
        let outcome = n.commit_wait_parked(wait, None, |deadline| {
            assert_eq!(n.num_sleeping(), 1);
            assert!(
                n.notify_one(),
                "the externally parked waiter was not notified"
            );
            parkers.park(0, deadline);
        });
        assert_eq!(outcome, WaitOutcome::Notified);
        assert_eq!(parkers.unparks.load(Ordering::Relaxed), 1);
        assert_eq!(n.num_sleeping(), 0);
        assert!(
            !n.notify_one(),
            "the woken waiter is still in the waiter set"
        );
    });
}

/// A targeted wake of an externally parked waiter calls the hook too.
#[test]
fn a_targeted_wake_unparks_an_external_waiter() {
    let parkers = Parkers::new(2, false);
    let n = Notifier::with_unpark(2, parkers.hook());
    let wait = n.prepare_wait(1);
    let outcome = n.commit_wait_parked(wait, None, |deadline| {
        assert!(n.notify_waiter(1));
        parkers.park(1, deadline);
    });
    assert_eq!(outcome, WaitOutcome::Notified);
    assert_eq!(parkers.unparks.load(Ordering::Relaxed), 1);
    assert!(!n.notify_one());
}

/// A park that returns with nothing delivered withdraws the waiter as a
/// timeout does: the next notify finds nobody, and the slot is free.
#[test]
fn a_park_that_returns_unwoken_withdraws_the_waiter() {
    let parkers = Parkers::new(1, false);
    let n = Notifier::with_unpark(1, parkers.hook());
    let deadline = Instant::now() + Duration::from_millis(2);
    let wait = n.prepare_wait(0);
    let outcome = n.commit_wait_parked(wait, Some(deadline), |until| parkers.park(0, until));
    assert_eq!(outcome, WaitOutcome::TimedOut);
    assert!(!n.notify_one(), "a notify found the withdrawn waiter");
    assert_eq!(parkers.unparks.load(Ordering::Relaxed), 0);
    // A spurious return, with no deadline: the same.
    let wait = n.prepare_wait(0);
    assert_eq!(
        n.commit_wait_parked(wait, None, |_| {}),
        WaitOutcome::TimedOut
    );
    assert!(!n.notify_one());
}

/// The rounds of one worker, as a scheduler's metrics see them.
fn rounds_report_what_happened<S: SleepProtocol>() {
    let parkers = Parkers::new(1, false);
    let policy = IdlePolicy::rounds(1);
    let sleep = S::try_new(1, policy, Some(parkers.hook())).unwrap();
    let latch = CoreLatch::idle_loop();
    let mut idle = sleep.start_looking(0);
    assert_eq!(
        sleep.no_work_found(&mut idle, &latch, || false),
        Round::Searched
    );
    assert_eq!(
        sleep.no_work_found(&mut idle, &latch, || false),
        Round::Announced
    );
    assert_eq!(
        sleep.no_work_found(&mut idle, &latch, || true),
        Round::Withdrew
    );
    // To sleep again: search, announce, then park; a park that returns
    // unwoken before its deadline.
    let far = Instant::now() + Duration::from_secs(60);
    let mut parks = 0;
    let round = rounds_until_slept(&sleep, &mut idle, &latch, Some(far), |_| parks += 1);
    assert_eq!((round, parks), (Round::ParkReturned, 1));
    assert_eq!(sleep.num_sleeping(), 0);
    // A park whose deadline passes, unless a slow machine passes it before
    // the round that would park.
    let soon = Instant::now() + Duration::from_millis(2);
    let mut round = Round::Searched;
    while !round.slept() && round != Round::PastDeadline {
        round = sleep.no_work_found_parked(
            &mut idle,
            &latch,
            || false,
            Some(soon),
            |until| parkers.park(0, until),
        );
    }
    assert!(
        matches!(round, Round::TimedOut | Round::PastDeadline),
        "{round:?}"
    );
    // Past the deadline: nothing happens.
    let round = sleep.no_work_found_parked(
        &mut idle,
        &latch,
        || false,
        Some(soon),
        |_| unreachable!("parked past the deadline"),
    );
    assert_eq!(round, Round::PastDeadline);
    // A wake from inside the park: the hook, then a woken round.
    let round = rounds_until_slept(&sleep, &mut idle, &latch, None, |until| {
        sleep.wake_all();
        parkers.park(0, until);
    });
    assert_eq!(round, Round::Woken);
    assert_eq!(parkers.unparks.load(Ordering::Relaxed), 1);
    sleep.work_found(idle);
}

#[test]
fn notifier_sleep_rounds_report_what_happened() {
    rounds_report_what_happened::<NotifierSleep>();
}

#[test]
fn jec_sleep_rounds_report_what_happened() {
    rounds_report_what_happened::<JecSleep>();
}

/// An external park on a protocol built without a hook panics before
/// anything is written, and the protocol is left as it was.
fn parking_without_a_hook_panics<S: SleepProtocol>(name: &str) {
    let sleep = S::try_new(1, IdlePolicy::rounds(0), None).unwrap();
    let latch = CoreLatch::idle_loop();
    let message = panic_message(|| {
        let mut idle = sleep.start_looking(0);
        loop {
            let _ = sleep.no_work_found_parked(&mut idle, &latch, || false, None, |_| {});
        }
    });
    assert!(
        message.contains(&format!("no_work_found_parked: worker 0 would park externally, but this {name} has no unpark hook")),
        "{message}"
    );
    assert_eq!(sleep.num_sleeping(), 0);
    let idle = sleep.start_looking(0);
    sleep.work_found(idle);
}

#[test]
fn notifier_sleep_parking_without_a_hook_panics() {
    parking_without_a_hook_panics::<NotifierSleep>("NotifierSleep");
}

#[test]
fn jec_sleep_parking_without_a_hook_panics() {
    parking_without_a_hook_panics::<JecSleep>("JecSleep");
}

#[test]
fn commit_wait_parked_without_a_hook_panics_and_cancels() {
    let n = Notifier::new(1);
    let message = panic_message(|| {
        let wait = n.prepare_wait(0);
        let _ = n.commit_wait_parked(wait, None, |_| unreachable!("parked without a hook"));
    });
    assert!(
        message.contains("commit_wait_parked: waiter slot 0 would park externally, but this Notifier has no unpark hook"),
        "{message}"
    );
    assert!(
        !n.notify_one(),
        "the panicking commit left its waiter behind"
    );
    let wait = n.prepare_wait(0);
    n.cancel_wait(wait);
}

/// The searcher query under a cap of half the workers. Four workers may
/// outnumber the machine's CPUs, where the default lifts its cap: tokio's
/// policy keeps it.
fn capped_workers_may_not_search<S: SleepProtocol>() {
    let policy = IdlePolicy::tokio();
    let sleep = S::try_new(4, policy, None).unwrap();
    let latch = CoreLatch::idle_loop();
    let job = CoreLatch::new();
    let mut a = sleep.start_looking(0);
    let mut b = sleep.start_looking(1);
    let mut c = sleep.start_looking(2);
    let mut d = sleep.start_looking(3);
    assert!(sleep.may_search(&mut a, &latch));
    assert!(
        sleep.may_search(&mut a, &latch),
        "asking twice took a second slot"
    );
    assert!(sleep.may_search(&mut b, &latch));
    assert!(!sleep.may_search(&mut c, &latch));
    // A joining worker is never capped.
    assert!(sleep.may_search(&mut d, &job));
    sleep.work_found(a);
    assert!(sleep.may_search(&mut c, &latch));
    for idle in [b, c, d] {
        sleep.work_found(idle);
    }
}

#[test]
fn notifier_sleep_capped_workers_may_not_search() {
    capped_workers_may_not_search::<NotifierSleep>();
}

#[test]
fn jec_sleep_capped_workers_may_not_search() {
    capped_workers_may_not_search::<JecSleep>();
}

/// A round that starts past its deadline, right after a park that returned
/// unwoken, counts the worker idle again before it returns, as every round
/// after such a park does: only the park's own return leaves the idle
/// period. `idle_count` reads the protocol's count of idle workers awake.
fn past_deadline_after_an_unwoken_park_counts_the_worker<S: SleepProtocol>(
    idle_count: impl Fn(&S) -> usize,
) {
    let parkers = Parkers::new(1, false);
    let sleep = S::try_new(1, IdlePolicy::rounds(0), Some(parkers.hook())).unwrap();
    let latch = CoreLatch::idle_loop();
    let mut idle = sleep.start_looking(0);
    assert_eq!(idle_count(&sleep), 1);
    let far = Instant::now() + Duration::from_secs(60);
    let round = rounds_until_slept(&sleep, &mut idle, &latch, Some(far), |_| {});
    assert_eq!(round, Round::ParkReturned);
    assert_eq!(idle_count(&sleep), 0, "out of its idle period");
    let past = Instant::now();
    let round = sleep.no_work_found_parked(
        &mut idle,
        &latch,
        || false,
        Some(past),
        |_| unreachable!("parked past the deadline"),
    );
    assert_eq!(round, Round::PastDeadline);
    assert_eq!(idle_count(&sleep), 1, "counted idle again");
    sleep.work_found(idle);
    assert_eq!(idle_count(&sleep), 0);
}

#[test]
fn notifier_sleep_past_deadline_after_an_unwoken_park_counts_the_worker() {
    past_deadline_after_an_unwoken_park_counts_the_worker::<NotifierSleep>(|s| s.awake_idle());
}

#[test]
fn jec_sleep_past_deadline_after_an_unwoken_park_counts_the_worker() {
    past_deadline_after_an_unwoken_park_counts_the_worker::<JecSleep>(|s| {
        s.counters().awake_but_idle()
    });
}

/// rayon PR #1314's searcher bound counts a sleeping worker as idle, not
/// busy, on both protocols: with one of four workers asleep and two
/// looking, only one busy worker is left, so only one may search.
fn the_busy_bound_counts_sleepers_as_idle<S: SleepProtocol>() {
    let parkers = Parkers::new(4, false);
    let policy = IdlePolicy::rayon().max_searching_busy();
    let sleep = S::try_new(4, policy, Some(parkers.hook())).unwrap();
    let latch = CoreLatch::idle_loop();
    let mut idle = sleep.start_looking(0);
    let mut checked = false;
    // Worker 0's park runs the check while the worker is registered asleep.
    let round = rounds_until_slept(&sleep, &mut idle, &latch, None, |_| {
        let mut a = sleep.start_looking(1);
        assert!(sleep.may_search(&mut a, &latch), "one idle, one busy");
        let mut b = sleep.start_looking(2);
        assert!(
            !sleep.may_search(&mut b, &latch),
            "two idle awake, one busy: the sleeper is not busy"
        );
        sleep.work_found(a);
        sleep.work_found(b);
        checked = true;
    });
    // The two searches' ends may hand the sleeper a wake: either way it slept.
    assert!(round.slept(), "{round:?}");
    assert!(checked);
    sleep.work_found(idle);
}

#[test]
fn notifier_sleep_busy_bound_counts_sleepers_as_idle() {
    the_busy_bound_counts_sleepers_as_idle::<NotifierSleep>();
}

#[test]
fn jec_sleep_busy_bound_counts_sleepers_as_idle() {
    the_busy_bound_counts_sleepers_as_idle::<JecSleep>();
}

/// A park that returns for its own reason (a driver's event) takes the
/// worker out of its idle period: it was counted asleep, so no post relied
/// on it, and ending its search wakes nobody. A worker asleep on the
/// protocol's own parker stays asleep. Its next round counts it back in,
/// and the end of that search hands off as any other.
fn a_park_that_returns_unwoken_hands_off_nothing<S: SleepProtocol + Sync>() {
    with_watchdog("a park that returns unwoken hands off nothing", || {
        let parkers = Parkers::new(2, false);
        // Two workers, searchers capped at one: the hand-off rule applies.
        let policy = IdlePolicy::tokio();
        let sleep = S::try_new(2, policy, Some(parkers.hook())).unwrap();
        let stop = AtomicBool::new(false);
        // Worker 1's sleeps that a wake ended: the futex sleeper goes back
        // to sleep at once, so this counts what a poll of `num_sleeping`
        // could miss.
        let woken = AtomicUsize::new(0);
        thread::scope(|scope| {
            scope.spawn(|| {
                let latch = CoreLatch::idle_loop();
                let mut idle = sleep.start_looking(1);
                while !stop.load(Ordering::Acquire) {
                    let round =
                        sleep.no_work_found(&mut idle, &latch, || stop.load(Ordering::Acquire));
                    if round == Round::Woken {
                        woken.fetch_add(1, Ordering::Release);
                    }
                }
                sleep.work_found(idle);
            });
            wait_until(|| sleep.num_sleeping() == 1);
            let latch = CoreLatch::idle_loop();
            let mut idle = sleep.start_looking(0);
            let round = rounds_until_slept(&sleep, &mut idle, &latch, None, |_| {});
            assert_eq!(round, Round::ParkReturned);
            sleep.work_found(idle);
            assert_eq!(
                sleep.num_sleeping(),
                1,
                "the end of a search after the park's own return woke the sleeper"
            );
            assert_eq!(woken.load(Ordering::Acquire), 0, "the sleeper was woken");
            // Back in: the round after the park's return counts the worker
            // idle again, and the end of its search hands off to the
            // sleeper.
            let mut idle = sleep.start_looking(0);
            let round = rounds_until_slept(&sleep, &mut idle, &latch, None, |_| {});
            assert_eq!(round, Round::ParkReturned);
            let round = sleep.no_work_found_parked(&mut idle, &latch, || false, None, |_| {});
            assert!(!round.slept(), "{round:?}");
            sleep.work_found(idle);
            wait_until(|| woken.load(Ordering::Acquire) == 1);
            stop.store(true, Ordering::Release);
            sleep.wake_all();
        });
    });
}

#[test]
fn notifier_sleep_a_park_that_returns_unwoken_hands_off_nothing() {
    a_park_that_returns_unwoken_hands_off_nothing::<NotifierSleep>();
}

#[test]
fn jec_sleep_a_park_that_returns_unwoken_hands_off_nothing() {
    a_park_that_returns_unwoken_hands_off_nothing::<JecSleep>();
}

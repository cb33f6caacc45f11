//! Loom models of external parking: a waiter that sleeps in its caller's
//! `park` (`Notifier::commit_wait_parked`,
//! `SleepProtocol::no_work_found_parked`) and is woken through the `Unpark`
//! hook, on the raw `Notifier` and on both protocols. They cover a notify
//! racing the park, an unpark that arrives before the park, a park that
//! returns spuriously, and a park that times out.
//!
//! The park is a loom-modeled token per waiter, as a driver keeps one: the
//! hook sets it (a Relaxed store), a park takes it (a Relaxed
//! compare-exchange, which writes nothing when it fails) and otherwise
//! yields to loom. It synchronizes nothing, as a futex does not: the
//! protocol must carry everything through its own words. A park that
//! nothing unparks yields for ever, and loom reports the lost wake as its
//! branch limit. loom has no clock, so a timed park is one that yields
//! once and returns, with the token or without it.
//!
//! The protocols' posters are spawned threads, and the main thread only
//! joins: with the poster on the main thread, loom does not explore the
//! worker running ahead of it (docs/jec-sleep.md, "Under loom").

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Arc;

use super::support::{check, inject_one, join_all, spawn_with, take};
use crate::idle::IdlePolicy;
use crate::jec::JecSleep;
use crate::latch::CoreLatch;
use crate::notifier::{Notifier, NotifierSleep};
use crate::outcome::WaitOutcome;
use crate::protocol::SleepProtocol;
use crate::round::Round;
use crate::test_support::{rounds_until_slept, wait_unless};
use crate::unpark::Unpark;

/// Sleepy at the first empty round: no search rounds to explore.
const EAGER: IdlePolicy = IdlePolicy::rounds(0);

/// How a model's park behaves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Park {
    /// Wait for the token.
    Blocking,
    /// The first park returns at once, without the token (a spurious
    /// return); later ones wait for it.
    SpuriousFirst,
    /// Every park yields once, then returns with or without the token: a
    /// timed park, under loom's missing clock. The yield is the time the
    /// park lasts: without it, a worker whose parks all time out would
    /// run its rounds for ever ahead of the poster.
    Timed,
}

/// One token per waiter.
struct Tokens {
    set: Vec<AtomicBool>,
    parks: AtomicUsize,
}

impl Tokens {
    fn new(waiters: usize) -> std::sync::Arc<Tokens> {
        std::sync::Arc::new(Tokens {
            set: (0..waiters).map(|_| AtomicBool::new(false)).collect(),
            parks: AtomicUsize::new(0),
        })
    }

    fn hook(self: &std::sync::Arc<Tokens>) -> Unpark {
        let tokens = self.clone();
        std::sync::Arc::new(move |waiter| tokens.set[waiter].store(true, Ordering::Relaxed))
    }

    /// Take the token, if it is there. A failed compare-exchange writes
    /// nothing, so once the hook stored, its store is the newest one loom
    /// lets the next try read.
    fn take(&self, waiter: usize) -> bool {
        self.set[waiter]
            .compare_exchange(true, false, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    fn park(&self, waiter: usize, how: Park) {
        let first = self.parks.fetch_add(1, Ordering::Relaxed) == 0;
        if how == Park::Timed {
            if !self.take(waiter) {
                loom::thread::yield_now();
            }
            return;
        }
        if how == Park::SpuriousFirst && first {
            return;
        }
        while !self.take(waiter) {
            loom::thread::yield_now();
        }
    }
}

/// The raw notifier's waiter side: wait for `flag`, parked in `tokens`. A
/// cancel returns at once: its re-check saw the flag set.
fn wait_parked(notifier: &Notifier, wid: usize, flag: &AtomicBool, tokens: &Tokens, how: Park) {
    let set = || flag.load(Ordering::Acquire);
    while !set() {
        let park = |wait| {
            let _ = notifier.commit_wait_parked(wait, None, |_| tokens.park(wid, how));
        };
        if !wait_unless(notifier, wid, set, park) {
            return;
        }
    }
}

/// A notify racing the external park of the raw notifier's one waiter: it
/// wakes the waiter through the hook, whether it lands before the commit,
/// between the commit and the park, or during the park.
#[test]
fn notifier_external_park_races_notify() {
    check(2, || {
        let tokens = Tokens::new(1);
        let notifier = Arc::new(Notifier::with_unpark(1, tokens.hook()));
        let flag = Arc::new(AtomicBool::new(false));
        let waiter = spawn_with!(notifier, flag, tokens => wait_parked(&notifier, 0, &flag, &tokens, Park::Blocking));
        flag.store(true, Ordering::Release);
        notifier.notify_one();
        waiter.join().unwrap();
    });
}

/// An unpark that arrives before the park: the waiter's own park notifies
/// first, so the hook runs before the token is waited for, and the park
/// returns at once on it.
#[test]
fn notifier_unpark_before_the_park_returns_at_once() {
    check(2, || {
        let tokens = Tokens::new(1);
        let notifier = Notifier::with_unpark(1, tokens.hook());
        let wait = notifier.prepare_wait(0);
        let outcome = notifier.commit_wait_parked(wait, None, |_| {
            assert!(notifier.notify_one(), "the parked waiter was not notified");
            tokens.park(0, Park::Blocking);
        });
        assert_eq!(outcome, WaitOutcome::Notified);
        assert!(!notifier.notify_one(), "the woken waiter is still waiting");
    });
}

/// A park that returns spuriously withdraws the waiter as a timeout does:
/// the notify that comes later finds it in its next wait, or finds it gone
/// and the flag set.
#[test]
fn notifier_spurious_park_return_withdraws() {
    check(2, || {
        let tokens = Tokens::new(1);
        let notifier = Arc::new(Notifier::with_unpark(1, tokens.hook()));
        let flag = Arc::new(AtomicBool::new(false));
        let waiter = spawn_with!(notifier, flag, tokens => {
            wait_parked(&notifier, 0, &flag, &tokens, Park::SpuriousFirst)
        });
        flag.store(true, Ordering::Release);
        notifier.notify_one();
        waiter.join().unwrap();
    });
}

/// `timed_wait_never_swallows_a_notification` with the timed waiter in an
/// external park: a park that times out while a notify reaches it either
/// reports the notification or leaves without it, and then the notify moves
/// on to the other waiter.
#[test]
fn notifier_timed_park_never_swallows_a_notification() {
    check(2, || {
        let tokens = Tokens::new(2);
        let notifier = Arc::new(Notifier::with_unpark(2, tokens.hook()));
        let flag = Arc::new(AtomicBool::new(false));
        let timed = spawn_with!(notifier, flag, tokens => {
            let wait = notifier.prepare_wait(0);
            if flag.load(Ordering::Acquire) {
                notifier.cancel_wait(wait);
                return;
            }
            let outcome = notifier.commit_wait_parked(wait, None, |_| tokens.park(0, Park::Timed));
            if outcome == WaitOutcome::Notified {
                notifier.notify_one();
            }
        });
        let plain = spawn_with!(notifier, flag, tokens => {
            wait_parked(&notifier, 1, &flag, &tokens, Park::Blocking)
        });
        flag.store(true, Ordering::Release);
        notifier.notify_one();
        join_all([timed, plain]);
    });
}

/// A protocol of one worker with the tokens' hook.
fn one_worker<S: SleepProtocol>(tokens: &std::sync::Arc<Tokens>) -> S {
    S::try_new(1, EAGER, Some(tokens.hook())).expect("one worker fits")
}

/// Worker 0 runs one injected job, parked in `tokens` between rounds.
fn run_one_job_parked<S: SleepProtocol>(
    sleep: &S,
    injector: &AtomicUsize,
    tokens: &Tokens,
    how: Park,
) {
    let latch = CoreLatch::idle_loop();
    let mut idle = sleep.start_looking(0);
    while !take(injector) {
        let has_work = || injector.load(Ordering::Acquire) > 0;
        let round =
            sleep.no_work_found_parked(&mut idle, &latch, has_work, None, |_| tokens.park(0, how));
        assert_ne!(round, Round::PastDeadline);
    }
    sleep.work_found(idle);
}

/// A post racing a worker that parks externally: the post wakes it through
/// the hook wherever it stands; at rest nobody is counted asleep.
fn external_park_races_post<S: SleepProtocol + 'static>(how: Park) {
    check(2, move || {
        let tokens = Tokens::new(1);
        let sleep = Arc::new(one_worker::<S>(&tokens));
        let injector = Arc::new(AtomicUsize::new(0));
        let worker = spawn_with!(sleep, injector, tokens => {
            run_one_job_parked(&*sleep, &injector, &tokens, how)
        });
        let poster = spawn_with!(sleep, injector => inject_one(&*sleep, &injector));
        join_all([poster, worker]);
        assert_eq!(sleep.num_sleeping(), 0);
    });
}

#[test]
fn notifier_sleep_external_park_races_post() {
    external_park_races_post::<NotifierSleep>(Park::Blocking);
}

#[test]
fn jec_sleep_external_park_races_post() {
    external_park_races_post::<JecSleep>(Park::Blocking);
}

/// A spurious return, then a park that waits: the worker withdrew at the
/// return, so the post reaches it in its next sleep or its search.
#[test]
fn notifier_sleep_spurious_park_return_withdraws() {
    external_park_races_post::<NotifierSleep>(Park::SpuriousFirst);
    spurious_return_uncounts_the_sleeper::<NotifierSleep>();
}

#[test]
fn jec_sleep_spurious_park_return_withdraws() {
    external_park_races_post::<JecSleep>(Park::SpuriousFirst);
    spurious_return_uncounts_the_sleeper::<JecSleep>();
}

/// Every park times out, racing the post: the worker's withdrawal and the
/// waker's claim race on one word, and exactly one of them uncounts it.
#[test]
fn notifier_sleep_timed_park_races_post() {
    external_park_races_post::<NotifierSleep>(Park::Timed);
}

#[test]
fn jec_sleep_timed_park_races_post() {
    check(2, || {
        let tokens = Tokens::new(1);
        let sleep = Arc::new(one_worker::<JecSleep>(&tokens));
        let injector = Arc::new(AtomicUsize::new(0));
        let worker = spawn_with!(sleep, injector, tokens => {
            run_one_job_parked(&*sleep, &injector, &tokens, Park::Timed)
        });
        let poster = spawn_with!(sleep, injector => inject_one(&*sleep, &injector));
        join_all([poster, worker]);
        let counters = sleep.counters();
        assert_eq!((counters.sleeping(), counters.inactive()), (0, 0));
    });
}

/// Alone, a park that returns spuriously leaves the worker uncounted.
fn spurious_return_uncounts_the_sleeper<S: SleepProtocol>() {
    check(2, || {
        let tokens = Tokens::new(1);
        let sleep = one_worker::<S>(&tokens);
        let latch = CoreLatch::idle_loop();
        let mut idle = sleep.start_looking(0);
        let round = rounds_until_slept(&sleep, &mut idle, &latch, None, |_| {
            tokens.park(0, Park::SpuriousFirst)
        });
        assert_eq!(round, Round::ParkReturned);
        assert_eq!(sleep.num_sleeping(), 0);
        sleep.work_found(idle);
    });
}

/// An unpark before the park: the worker's own park wakes everyone first,
/// so the hook runs before the token is waited for; the round is a wake.
fn unpark_before_the_park<S: SleepProtocol + 'static>() {
    check(2, || {
        let tokens = Tokens::new(1);
        let sleep = one_worker::<S>(&tokens);
        let latch = CoreLatch::idle_loop();
        let mut idle = sleep.start_looking(0);
        let round = rounds_until_slept(&sleep, &mut idle, &latch, None, |_| {
            sleep.wake_all();
            tokens.park(0, Park::Blocking);
        });
        assert_eq!(round, Round::Woken);
        assert_eq!(sleep.num_sleeping(), 0);
        sleep.work_found(idle);
    });
}

#[test]
fn notifier_sleep_unpark_before_the_park() {
    unpark_before_the_park::<NotifierSleep>();
}

#[test]
fn jec_sleep_unpark_before_the_park() {
    unpark_before_the_park::<JecSleep>();
}

/// Whether the worker that takes the job stops the others.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StopsOthers {
    Yes,
    No,
}

/// Worker `me` on the protocol's own parker: it runs the one injected job
/// or stops once `done` is set.
fn on_own_parker<S: SleepProtocol>(
    sleep: &S,
    me: usize,
    injector: &AtomicUsize,
    done: &AtomicBool,
    stops_others: StopsOthers,
) {
    let latch = CoreLatch::idle_loop();
    let mut idle = sleep.start_looking(me);
    loop {
        if take(injector) {
            if stops_others == StopsOthers::Yes {
                done.store(true, Ordering::Release);
                sleep.work_found(idle);
                // The other worker may be asleep: it stops on `done`.
                sleep.wake_all();
            } else {
                sleep.work_found(idle);
            }
            return;
        }
        if done.load(Ordering::Acquire) {
            sleep.work_found(idle);
            return;
        }
        let has_work = || injector.load(Ordering::Acquire) > 0 || done.load(Ordering::Acquire);
        let _ = sleep.no_work_found(&mut idle, &latch, has_work);
    }
}

/// A pool that mixes the two: worker 0 parks externally, worker 1 on the
/// protocol's own parker, and one post must reach one of them. With
/// `Park::SpuriousFirst`, worker 0's first park returns unwoken, and its
/// next round counts it back into the idle period while the post races.
fn mixed_parking<S: SleepProtocol + 'static>(how: Park) {
    check(1, move || {
        let tokens = Tokens::new(2);
        let sleep = Arc::new(S::try_new(2, EAGER, Some(tokens.hook())).expect("two fit"));
        let injector = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let external = spawn_with!(sleep, injector, tokens, done => {
            let latch = CoreLatch::idle_loop();
            let mut idle = sleep.start_looking(0);
            loop {
                if take(&injector) {
                    done.store(true, Ordering::Release);
                    // The other worker may be asleep: it stops on `done`.
                    sleep.work_found(idle);
                    sleep.wake_all();
                    return;
                }
                if done.load(Ordering::Acquire) {
                    sleep.work_found(idle);
                    return;
                }
                let has_work =
                    || injector.load(Ordering::Acquire) > 0 || done.load(Ordering::Acquire);
                let _ = sleep.no_work_found_parked(&mut idle, &latch, has_work, None, |_| {
                    tokens.park(0, how)
                });
            }
        });
        let own = spawn_with!(sleep, injector, done => {
            on_own_parker(&*sleep, 1, &injector, &done, StopsOthers::Yes)
        });
        inject_one(&*sleep, &injector);
        join_all([external, own]);
    });
}

#[test]
fn notifier_sleep_mixed_parking() {
    mixed_parking::<NotifierSleep>(Park::Blocking);
}

#[test]
fn notifier_sleep_mixed_parking_after_a_spurious_return() {
    mixed_parking::<NotifierSleep>(Park::SpuriousFirst);
}

#[test]
fn jec_sleep_mixed_parking() {
    mixed_parking::<JecSleep>(Park::Blocking);
}

#[test]
fn jec_sleep_mixed_parking_after_a_spurious_return() {
    mixed_parking::<JecSleep>(Park::SpuriousFirst);
}

/// A park that returns for its own reason takes its worker out of the idle
/// period, racing a post: worker 0 parks externally, its first park
/// returns unwoken, and it then leaves for work of its own (a driver's
/// events) without searching; worker 1 sleeps on the protocol's own
/// parker. The post must reach worker 1 whatever worker 0 was doing when
/// it landed: had worker 0 counted as awake and idle on its way out, the
/// post would wake nobody, and worker 1 would sleep for ever.
fn park_return_leaves_the_idle_period<S: SleepProtocol + 'static>() {
    check(1, || {
        let tokens = Tokens::new(2);
        let sleep = Arc::new(S::try_new(2, EAGER, Some(tokens.hook())).expect("two fit"));
        let injector = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let external = spawn_with!(sleep, injector, tokens, done => {
            let latch = CoreLatch::idle_loop();
            let mut idle = sleep.start_looking(0);
            loop {
                if take(&injector) {
                    done.store(true, Ordering::Release);
                    sleep.work_found(idle);
                    sleep.wake_all();
                    return;
                }
                let has_work = || injector.load(Ordering::Acquire) > 0;
                let round = sleep.no_work_found_parked(&mut idle, &latch, has_work, None, |_| {
                    tokens.park(0, Park::SpuriousFirst)
                });
                if round == Round::ParkReturned {
                    // Off to the park's own work: no search.
                    sleep.work_found(idle);
                    return;
                }
            }
        });
        let own = spawn_with!(sleep, injector, done => {
            on_own_parker(&*sleep, 1, &injector, &done, StopsOthers::No)
        });
        let poster = spawn_with!(sleep, injector => inject_one(&*sleep, &injector));
        join_all([poster, external, own]);
    });
}

#[test]
fn notifier_sleep_park_return_leaves_the_idle_period() {
    park_return_leaves_the_idle_period::<NotifierSleep>();
}

#[test]
fn jec_sleep_park_return_leaves_the_idle_period() {
    park_return_leaves_the_idle_period::<JecSleep>();
}

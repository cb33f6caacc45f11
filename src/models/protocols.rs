//! Loom models run through the [`SleepProtocol`] trait, on both protocols:
//! the `NotifierSleep` adapter's latch steps and the trait's post and wake
//! paths. Every actor is a spawned thread (see `jec.rs`).
//!
//! The latch and injection models also run on the smallest and the largest
//! search budget a timed policy can have: no wake may depend on the budget.
//! Under loom the largest (the default's upper bound, 200 µs) lasts two
//! search rounds (`sync/clock.rs`), for a top-level search and a join alike.
//! The `_oversized` models run the default policy in a pool with more
//! workers than CPUs, which idles as rayon does: two yield rounds under
//! loom, a search after every wake, and no cap.

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Notify};

use super::searcher_cap::AtRest;
use super::support::{
    check, inject_one, join_all, run_one_job, search_until, sleep_until_set, spawn_with, take,
};
use crate::idle::IdlePolicy;
use crate::jec::JecSleep;
use crate::latch::CoreLatch;
use crate::notifier::NotifierSleep;
use crate::protocol::SleepProtocol;
use crate::shell::with_model_cpus;
use crate::sync::LOOM_STEP;
use std::time::Duration;

/// Sleepy at the first empty round: no yield rounds to blow up the state
/// space.
const EAGER: IdlePolicy = IdlePolicy::rounds(0);

/// The default's shape with a budget of 0: no search round.
fn smallest() -> IdlePolicy {
    IdlePolicy::fixed_budget(Duration::ZERO)
}

/// The default's shape with the largest budget the models search: two
/// search rounds under loom, before every sleep, in the idle loop and in a
/// join.
pub(super) fn largest() -> IdlePolicy {
    IdlePolicy::fixed_budget(Duration::from_nanos(2 * LOOM_STEP))
}

/// One worker with `policy`.
fn one_worker<S: SleepProtocol>(policy: IdlePolicy) -> S {
    workers_with(1, policy)
}

/// `workers` workers with `policy`.
fn workers_with<S: SleepProtocol>(workers: usize, policy: IdlePolicy) -> S {
    S::try_new(workers, policy, None).expect("the workers fit")
}

/// Set `latch`, owned by worker 0, and wake the owner only if `set` says it
/// sleeps on it.
fn set_and_notify<S: SleepProtocol>(latch: &CoreLatch, sleep: &S) {
    if latch.set() {
        sleep.notify_worker_latch_is_set(0);
    }
}

/// The owner sleeps against its latch; another thread sets it and wakes the
/// owner only if `set` says it sleeps.
fn latch_wakes_owner<S: SleepProtocol + 'static>(policy: IdlePolicy) {
    check(3, move || {
        let sleep = Arc::new(one_worker::<S>(policy));
        let latch = Arc::new(CoreLatch::new());
        let owner = spawn_with!(sleep, latch => sleep_until_set(&*sleep, 0, &latch));
        let setter = spawn_with!(sleep, latch => set_and_notify(&latch, &*sleep));
        join_all([setter, owner]);
    });
}

/// The latch publishes what its setter wrote before `set`: a scheduler reads
/// a job's result as soon as `probe` sees the job's latch set. The owner may
/// see the latch set before it ever sleeps, or sleep on it and be woken by
/// the setter; the payload must be visible on every path. The payload is a
/// Relaxed atomic, so only the latch orders it: loom lets a Relaxed load
/// return a stale value that nothing orders before it. The setter calls
/// `set` and the targeted wake, or `set_latch`, whose owner check replaces
/// `set`'s swap with compare-exchanges (`through_set_latch`).
fn latch_publishes_the_setters_writes<S: SleepProtocol + 'static>(through_set_latch: bool) {
    check(3, move || {
        let sleep = Arc::new(one_worker::<S>(EAGER));
        let latch = Arc::new(CoreLatch::new());
        let result = Arc::new(AtomicUsize::new(0));
        let owner = spawn_with!(sleep, latch, result => {
            sleep_until_set(&*sleep, 0, &latch);
            assert_eq!(
                result.load(Ordering::Relaxed),
                42,
                "probe() saw the latch set but not the result written before set()"
            );
        });
        let setter = spawn_with!(sleep, latch, result => {
            result.store(42, Ordering::Relaxed);
            if through_set_latch {
                sleep.set_latch(&latch, 0);
            } else {
                set_and_notify(&latch, &*sleep);
            }
        });
        join_all([setter, owner]);
    });
}

/// A job injected from outside reaches a worker in any phase of its sleep.
fn injected_job_runs<S: SleepProtocol + 'static>(policy: IdlePolicy) {
    check(2, move || {
        let sleep = Arc::new(one_worker::<S>(policy));
        let jobs = Arc::new(AtomicUsize::new(0));
        let worker = spawn_with!(sleep, jobs => run_one_job(&*sleep, 0, &jobs));
        let poster = spawn_with!(sleep, jobs => inject_one(&*sleep, &jobs));
        join_all([poster, worker]);
    });
}

/// A worker pushes a job to its own queue, which the other worker's final
/// check does not look at (rayon-core's `has_injected_job` looks only at the
/// injector and the worker's own deque), and then waits for the other
/// worker to take it, as rayon-core's `join_context` test does with a
/// barrier. On `NotifierSleep` the job must reach the other worker in any
/// phase of its sleep: a post before its announcement is seen by the search
/// its caller makes after it, and one after it finds it on the waiter stack.
///
/// `JecSleep` promises less for such posts: an internal post has no fence,
/// and a job its poster does not run itself may wait (docs/jec-sleep.md,
/// "Internal jobs"), so this model runs on `NotifierSleep` alone.
#[test]
fn notifier_sleep_internal_job_reaches_a_sleeper() {
    check(2, || {
        let sleep = Arc::new(workers_with::<NotifierSleep>(2, EAGER));
        let local = Arc::new(AtomicUsize::new(0));
        let taken = Arc::new((AtomicBool::new(false), Notify::new()));
        let thief = spawn_with!(sleep, local, taken => {
            let latch = CoreLatch::idle_loop();
            let idle = sleep.start_looking(1);
            search_until(&*sleep, idle, &latch, || take(&local), || false);
            taken.0.store(true, Ordering::Release);
            taken.1.notify();
        });
        let owner = spawn_with!(sleep, local, taken => {
            let was_empty = local.fetch_add(1, Ordering::Release) == 0;
            sleep.new_internal_jobs(1, was_empty);
            // loom's Notify may wake spuriously: wait on the flag.
            while !taken.0.load(Ordering::Acquire) {
                taken.1.wait();
            }
        });
        join_all([owner, thief]);
    });
}

/// Two jobs posted one after the other, to two workers that each run until
/// they have taken one. The second post may find the worker the first one
/// woke still on its way back: a `NotifierSleep` post then relies on it
/// (counted in `waking`), as a `JecSleep` post relies on a worker its waker
/// took off the sleeping count. No job may be left with nobody awake, and
/// the counts end at rest (every credited wake taken back).
fn a_woken_worker_covers_the_next_post<S: AtRest + 'static>() {
    // Three actors: one preemption keeps the model under a minute.
    check(1, || {
        let sleep = Arc::new(workers_with::<S>(2, EAGER));
        let injector = Arc::new(AtomicUsize::new(0));
        let first = spawn_with!(sleep, injector => run_one_job(&*sleep, 0, &injector));
        let second = spawn_with!(sleep, injector => run_one_job(&*sleep, 1, &injector));
        let poster = spawn_with!(sleep, injector => {
            inject_one(&*sleep, &injector);
            inject_one(&*sleep, &injector);
        });
        join_all([poster, first, second]);
        sleep.assert_at_rest();
    });
}

#[test]
fn jec_sleep_a_woken_worker_covers_the_next_post() {
    a_woken_worker_covers_the_next_post::<JecSleep>();
}

#[test]
fn notifier_sleep_a_woken_worker_covers_the_next_post() {
    a_woken_worker_covers_the_next_post::<NotifierSleep>();
}

/// A round that starts after its deadline returns at once, whatever phase
/// the worker is in: here the third round, which finds a `JecSleep`
/// worker sleepy and a `NotifierSleep` worker announced (one yield round
/// first). The announced worker withdraws and counts itself awake and idle
/// again, racing a post that may have relied on it or notified it; the job
/// must still reach the worker through its later (untimed) rounds, and the
/// counts end at rest.
fn round_past_its_deadline_keeps_the_job<S: AtRest + 'static>() {
    check(2, || {
        let sleep = Arc::new(one_worker::<S>(IdlePolicy::rounds(1)));
        let injector = Arc::new(AtomicUsize::new(0));
        let worker = spawn_with!(sleep, injector => {
            let latch = CoreLatch::idle_loop();
            let has_work = || injector.load(Ordering::Acquire) > 0;
            let mut idle = sleep.start_looking(0);
            let mut round = 0;
            while !take(&injector) {
                if round == 2 {
                    let past = std::time::Instant::now();
                    let outcome = sleep.no_work_found_until(&mut idle, &latch, has_work, past);
                    assert_eq!(outcome, crate::outcome::WaitOutcome::TimedOut);
                } else {
                    sleep.no_work_found(&mut idle, &latch, has_work);
                }
                round += 1;
            }
            sleep.work_found(idle);
        });
        let poster = spawn_with!(sleep, injector => inject_one(&*sleep, &injector));
        join_all([poster, worker]);
        sleep.assert_at_rest();
    });
}

#[test]
fn jec_sleep_round_past_its_deadline_keeps_the_job() {
    round_past_its_deadline_keeps_the_job::<JecSleep>();
}

#[test]
fn notifier_sleep_round_past_its_deadline_keeps_the_job() {
    round_past_its_deadline_keeps_the_job::<NotifierSleep>();
}

#[test]
fn notifier_sleep_latch_wakes_owner() {
    latch_wakes_owner::<NotifierSleep>(EAGER);
}

#[test]
fn jec_sleep_latch_wakes_owner() {
    latch_wakes_owner::<JecSleep>(EAGER);
}

#[test]
fn notifier_sleep_latch_wakes_owner_smallest_budget() {
    latch_wakes_owner::<NotifierSleep>(smallest());
}

#[test]
fn jec_sleep_latch_wakes_owner_smallest_budget() {
    latch_wakes_owner::<JecSleep>(smallest());
}

#[test]
fn notifier_sleep_latch_wakes_owner_largest_budget() {
    latch_wakes_owner::<NotifierSleep>(largest());
}

#[test]
fn jec_sleep_latch_wakes_owner_largest_budget() {
    latch_wakes_owner::<JecSleep>(largest());
}

#[test]
fn notifier_sleep_latch_publishes_the_setters_writes() {
    latch_publishes_the_setters_writes::<NotifierSleep>(false);
}

#[test]
fn jec_sleep_latch_publishes_the_setters_writes() {
    latch_publishes_the_setters_writes::<JecSleep>(false);
}

#[test]
fn notifier_sleep_set_latch_publishes_the_setters_writes() {
    latch_publishes_the_setters_writes::<NotifierSleep>(true);
}

#[test]
fn jec_sleep_set_latch_publishes_the_setters_writes() {
    latch_publishes_the_setters_writes::<JecSleep>(true);
}

#[test]
fn notifier_sleep_injected_job_runs() {
    injected_job_runs::<NotifierSleep>(EAGER);
}

#[test]
fn jec_sleep_injected_job_runs() {
    injected_job_runs::<JecSleep>(EAGER);
}

#[test]
fn notifier_sleep_injected_job_runs_smallest_budget() {
    injected_job_runs::<NotifierSleep>(smallest());
}

#[test]
fn jec_sleep_injected_job_runs_smallest_budget() {
    injected_job_runs::<JecSleep>(smallest());
}

#[test]
fn notifier_sleep_injected_job_runs_largest_budget() {
    injected_job_runs::<NotifierSleep>(largest());
}

#[test]
fn jec_sleep_injected_job_runs_largest_budget() {
    injected_job_runs::<JecSleep>(largest());
}

/// The default policy, which learns: under loom its wakers' stamps read 0,
/// so it measures no sleep's cost and its budget stays 0.
#[test]
fn notifier_sleep_injected_job_runs_default_policy() {
    injected_job_runs::<NotifierSleep>(IdlePolicy::default());
}

#[test]
fn jec_sleep_injected_job_runs_default_policy() {
    injected_job_runs::<JecSleep>(IdlePolicy::default());
}

/// One worker on no CPU: the default, capped at half the pool, idles as
/// rayon does, the cap lifted.
#[test]
fn notifier_sleep_latch_wakes_owner_oversized() {
    with_model_cpus(0, || {
        latch_wakes_owner::<NotifierSleep>(IdlePolicy::default().max_searching_half())
    });
}

#[test]
fn jec_sleep_latch_wakes_owner_oversized() {
    with_model_cpus(0, || {
        latch_wakes_owner::<JecSleep>(IdlePolicy::default().max_searching_half())
    });
}

#[test]
fn notifier_sleep_injected_job_runs_oversized() {
    with_model_cpus(0, || {
        injected_job_runs::<NotifierSleep>(IdlePolicy::default().max_searching_half())
    });
}

#[test]
fn jec_sleep_injected_job_runs_oversized() {
    with_model_cpus(0, || {
        injected_job_runs::<JecSleep>(IdlePolicy::default().max_searching_half())
    });
}

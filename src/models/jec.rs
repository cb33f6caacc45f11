//! Loom models of the JecSleep protocol.
//!
//! Each model runs real idle loops (policy: sleepy at the first empty round)
//! against posters, latch setters and shutdown. Every actor is a spawned
//! thread and the model's main thread only joins: loom did not explore
//! running a spawned worker ahead of work done on the main thread right
//! after the spawn, and the planted bugs went unseen. A lost wake shows up as
//! a worker asleep for ever on its sleep word, which loom reports as its
//! branch limit ("Model exceeded maximum number of branches") or as
//! "deadlock"; a counter underflow as the debug assertions in
//! `counters.rs`. How each model was checked to fail with the protocol
//! broken: docs/jec-sleep.md, "Checking the checker".

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Notify};

use super::support::{
    check, inject_one, join_all, run_one_job, search_until, sleep_until_set, spawn_with, take,
};
use crate::idle::IdlePolicy;
use crate::jec::JecSleep;
use crate::latch::CoreLatch;
use crate::protocol::SleepProtocol;

/// Sleepy at the first empty round, sleep at the second: no yield rounds to
/// blow up the state space.
fn sleep_for(workers: usize) -> JecSleep {
    JecSleep::try_new(workers, IdlePolicy::rounds(0), None).unwrap()
}

/// Nobody sleeping, nobody looking: every count taken was given back.
fn assert_counters_at_rest(sleep: &JecSleep) {
    let c = sleep.counters();
    assert_eq!((c.sleeping(), c.inactive()), (0, 0), "{c:?}");
}

/// Work posted to a worker's own deque (internal: no fence) after a worker
/// announced it is sleepy and before its sleeping CAS: the JEC must catch
/// it. The final check does not look at this queue, so only the JEC (and the
/// wake a poster sends when it sees the sleeper counted) protects it. The
/// poster waits for the announcement (a loom `Notify`, not a spin): work
/// posted *before* it may be missed by design, since an internal poster is a
/// worker that runs its own job (docs/jec-sleep.md, "Internal jobs").
#[test]
fn internal_job_between_sleepy_and_sleeping() {
    check(2, || {
        let sleep = Arc::new(sleep_for(1));
        let local = Arc::new(AtomicUsize::new(0));
        let announced = Arc::new((AtomicBool::new(false), Notify::new()));
        let worker = spawn_with!(sleep, local, announced => {
            let latch = CoreLatch::new();
            let mut idle = sleep.start_looking(0);
            // Round 0 is the sleepy round: this announces.
            sleep.no_work_found(&mut idle, &latch, || false);
            announced.0.store(true, Ordering::Release);
            announced.1.notify();
            search_until(&*sleep, idle, &latch, || take(&local), || false);
        });
        let poster = spawn_with!(sleep, local, announced => {
            // loom's Notify may wake spuriously: wait on the flag.
            while !announced.0.load(Ordering::Acquire) {
                announced.1.wait();
            }
            let was_empty = local.fetch_add(1, Ordering::Release) == 0;
            sleep.new_internal_jobs(1, was_empty);
        });
        join_all([poster, worker]);
        assert_counters_at_rest(&sleep);
    });
}

/// An injected job whose JEC bump is undone by a full rollover before the
/// sleeper's CAS: only the final check (after the SleepFence) can see it.
#[test]
fn injected_job_with_jec_rollover_caught_by_final_check() {
    check(2, || {
        let sleep = Arc::new(sleep_for(1));
        let injector = Arc::new(AtomicUsize::new(0));
        let worker = spawn_with!(sleep, injector => run_one_job(&*sleep, 0, &injector));
        let poster = spawn_with!(sleep, injector => {
            inject_one(&*sleep, &injector);
            // 2^32 - 1 further JEC increments by other workers: the JEC
            // is back where the sleepy worker remembered it, if it
            // bumped it.
            sleep.add_jec_wrapping(u32::MAX);
        });
        join_all([poster, worker]);
    });
}

/// A worker woken by a poster is taken off the sleeping count before it
/// runs again: its `work_found` must never see itself still counted as
/// asleep (the counters' debug assertions check it). Bound 3: the sleeper
/// must stop right after registering and the poster right after its claim.
#[test]
fn woken_worker_is_uncounted_before_it_runs() {
    check(3, || {
        let sleep = Arc::new(sleep_for(1));
        let injector = Arc::new(AtomicUsize::new(0));
        let worker = spawn_with!(sleep, injector => run_one_job(&*sleep, 0, &injector));
        let poster = spawn_with!(sleep, injector => inject_one(&*sleep, &injector));
        join_all([poster, worker]);
        assert_counters_at_rest(&sleep);
    });
}

/// A latch set while its owner is SLEEPY, SLEEPING, or anywhere between:
/// the owner always wakes and sees it.
#[test]
fn latch_set_while_owner_sleepy_or_sleeping() {
    check(3, || {
        let sleep = Arc::new(sleep_for(1));
        let latch = Arc::new(CoreLatch::new());
        let owner = spawn_with!(sleep, latch => sleep_until_set(&*sleep, 0, &latch));
        let setter = spawn_with!(sleep, latch => sleep.set_latch(&latch, 0));
        join_all([setter, owner]);
        assert_counters_at_rest(&sleep);
    });
}

/// Two posters, two sleepers, one injected job each: every job runs, the
/// counts never underflow (debug assertions) and end at zero. Five threads:
/// preemption bound 1 keeps it to seconds (bound 2 takes five minutes here
/// and found nothing more).
#[test]
fn two_posters_two_sleepers() {
    check(1, || {
        let sleep = Arc::new(sleep_for(2));
        let injector = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..2)
            .map(|me| spawn_with!(sleep, injector => run_one_job(&*sleep, me, &injector)))
            .collect();
        let posters: Vec<_> = (0..2)
            .map(|_| spawn_with!(sleep, injector => inject_one(&*sleep, &injector)))
            .collect();
        join_all(posters);
        join_all(workers);
        assert_counters_at_rest(&sleep);
    });
}

/// Shutdown: set the flag the final check reads, then wake_all. Every
/// worker leaves its idle loop whatever state it was in.
#[test]
fn shutdown_wakes_everyone() {
    check(2, || {
        let sleep = Arc::new(sleep_for(2));
        let shutdown = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..2)
            .map(|me| {
                spawn_with!(sleep, shutdown => {
                    let latch = CoreLatch::new();
                    let idle = sleep.start_looking(me);
                    let stopping = || shutdown.load(Ordering::Acquire);
                    search_until(&*sleep, idle, &latch, stopping, stopping);
                })
            })
            .collect();
        let stopper = spawn_with!(sleep, shutdown => {
            shutdown.store(true, Ordering::Release);
            sleep.wake_all();
        });
        stopper.join().unwrap();
        join_all(workers);
        assert_counters_at_rest(&sleep);
    });
}

/// A timed sleep racing a poster's wake: whichever wins the CAS on the
/// sleep word uncounts the sleeper, exactly once (under loom every timed
/// sleep times out at once, whatever its deadline). The counts end at zero
/// and never underflow. The deadline is far off, so that no round starts
/// after it (such a round would return at once, without sleeping).
#[test]
fn timed_sleep_keeps_the_count_exact() {
    check(2, || {
        let sleep = Arc::new(sleep_for(1));
        let injector = Arc::new(AtomicUsize::new(0));
        let worker = spawn_with!(sleep, injector => {
            let latch = CoreLatch::new();
            let mut idle = sleep.start_looking(0);
            loop {
                if take(&injector) {
                    break;
                }
                let far = std::time::Instant::now() + std::time::Duration::from_secs(3600);
                let outcome = sleep.no_work_found_until(&mut idle, &latch, || false, far);
                if outcome == crate::outcome::WaitOutcome::TimedOut {
                    break;
                }
            }
            sleep.work_found(idle);
        });
        let poster = spawn_with!(sleep, injector => inject_one(&*sleep, &injector));
        join_all([poster, worker]);
        assert_counters_at_rest(&sleep);
    });
}

//! Loom models of join-aware accounting, on both protocols through
//! [`SleepProtocol`]: a worker waiting on a job's latch never takes one of
//! the searcher cap's slots, and a joining worker asleep while the cap is
//! full is still woken by its latch's setter and finds posted work. Each
//! ends with the protocol at rest (no slot left taken).

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;

use super::searcher_cap::AtRest;
use super::support::{check, inject_one, join_all, run_one_job, sleep_until_set, spawn_with};
use crate::idle::IdlePolicy;
use crate::jec::JecSleep;
use crate::latch::CoreLatch;
use crate::notifier::NotifierSleep;
use crate::protocol::SleepProtocol;

/// What the models read of a search in progress.
trait SlotOf: AtRest {
    fn holds_slot(idle: &Self::Idle<'_>) -> bool;
}

impl SlotOf for JecSleep {
    fn holds_slot(idle: &Self::Idle<'_>) -> bool {
        idle.0.holds_searcher_slot()
    }
}

impl SlotOf for NotifierSleep {
    fn holds_slot(idle: &Self::Idle<'_>) -> bool {
        idle.0.holds_searcher_slot()
    }
}

/// `workers` workers, at most one searching, every search lasting the
/// largest budget (two rounds under loom), joins too: a round right after
/// `start_looking` is a search round for anyone the cap admits.
fn one_searcher<S: SleepProtocol>(workers: usize) -> S {
    let policy = super::protocols::largest().max_searching(1);
    S::try_new(workers, policy, None).expect("the workers fit")
}

/// Worker 0 waits on a job's latch and searches; worker 1 starts its idle
/// loop. Whichever comes first, the cap of one is worker 1's: a joining
/// worker never takes a slot.
fn joiner_never_takes_a_searcher_slot<S: SlotOf + 'static>() {
    check(2, || {
        let sleep = Arc::new(one_searcher::<S>(2));
        let joiner = spawn_with!(sleep => {
            let latch = CoreLatch::new();
            let mut idle = sleep.start_looking(0);
            sleep.no_work_found(&mut idle, &latch, || false);
            assert!(!S::holds_slot(&idle), "a joining worker took a searcher slot");
            sleep.work_found(idle);
        });
        let searcher = spawn_with!(sleep => {
            let latch = CoreLatch::idle_loop();
            let mut idle = sleep.start_looking(1);
            sleep.no_work_found(&mut idle, &latch, || false);
            assert!(
                S::holds_slot(&idle),
                "the idle loop's search was refused the cap's only slot"
            );
            sleep.work_found(idle);
        });
        join_all([joiner, searcher]);
        sleep.assert_at_rest();
    });
}

/// The default policy capped at half the pool (one here). Worker 0
/// waits on a job's latch; worker 1's idle loop waits for one injected job.
/// Another thread plays the thief: it sets the latch (waking worker 0 only
/// if it sleeps on it), then injects the job. Both workers end, whatever the
/// cap let them do.
fn joiner_and_searcher_both_end_with_the_cap_full<S: AtRest + 'static>() {
    check(1, || {
        let policy = IdlePolicy::default().max_searching_half();
        let sleep = Arc::new(S::try_new(2, policy, None).expect("two fit"));
        let latch = Arc::new(CoreLatch::new());
        let injector = Arc::new(AtomicUsize::new(0));
        let joiner = spawn_with!(sleep, latch => sleep_until_set(&*sleep, 0, &latch));
        let searcher = spawn_with!(sleep, injector => run_one_job(&*sleep, 1, &injector));
        let thief = spawn_with!(sleep, latch, injector => {
            sleep.set_latch(&latch, 0);
            inject_one(&*sleep, &injector);
        });
        join_all([thief, joiner, searcher]);
        assert_eq!(injector.load(Ordering::Relaxed), 0, "the job was not run");
        sleep.assert_at_rest();
    });
}

#[test]
fn jec_sleep_joiner_never_takes_a_searcher_slot() {
    joiner_never_takes_a_searcher_slot::<JecSleep>();
}

#[test]
fn notifier_sleep_joiner_never_takes_a_searcher_slot() {
    joiner_never_takes_a_searcher_slot::<NotifierSleep>();
}

#[test]
fn jec_sleep_joiner_and_searcher_both_end_with_the_cap_full() {
    joiner_and_searcher_both_end_with_the_cap_full::<JecSleep>();
}

#[test]
fn notifier_sleep_joiner_and_searcher_both_end_with_the_cap_full() {
    joiner_and_searcher_both_end_with_the_cap_full::<NotifierSleep>();
}

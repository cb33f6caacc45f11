#!/usr/bin/env python3
"""Check the checker: plant one known bug at a time and demand that loom
catches it.

Each case copies the tracked sources into a scratch directory, replaces one
exact snippet (the script fails loudly if the snippet is gone, so a refactor
cannot silently turn a case into a no-op), and runs the named loom model. A
case passes when the model FAILS. Run from the repository root:

    python3 scripts/planted_bugs.py            # every case
    python3 scripts/planted_bugs.py notifier   # cases whose name contains "notifier"
    python3 scripts/planted_bugs.py "external park"   # the external-park cases
    python3 scripts/planted_bugs.py --list     # the case names, without running

Cases run in as many lanes as the machine has CPUs (PLANTED_JOBS=N sets
it): each lane has its own scratch copy and target directory, so two
planted bugs never share a build. Verdicts print in the order of CASES.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Under this checkout's own target directory (or $CARGO_TARGET_DIR): several
# checkouts of the crate may run this script at once on one machine.
TARGET = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "planted")

# (name, file, exact snippet, replacement, loom test filter, why it must fail);
# a case with several edits gives a list of (snippet, replacement) and None.
CASES = [
    (
        "notifier: no fence after the push in prepare_wait",
        "src/notifier/mod.rs",
        """        fence(Ordering::SeqCst);
        PreparedWait::new(self, wid)""",
        """        PreparedWait::new(self, wid)""",
        "models::notifier::notify_races_prepare_and_commit",
        "the re-check may miss the condition while the notify misses the waiter",
    ),
    (
        "notifier: no fence before notify_one's load",
        "src/notifier/mod.rs",
        """        fence(Ordering::SeqCst);
        // Load-bearing Acquire: the slow path reads the top slot's link,""",
        """        // Load-bearing Acquire: the slow path reads the top slot's link,""",
        "models::notifier::notify_races_prepare_and_commit",
        "the notify may read a stale idle state after the waiter's re-check missed the permit",
    ),
    (
        "notifier: a cancel swallows a delivered notification (no forwarding)",
        "src/notifier/mod.rs",
        """            if !state.is_empty() {
                self.notify_slow(state, 1, |_| {});
            }""",
        """            let _ = state;""",
        "models::notifier::cancel_racing_notify_keeps_signal_for_other_waiter",
        "the notification lands on the canceller and the committed sleeper is never woken",
    ),
    (
        "notifier: a popped cancelled slot counts as a release",
        "src/notifier/mod.rs",
        """                        Delivery::Skipped => continue,""",
        """                        Delivery::Skipped => return released + 1,""",
        "models::notifier::cancelled_slots_are_skipped_and_revived",
        "notify_one spends itself on a cancelled slot and the real waiter below sleeps on",
    ),
    (
        "notifier: no epoch bump after a push (ABA)",
        "src/notifier/mod.rs",
        """.store(epoch.wrapping_add(ONE_EPOCH), Ordering::Relaxed);""",
        """.store(epoch, Ordering::Relaxed);""",
        "models::notifier::aba_stale_pop_after_repush",
        "a stalled pop installs a stale link and the real waiter is lost from the stack",
    ),
    (
        "notifier: notify_n releases one more than asked",
        "src/notifier/mod.rs",
        """                    released += 1;
                    if released == want {""",
        """                    released += 1;
                    if released == want + 1 {""",
        "models::notifier::notify_n_releases_at_most_n",
        "notify_n(1) releases two waiters",
    ),
    (
        "jec: no SleepFence before the final check",
        "src/jec/mod.rs",
        """        // 6. SleepFence: pairs with the PushFence of `new_injected_jobs`.
        fence(Ordering::SeqCst);""",
        """        // 6. (planted: no SleepFence)""",
        "models::jec::injected_job_with_jec_rollover_caught_by_final_check",
        "after a JEC rollover the final check may read a stale empty injector",
    ),
    (
        "jec: no PushFence in new_injected_jobs",
        "src/jec/mod.rs",
        """        // PushFence: pairs with the SleepFence in `sleep`.
        fence(Ordering::SeqCst);""",
        """        // (planted: no PushFence)""",
        "models::jec::injected_job_with_jec_rollover_caught_by_final_check",
        "the poster may read a stale sleeping count while the sleeper misses the job",
    ),
    (
        "jec: no final check for injected jobs",
        "src/jec/mod.rs",
        """        let work_is_waiting = has_work();""",
        """        let work_is_waiting = { let _ = has_work; false };""",
        "models::jec::injected_job_with_jec_rollover_caught_by_final_check",
        "a rolled-over JEC lets the worker sleep with the injected job queued",
    ),
    (
        "jec: Blitz's inverted sleepy toggle (increment only if even)",
        "src/jec/mod.rs",
        """        self.counters.increment_jec_if(|c| c.jec_is_active()).jec()""",
        """        self.counters.increment_jec_if(|c| !c.jec_is_active()).jec()""",
        "models::jec::internal_job_between_sleepy_and_sleeping",
        "the JEC stays odd, the sleeper's check never fires, and an internal job is slept through",
    ),
    (
        "jec: Blitz's window (sleeper visible to wakers only after it is counted)",
        "src/jec/mod.rs",
        """        // 2. Visible to wakers before we can be counted (worker.rs).
        if let Err(state) = worker.begin_registering() {""",
        """        // 2. (planted: registration flag moved after the counters CAS)
        if let Err(state) = Ok::<(), &str>(()) {""",
        "models::jec::internal_job_between_sleepy_and_sleeping",
        "a poster that sees the count finds no flag, wakes nobody, and the sleeper sleeps",
        [("""            if self.counters.try_add_sleeping(counters) {
                break;
            }""", """            if self.counters.try_add_sleeping(counters) {
                worker.begin_registering().unwrap();
                break;
            }""")],
    ),
    (
        "jec: the waker lets the sleeper go before uncounting it (no CLAIMED)",
        "src/jec/worker.rs",
        """                SLEEPING => (CLAIMED, Wake::WokeSleeper),""",
        """                SLEEPING => (AWAKE, Wake::WokeSleeper),""",
        "models::jec::woken_worker_is_uncounted_before_it_runs",
        "a woken worker leaves its idle loop while still counted as sleeping",
    ),
    (
        "notifier_sleep: the latch says SLEEPING before the owner is on the stack",
        "src/notifier/sleep.rs",
        """        let asleep = latch.get_sleepy_as(idle.worker, operation) && latch.fall_asleep();""",
        """        let asleep = latch.get_sleepy_as(idle.worker, operation) && latch.fall_asleep();
        if let Some(wait) = awake_again.wait.take() {
            self.notifier.cancel_wait(wait);
        }
        awake_again.wait = Some(self.notifier.prepare_wait(idle.worker));""",
        "models::protocols::notifier_sleep_latch_wakes_owner",
        "a setter sees SLEEPING and notifies before the owner is stacked; the owner then sleeps",
    ),
    (
        "latch: probe does not acquire (Relaxed load)",
        "src/latch.rs",
        """self.state.load(Ordering::Acquire) == SET""",
        """self.state.load(Ordering::Relaxed) == SET""",
        "models::protocols::jec_sleep_latch_publishes_the_setters_writes",
        "the owner sees the latch set and then reads a job result the setter wrote before set",
    ),
    (
        "latch: set does not release (Acquire swap)",
        "src/latch.rs",
        """self.state.swap(SET, Ordering::AcqRel) == SLEEPING""",
        """self.state.swap(SET, Ordering::Acquire) == SLEEPING""",
        "models::protocols::notifier_sleep_latch_publishes_the_setters_writes",
        "nothing orders the setter's result before its SET, so probe can see SET and a stale result",
    ),
    (
        "latch: set_latch's exchange from UNSET does not release (Acquire CAS)",
        "src/latch.rs",
        """.compare_exchange(UNSET, SET, Ordering::AcqRel, Ordering::Acquire)""",
        """.compare_exchange(UNSET, SET, Ordering::Acquire, Ordering::Acquire)""",
        "models::protocols::jec_sleep_set_latch_publishes_the_setters_writes",
        "the owner sees SET before it sleeps and reads a stale result: nothing released it",
    ),
    (
        "latch: set_latch's exchange from a sleeping owner does not release (Acquire CAS)",
        "src/latch.rs",
        """.compare_exchange(state, SET, Ordering::AcqRel, Ordering::Acquire)""",
        """.compare_exchange(state, SET, Ordering::Acquire, Ordering::Acquire)""",
        "models::protocols::notifier_sleep_set_latch_publishes_the_setters_writes",
        "the woken owner sees SET and reads a stale result: nothing released it",
    ),
    (
        "waker: the notify comes before the flag it announces",
        "src/waker.rs",
        """        self.woken.store(WOKEN, Ordering::Release);
        self.notifier.notify_waiter(self.wid);""",
        """        self.notifier.notify_waiter(self.wid);
        self.woken.store(WOKEN, Ordering::Release);""",
        "models::waker::a_wake_reaches_the_waiter_in_any_phase",
        "the waiter's check misses the flag, the notify missed the waiter, and it sleeps for good",
    ),
    (
        "notifier: a timeout swallows a notification that won the race",
        "src/notifier/mod.rs",
        """                Withdrawal::Targeted | Withdrawal::Signaled => notified,""",
        """                Withdrawal::Targeted | Withdrawal::Signaled => Ended::Withdrew,""",
        "models::notifier::timed_wait_never_swallows_a_notification",
        "the timed waiter reports a timeout, drops the notification, and the other waiter sleeps on",
    ),
    (
        "notifier: a pop counts a targeted slot as a delivery",
        "src/notifier/slot.rs",
        """                TARGETED => (SIGNALED, Delivery::Skipped),""",
        """                TARGETED => (SIGNALED, Delivery::Signalled),""",
        "models::notifier::targeted_wake_reaches_only_its_waiter",
        "notify_one spends itself on the already-woken slot and the other waiter sleeps on",
    ),
    (
        "jec, searcher cap: the last searcher forgets the hand-off",
        "src/jec/mod.rs",
        """            if before.awake_but_idle() == 1 {
                before.sleeping().min(1)""",
        """            if before.awake_but_idle() == 1 {
                0""",
        "models::searcher_cap::jec_sleep_last_searcher_hands_off",
        "the post left its second job to the searcher; nobody wakes the sleeper for it",
    ),
    (
        "notifier_sleep: the last searcher forgets the hand-off",
        "src/notifier/sleep.rs",
        """        if left.covering() == 0 {
            self.wake_one();
        }""",
        """        let _ = left.covering();""",
        "models::searcher_cap::notifier_sleep_last_searcher_hands_off",
        "the post left its second job to the searcher; nobody wakes the sleeper for it",
    ),
    (
        "notifier_sleep: the awake idle count is decremented twice on the way to sleep",
        "src/notifier/sleep.rs",
        """            self.idle.leave();
        });""",
        """            self.idle.leave();
            self.idle.leave();
        });""",
        "models::searcher_cap::notifier_sleep_cap_burst_against_full_searchers",
        "posters see a wrapped count of awake idle workers and wake nobody, or the count ends below zero",
    ),
    (
        "jec: the end of a search takes the worker off the inactive count twice",
        "src/jec/mod.rs",
        """        let before = self.counters.sub_inactive();""",
        """        let before = self.counters.sub_inactive();
        self.counters.sub_inactive();""",
        "models::searcher_cap::jec_sleep_cap_of_one_with_three_workers",
        "the inactive count underflows into the JEC: a later work_found or the check at rest fails",
    ),
    (
        "jec, searcher cap: the hand-off follows the last slot, not the last awake idle worker",
        "src/jec/mod.rs",
        [
            ("""        let before = self.counters.sub_inactive();
        self.pool.slots.release(&mut idle.period.slot);""",
             """        let before = self.counters.sub_inactive();
        let held = idle.period.slot;
        self.pool.slots.release(&mut idle.period.slot);"""),
            ("""            if before.awake_but_idle() == 1 {
                before.sleeping().min(1)""",
             """            if held && self.pool.slots.taken() == 0 {
                before.sleeping().min(1)"""),
        ],
        None,
        "models::searcher_cap::jec_sleep_cap_burst_against_full_searchers",
        "a searcher that gave its slot back when it got sleepy finds the job a post left to it, "
        "and nobody wakes the sleeper for the second job",
    ),
    (
        "jec, join-aware: a joining worker takes a searcher slot",
        "src/shell/searchers.rs",
        """        kind == WaitKind::Join || self.try_take(held)""",
        """        self.try_take(held)""",
        "models::join::jec_sleep_joiner_never_takes_a_searcher_slot",
        "with the cap at one, the idle loop's search is refused the slot the joiner holds",
    ),
    (
        "notifier_sleep, join-aware: a joining worker takes a searcher slot",
        "src/shell/searchers.rs",
        """        kind == WaitKind::Join || self.try_take(held)""",
        """        self.try_take(held)""",
        "models::join::notifier_sleep_joiner_never_takes_a_searcher_slot",
        "with the cap at one, the idle loop's search is refused the slot the joiner holds",
    ),
    (
        "jec, searcher cap: the end of a search keeps its slot",
        "src/jec/mod.rs",
        """        let before = self.counters.sub_inactive();
        self.pool.slots.release(&mut idle.period.slot);""",
        """        let before = self.counters.sub_inactive();""",
        "models::join::jec_sleep_joiner_never_takes_a_searcher_slot",
        "the slot stays taken at rest, and the cap shrinks for good",
    ),
    (
        "notifier_sleep, searcher cap: the end of a search keeps its slot",
        "src/notifier/sleep.rs",
        """        self.pool.slots.release(&mut idle.period.slot);
        let left = match idle.announced.take() {""",
        """        let left = match idle.announced.take() {""",
        "models::join::notifier_sleep_joiner_never_takes_a_searcher_slot",
        "the slot stays taken at rest, and the cap shrinks for good",
    ),
    (
        "notifier_sleep: the sleep attempt follows the announcement without the caller's search",
        "src/notifier/sleep.rs",
        """            Ok(wait) => idle.announced = Some(wait),""",
        """            Ok(wait) => return self.sleep(operation, idle, wait, latch, has_work, deadline, park),""",
        "models::protocols::notifier_sleep_internal_job_reaches_a_sleeper",
        "a job pushed to the poster's own queue before the announcement is seen by no search: "
        "the final check does not look there, and the poster waits for the sleeper",
    ),
    (
        "notifier: a pop that finds its waiter asleep forgets the futex wake",
        "src/notifier/mod.rs",
        """                        Delivery::Woken => slot.wake(),""",
        """                        Delivery::Woken => {}""",
        "models::notifier::notify_races_prepare_and_commit",
        "the slot says SIGNALED but its owner stays asleep on the futex: nobody wakes it",
    ),
    (
        "jec: the waker frees a claimed sleeper without the futex wake",
        "src/jec/worker.rs",
        """        self.futex.word().store(AWAKE, Ordering::Release);
        self.futex.wake_one();""",
        """        self.futex.word().store(AWAKE, Ordering::Release);""",
        "models::jec::woken_worker_is_uncounted_before_it_runs",
        "the sleep word says AWAKE but the sleeper stays asleep on the futex: nobody wakes it",
    ),
    (
        "waiter_ids: an id is taken by a load and a store, not one CAS",
        "src/notifier/waiter_ids.rs",
        """                match word.compare_exchange_weak(
                    bits,
                    bits | 1 << bit,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {""",
        """                match {
                    word.store(bits | 1 << bit, Ordering::Relaxed);
                    Ok::<u64, u64>(bits)
                } {""",
        "models::waiter_ids::waiter_ids_are_never_shared",
        "two threads read the bit free, and both take id 0",
    ),
    (
        "notifier_sleep: a round past its deadline withdraws without counting the worker back",
        "src/notifier/sleep.rs",
        """            if self.notifier.withdraw_keeping(wait, operation) {
                self.idle.back_from_wake();
            } else {
                self.idle.back();
            }""",
        """            let _ = self.notifier.withdraw_keeping(wait, operation);""",
        "models::protocols::notifier_sleep_round_past_its_deadline_keeps_the_job",
        "the withdrawn worker is missing from the awake idle count: it wraps at the end "
        "of the search, and posters that read it wake nobody",
    ),
    (
        "notifier_sleep, waking: a woken worker counts back in without leaving `waking`",
        "src/notifier/sleep.rs",
        """            if self.woken {
                self.idle.back_from_wake();""",
        """            if self.woken {
                self.idle.back();""",
        "models::protocols::notifier_sleep_a_woken_worker_covers_the_next_post",
        "the wake's credit stays in `waking` for good: a later post relies on a worker that "
        "is not coming and wakes nobody, or the count is not at rest",
    ),
    (
        "notifier_sleep, waking: a post credits the wakes it asked for, not the ones delivered",
        "src/notifier/mod.rs",
        """        delivered: impl FnMut(usize),
    ) -> usize {
        let n = how_many(n);
        if n == 0 {
            return 0;
        }
        if n >= self.slots.len() {
            // At most one waiter per slot, so `n >= capacity` means "all",
            // and taking the whole stack in one CAS is cheaper than n pops.
            self.notify_all_slow(state, delivered)
        } else {
            self.notify_slow(state, n, delivered)
        }""",
        """        mut delivered: impl FnMut(usize),
    ) -> usize {
        let n = how_many(n);
        if n == 0 {
            return 0;
        }
        (0..n).for_each(|_| delivered(0));
        if n >= self.slots.len() {
            self.notify_all_slow(state, |_| {})
        } else {
            self.notify_slow(state, n, |_| {})
        }""",
        "models::protocols::notifier_sleep_a_woken_worker_covers_the_next_post",
        "a post that found fewer sleepers than jobs credits wakes that never happened: a later "
        "post relies on them and wakes nobody, or the count is not at rest",
    ),
    (
        "notifier_sleep, waking: a sleep attempt that withdraws keeps its notification but counts back unwoken",
        "src/notifier/sleep.rs",
        """            self.woken |= self.notifier.withdraw_keeping(wait, operation);""",
        """            let _ = self.notifier.withdraw_keeping(wait, operation);""",
        "models::protocols::notifier_sleep_a_woken_worker_covers_the_next_post",
        "the kept notification's credit is never taken back: `waking` stays above zero, a "
        "later post relies on it and wakes nobody, or the count is not at rest",
    ),
    (
        "notifier_sleep, waking: an announced worker that finds work keeps its notification and leaves `waking` as it was",
        "src/notifier/sleep.rs",
        """                    self.idle.woken_and_gone()""",
        """                    self.idle.load()""",
        "models::protocols::notifier_sleep_a_woken_worker_covers_the_next_post",
        "the kept notification's credit is never taken back: `waking` stays above zero, a "
        "later post relies on it and wakes nobody, or the count is not at rest",
    ),
    (
        "jec: a timed-out sleeper uncounts itself even when a waker already did",
        "src/jec/mod.rs",
        """                if worker.sleep(deadline) && worker.cancel_sleep() {""",
        """                if worker.sleep(deadline) && { worker.cancel_sleep(); true } {""",
        "models::jec::timed_sleep_keeps_the_count_exact",
        "the sleeping count is decremented twice",
    ),
    (
        "external park: a pop does not call the hook for an externally parked waiter",
        "src/notifier/mod.rs",
        """                        Delivery::Unpark => self.unpark(top),""",
        """                        Delivery::Unpark => {}""",
        "models::external_park::notifier_external_park_races_notify",
        "the waiter parked in its caller's park is popped and signalled, but nobody unparks it",
    ),
    (
        "external park: a pop does not call the hook, with the unpark before the park",
        "src/notifier/mod.rs",
        """                        Delivery::Unpark => self.unpark(top),""",
        """                        Delivery::Unpark => {}""",
        "models::external_park::notifier_unpark_before_the_park_returns_at_once",
        "the notify that lands before the park leaves no token, and the park waits for ever",
    ),
    (
        "external park: a spurious return keeps the slot stacked as if notified",
        "src/notifier/slot.rs",
        """            PARKED_EXTERNAL => ParkEnd::TimedOut,""",
        """            PARKED_EXTERNAL => ParkEnd::Signaled,""",
        "models::external_park::notifier_spurious_park_return_withdraws",
        "the slot is freed while still on the waiter stack",
    ),
    (
        "external park: a timed-out park swallows a notification that won the race",
        "src/notifier/mod.rs",
        """                Withdrawal::Targeted | Withdrawal::Signaled => notified,""",
        """                Withdrawal::Targeted | Withdrawal::Signaled => Ended::Withdrew,""",
        "models::external_park::notifier_timed_park_never_swallows_a_notification",
        "the timed waiter reports a timeout, drops the notification, and the other waiter sleeps on",
    ),
    (
        "external park: notify_all does not call the hook (NotifierSleep post)",
        "src/notifier/mod.rs",
        """                Delivery::Unpark => {
                    self.unpark(wid);
                    released += 1;
                }""",
        """                Delivery::Unpark => released += 1,""",
        "models::external_park::notifier_sleep_external_park_races_post",
        "a post takes the whole stack and leaves the parked worker asleep",
    ),
    (
        "external park: notify_all does not call the hook (NotifierSleep early unpark)",
        "src/notifier/mod.rs",
        """                Delivery::Unpark => {
                    self.unpark(wid);
                    released += 1;
                }""",
        """                Delivery::Unpark => released += 1,""",
        "models::external_park::notifier_sleep_unpark_before_the_park",
        "wake_all inside the park leaves no token",
    ),
    (
        "external park: a spurious return keeps the slot stacked (NotifierSleep)",
        "src/notifier/slot.rs",
        """            PARKED_EXTERNAL => ParkEnd::TimedOut,""",
        """            PARKED_EXTERNAL => ParkEnd::Signaled,""",
        "models::external_park::notifier_sleep_spurious_park_return_withdraws",
        "the slot is freed while still on the waiter stack",
    ),
    (
        "external park: a timed-out park keeps the slot stacked (NotifierSleep)",
        "src/notifier/slot.rs",
        """            PARKED_EXTERNAL => ParkEnd::TimedOut,""",
        """            PARKED_EXTERNAL => ParkEnd::Signaled,""",
        "models::external_park::notifier_sleep_timed_park_races_post",
        "the slot is freed while still on the waiter stack",
    ),
    (
        "external park: a pop does not call the hook (NotifierSleep mixed pool)",
        "src/notifier/mod.rs",
        """                        Delivery::Unpark => self.unpark(top),""",
        """                        Delivery::Unpark => {}""",
        "models::external_park::notifier_sleep_mixed_parking",
        "the externally parked worker is never unparked",
    ),
    (
        "external park: a JecSleep waker calls the hook before it lets the sleeper go",
        "src/jec/mod.rs",
        """                worker.release_claimed();
                if let Some(unpark) = &self.unpark {
                    unpark(index);
                }""",
        """                if let Some(unpark) = &self.unpark {
                    unpark(index);
                }
                worker.release_claimed();""",
        "models::external_park::jec_sleep_external_park_races_post",
        "the sleeper takes the token while still claimed, parks again, and no second unpark comes",
    ),
    (
        "external park: a JecSleep waker never calls the hook",
        "src/jec/mod.rs",
        """                worker.release_claimed();
                if let Some(unpark) = &self.unpark {
                    unpark(index);
                }""",
        """                worker.release_claimed();""",
        "models::external_park::jec_sleep_unpark_before_the_park",
        "the claimed sleeper waits for a token nobody leaves",
    ),
    (
        "external park: a JecSleep spurious return leaves the sleeper counted",
        "src/jec/mod.rs",
        """                    if worker.leave_external(park) {""",
        """                    if { worker.leave_external(park); false } {""",
        "models::external_park::jec_sleep_spurious_park_return_withdraws",
        "the worker goes back to searching still counted asleep",
    ),
    (
        "external park: a JecSleep timed-out park uncounts itself even when a waker did",
        "src/jec/mod.rs",
        """                    if worker.leave_external(park) {""",
        """                    if { worker.leave_external(park); true } {""",
        "models::external_park::jec_sleep_timed_park_races_post",
        "the sleeping count is decremented twice",
    ),
    (
        "external park: a JecSleep waker never calls the hook (mixed pool)",
        "src/jec/mod.rs",
        """                worker.release_claimed();
                if let Some(unpark) = &self.unpark {
                    unpark(index);
                }""",
        """                worker.release_claimed();""",
        "models::external_park::jec_sleep_mixed_parking",
        "the externally parked worker is never unparked",
    ),
    (
        "external park: a JecSleep park's own return leaves the idle period in two steps",
        "src/jec/mod.rs",
        """                self.counters.sub_sleeping_and_inactive();""",
        """                self.counters.sub_sleeping();""",
        "models::external_park::jec_sleep_park_return_leaves_the_idle_period",
        "the worker stays counted awake and idle on its way out: the post wakes nobody, and the "
        "sleeper sleeps on",
    ),
    (
        "external park: a NotifierSleep park's own return counts the worker awake again",
        "src/notifier/sleep.rs",
        """                        awake_again.count = false;""",
        """                        awake_again.count = true;""",
        "models::external_park::notifier_sleep_park_return_leaves_the_idle_period",
        "the worker that left for its park's work is still counted awake and idle: the post "
        "wakes nobody, and the sleeper sleeps on",
    ),
    (
        "external park: a JecSleep round after the park's own return does not count the worker back in",
        "src/jec/mod.rs",
        """            self.count_inactive(operation, idle.worker);
            idle.counted = true;""",
        """            idle.counted = true;""",
        "models::external_park::jec_sleep_mixed_parking_after_a_spurious_return",
        "the worker searches and sleeps uncounted: the inactive count runs below the sleepers",
    ),
    (
        "external park: a NotifierSleep round after the park's own return does not count the worker back in",
        "src/notifier/sleep.rs",
        """            self.count_awake_idle(operation, idle.worker);
            idle.counted = true;""",
        """            idle.counted = true;""",
        "models::external_park::notifier_sleep_mixed_parking_after_a_spurious_return",
        "the worker's announcement takes it off a count it was never on: the count wraps, and "
        "posts see a crowd of awake idle workers and wake nobody",
    ),
    (
        "jec, oversized: a phase the lifted cap admits counts itself as a slot holder",
        "src/shell/mod.rs",
        """        self.setup.oversized || self.slots.may_search(kind, held, idle_counts)""",
        """        (self.setup.oversized && { *held = true; true }) || self.slots.may_search(kind, held, idle_counts)""",
        "models::searcher_cap::jec_sleep_cap_burst_against_full_searchers_oversized",
        "the oversized pool's phase gives back a slot it never took: the count wraps, and the check at rest fails",
    ),
    (
        "notifier_sleep, oversized: a phase the lifted cap admits counts itself as a slot holder",
        "src/shell/mod.rs",
        """        self.setup.oversized || self.slots.may_search(kind, held, idle_counts)""",
        """        (self.setup.oversized && { *held = true; true }) || self.slots.may_search(kind, held, idle_counts)""",
        "models::searcher_cap::notifier_sleep_cap_burst_against_full_searchers_oversized",
        "the oversized pool's phase gives back a slot it never took: the count wraps, and the check at rest fails",
    ),
    (
        "jec, oversized: a worker that leaves its search forgets rayon's wake",
        "src/jec/mod.rs",
        """            before.sleeping().min(2)""",
        """            0""",
        "models::searcher_cap::jec_sleep_last_searcher_hands_off_oversized",
        "with the cap lifted, the post still left its second job to the awake searcher; "
        "nobody wakes the sleeper for it",
    ),
    (
        "notifier_sleep, oversized: the last searcher forgets the hand-off",
        "src/notifier/sleep.rs",
        """        if left.covering() == 0 {
            self.wake_one();
        }""",
        """        let _ = left.covering();""",
        "models::searcher_cap::notifier_sleep_last_searcher_hands_off_oversized",
        "with the cap lifted, the post still left its second job to the awake searcher; "
        "nobody wakes the sleeper for it",
    ),
    (
        "jec, oversized (injected job): a phase the lifted cap admits counts itself as a slot holder",
        "src/shell/mod.rs",
        """        self.setup.oversized || self.slots.may_search(kind, held, idle_counts)""",
        """        (self.setup.oversized && { *held = true; true }) || self.slots.may_search(kind, held, idle_counts)""",
        "models::protocols::jec_sleep_injected_job_runs_oversized",
        "the default policy caps one worker at one searcher; the oversized pool's phase gives back "
        "a slot it never took when it gets sleepy",
    ),
    (
        "jec, oversized (latch): a phase the lifted cap admits counts itself as a slot holder",
        "src/shell/mod.rs",
        """        self.setup.oversized || self.slots.may_search(kind, held, idle_counts)""",
        """        (self.setup.oversized && { *held = true; true }) || self.slots.may_search(kind, held, idle_counts)""",
        "models::protocols::jec_sleep_latch_wakes_owner_oversized",
        "the default policy caps one worker at one searcher; the oversized pool's phase gives back "
        "a slot it never took when it gets sleepy",
    ),
    (
        "notifier_sleep, oversized (injected job): a phase the lifted cap admits counts itself as a slot holder",
        "src/shell/mod.rs",
        """        self.setup.oversized || self.slots.may_search(kind, held, idle_counts)""",
        """        (self.setup.oversized && { *held = true; true }) || self.slots.may_search(kind, held, idle_counts)""",
        "models::protocols::notifier_sleep_injected_job_runs_oversized",
        "the default policy caps one worker at one searcher; the oversized pool's phase gives back "
        "a slot it never took when it gets sleepy",
    ),
    (
        "notifier_sleep, oversized (latch): a phase the lifted cap admits counts itself as a slot holder",
        "src/shell/mod.rs",
        """        self.setup.oversized || self.slots.may_search(kind, held, idle_counts)""",
        """        (self.setup.oversized && { *held = true; true }) || self.slots.may_search(kind, held, idle_counts)""",
        "models::protocols::notifier_sleep_latch_wakes_owner_oversized",
        "the default policy caps one worker at one searcher; the oversized pool's phase gives back "
        "a slot it never took when it gets sleepy",
    ),
]


def tracked_files():
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return [line for line in out.splitlines() if line]


def run_case(case, scratch, target):
    name, path, snippet, replacement, test, why = case[:6]
    extra = case[6] if len(case) > 6 else []
    if os.path.exists(scratch):
        shutil.rmtree(scratch)
    for rel in tracked_files():
        dst = os.path.join(scratch, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), dst)
    target_file = os.path.join(scratch, path)
    with open(target_file) as f:
        text = f.read()
    edits = snippet if isinstance(snippet, list) else [(snippet, replacement)]
    edits = edits + extra
    for old, new in edits:
        count = text.count(old)
        if count != 1:
            return f"STALE (snippet found {count} times in {path}; update this script)"
        text = text.replace(old, new)
    with open(target_file, "w") as f:
        f.write(text)
    # Each case rebuilds the crate's test binary, and that build is most of
    # a case's time; without debug info it is about a third shorter. A
    # panic still names its file and line (that comes from the panic's
    # location, not from debug info).
    env = dict(os.environ, RUSTFLAGS="--cfg loom", CARGO_TARGET_DIR=target,
               CARGO_PROFILE_TEST_DEBUG="false")
    start = time.time()
    result = subprocess.run(
        ["cargo", "test", "--lib", "-q", test, "--", "--exact"],
        cwd=scratch, env=env, capture_output=True, text=True,
    )
    elapsed = time.time() - start
    output = result.stdout + result.stderr
    if result.returncode == 0:
        return f"NOT CAUGHT ({elapsed:.0f} s): {test} passed with the bug planted"
    if "error[E" in output or "could not compile" in output:
        return "BROKEN (the planted code does not compile)"
    lines = [l for l in output.splitlines() if "panicked" in l or "deadlock" in l]
    # A sleeper nobody wakes: "deadlock" if every thread blocks, or loom's
    # branch limit if it yields for ever (src/sync/loom.rs).
    verdicts = ("deadlock", "exceeded maximum number of branches", "assert")
    first = next((l for l in output.splitlines() if any(v in l for v in verdicts)),
                 lines[0] if lines else "")
    return f"caught ({elapsed:.0f} s): {first.strip()[:160]}"


def main():
    wanted = sys.argv[1] if len(sys.argv) > 1 else ""
    if wanted in ("-h", "--help"):
        print(__doc__)
        return
    if wanted == "--list":
        for case in CASES:
            print(f"{case[0]}  ->  {case[4]}")
        return
    if not any(wanted in case[0] for case in CASES):
        sys.exit(f"no case's name contains {wanted!r}: see --list")
    scratch_root = tempfile.mkdtemp(prefix="eventcount-planted-")
    cases = [case for case in CASES if wanted in case[0]]
    lanes = max(1, int(os.environ.get("PLANTED_JOBS") or os.cpu_count() or 1))
    verdicts = [None] * len(cases)
    done = [threading.Event() for _ in cases]
    next_case = iter(range(len(cases)))
    lock = threading.Lock()

    def lane(number):
        scratch = os.path.join(scratch_root, f"crate-{number}")
        target = TARGET if number == 0 else f"{TARGET}-{number}"
        while True:
            with lock:
                index = next(next_case, None)
            if index is None:
                return
            try:
                verdicts[index] = run_case(cases[index], scratch, target)
            except Exception as error:  # a broken case must not hang the others
                verdicts[index] = f"ERROR ({error})"
            done[index].set()

    threads = [threading.Thread(target=lane, args=(n,), daemon=True) for n in range(lanes)]
    for thread in threads:
        thread.start()
    failures = 0
    for index, case in enumerate(cases):
        done[index].wait()
        verdict = verdicts[index]
        ok = verdict.startswith("caught")
        failures += 0 if ok else 1
        print(f"[{'ok' if ok else 'FAIL'}] {case[0]}\n       expect: {case[5]}\n       {verdict}", flush=True)
    for thread in threads:
        thread.join()
    shutil.rmtree(scratch_root, ignore_errors=True)
    print(f"{'all planted bugs caught' if failures == 0 else f'{failures} planted bug(s) NOT caught'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

#![cfg(not(loom))]
//! `WaiterWaker` under load: many threads block on futures that other
//! threads complete, each wake racing the sleeper's way into its sleep. A
//! lost wake hangs a receiver, which the watchdog turns into a failure.

mod common;
use common::with_watchdog;

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;

use eventcount::{Notifier, WaiterWaker};

/// Run `future` on this thread, sleeping on slot `wid` between polls.
fn block_on<F: Future>(notifier: &Arc<Notifier>, wid: usize, future: F) -> F::Output {
    let wake = WaiterWaker::for_waiter(notifier.clone(), wid);
    let waker = wake.waker();
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        let wait = notifier.prepare_wait(wid);
        if wake.take_woken() {
            notifier.cancel_wait(wait);
        } else {
            notifier.commit_wait(wait);
        }
    }
}

/// A value and the waker of whoever waits for it.
type Slot = Arc<Mutex<(Option<usize>, Option<Waker>)>>;

/// Ready once the slot holds a value.
struct Receive(Slot);

impl Future for Receive {
    type Output = usize;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let mut slot = self.0.lock().unwrap();
        match slot.0.take() {
            Some(value) => Poll::Ready(value),
            None => {
                slot.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

#[test]
fn every_wake_reaches_its_sleeper() {
    const RECEIVERS: usize = 16;
    const SENDERS: usize = 4;
    const ROUNDS: usize = 300;
    with_watchdog("every_wake_reaches_its_sleeper", || {
        let notifier = Arc::new(Notifier::new(RECEIVERS));
        let (to_senders, requests) = mpsc::channel::<(Slot, usize)>();
        let requests = Arc::new(Mutex::new(requests));
        let senders: Vec<_> = (0..SENDERS)
            .map(|_| {
                let requests = requests.clone();
                thread::spawn(move || loop {
                    let request = requests.lock().unwrap().recv();
                    let Ok((slot, value)) = request else { return };
                    if value % 2 == 0 {
                        // Let the receiver get to its sleep; odd values race
                        // its way there instead.
                        thread::yield_now();
                    }
                    let mut slot = slot.lock().unwrap();
                    slot.0 = Some(value);
                    if let Some(waker) = slot.1.take() {
                        drop(slot);
                        waker.wake();
                    }
                })
            })
            .collect();
        let receivers: Vec<_> = (0..RECEIVERS)
            .map(|wid| {
                let (notifier, to_senders) = (notifier.clone(), to_senders.clone());
                thread::spawn(move || {
                    for round in 0..ROUNDS {
                        let slot: Slot = Arc::new(Mutex::new((None, None)));
                        to_senders
                            .send((slot.clone(), wid * ROUNDS + round))
                            .unwrap();
                        assert_eq!(
                            block_on(&notifier, wid, Receive(slot)),
                            wid * ROUNDS + round
                        );
                    }
                })
            })
            .collect();
        drop(to_senders);
        for thread in receivers.into_iter().chain(senders) {
            thread.join().unwrap();
        }
        assert_eq!(notifier.num_sleeping(), 0);
    });
}

#[test]
fn a_wake_before_the_sleep_is_kept_and_taken_once() {
    let notifier = Arc::new(Notifier::new(2));
    let wake = WaiterWaker::for_waiter(notifier.clone(), 1);
    let waker = wake.waker();
    waker.wake_by_ref();
    waker.wake_by_ref(); // wakes coalesce: one flag
    let wait = notifier.prepare_wait(1);
    assert!(wake.take_woken());
    assert!(!wake.take_woken());
    notifier.cancel_wait(wait);
    assert_eq!(
        format!("{wake:?}"),
        "WaiterWaker { wakes_waiter: 1, woken: false }"
    );
}

#[test]
#[should_panic(
    expected = "WaiterWaker::for_waiter: waiter id 2 is out of range for a Notifier with 2 slots"
)]
fn a_waker_for_a_slot_out_of_range_is_refused_when_built() {
    let _ = WaiterWaker::for_waiter(Arc::new(Notifier::new(2)), 2);
}

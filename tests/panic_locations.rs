#![cfg(not(loom))]
//! A panic on bad input names the caller's line, not a line inside the
//! crate: the public methods that check their input carry
//! `#[track_caller]`, and so does every function between them and the
//! panic.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use eventcount::{CoreLatch, JecSleep, Notifier, NotifierSleep, SleepProtocol};

thread_local! {
    /// The file and line of this thread's last panic.
    static LAST_PANIC: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
}

/// The file and line the panic of `f` reports.
fn panic_location(f: impl FnOnce()) -> (String, u32) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if let Some(at) = info.location() {
                LAST_PANIC
                    .with(|last| *last.borrow_mut() = Some((at.file().to_string(), at.line())));
            }
            default(info);
        }));
    });
    LAST_PANIC.with(|last| last.borrow_mut().take());
    panic::catch_unwind(AssertUnwindSafe(f)).expect_err("no panic");
    LAST_PANIC
        .with(|last| last.borrow_mut().take())
        .expect("a panic with a location")
}

/// Drops a result the test does not need (`drop` of a `Copy` value lints).
fn ignore<T>(_: T) {}

/// `f`'s panic is reported at the line of this macro's call.
macro_rules! assert_reported_here {
    ($f:expr) => {{
        let line = line!();
        let at = panic_location($f);
        assert_eq!(at, (file!().to_string(), line));
    }};
}

#[test]
fn notifier_panics_name_the_callers_line() {
    let n = Notifier::new(2);
    assert_reported_here!(|| drop(n.prepare_wait(2)));
    assert_reported_here!(|| ignore(n.notify_waiter(5)));
    let other = Notifier::new(1);
    assert_reported_here!(|| n.commit_wait(other.prepare_wait(0)));
    assert_reported_here!(|| n.cancel_wait(other.prepare_wait(0)));
    assert_reported_here!(|| drop(Notifier::new(0)));
}

fn protocol_panics_name_the_callers_line<S: SleepProtocol>() {
    let sleep = S::try_new(2, eventcount::IdlePolicy::rayon(), None).unwrap();
    assert_reported_here!(|| drop(sleep.start_looking(2)));
    assert_reported_here!(|| sleep.notify_worker_latch_is_set(7));
    assert_reported_here!(|| sleep.set_latch(&CoreLatch::new(), 3));
    let other = S::try_new(1, eventcount::IdlePolicy::rayon(), None).unwrap();
    let latch = CoreLatch::new();
    let mut idle = other.start_looking(0);
    assert_reported_here!(|| ignore(sleep.no_work_found(&mut idle, &latch, || false)));
}

#[test]
fn jec_sleep_panics_name_the_callers_line() {
    protocol_panics_name_the_callers_line::<JecSleep>();
    assert_reported_here!(|| drop(JecSleep::new(0)));
}

#[test]
fn notifier_sleep_panics_name_the_callers_line() {
    protocol_panics_name_the_callers_line::<NotifierSleep>();
    assert_reported_here!(|| drop(NotifierSleep::new(0)));
}

//! [`WaiterWaker`]: a [`std::task::Waker`] that wakes a thread sleeping on
//! a [`Notifier`], for a `block_on` or an executor's worker threads.

use std::sync::Arc;
use std::task::{Wake, Waker};

use crate::notifier::Notifier;
use crate::sync::{AtomicU32, Ordering};

/// `woken`: no wake asked for since the last `take_woken`.
const IDLE: u32 = 0;
/// `woken`: a wake was asked for.
const WOKEN: u32 = 1;

/// The `Waker` of a thread that sleeps on a [`Notifier`]: a wake raises a
/// flag, then notifies the waiter, and the sleeping thread reads the flag
/// as its wait condition. The `Arc<Notifier>` inside makes it `'static`;
/// [`waker`](WaiterWaker::waker) turns it into a `Waker`.
///
/// 1. a waker raises the flag (Release), then notifies;
/// 2. the sleeper calls [`prepare_wait`](Notifier::prepare_wait), then
///    [`take_woken`](WaiterWaker::take_woken): if a wake was asked for, it
///    cancels and polls again; if not, it commits and sleeps.
///
/// The notify's fence and the prepare's fence order the two, so no wake is
/// lost. The guide's "Async" section has a `block_on` on it, and an
/// executor whose tasks wake by pushing themselves on a run queue, which
/// needs no `WaiterWaker`.
pub struct WaiterWaker {
    notifier: Arc<Notifier>,
    /// The slot whose waiter a wake reaches.
    wid: usize,
    /// `IDLE` or `WOKEN`.
    woken: AtomicU32,
}

impl WaiterWaker {
    /// A waker for the waiter in slot `wid` of `notifier`: a wake raises the
    /// flag and wakes that waiter only ([`notify_waiter`](Notifier::notify_waiter)).
    ///
    /// # Panics
    ///
    /// If `wid >= notifier.capacity()`: here, not at a wake on another thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{Notifier, WaiterWaker};
    /// use std::sync::Arc;
    ///
    /// let notifier = Arc::new(Notifier::new(2));
    /// let wake = WaiterWaker::for_waiter(notifier.clone(), 1);
    /// let waker = wake.waker();
    /// waker.wake_by_ref(); // nobody waits yet: the flag keeps the wake
    /// let wait = notifier.prepare_wait(1);
    /// assert!(wake.take_woken());
    /// notifier.cancel_wait(wait);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn for_waiter(notifier: Arc<Notifier>, wid: usize) -> Arc<WaiterWaker> {
        let capacity = notifier.capacity();
        assert!(
            wid < capacity,
            "WaiterWaker::for_waiter: waiter id {wid} is out of range for a Notifier with \
             {capacity} slots"
        );
        WaiterWaker::with_target(notifier, wid)
    }

    fn with_target(notifier: Arc<Notifier>, wid: usize) -> Arc<WaiterWaker> {
        Arc::new(WaiterWaker {
            notifier,
            wid,
            woken: AtomicU32::new(IDLE),
        })
    }

    /// A [`Waker`] for this waker: `Waker::from(self.clone())`.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{Notifier, WaiterWaker};
    /// use std::sync::Arc;
    ///
    /// let wake = WaiterWaker::for_waiter(Arc::new(Notifier::new(1)), 0);
    /// let waker = wake.waker();
    /// assert!(waker.will_wake(&waker.clone()));
    /// ```
    #[must_use]
    pub fn waker(self: &Arc<Self>) -> Waker {
        Waker::from(self.clone())
    }

    /// Whether a wake was asked for since the last `take_woken`, lowering the
    /// flag: the sleeper's check between [`prepare_wait`](Notifier::prepare_wait)
    /// and the commit. Acquire: the waker's writes before its wake are
    /// visible once this returns true.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{Notifier, WaiterWaker};
    /// use std::sync::Arc;
    ///
    /// let wake = WaiterWaker::for_waiter(Arc::new(Notifier::new(1)), 0);
    /// assert!(!wake.take_woken());
    /// wake.waker().wake_by_ref();
    /// assert!(wake.take_woken());
    /// ```
    #[must_use]
    pub fn take_woken(&self) -> bool {
        // A load first keeps the common "not woken" check free of a write.
        self.woken.load(Ordering::Acquire) == WOKEN
            && self.woken.swap(IDLE, Ordering::Acquire) == WOKEN
    }
}

impl Wake for WaiterWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // The flag first (Release: the waker's writes go with it), then the
        // notify, whose SeqCst fence pairs with the sleeper's prepare.
        self.woken.store(WOKEN, Ordering::Release);
        self.notifier.notify_waiter(self.wid);
    }
}

impl std::fmt::Debug for WaiterWaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaiterWaker")
            .field("wakes_waiter", &self.wid)
            .field("woken", &(self.woken.load(Ordering::Acquire) == WOKEN))
            .finish()
    }
}

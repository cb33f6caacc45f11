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

/// Whom a wake reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// The waiter in this slot, and nobody else.
    Waiter(usize),
    /// Any one waiter.
    AnyOne,
}

/// The `Waker` of a thread that sleeps on a [`Notifier`]: a wake raises a
/// flag, then notifies the waiter (or any one waiter), and the sleeping
/// thread reads the flag as its wait condition.
///
/// A `Waker` must be `'static` and may be woken from any thread; an
/// `Arc<Notifier>` inside makes it so, and `Waker::from(Arc<WaiterWaker>)`
/// (or [`waker`](WaiterWaker::waker)) turns it into one. It is the
/// protocol of [`Notifier`] with "a wake was asked for" as the condition:
///
/// 1. a waker raises the flag (Release), then notifies;
/// 2. the sleeper calls [`prepare_wait`](Notifier::prepare_wait), then
///    [`take_woken`](WaiterWaker::take_woken): if a wake was asked for, it
///    cancels and polls again; if not, it commits and sleeps.
///
/// The notify's fence and the prepare's fence order the two: a wake raised
/// before the sleeper's check is seen by the check, and one raised after it
/// finds the sleeper announced and wakes it. No wake is lost, and a wake
/// that finds the thread awake costs one swap and one notify with nobody
/// waiting (a fence and a load, no syscall).
///
/// [`for_waiter`](WaiterWaker::for_waiter) wakes one waiter slot, the
/// thread that owns it (a `block_on`); [`for_any`](WaiterWaker::for_any)
/// wakes any one waiter, for threads that take turns on one event. An
/// executor whose tasks wake by pushing themselves on a run queue needs
/// neither: its task's own `Wake` pushes, then calls
/// [`notify_one`](Notifier::notify_one) (the guide's "Async" section shows
/// both).
///
/// # Examples
///
/// A `block_on` in a few lines: the thread polls, and sleeps on slot 0
/// between polls.
///
/// ```
/// use eventcount::{Notifier, WaiterWaker};
/// use std::future::Future;
/// use std::pin::pin;
/// use std::sync::Arc;
/// use std::task::{Context, Poll};
///
/// fn block_on<F: Future>(notifier: &Arc<Notifier>, wid: usize, future: F) -> F::Output {
///     let wake = WaiterWaker::for_waiter(notifier.clone(), wid);
///     let waker = wake.waker();
///     let mut cx = Context::from_waker(&waker);
///     let mut future = pin!(future);
///     loop {
///         if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
///             return out;
///         }
///         let wait = notifier.prepare_wait(wid);
///         if wake.take_woken() {
///             notifier.cancel_wait(wait); // woken since the poll: poll again
///         } else {
///             notifier.commit_wait(wait); // sleep until a wake
///         }
///     }
/// }
///
/// let notifier = Arc::new(Notifier::new(1));
/// assert_eq!(block_on(&notifier, 0, async { 6 * 7 }), 42);
/// ```
pub struct WaiterWaker {
    notifier: Arc<Notifier>,
    target: Target,
    /// `IDLE` or `WOKEN`.
    woken: AtomicU32,
}

impl WaiterWaker {
    /// A waker for the waiter in slot `wid` of `notifier`: a wake raises
    /// the flag and wakes that waiter only
    /// ([`notify_waiter`](Notifier::notify_waiter)).
    ///
    /// # Panics
    ///
    /// If `wid >= notifier.capacity()`: here, rather than at a wake on
    /// whatever thread wakes it.
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
        WaiterWaker::with_target(notifier, Target::Waiter(wid))
    }

    /// A waker for whichever waiter of `notifier` comes first: a wake
    /// raises the flag and wakes one waiter
    /// ([`notify_one`](Notifier::notify_one)). Every waiter on the notifier
    /// must check this waker's flag, since any of them may get the wake;
    /// the one whose [`take_woken`](WaiterWaker::take_woken) returns true
    /// has it.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{Notifier, WaiterWaker};
    /// use std::sync::Arc;
    ///
    /// let notifier = Arc::new(Notifier::new(4));
    /// let wake = WaiterWaker::for_any(notifier);
    /// wake.waker().wake();
    /// assert!(wake.take_woken());
    /// assert!(!wake.take_woken()); // taken once
    /// ```
    #[must_use]
    pub fn for_any(notifier: Arc<Notifier>) -> Arc<WaiterWaker> {
        WaiterWaker::with_target(notifier, Target::AnyOne)
    }

    fn with_target(notifier: Arc<Notifier>, target: Target) -> Arc<WaiterWaker> {
        Arc::new(WaiterWaker {
            notifier,
            target,
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

    /// Whether a wake was asked for since the last `take_woken`, and lower
    /// the flag: the sleeper's check, between
    /// [`prepare_wait`](Notifier::prepare_wait) and the commit. Acquire:
    /// what the waker wrote before its wake is visible once this returns
    /// true.
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

    /// Whether a wake was asked for and not yet taken, without taking it.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{Notifier, WaiterWaker};
    /// use std::sync::Arc;
    ///
    /// let wake = WaiterWaker::for_any(Arc::new(Notifier::new(1)));
    /// assert!(!wake.is_woken());
    /// wake.waker().wake_by_ref();
    /// assert!(wake.is_woken());
    /// ```
    #[must_use]
    pub fn is_woken(&self) -> bool {
        self.woken.load(Ordering::Acquire) == WOKEN
    }

    /// The notifier this waker notifies.
    ///
    /// # Examples
    ///
    /// ```
    /// use eventcount::{Notifier, WaiterWaker};
    /// use std::sync::Arc;
    ///
    /// let notifier = Arc::new(Notifier::new(3));
    /// let wake = WaiterWaker::for_any(notifier.clone());
    /// assert!(Arc::ptr_eq(wake.notifier(), &notifier));
    /// ```
    #[must_use]
    pub fn notifier(&self) -> &Arc<Notifier> {
        &self.notifier
    }
}

impl Wake for WaiterWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // The condition first (Release: what the waker wrote before the wake
        // goes with it), then the notify, whose SeqCst fence pairs with the
        // sleeper's prepare.
        self.woken.store(WOKEN, Ordering::Release);
        match self.target {
            Target::Waiter(wid) => {
                self.notifier.notify_waiter(wid);
            }
            Target::AnyOne => {
                self.notifier.notify_one();
            }
        }
    }
}

impl std::fmt::Debug for WaiterWaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let target = match self.target {
            Target::Waiter(wid) => format!("waiter {wid}"),
            Target::AnyOne => "any one waiter".to_string(),
        };
        f.debug_struct("WaiterWaker")
            .field("wakes", &target)
            .field("woken", &self.is_woken())
            .finish()
    }
}

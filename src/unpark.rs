//! [`Unpark`]: the hook a scheduler gives a protocol to wake a worker that
//! parks outside the crate.

use std::sync::Arc;

/// Wakes worker (or waiter slot) `i` that sleeps in a park of the
/// scheduler's own, such as an I/O driver's poll: given at construction
/// ([`SleepProtocol::try_new`]) and
/// called by a notify that picks a waiter parked through
/// [`SleepProtocol::no_work_found_parked`], in place of the crate's futex wake.
///
/// It must keep a driver's unpark contract: an unpark that comes before the
/// park makes that park return at once (the scheduler keeps a token per
/// worker, as an event fd or `std::thread::Thread::unpark` does). It may
/// be called for a waiter that has already returned (a late unpark makes its
/// next park return early, which the protocols allow) and from any thread,
/// so it must not block for long and must not call back into the protocol.
///
/// [`SleepProtocol::try_new`]: crate::SleepProtocol::try_new
/// [`SleepProtocol::no_work_found_parked`]: crate::SleepProtocol::no_work_found_parked
///
/// # Examples
///
/// ```
/// use eventcount::Unpark;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let unparked = Arc::new(AtomicUsize::new(0));
/// let hook: Unpark = {
///     let unparked = unparked.clone();
///     Arc::new(move |_worker| {
///         unparked.fetch_add(1, Ordering::Release);
///     })
/// };
/// hook(0);
/// assert_eq!(unparked.load(Ordering::Acquire), 1);
/// ```
pub type Unpark = Arc<dyn Fn(usize) + Send + Sync>;

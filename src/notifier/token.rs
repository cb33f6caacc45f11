//! The token that makes "exactly one commit or cancel per prepare" a
//! property of the types.

use super::Notifier;

/// Proof that a waiter slot is prepared: returned by
/// [`Notifier::prepare_wait`], consumed by [`Notifier::commit_wait`] or
/// [`Notifier::cancel_wait`].
///
/// Dropping the token cancels the wait, so an early return or a panic while
/// re-checking the condition leaves no waiter behind. A token leaked with
/// `mem::forget` leaves its slot on the waiter stack for good, taking a
/// notification meant for a real waiter; a debug build panics naming the
/// slot when the notifier is dropped, unless already unwinding (a panic
/// there would abort).
///
/// # Examples
///
/// ```
/// let n = eventcount::Notifier::new(1);
/// {
///     let _wait = n.prepare_wait(0);
///     // dropped here: same as n.cancel_wait(_wait)
/// }
/// assert!(!n.notify_one()); // nobody is waiting
/// ```
#[must_use = "a prepared wait must be committed or cancelled; dropping it cancels"]
pub struct PreparedWait<'a> {
    notifier: &'a Notifier,
    wid: usize,
}

impl<'a> PreparedWait<'a> {
    pub(super) fn new(notifier: &'a Notifier, wid: usize) -> Self {
        PreparedWait { notifier, wid }
    }

    internal! {
        /// The waiter slot this token holds.
        ///
        /// # Examples
        ///
        /// ```
        /// let n = eventcount::Notifier::new(4);
        /// let wait = n.prepare_wait(3);
        /// assert_eq!(wait.wid(), 3);
        /// # n.cancel_wait(wait);
        /// ```
        pub fn wid(&self) -> usize {
            self.wid
        }
    }

    /// Take the slot index out of the token without running its cancelling
    /// drop, after checking that it belongs to `notifier`.
    #[track_caller]
    pub(super) fn disarm_for(self, notifier: &Notifier, operation: &str) -> usize {
        let wid = self.wid;
        if !std::ptr::eq(self.notifier, notifier) {
            // Dropping `self` here cancels it on its own notifier, so the
            // misuse leaves both notifiers consistent.
            panic!(
                "{operation}: the PreparedWait for slot {wid} was issued by a different Notifier"
            );
        }
        std::mem::forget(self);
        wid
    }
}

impl Drop for PreparedWait<'_> {
    fn drop(&mut self) {
        self.notifier.cancel(self.wid);
    }
}

impl std::fmt::Debug for PreparedWait<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedWait")
            .field("wid", &self.wid)
            .finish_non_exhaustive()
    }
}

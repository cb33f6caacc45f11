//! Errors for constructors that can be asked for more than a layout holds.

use std::fmt;

/// A sleep primitive was asked for more waiter slots than its packed state
/// word can count.
///
/// Returned by the `try_new` and `try_with_policy` constructors of
/// [`Notifier`](crate::Notifier), [`JecSleep`](crate::JecSleep) and
/// [`NotifierSleep`](crate::NotifierSleep); the panicking constructors print
/// the same message.
///
/// # Examples
///
/// ```
/// use eventcount::Notifier;
///
/// let too_many = Notifier::MAX_CAPACITY + 1;
/// let err = Notifier::try_new(too_many).unwrap_err();
/// assert_eq!(err.requested(), too_many);
/// assert_eq!(err.max_capacity(), Notifier::MAX_CAPACITY);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapacityError {
    what: &'static str,
    unit: &'static str,
    requested: usize,
    max_capacity: usize,
}

impl CapacityError {
    /// An error for a `what` (a type's name) asked for `requested` `unit`s
    /// (such as "workers") when it can hold `max_capacity`. For
    /// implementations of [`SleepProtocol`](crate::SleepProtocol) outside
    /// this crate, whose `try_with_policy` returns it.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = eventcount::CapacityError::new("MyPool", "workers", 300, 255);
    /// assert_eq!(err.to_string(), "MyPool supports at most 255 workers, but 300 were requested");
    /// ```
    #[must_use]
    pub fn new(
        what: &'static str,
        unit: &'static str,
        requested: usize,
        max_capacity: usize,
    ) -> Self {
        CapacityError {
            what,
            unit,
            requested,
            max_capacity,
        }
    }

    /// How many slots (or workers) were asked for.
    #[must_use]
    pub fn requested(&self) -> usize {
        self.requested
    }

    /// The most the layout allows: the type's `MAX_CAPACITY`.
    #[must_use]
    pub fn max_capacity(&self) -> usize {
        self.max_capacity
    }
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} supports at most {} {}, but {} were requested",
            self.what, self.max_capacity, self.unit, self.requested
        )
    }
}

impl std::error::Error for CapacityError {}

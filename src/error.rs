//! Errors for constructors that can be asked for more than a layout holds.

use std::fmt;

/// A sleep primitive was asked for more waiter slots than its packed state
/// word can count.
///
/// Returned by [`Notifier::try_new`](crate::Notifier::try_new); the panicking
/// constructors print the same message.
///
/// # Examples
///
/// ```
/// use eventcount::Notifier;
///
/// let too_many = Notifier::capacity() + 1;
/// let err = Notifier::try_new(too_many).unwrap_err();
/// assert_eq!(err.requested(), too_many);
/// assert_eq!(err.capacity(), Notifier::capacity());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapacityError {
    what: &'static str,
    unit: &'static str,
    requested: usize,
    capacity: usize,
}

impl CapacityError {
    pub(crate) fn new(
        what: &'static str,
        unit: &'static str,
        requested: usize,
        capacity: usize,
    ) -> Self {
        CapacityError {
            what,
            unit,
            requested,
            capacity,
        }
    }

    /// How many slots (or workers) were asked for.
    pub fn requested(&self) -> usize {
        self.requested
    }

    /// The most the layout allows.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} supports at most {} {}, but {} were requested",
            self.what, self.capacity, self.unit, self.requested
        )
    }
}

impl std::error::Error for CapacityError {}

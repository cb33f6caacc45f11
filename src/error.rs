//! Errors for constructors that can be asked for more than a layout holds.

use std::fmt;

/// A sleep primitive was asked for more waiter slots than its packed state
/// word can count, or for none at all.
///
/// Returned by [`Notifier::try_new`](crate::Notifier::try_new) and
/// [`SleepProtocol::try_new`](crate::SleepProtocol::try_new); the panicking
/// constructors print the same message. Zero is refused: nothing could
/// ever wait on such a primitive.
///
/// # Examples
///
/// ```
/// use eventcount::Notifier;
///
/// let err = Notifier::try_new(65_536).unwrap_err();
/// assert_eq!(err.to_string(), "Notifier supports at most 65535 waiter slots, but 65536 were requested");
///
/// let err = Notifier::try_new(0).unwrap_err();
/// assert_eq!(err.to_string(), "Notifier cannot have 0 waiter slots: it needs at least 1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapacityError {
    what: &'static str,
    unit: &'static str,
    requested: usize,
    max_capacity: usize,
}

impl CapacityError {
    internal! {
        /// An error for a `what` (a type's name) asked for `requested` `unit`s
        /// when it can hold `1..=max_capacity`, for implementations of
        /// [`SleepProtocol`](crate::SleepProtocol) outside this crate.
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
    }

    internal! {
        /// How many slots (or workers) were asked for.
        #[must_use]
        pub fn requested(&self) -> usize {
            self.requested
        }
    }

    internal! {
        /// The most the layout allows: the type's `MAX_CAPACITY`.
        #[must_use]
        pub fn max_capacity(&self) -> usize {
            self.max_capacity
        }
    }
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.requested == 0 {
            return write!(
                f,
                "{} cannot have 0 {}: it needs at least 1",
                self.what, self.unit
            );
        }
        write!(
            f,
            "{} supports at most {} {}, but {} were requested",
            self.what, self.max_capacity, self.unit, self.requested
        )
    }
}

/// `Ok` if `1..=max_capacity` holds `requested`, else the error.
pub(crate) fn check_capacity(
    what: &'static str,
    unit: &'static str,
    requested: usize,
    max_capacity: usize,
) -> Result<(), CapacityError> {
    if (1..=max_capacity).contains(&requested) {
        Ok(())
    } else {
        Err(CapacityError::new(what, unit, requested, max_capacity))
    }
}

impl std::error::Error for CapacityError {}

/// `count` things in words, for messages: "1 worker", "3 workers".
pub(crate) struct Count(pub(crate) usize, pub(crate) &'static str);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Count(count, unit) = *self;
        let plural = if count == 1 { "" } else { "s" };
        write!(f, "{count} {unit}{plural}")
    }
}

/// Who is already looking for work when a `start_looking` is refused, in
/// words: "all 3 workers already are", or "the only worker already is".
pub(crate) fn all_looking(capacity: usize) -> String {
    if capacity == 1 {
        "the only worker already is".to_string()
    } else {
        format!("all {capacity} workers already are")
    }
}

/// The name of type `T` without its module path, for messages:
/// `NotifierSleep`, not `eventcount::protocol::notifier::NotifierSleep`.
/// Generic arguments are kept as `std::any::type_name` spells them.
pub(crate) fn short_type_name<T: ?Sized>() -> &'static str {
    let name = std::any::type_name::<T>();
    let head = &name[..name.find('<').unwrap_or(name.len())];
    let start = head.rfind("::").map_or(0, |i| i + 2);
    &name[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_names_read_as_words() {
        assert_eq!(Count(1, "worker").to_string(), "1 worker");
        assert_eq!(Count(0, "worker").to_string(), "0 workers");
        assert_eq!(Count(2, "worker").to_string(), "2 workers");
        assert_eq!(all_looking(1), "the only worker already is");
        assert_eq!(all_looking(4), "all 4 workers already are");
        struct Pool;
        assert_eq!(short_type_name::<Pool>(), "Pool");
        assert_eq!(short_type_name::<u32>(), "u32");
        assert_eq!(
            short_type_name::<Vec<CapacityError>>(),
            "Vec<eventcount::error::CapacityError>"
        );
    }
}

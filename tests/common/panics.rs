//! Catching a panic and reading its message.

use std::panic::{self, AssertUnwindSafe};

/// The message of the panic `f` raises, or `None` if it returns.
pub fn try_panic_message(f: impl FnOnce()) -> Option<String> {
    let payload = panic::catch_unwind(AssertUnwindSafe(f)).err()?;
    Some(match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    })
}

/// The message of the panic `f` must raise.
pub fn panic_message(f: impl FnOnce()) -> String {
    try_panic_message(f).expect("no panic")
}

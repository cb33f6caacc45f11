//! [`ParkingBackend`]: how this build puts a thread to sleep on a word.

/// How this build parks a sleeping thread, chosen at compile time (see
/// [`parking_backend`]).
///
/// # Examples
///
/// ```
/// use eventcount::{parking_backend, ParkingBackend};
///
/// match parking_backend() {
///     ParkingBackend::Futex => println!("futex syscall"),
///     ParkingBackend::Park => println!("std::thread::park"),
///     _ => println!("a backend added after this code was written"),
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParkingBackend {
    /// Linux and Android: the futex syscall on each waiter's word, through
    /// rustix's safe wrappers.
    Futex,
    /// Every other target, or a build with `--cfg eventcount_fallback`:
    /// std's thread parker (`std::thread::park`, `Thread::unpark`,
    /// `park_timeout`), which std builds on the platform's native primitive
    /// (a futex, `WaitOnAddress`, or a dispatch semaphore). The same
    /// guarantees, with an uncontended lock per waiter word that holds the
    /// sleeping thread's handle.
    Park,
}

/// Which parking backend this build uses. Both give the same guarantees.
///
/// # Examples
///
/// ```
/// use eventcount::{parking_backend, ParkingBackend};
///
/// let backend = parking_backend();
/// assert!(matches!(backend, ParkingBackend::Futex | ParkingBackend::Park));
/// ```
#[must_use]
pub fn parking_backend() -> ParkingBackend {
    super::backend::KIND
}

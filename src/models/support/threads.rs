//! Spawning a model's actors and joining them.
//!
//! An actor is a spawned thread holding its own clones of the model's
//! `Arc`s, cloned on the spawning thread just before the spawn.

use loom::thread::JoinHandle;

/// `spawn_with!(a, b => body)`: spawn a loom thread running `body` with its
/// own clones of `a` and `b`, which it uses under the same names:
/// `{ let (a, b) = (a.clone(), b.clone()); thread::spawn(move || body) }`.
macro_rules! spawn_with {
    ($($shared:ident),+ => $body:expr) => {{
        let ($($shared,)+) = ($($shared.clone(),)+);
        loom::thread::spawn(move || $body)
    }};
}
pub(crate) use spawn_with;

/// Join the threads in the order given, propagating a panic; returns what
/// each returned, in that order.
pub(crate) fn join_all<R>(threads: impl IntoIterator<Item = JoinHandle<R>>) -> Vec<R> {
    threads
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .collect()
}

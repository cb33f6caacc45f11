//! Spawning a group of like threads and joining them.

use std::sync::Arc;
use std::thread::{self, JoinHandle};

/// Spawn `count` threads, thread `i` running `body(i)`. The threads share
/// one `body`, and with it whatever it captured (clones of the test's
/// `Arc`s, usually), so a test names its shared state once per group
/// instead of once per thread.
pub fn spawn_each<T, F>(count: usize, body: F) -> Vec<JoinHandle<T>>
where
    T: Send + 'static,
    F: Fn(usize) -> T + Send + Sync + 'static,
{
    let body = Arc::new(body);
    (0..count)
        .map(|i| {
            let body = body.clone();
            thread::spawn(move || body(i))
        })
        .collect()
}

/// Join the threads in the order given, propagating a panic; returns what
/// each returned, in that order.
pub fn join_all<T>(threads: impl IntoIterator<Item = JoinHandle<T>>) -> Vec<T> {
    threads
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .collect()
}

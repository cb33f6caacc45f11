//! Fork-join Fibonacci: tiny jobs, deep nesting; the per-join overhead.

use crate::workload::Join;

/// Plain recursive Fibonacci (the sequential baseline and the leaves).
#[inline]
pub fn fib_seq(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// Fork-join Fibonacci: `join` down to `cutoff`, sequential below.
pub fn fib<J: Join>(worker: &J, n: u32, cutoff: u32) -> u64 {
    if n <= cutoff || n < 2 {
        return fib_seq(n);
    }
    let (a, b) = worker.join(
        move |w| fib(w, n - 1, cutoff),
        move |w| fib(w, n - 2, cutoff),
    );
    a + b
}

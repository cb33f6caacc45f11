//! Fork-join Fibonacci: tiny jobs, deep nesting; the per-join overhead.

use eventcount::SleepProtocol;

use crate::WorkerCtx;

/// Plain recursive Fibonacci (the sequential baseline and the leaves).
pub fn fib_seq(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// Fork-join Fibonacci on the example pool: `join` down to `cutoff`,
/// sequential below.
pub fn fib<S: SleepProtocol + 'static>(ctx: &WorkerCtx<S>, n: u32, cutoff: u32) -> u64 {
    if n <= cutoff || n < 2 {
        return fib_seq(n);
    }
    let (a, b) = ctx.join(
        move |ctx| fib(ctx, n - 1, cutoff),
        move |ctx| fib(ctx, n - 2, cutoff),
    );
    a + b
}

/// [`fib`] written for rayon (call it inside a rayon pool's `install`).
pub fn rayon_fib(n: u32, cutoff: u32) -> u64 {
    if n <= cutoff || n < 2 {
        return fib_seq(n);
    }
    let (a, b) = rayon::join(|| rayon_fib(n - 1, cutoff), || rayon_fib(n - 2, cutoff));
    a + b
}

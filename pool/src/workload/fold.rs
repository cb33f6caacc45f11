//! A saturating fold: a long fork-join over many small items, split as
//! finely as a chunk, so that every worker steals and runs to the end. It
//! is the shape rayon PR #1314's bounded searchers regressed on.

use eventcount::SleepProtocol;

use crate::workload::burst::busy_work;
use crate::WorkerCtx;

/// Rounds of busy work per item.
const ITEM_ROUNDS: u32 = 8;

/// The fold of items `lo..hi`: each item's busy work, xored, splitting with
/// `join` down to `chunk` items.
pub fn fold_range<S: SleepProtocol + 'static>(
    ctx: &WorkerCtx<S>,
    lo: u64,
    hi: u64,
    chunk: u64,
) -> u64 {
    if hi - lo <= chunk {
        return fold_seq(lo, hi);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = ctx.join(
        move |ctx| fold_range(ctx, lo, mid, chunk),
        move |ctx| fold_range(ctx, mid, hi, chunk),
    );
    a ^ b
}

/// [`fold_range`] on the calling thread.
pub fn fold_seq(lo: u64, hi: u64) -> u64 {
    (lo..hi).fold(0, |acc, i| acc ^ busy_work(i, ITEM_ROUNDS))
}

/// [`fold_range`] written for rayon (call it inside a rayon pool's
/// `install`).
pub fn rayon_fold(lo: u64, hi: u64, chunk: u64) -> u64 {
    if hi - lo <= chunk {
        return fold_seq(lo, hi);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = rayon::join(|| rayon_fold(lo, mid, chunk), || rayon_fold(mid, hi, chunk));
    a ^ b
}

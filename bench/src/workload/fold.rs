//! A saturating fold: a long fork-join over many small items, split as
//! finely as a chunk, so that every worker steals and runs to the end. It
//! is the shape rayon PR #1314's bounded searchers regressed on.

use crate::workload::{busy_work, Join};

/// Rounds of busy work per item.
const ITEM_ROUNDS: u32 = 8;

/// Item `i` of the fold: its busy work.
#[inline]
pub fn fold_item(i: u64) -> u64 {
    busy_work(i, ITEM_ROUNDS)
}

/// The fold of items `lo..hi`: each item's busy work, xored, splitting with
/// `join` down to `chunk` items.
pub fn fold_range<J: Join>(worker: &J, lo: u64, hi: u64, chunk: u64) -> u64 {
    if hi - lo <= chunk {
        return fold_seq(lo, hi);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = worker.join(
        move |w| fold_range(w, lo, mid, chunk),
        move |w| fold_range(w, mid, hi, chunk),
    );
    a ^ b
}

/// [`fold_range`] on the calling thread.
#[inline]
pub fn fold_seq(lo: u64, hi: u64) -> u64 {
    (lo..hi).fold(0, |acc, i| acc ^ fold_item(i))
}

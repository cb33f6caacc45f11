//! Fork-join tree sum: memory-bound leaves under a join tree.

use std::sync::Arc;

use eventcount::SleepProtocol;

use crate::WorkerCtx;

/// A complete binary tree of `nodes` values stored as an implicit heap
/// (children of i are 2i+1 and 2i+2).
pub fn make_tree(nodes: usize) -> Arc<Vec<u64>> {
    Arc::new(
        (0..nodes as u64)
            .map(|i| i.wrapping_mul(2654435761) % 1000)
            .collect(),
    )
}

/// Sequential sum of the subtree rooted at `root`.
pub fn tree_sum_seq(tree: &[u64], root: usize) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    tree[root] + tree_sum_seq(tree, 2 * root + 1) + tree_sum_seq(tree, 2 * root + 2)
}

/// Fork-join sum on the example pool: `join` over the two subtrees for the
/// top `depth` levels. Both halves borrow the tree: an `Arc` clone per join
/// had two workers bounce one refcount line (docs/benchmarks.md, B5).
pub fn tree_sum<S: SleepProtocol + 'static>(
    ctx: &WorkerCtx<S>,
    tree: &[u64],
    root: usize,
    depth: u32,
) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    if depth == 0 {
        return tree_sum_seq(tree, root);
    }
    let (l, r) = ctx.join(
        |ctx| tree_sum(ctx, tree, 2 * root + 1, depth - 1),
        |ctx| tree_sum(ctx, tree, 2 * root + 2, depth - 1),
    );
    tree[root] + l + r
}

/// [`tree_sum`] written for rayon (call it inside a rayon pool's `install`).
pub fn rayon_tree(tree: &[u64], root: usize, depth: u32) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    if depth == 0 {
        return tree_sum_seq(tree, root);
    }
    let (l, r) = rayon::join(
        || rayon_tree(tree, 2 * root + 1, depth - 1),
        || rayon_tree(tree, 2 * root + 2, depth - 1),
    );
    tree[root] + l + r
}

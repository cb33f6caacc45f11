//! Fork-join tree sum: memory-bound leaves under a join tree.

use std::sync::Arc;

use crate::workload::Join;

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
#[inline]
pub fn tree_sum_seq(tree: &[u64], root: usize) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    tree[root] + tree_sum_seq(tree, 2 * root + 1) + tree_sum_seq(tree, 2 * root + 2)
}

/// Fork-join sum: `join` over the two subtrees for the top `depth` levels.
/// Both halves borrow the tree: an `Arc` clone per join had two workers
/// bounce one refcount line (docs/benchmarks.md, B5).
pub fn tree_sum<J: Join>(worker: &J, tree: &[u64], root: usize, depth: u32) -> u64 {
    if root >= tree.len() {
        return 0;
    }
    if depth == 0 {
        return tree_sum_seq(tree, root);
    }
    let (l, r) = worker.join(
        |w| tree_sum(w, tree, 2 * root + 1, depth - 1),
        |w| tree_sum(w, tree, 2 * root + 2, depth - 1),
    );
    tree[root] + l + r
}

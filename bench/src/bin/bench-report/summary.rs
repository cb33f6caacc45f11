//! Orderings the report's renderers share. The statistics are
//! `eventcount_bench::workload::stats`, shared with rayon-bench.

/// The distinct items in order of first appearance.
pub fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_keeps_first_appearances_in_order() {
        assert_eq!(distinct([2, 1, 2, 3, 1]), [2, 1, 3]);
    }
}

//! Small statistics and orderings the benchmarks share.

/// The median (the mean of the middle two for an even count; NaN if empty).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The `p` quantile (0 to 1) by nearest rank; sorts `values`.
pub fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let idx = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[idx.min(values.len() - 1)]
}

/// `items` in the order for round `round`: rotated by one each round, so
/// no implementation always runs first (ABC, BCA, CAB, ...).
pub fn rotated<T: Copy>(items: &[T], round: usize) -> Vec<T> {
    let k = round % items.len();
    items[k..].iter().chain(&items[..k]).copied().collect()
}

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

/// The calling thread's CPU time so far. Useful work is timed with it, not
/// with wall time, which another process on the machine would stretch.
pub fn thread_cpu() -> std::time::Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn rotation_moves_the_first_to_the_back_each_round() {
        assert_eq!(rotated(&['a', 'b', 'c'], 0), ['a', 'b', 'c']);
        assert_eq!(rotated(&['a', 'b', 'c'], 1), ['b', 'c', 'a']);
        assert_eq!(rotated(&['a', 'b', 'c'], 5), ['c', 'a', 'b']);
    }

    #[test]
    fn distinct_keeps_first_appearances_in_order() {
        assert_eq!(distinct([2, 1, 2, 3, 1]), [2, 1, 3]);
    }
}

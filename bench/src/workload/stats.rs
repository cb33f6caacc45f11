//! Small statistics and orderings the harnesses share.

use crate::workload::procstat::calling_thread_cpu;

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

/// The median of `timings` timings of `work(seed)`, seeds `0..timings`, in
/// µs of the calling thread's CPU time: how long useful work takes on one
/// thread, with another process's load on the machine left out.
pub fn median_cpu_us(timings: u64, mut work: impl FnMut(u64)) -> f64 {
    let times: Vec<f64> = (0..timings)
        .map(|seed| {
            let start = calling_thread_cpu();
            work(seed);
            (calling_thread_cpu() - start).as_secs_f64() * 1e6
        })
        .collect();
    median(&times)
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
    fn percentile_is_the_nearest_rank() {
        let mut values = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(percentile(&mut values, 0.5), 3.0);
        assert_eq!(percentile(&mut values, 0.9), 5.0);
        assert_eq!(percentile(&mut values, 0.0), 1.0);
    }

    #[test]
    fn rotation_moves_the_first_to_the_back_each_round() {
        assert_eq!(rotated(&['a', 'b', 'c'], 0), ['a', 'b', 'c']);
        assert_eq!(rotated(&['a', 'b', 'c'], 1), ['b', 'c', 'a']);
        assert_eq!(rotated(&['a', 'b', 'c'], 5), ['c', 'a', 'b']);
    }
}

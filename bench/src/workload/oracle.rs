//! The oracle of the budget sweep: for one row (a workload at a thread
//! count, one latency metric), the fixed search budget that wastes the
//! least CPU among those whose latency stays within the stock-vs-stock
//! band, and how far the default policy's waste is from it. It is the best
//! fixed choice in hindsight, per row: the yardstick for a policy that
//! adapts. bench-report and rayon-bench both judge their rows with
//! [`judge`], so that their summaries mean the same.
//!
//! Latency is a ratio to the stock pool's (rayon) in the same round, its
//! median over the rounds; the band is the min-max over the rounds of a
//! second stock run's ratio to the first. A variant is in band when its
//! median ratio is at most the band's top: as fast as stock within the
//! noise, or faster. Waste is the pool's CPU time minus the useful work,
//! in µs per tick (median over rounds).

/// The stock-vs-stock band of one metric.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Band {
    /// The lowest ratio of the second stock run to the first.
    pub low: f64,
    /// The highest.
    pub high: f64,
}

impl Band {
    /// The min-max of the finite `ratios`, or `None` if there is none.
    ///
    /// ```
    /// use eventcount_bench::workload::oracle::Band;
    /// let band = Band::of(&[1.01, 0.98, f64::NAN, 1.0]).unwrap();
    /// assert_eq!((band.low, band.high), (0.98, 1.01));
    /// assert!(Band::of(&[]).is_none());
    /// ```
    pub fn of(ratios: &[f64]) -> Option<Band> {
        let finite = ratios.iter().copied().filter(|r| r.is_finite());
        let low = finite.clone().reduce(f64::min)?;
        let high = finite.reduce(f64::max)?;
        Some(Band { low, high })
    }

    /// Whether a median ratio of `ratio` is in the band or below it.
    pub fn admits(&self, ratio: f64) -> bool {
        ratio <= self.high
    }
}

/// One variant's median values in one row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// Median over the rounds of the latency ratio to stock.
    pub latency_ratio: f64,
    /// Median over the rounds of the wasted CPU, µs per tick.
    pub wasted_us: f64,
}

/// The fixed budget the oracle picked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pick {
    /// The budget, µs.
    pub budget_us: u32,
    /// What it measured.
    pub measured: Measured,
}

/// One row, judged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Oracle {
    /// The band the latencies were held to.
    pub band: Band,
    /// The in-band budget that wastes least (the smaller budget on a tie);
    /// `None` if no budget is in band.
    pub best: Option<Pick>,
    /// Where no budget is in band: the one with the lowest latency ratio,
    /// to show how far out the sweep stayed.
    pub nearest: Option<Pick>,
    /// The default policy in the same row.
    pub default: Measured,
    /// Stock's waste, µs per tick.
    pub stock_wasted_us: f64,
}

impl Oracle {
    /// Whether the default's latency is in band.
    pub fn default_in_band(&self) -> bool {
        self.band.admits(self.default.latency_ratio)
    }

    /// The default's waste over the oracle's: the distance the issue's
    /// target (at most 1.1) is about. `None` without an oracle, or if the
    /// oracle wasted nothing measurable (a ratio to zero says nothing).
    pub fn distance(&self) -> Option<f64> {
        let best = self.best?;
        (best.measured.wasted_us > 0.0).then(|| self.default.wasted_us / best.measured.wasted_us)
    }

    /// The default's waste over stock's: the yardstick where no budget is
    /// in band. `None` if stock wasted nothing measurable.
    pub fn default_x_stock_waste(&self) -> Option<f64> {
        (self.stock_wasted_us > 0.0).then(|| self.default.wasted_us / self.stock_wasted_us)
    }

    /// The verdict as named numbers, for a tool's JSON: the same keys in
    /// both tools, `None` where a value does not exist (no budget in band,
    /// a ratio to zero). Latencies are ratios to stock, wastes µs per tick;
    /// `distance` is the default's waste over the oracle's.
    pub fn fields(&self) -> [(&'static str, Option<f64>); 12] {
        let best = self.best.map(|b| b.measured);
        let near = self.nearest.map(|b| b.measured);
        [
            ("band_low", Some(self.band.low)),
            ("band_high", Some(self.band.high)),
            (
                "oracle_budget_us",
                self.best.map(|b| f64::from(b.budget_us)),
            ),
            ("oracle_wasted_us", best.map(|m| m.wasted_us)),
            ("oracle_latency_x_stock", best.map(|m| m.latency_ratio)),
            (
                "nearest_budget_us",
                self.nearest.map(|b| f64::from(b.budget_us)),
            ),
            ("nearest_latency_x_stock", near.map(|m| m.latency_ratio)),
            ("default_wasted_us", Some(self.default.wasted_us)),
            ("default_latency_x_stock", Some(self.default.latency_ratio)),
            ("distance", self.distance()),
            ("stock_wasted_us", Some(self.stock_wasted_us)),
            ("default_wasted_x_stock", self.default_x_stock_waste()),
        ]
    }

    /// One line that says it all, the same in both tools:
    /// `oracle 25us: waste 3.1 us, latency 1.00x (band 0.98-1.02); default
    /// waste 3.4 us = 1.10x oracle, latency 0.99x (in band)`.
    pub fn summary(&self) -> String {
        let band = format!("band {:.2}-{:.2}", self.band.low, self.band.high);
        let default = format!(
            "default waste {:.1} us, latency {:.2}x ({})",
            self.default.wasted_us,
            self.default.latency_ratio,
            if self.default_in_band() {
                "in band"
            } else {
                "out of band"
            }
        );
        let times = |r: Option<f64>, of: &str| match r {
            Some(r) => format!("{r:.2}x {of}"),
            None => format!("- x {of} (it wastes nothing measurable)"),
        };
        match (self.best, self.nearest) {
            (Some(best), _) => format!(
                "oracle {}us: waste {:.1} us, latency {:.2}x ({band}); {default} = {}",
                best.budget_us,
                best.measured.wasted_us,
                best.measured.latency_ratio,
                times(self.distance(), "oracle"),
            ),
            (None, Some(near)) => format!(
                "no fixed budget in band ({band}; nearest {}us at {:.2}x); {default} = {}",
                near.budget_us,
                near.measured.latency_ratio,
                times(self.default_x_stock_waste(), "stock's waste"),
            ),
            (None, None) => format!("no fixed budget measured ({band}); {default}"),
        }
    }
}

/// Judge one row: `band` from the second stock run, stock's own waste, the
/// default policy's values and each fixed budget's (µs, values).
///
/// ```
/// use eventcount_bench::workload::oracle::{judge, Band, Measured};
///
/// let m = |latency_ratio, wasted_us| Measured { latency_ratio, wasted_us };
/// let band = Band { low: 0.98, high: 1.02 };
/// let budgets = [(0, m(1.30, 1.0)), (25, m(1.01, 4.0)), (200, m(0.99, 9.0))];
/// let oracle = judge(band, 10.0, m(1.0, 5.0), &budgets);
/// assert_eq!(oracle.best.unwrap().budget_us, 25); // 0 us is out of band
/// assert_eq!(oracle.distance(), Some(1.25));
/// ```
pub fn judge(
    band: Band,
    stock_wasted_us: f64,
    default: Measured,
    budgets: &[(u32, Measured)],
) -> Oracle {
    let pick = |&(budget_us, measured): &(u32, Measured)| Pick {
        budget_us,
        measured,
    };
    let finite = budgets
        .iter()
        .filter(|(_, m)| m.latency_ratio.is_finite() && m.wasted_us.is_finite());
    // `min_by` keeps the first of equals: budgets come smallest first.
    let mut sorted: Vec<&(u32, Measured)> = finite.clone().collect();
    sorted.sort_by_key(|(us, _)| *us);
    let best = sorted
        .iter()
        .filter(|(_, m)| band.admits(m.latency_ratio))
        .min_by(|a, b| a.1.wasted_us.total_cmp(&b.1.wasted_us))
        .map(|b| pick(b));
    let nearest = if best.is_some() {
        None
    } else {
        sorted
            .iter()
            .min_by(|a, b| a.1.latency_ratio.total_cmp(&b.1.latency_ratio))
            .map(|b| pick(b))
    };
    Oracle {
        band,
        best,
        nearest,
        default,
        stock_wasted_us,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(latency_ratio: f64, wasted_us: f64) -> Measured {
        Measured {
            latency_ratio,
            wasted_us,
        }
    }

    const BAND: Band = Band {
        low: 0.98,
        high: 1.02,
    };

    #[test]
    fn the_oracle_is_the_least_waste_in_band_and_faster_counts_as_in() {
        let budgets = [
            (500, m(0.90, 30.0)),
            (0, m(1.50, 0.5)),
            (10, m(1.03, 2.0)),
            (50, m(0.95, 6.0)),
            (25, m(1.02, 4.0)),
        ];
        let oracle = judge(BAND, 20.0, m(1.0, 8.0), &budgets);
        let best = oracle.best.unwrap();
        assert_eq!(best.budget_us, 25, "1.02 is the band's top: in");
        assert_eq!(oracle.distance(), Some(2.0));
        assert!(oracle.nearest.is_none());
        assert!(oracle.default_in_band());
        assert!(
            oracle.summary().starts_with("oracle 25us: waste 4.0 us"),
            "{}",
            oracle.summary()
        );
        assert!(
            oracle.summary().ends_with("= 2.00x oracle"),
            "{}",
            oracle.summary()
        );
    }

    #[test]
    fn equal_waste_picks_the_smaller_budget() {
        let budgets = [(200, m(1.0, 3.0)), (50, m(1.0, 3.0)), (100, m(1.0, 3.0))];
        assert_eq!(
            judge(BAND, 9.0, m(1.0, 3.0), &budgets)
                .best
                .unwrap()
                .budget_us,
            50
        );
    }

    #[test]
    fn with_none_in_band_it_says_so_and_measures_the_default_against_stock() {
        let budgets = [(0, m(1.6, 1.0)), (500, m(1.18, 20.0)), (100, m(1.3, 9.0))];
        let oracle = judge(BAND, 10.0, m(1.4, 12.0), &budgets);
        assert!(oracle.best.is_none());
        assert_eq!(oracle.distance(), None);
        assert_eq!(oracle.nearest.unwrap().budget_us, 500);
        assert_eq!(oracle.default_x_stock_waste(), Some(1.2));
        assert!(!oracle.default_in_band());
        let summary = oracle.summary();
        assert!(
            summary.starts_with("no fixed budget in band (band 0.98-1.02; nearest 500us at 1.18x)"),
            "{summary}"
        );
        assert!(summary.contains("out of band"), "{summary}");
        assert!(summary.ends_with("= 1.20x stock's waste"), "{summary}");
    }

    #[test]
    fn an_oracle_that_wastes_nothing_has_no_distance() {
        let oracle = judge(BAND, 0.0, m(1.0, 3.0), &[(0, m(1.0, -0.2))]);
        assert_eq!(oracle.best.unwrap().budget_us, 0);
        assert_eq!(oracle.distance(), None);
        assert_eq!(oracle.default_x_stock_waste(), None);
        assert!(
            oracle.summary().contains("nothing measurable"),
            "{}",
            oracle.summary()
        );
    }

    #[test]
    fn missing_values_are_left_out_and_an_empty_sweep_is_said() {
        let oracle = judge(
            BAND,
            5.0,
            m(1.0, 3.0),
            &[(10, m(f64::NAN, 1.0)), (25, m(1.0, f64::NAN))],
        );
        assert!(oracle.best.is_none() && oracle.nearest.is_none());
        assert!(
            oracle.summary().starts_with("no fixed budget measured"),
            "{}",
            oracle.summary()
        );
    }

    #[test]
    fn a_band_comes_from_finite_ratios_only() {
        assert_eq!(
            Band::of(&[1.0, f64::INFINITY]),
            Some(Band {
                low: 1.0,
                high: 1.0
            })
        );
        assert_eq!(Band::of(&[f64::NAN]), None);
    }
}

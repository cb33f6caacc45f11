//! [`Report`]: every value measured, per round, and the targets' verdicts.

use eventcount_bench::workload::stats::median;
use serde::{Serialize, Serializer};

use crate::summary::distinct;

/// One value per round of one metric of one implementation in one case.
#[derive(Debug)]
pub struct Series {
    pub bench: &'static str,
    pub case: String,
    pub imp: String,
    pub metric: &'static str,
    pub values: Vec<f64>,
}

impl Series {
    fn is(&self, bench: &str, case: &str, imp: &str, metric: &str) -> bool {
        self.bench == bench && self.case == case && self.imp == imp && self.metric == metric
    }
}

/// A target's outcome. Ratios are compared round by round: a target is
/// met (or missed) only if every round agrees; rounds that disagree mean
/// the difference is within the run-to-run noise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Met,
    NotMet,
    Tie,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Met => "MET",
            Verdict::NotMet => "NOT MET",
            Verdict::Tie => "TIE",
        }
    }
}

/// In the JSON, lower case: `met`, `not met`, `tie`.
impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.label().to_lowercase())
    }
}

/// One target, judged.
#[derive(Debug, Serialize)]
pub struct Check {
    pub bench: &'static str,
    pub target: String,
    pub measured: String,
    pub verdict: Verdict,
}

/// Everything one run of the report measured and judged.
#[derive(Debug, Default)]
pub struct Report {
    pub series: Vec<Series>,
    pub checks: Vec<Check>,
    pub notes: Vec<String>,
    pub wrong_results: Vec<String>,
    /// (benchmark, percent of the machine other processes used meanwhile).
    pub foreign_load: Vec<(u8, f64)>,
}

impl Report {
    /// Record one round's value.
    pub fn add(
        &mut self,
        bench: &'static str,
        case: &str,
        imp: &str,
        metric: &'static str,
        v: f64,
    ) {
        match self
            .series
            .iter_mut()
            .find(|s| s.is(bench, case, imp, metric))
        {
            Some(series) => series.values.push(v),
            None => self.series.push(Series {
                bench,
                case: case.to_string(),
                imp: imp.to_string(),
                metric,
                values: vec![v],
            }),
        }
    }

    /// Record each implementation's value for this round and its ratio to
    /// `baseline`'s value in the same round.
    pub fn add_round(
        &mut self,
        bench: &'static str,
        case: &str,
        metric: &'static str,
        values: &[(String, f64)],
        baseline: &str,
        ratio_metric: &'static str,
    ) {
        let base = values.iter().find(|(imp, _)| imp == baseline).map(|v| v.1);
        for (imp, v) in values {
            self.add(bench, case, imp, metric, *v);
            if let Some(base) = base.filter(|b| *b > 0.0) {
                self.add(bench, case, imp, ratio_metric, v / base);
            }
        }
    }

    /// The median over rounds of one series.
    pub fn median(&self, bench: &str, case: &str, imp: &str, metric: &str) -> Option<f64> {
        self.find(bench, case, imp, metric)
            .map(|s| median(&s.values))
    }

    /// Per-round values of one series (round order).
    pub fn values(&self, bench: &str, case: &str, imp: &str, metric: &str) -> Vec<f64> {
        self.find(bench, case, imp, metric)
            .map_or_else(Vec::new, |s| s.values.clone())
    }

    fn find(&self, bench: &str, case: &str, imp: &str, metric: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.is(bench, case, imp, metric))
    }

    /// Per-round ratio of `a` to `b` on `metric`.
    pub fn round_ratios(
        &self,
        bench: &str,
        case: &str,
        a: &str,
        b: &str,
        metric: &str,
    ) -> Vec<f64> {
        let (va, vb) = (
            self.values(bench, case, a, metric),
            self.values(bench, case, b, metric),
        );
        va.iter().zip(&vb).map(|(x, y)| x / y).collect()
    }

    /// A count or exact target: met or not.
    pub fn check(&mut self, bench: &'static str, target: String, measured: String, met: bool) {
        self.checks.push(Check {
            bench,
            target,
            measured,
            verdict: if met { Verdict::Met } else { Verdict::NotMet },
        });
    }

    /// A ratio target, judged round by round: `ratio <= limit` (or `<` if
    /// `strict`) in every round is MET, in none NOT MET, otherwise TIE.
    pub fn check_ratios(
        &mut self,
        bench: &'static str,
        target: String,
        ratios: &[f64],
        limit: f64,
        strict: bool,
        unit: &str,
    ) {
        if ratios.is_empty() {
            return;
        }
        let meets = |r: &&f64| if strict { **r < limit } else { **r <= limit };
        let meeting = ratios.iter().filter(meets).count();
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let verdict = match meeting {
            0 => Verdict::NotMet,
            m if m == ratios.len() => Verdict::Met,
            _ => Verdict::Tie,
        };
        self.checks.push(Check {
            bench,
            target,
            measured: format!(
                "median {:.2}x {unit} (rounds {lo:.2}-{hi:.2}; {meeting} of {} rounds meet it)",
                median(ratios),
                ratios.len()
            ),
            verdict,
        });
    }

    /// A remark printed after the tables.
    pub fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// The same answer from every implementation, or a recorded failure.
    pub fn expect_same(&mut self, what: &str, results: &[(String, u64)]) {
        let Some((first_imp, first)) = results.first() else {
            return;
        };
        for (imp, value) in results {
            if value != first {
                self.wrong_results.push(format!(
                    "{what}: {imp} computed {value}, {first_imp} computed {first}"
                ));
            }
        }
    }

    /// The benchmarks with results, in the order they ran.
    pub fn benches(&self) -> Vec<&'static str> {
        distinct(self.series.iter().map(|s| s.bench))
    }

    /// The series of one benchmark.
    pub fn of_bench<'a>(&'a self, bench: &'a str) -> impl Iterator<Item = &'a Series> + 'a {
        self.series.iter().filter(move |s| s.bench == bench)
    }
}

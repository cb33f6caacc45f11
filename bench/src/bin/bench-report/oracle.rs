//! The oracle's verdicts (`--oracle`): for each case of B7-B9 and each of
//! its latency metrics, per protocol, the best fixed budget in band and
//! the default's distance from it (`eventcount_bench::workload::oracle`).

use eventcount_bench::workload::oracle::{judge, Band, Measured, Oracle};
use eventcount_bench::workload::stats::median;
use eventcount_bench::workload::sweep::Protocol;

use crate::options::Options;
use crate::report::Report;
use crate::suite::pools::{label, protocol_pool, Contender, RAYON_AGAIN};

/// The latency metrics the oracle holds to the band, as B7-B9 name them.
pub const LATENCIES: [&str; 6] = [
    "p50 latency us",
    "p90 latency us",
    "tick p50 us",
    "tick p99 us",
    "region p50 us",
    "region p99 us",
];

/// The waste the oracle minimises.
pub const WASTE: &str = "wasted us/tick";

/// The baseline the band and the ratios are taken against.
const STOCK: &str = "rayon";

/// One row's verdict for one protocol.
#[derive(Debug)]
pub struct Row<'a> {
    pub bench: &'static str,
    pub case: &'a str,
    pub metric: &'static str,
    pub protocol: Protocol,
    pub oracle: Oracle,
}

/// Every row of the report that has a band, in the order measured.
pub fn rows<'a>(report: &'a Report, opts: &Options) -> Vec<Row<'a>> {
    let Some(protocols) = &opts.oracle else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for bench in report.benches() {
        let cases = crate::summary::distinct(report.of_bench(bench).map(|s| s.case.as_str()));
        for case in cases {
            let stock_wasted = median(&report.values(bench, case, STOCK, WASTE));
            for metric in LATENCIES {
                let ratio =
                    |imp: &str| median(&report.round_ratios(bench, case, imp, STOCK, metric));
                let Some(band) =
                    Band::of(&report.round_ratios(bench, case, RAYON_AGAIN, STOCK, metric))
                else {
                    continue;
                };
                let measured = |imp: &str| Measured {
                    latency_ratio: ratio(imp),
                    wasted_us: median(&report.values(bench, case, imp, WASTE)),
                };
                for &protocol in protocols.list() {
                    let budgets: Vec<(u32, Measured)> = opts
                        .budgets()
                        .us()
                        .iter()
                        .map(|&us| (us, measured(&Contender::Budget(protocol, us).label())))
                        .collect();
                    let default = measured(label(protocol_pool(protocol)));
                    rows.push(Row {
                        bench,
                        case,
                        metric,
                        protocol,
                        oracle: judge(band, stock_wasted, default, &budgets),
                    });
                }
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// Two rounds of `metric` in B7's case `c` for each implementation.
    fn record(report: &mut Report, metric: &'static str, values: &[(&str, [f64; 2])]) {
        for (imp, rounds) in values {
            for v in rounds {
                report.add("B7", "c", imp, metric, *v);
            }
        }
    }

    #[test]
    fn each_latency_of_a_case_gets_a_verdict_per_swept_protocol() {
        let opts = Options::parse_from(["bench-report", "--oracle", "jec", "--budgets", "0,25"]);
        let mut report = Report::default();
        record(
            &mut report,
            "p50 latency us",
            &[
                ("rayon", [100.0, 100.0]),
                (RAYON_AGAIN, [99.0, 102.0]),
                ("pool+jec", [100.0, 100.0]),
                ("pool+jec@0us", [140.0, 140.0]),
                ("pool+jec@25us", [101.0, 101.0]),
            ],
        );
        record(
            &mut report,
            WASTE,
            &[
                ("rayon", [30.0, 30.0]),
                (RAYON_AGAIN, [30.0, 30.0]),
                ("pool+jec", [9.0, 9.0]),
                ("pool+jec@0us", [1.0, 1.0]),
                ("pool+jec@25us", [6.0, 6.0]),
            ],
        );
        // A latency without a second rayon run has no band: no row.
        record(&mut report, "p90 latency us", &[("rayon", [1.0, 1.0])]);
        let rows = rows(&report, &opts);
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!(
            (row.bench, row.case, row.metric),
            ("B7", "c", "p50 latency us")
        );
        assert_eq!(row.oracle.best.unwrap().budget_us, 25);
        assert_eq!(row.oracle.distance(), Some(1.5));
        assert_eq!(row.oracle.stock_wasted_us, 30.0);
    }

    #[test]
    fn without_oracle_there_are_no_rows() {
        let opts = Options::parse_from(["bench-report"]);
        let mut report = Report::default();
        record(&mut report, "p50 latency us", &[("rayon", [1.0, 1.0])]);
        assert!(rows(&report, &opts).is_empty());
    }
}

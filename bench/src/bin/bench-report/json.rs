//! `--json` and `--json-file`: every series with its per-round values, the
//! checks, the load and the notes, for tools that compare runs.

use eventcount_bench::workload::source_commit;
use eventcount_bench::workload::stats::median;
use serde::Serialize;

use crate::machine::Machine;
use crate::options::Options;
use crate::oracle;
use crate::report::{Check, Report, Series};
use crate::summary::distinct;

#[derive(Serialize)]
struct Document<'a> {
    machine: &'a Machine,
    /// Which run a plot of these rows shows (docs/benchmarks.md, "Plots").
    commit: Option<String>,
    config: Config,
    rows: Vec<Row<'a>>,
    /// With `--oracle`: each row's best fixed budget in band, and the
    /// default's distance from it.
    oracle: Vec<OracleRow<'a>>,
    checks: &'a [Check],
    foreign_load_percent: InOrder<String, f64>,
    notes: &'a [String],
}

#[derive(Serialize)]
struct Config {
    rounds: u16,
    quick: bool,
    only: Vec<String>,
    /// The protocols that got the fixed budgets, and the budgets in µs.
    oracle: Option<Vec<&'static str>>,
    budgets_us: Option<Vec<u32>>,
}

/// One row of the oracle (see `oracle::Row`): its verdict as named
/// numbers, `null` where one does not exist (no budget in band, a ratio to
/// zero), and the same words as the tables.
#[derive(Serialize)]
struct OracleRow<'a> {
    bench: &'static str,
    case: &'a str,
    metric: &'static str,
    protocol: &'static str,
    #[serde(flatten)]
    verdict: InOrder<&'static str, Option<f64>>,
    default_in_band: bool,
    summary: String,
}

impl<'a> OracleRow<'a> {
    fn new(row: &oracle::Row<'a>) -> Self {
        OracleRow {
            bench: row.bench,
            case: row.case,
            metric: row.metric,
            protocol: row.protocol.name(),
            verdict: InOrder(row.oracle.fields().to_vec()),
            default_in_band: row.oracle.default_in_band(),
            summary: row.oracle.summary(),
        }
    }
}

/// One implementation in one case: each metric's median and its values
/// round by round.
#[derive(Serialize)]
struct Row<'a> {
    bench: &'static str,
    case: &'a str,
    #[serde(rename = "impl")]
    imp: &'a str,
    median: InOrder<&'static str, f64>,
    rounds: InOrder<&'static str, &'a [f64]>,
}

/// A JSON object whose keys keep the order they were measured in.
struct InOrder<K, V>(Vec<(K, V)>);

impl<K: Serialize, V: Serialize> Serialize for InOrder<K, V> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// The report as pretty-printed JSON (NaN and infinities as `null`).
pub fn render(report: &Report, machine: &Machine, opts: &Options) -> String {
    let keys = distinct(
        report
            .series
            .iter()
            .map(|s| (s.bench, s.case.as_str(), s.imp.as_str())),
    );
    let rows = keys
        .into_iter()
        .map(|(bench, case, imp)| {
            let series: Vec<&Series> = report
                .of_bench(bench)
                .filter(|s| s.case == case && s.imp == imp)
                .collect();
            Row {
                bench,
                case,
                imp,
                median: InOrder(
                    series
                        .iter()
                        .map(|s| (s.metric, median(&s.values)))
                        .collect(),
                ),
                rounds: InOrder(series.iter().map(|s| (s.metric, &s.values[..])).collect()),
            }
        })
        .collect();
    let document = Document {
        machine,
        commit: source_commit(),
        config: Config {
            rounds: opts.rounds,
            quick: opts.quick,
            only: opts.only().iter().map(|b| format!("B{b}")).collect(),
            oracle: opts
                .oracle
                .as_ref()
                .map(|p| p.list().iter().map(|p| p.name()).collect()),
            budgets_us: opts.oracle.as_ref().map(|_| opts.budgets().us().to_vec()),
        },
        rows,
        oracle: oracle::rows(report, opts)
            .iter()
            .map(OracleRow::new)
            .collect(),
        checks: &report.checks,
        foreign_load_percent: InOrder(
            report
                .foreign_load
                .iter()
                .map(|(id, pct)| (format!("B{id}"), *pct))
                .collect(),
        ),
        notes: &report.notes,
    };
    let mut json = serde_json::to_string_pretty(&document).expect("the report serializes");
    json.push('\n');
    json
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::suite::pools::RAYON_AGAIN;

    #[test]
    fn the_oracle_rows_carry_the_verdict_with_nulls_where_none_exists() {
        let mut report = Report::default();
        for (imp, latency, waste) in [
            ("rayon", 100.0, 20.0),
            (RAYON_AGAIN, 101.0, 20.0),
            ("pool+jec", 100.0, 10.0),
            ("pool+jec@25us", 100.0, 5.0),
        ] {
            for _ in 0..3 {
                report.add("B7", "c", imp, "p50 latency us", latency);
                report.add("B7", "c", imp, oracle::WASTE, waste);
            }
        }
        let machine = Machine {
            cpu: "CPU".into(),
            cpus: 2,
            kernel: "6.1".into(),
            rustc: "rustc".into(),
        };
        let opts = Options::parse_from(["bench-report", "--oracle", "jec", "--budgets", "25"]);
        let json: serde_json::Value =
            serde_json::from_str(&render(&report, &machine, &opts)).unwrap();
        assert_eq!(json["config"]["oracle"], serde_json::json!(["jec"]));
        assert_eq!(json["config"]["budgets_us"], serde_json::json!([25]));
        let row = &json["oracle"][0];
        assert_eq!(row["metric"], "p50 latency us");
        assert_eq!(row["protocol"], "jec");
        assert_eq!(row["oracle_budget_us"], 25.0);
        assert_eq!(row["distance"], 2.0);
        assert_eq!(row["nearest_budget_us"], serde_json::Value::Null);
        assert_eq!(row["default_in_band"], true);
        assert!(row["summary"].as_str().unwrap().starts_with("oracle 25us"));
    }
}

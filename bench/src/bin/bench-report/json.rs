//! `--json` and `--json-file`: every series with its per-round values, the
//! checks, the load and the notes, for tools that compare runs.

use eventcount_workload::source_commit;
use eventcount_workload::stats::median;
use serde::Serialize;

use crate::machine::Machine;
use crate::options::Options;
use crate::report::{Check, Report, Series};
use crate::summary::distinct;

#[derive(Serialize)]
struct Document<'a> {
    machine: &'a Machine,
    /// Which run a plot of these rows shows (docs/benchmarks.md, "Plots").
    commit: Option<String>,
    config: Config,
    rows: Vec<Row<'a>>,
    checks: &'a [Check],
    foreign_load_percent: InOrder<String, f64>,
    notes: &'a [String],
}

#[derive(Serialize)]
struct Config {
    rounds: u16,
    quick: bool,
    only: Vec<String>,
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
        },
        rows,
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

//! The result tables, whatever they are printed as: one per case of each
//! benchmark, one row per implementation, one column per metric; then the
//! oracle's rows and the targets; and the walk over a report that the text
//! and Markdown outputs share.

use crate::machine::Machine;
use crate::options::Options;
use crate::oracle;
use crate::report::{Check, Report, Series};
use crate::summary::distinct;

/// How one output prints each part of a report; [`render`] decides what
/// to print and in which order.
pub trait Format {
    /// What the run measured on, and how.
    fn heading(&self, out: &mut String, machine: &Machine, opts: &Options);

    /// The start of benchmark `bench`'s tables; `first` if none came before.
    fn bench(&self, out: &mut String, bench: &str, first: bool);

    /// One case's table.
    fn table(&self, out: &mut String, table: &CaseTable<'_>);

    /// After the last table.
    fn end_of_tables(&self, _out: &mut String) {}

    /// Before the oracle's rows (`--oracle`).
    fn oracle_heading(&self, out: &mut String);

    /// One row's oracle.
    fn oracle(&self, out: &mut String, row: &oracle::Row<'_>);

    /// Before the targets.
    fn targets_heading(&self, out: &mut String);

    /// One target and its verdict.
    fn target(&self, out: &mut String, check: &Check);

    /// Other processes' share of the machine: `B1 0.1%, B2 0.0%`.
    fn foreign_load(&self, out: &mut String, load: &str);

    /// One remark.
    fn note(&self, out: &mut String, note: &str);
}

/// `report` in `format`: the heading, every table, the targets, the load
/// and the notes (each part only if there is something in it).
pub fn render(report: &Report, machine: &Machine, opts: &Options, format: &impl Format) -> String {
    let mut out = String::new();
    format.heading(&mut out, machine, opts);
    let mut bench = "";
    for table in case_tables(report) {
        if table.bench != bench {
            format.bench(&mut out, table.bench, bench.is_empty());
            bench = table.bench;
        }
        format.table(&mut out, &table);
    }
    if !bench.is_empty() {
        format.end_of_tables(&mut out);
    }
    let oracle_rows = oracle::rows(report, opts);
    if !oracle_rows.is_empty() {
        format.oracle_heading(&mut out);
        for row in &oracle_rows {
            format.oracle(&mut out, row);
        }
        out.push('\n');
    }
    if !report.checks.is_empty() {
        format.targets_heading(&mut out);
        for check in &report.checks {
            format.target(&mut out, check);
        }
        out.push('\n');
    }
    if !report.foreign_load.is_empty() {
        let load: Vec<String> = report
            .foreign_load
            .iter()
            .map(|(id, pct)| format!("B{id} {pct:.1}%"))
            .collect();
        format.foreign_load(&mut out, &load.join(", "));
    }
    for note in &report.notes {
        format.note(&mut out, note);
    }
    out
}

/// The rows of one case of one benchmark.
#[derive(Debug)]
pub struct CaseTable<'a> {
    pub bench: &'static str,
    pub case: &'a str,
    pub metrics: Vec<&'static str>,
    /// Per implementation, the median of each metric (NaN where it has
    /// none).
    pub rows: Vec<(&'a str, Vec<f64>)>,
}

/// Every table of `report`, benchmarks and cases in the order they ran.
fn case_tables(report: &Report) -> Vec<CaseTable<'_>> {
    let mut tables = Vec::new();
    for bench in report.benches() {
        let series: Vec<&Series> = report.of_bench(bench).collect();
        for case in distinct(series.iter().map(|s| s.case.as_str())) {
            let in_case: Vec<&Series> = series.iter().copied().filter(|s| s.case == case).collect();
            let metrics = distinct(in_case.iter().map(|s| s.metric));
            let rows = distinct(in_case.iter().map(|s| s.imp.as_str()))
                .into_iter()
                .map(|imp| {
                    let medians = metrics
                        .iter()
                        .map(|m| report.median(bench, case, imp, m).unwrap_or(f64::NAN))
                        .collect();
                    (imp, medians)
                })
                .collect();
            tables.push(CaseTable {
                bench,
                case,
                metrics,
                rows,
            });
        }
    }
    tables
}

/// Four significant digits or so, `-` for a missing value.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "-".to_string()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

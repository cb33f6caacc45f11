//! The default output: aligned plain-text tables for a terminal.

use std::fmt::Write as _;

use crate::machine::Machine;
use crate::options::Options;
use crate::oracle;
use crate::report::Check;
use crate::suite;
use crate::tables::{number, CaseTable, Format};

/// Plain text.
pub struct Text;

impl Format for Text {
    fn heading(&self, out: &mut String, machine: &Machine, opts: &Options) {
        let _ = write!(
            out,
            "bench-report: {} | {} vCPUs | Linux {} | {} | {} rounds{}\n\
             every value is the median over rounds; ratios are taken within a round\n\n",
            machine.cpu,
            machine.cpus,
            machine.kernel,
            machine.rustc,
            opts.rounds,
            if opts.quick { " (quick)" } else { "" }
        );
    }

    fn bench(&self, out: &mut String, bench: &str, first: bool) {
        if !first {
            out.push('\n');
        }
        let _ = writeln!(out, "{bench}: {}", suite::title(bench));
    }

    fn table(&self, out: &mut String, table: &CaseTable<'_>) {
        let width = table
            .rows
            .iter()
            .map(|(imp, _)| imp.len())
            .max()
            .unwrap_or(4)
            .max(14);
        let column = |metric: &str| metric.len().max(9);
        let _ = write!(out, "  {:<width$}", table.case);
        for metric in &table.metrics {
            let _ = write!(out, " {metric:>w$}", w = column(metric));
        }
        out.push('\n');
        for (imp, medians) in &table.rows {
            let _ = write!(out, "  {imp:<width$}");
            for (metric, v) in table.metrics.iter().zip(medians) {
                let _ = write!(out, " {:>w$}", number(*v), w = column(metric));
            }
            out.push('\n');
        }
    }

    fn end_of_tables(&self, out: &mut String) {
        out.push('\n');
    }

    fn oracle_heading(&self, out: &mut String) {
        out.push_str(
            "oracle: per case and latency metric, the fixed budget with the least waste \
             whose latency ratio to rayon is at most the top of the rayon-vs-rayon band\n",
        );
    }

    fn oracle(&self, out: &mut String, row: &oracle::Row<'_>) {
        let _ = writeln!(
            out,
            "  {} {} | {} | {}: {}",
            row.bench,
            row.case,
            row.metric,
            row.protocol.name(),
            row.oracle.summary()
        );
    }

    fn targets_heading(&self, out: &mut String) {
        out.push_str("targets\n");
    }

    fn target(&self, out: &mut String, c: &Check) {
        let verdict = c.verdict.label();
        let _ = writeln!(
            out,
            "  {} {verdict:<8} {} -- {}",
            c.bench, c.target, c.measured
        );
    }

    fn foreign_load(&self, out: &mut String, load: &str) {
        let _ = writeln!(
            out,
            "other processes' share of the machine meanwhile: {load}"
        );
    }

    fn note(&self, out: &mut String, note: &str) {
        let _ = writeln!(out, "note: {note}");
    }
}

//! `--markdown`: the result tables of docs/benchmarks.md ("Results" and
//! the appendix's targets), ready to paste.

use std::fmt::Write as _;

use crate::machine::Machine;
use crate::options::Options;
use crate::oracle;
use crate::report::Check;
use crate::tables::{number, CaseTable, Format};

/// One `### B<n>` section per benchmark with a table per case, then the
/// targets, the load and the notes.
pub struct Markdown;

impl Format for Markdown {
    fn heading(&self, out: &mut String, machine: &Machine, opts: &Options) {
        let _ = write!(
            out,
            "Machine: {}, {} vCPUs, Linux {}, {}; {} rounds.\n\n",
            machine.cpu, machine.cpus, machine.kernel, machine.rustc, opts.rounds
        );
    }

    fn bench(&self, out: &mut String, bench: &str, _first: bool) {
        let _ = writeln!(out, "### {bench}\n");
    }

    fn table(&self, out: &mut String, table: &CaseTable<'_>) {
        let _ = writeln!(out, "| {} | {} |", table.case, table.metrics.join(" | "));
        let _ = writeln!(out, "|---|{}", "---:|".repeat(table.metrics.len()));
        for (imp, medians) in &table.rows {
            let cells: Vec<String> = medians.iter().map(|v| number(*v)).collect();
            let _ = writeln!(out, "| {imp} | {} |", cells.join(" | "));
        }
        out.push('\n');
    }

    fn oracle_heading(&self, out: &mut String) {
        out.push_str(
            "### Oracle\n\n| bench | case | latency | protocol | oracle, and the default against it |\n\
             |---|---|---|---|---|\n",
        );
    }

    fn oracle(&self, out: &mut String, row: &oracle::Row<'_>) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            row.bench,
            row.case,
            row.metric,
            row.protocol.name(),
            row.oracle.summary()
        );
    }

    fn targets_heading(&self, out: &mut String) {
        out.push_str("### Targets\n\n| bench | target | verdict | measured |\n|---|---|---|---|\n");
    }

    fn target(&self, out: &mut String, c: &Check) {
        let verdict = c.verdict.label();
        let _ = writeln!(
            out,
            "| {} | {} | {verdict} | {} |",
            c.bench, c.target, c.measured
        );
    }

    fn foreign_load(&self, out: &mut String, load: &str) {
        let _ = writeln!(
            out,
            "Other processes' share of the machine while each ran: {load}.\n"
        );
    }

    fn note(&self, out: &mut String, note: &str) {
        let _ = writeln!(out, "Note: {note}\n");
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::report::Report;
    use crate::tables::render;

    #[test]
    fn one_table_per_case_with_ratio_columns_and_the_targets() {
        let mut report = Report::default();
        for round in [1.0, 2.0, 3.0] {
            let values = [
                ("raw_futex".to_string(), 10.0 * round),
                ("notifier".to_string(), 9.0 * round),
            ];
            report.add_round(
                "B2",
                "unpinned",
                "p50 us/trip",
                &values,
                "raw_futex",
                "x raw_futex",
            );
        }
        report.add("B2", "unpinned", "notifier", "futex waits/trip", 1.5);
        report.check_ratios(
            "B2",
            "notifier <= 1.10x raw futex".into(),
            &[0.9; 3],
            1.1,
            false,
            "raw futex",
        );
        report.foreign_load.push((2, 0.25));
        report.note("a note".into());
        let machine = Machine {
            cpu: "CPU".into(),
            cpus: 2,
            kernel: "6.1".into(),
            rustc: "rustc 1.95.0".into(),
        };
        let opts = Options::parse_from(["bench-report", "--rounds", "3"]);
        assert_eq!(
            render(&report, &machine, &opts, &Markdown),
            "Machine: CPU, 2 vCPUs, Linux 6.1, rustc 1.95.0; 3 rounds.\n\
             \n\
             ### B2\n\
             \n\
             | unpinned | p50 us/trip | x raw_futex | futex waits/trip |\n\
             |---|---:|---:|---:|\n\
             | raw_futex | 20.00 | 1.000 | - |\n\
             | notifier | 18.00 | 0.900 | 1.500 |\n\
             \n\
             ### Targets\n\
             \n\
             | bench | target | verdict | measured |\n\
             |---|---|---|---|\n\
             | B2 | notifier <= 1.10x raw futex | MET | median 0.90x raw futex (rounds 0.90-0.90; 3 of 3 rounds meet it) |\n\
             \n\
             Other processes' share of the machine while each ran: B2 0.2%.\n\
             \n\
             Note: a note\n\
             \n"
        );
    }
}

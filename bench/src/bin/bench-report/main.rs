//! `cargo run --release -p eventcount-bench --bin bench-report`: short
//! versions of the benchmark suite B1-B9 (docs/benchmarks.md) in one
//! process, each implementation alternating with the others over several
//! rounds, printed as medians and as ratios taken within each round: as
//! text tables, as the Markdown of docs/benchmarks.md (`--markdown`) or as
//! JSON (`--json`, `--json-file`).
//!
//! Run with `--help` for the flags.

mod json;
mod load;
mod machine;
mod markdown;
mod options;
mod oracle;
mod report;
mod suite;
mod summary;
mod tables;
mod text;

use std::process::ExitCode;
use std::time::Instant;

use crate::load::LoadReading;
use crate::machine::Machine;
use crate::options::Options;
use crate::report::Report;

/// Above this share of the machine taken by other processes while a
/// benchmark ran, its numbers are flagged as unreliable.
const FOREIGN_LOAD_LIMIT_PERCENT: f64 = 5.0;

fn main() -> ExitCode {
    // B9's CPU hogs are this program again.
    eventcount_bench::workload::hog::run_if_hog();
    // A bad flag exits with status 2 and says what is wrong.
    let opts = Options::parse_checked();
    // Fail on an unwritable --json-file now, not after the benchmarks.
    if let Some(path) = &opts.json_file {
        if let Err(err) = std::fs::File::create(path) {
            eprintln!("bench-report: cannot write {}: {err}", path.display());
            return ExitCode::from(2);
        }
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "bench-report: this is a debug build; timings mean little. \
             Use `cargo run --release -p eventcount-bench --bin bench-report`."
        );
    }
    let machine = Machine::probe();
    let report = run_selected(&opts, &machine);
    let output = if opts.json {
        json::render(&report, &machine, &opts)
    } else if opts.markdown {
        tables::render(&report, &machine, &opts, &markdown::Markdown)
    } else {
        tables::render(&report, &machine, &opts, &text::Text)
    };
    print!("{output}");
    if let Some(path) = &opts.json_file {
        if let Err(err) = std::fs::write(path, json::render(&report, &machine, &opts)) {
            eprintln!("bench-report: cannot write {}: {err}", path.display());
            return ExitCode::from(2);
        }
    }
    if report.wrong_results.is_empty() {
        ExitCode::SUCCESS
    } else {
        for wrong in &report.wrong_results {
            eprintln!("bench-report: wrong result: {wrong}");
        }
        ExitCode::FAILURE
    }
}

/// Run the benchmarks `--only` selects, each with a reading of the load
/// other processes put on the machine meanwhile.
fn run_selected(opts: &Options, machine: &Machine) -> Report {
    let mut report = Report::default();
    let only = opts.only();
    for (id, _, run) in suite::SUITE {
        if !only.contains(&id) {
            continue;
        }
        let start = Instant::now();
        let load_before = LoadReading::now();
        run(&mut report, opts);
        let foreign = load_before
            .zip(LoadReading::now())
            .map(|(before, after)| after.foreign_percent(&before, machine.cpus));
        eprintln!(
            "bench-report: B{id} done in {:.1} s",
            start.elapsed().as_secs_f64()
        );
        if let Some(foreign) = foreign {
            report.foreign_load.push((id, foreign));
            if foreign > FOREIGN_LOAD_LIMIT_PERCENT {
                report.note(format!(
                    "B{id}: other processes kept {foreign:.0}% of the machine busy while it ran; \
                     its numbers are unreliable, run again on a quiet machine"
                ));
            }
        }
    }
    report
}

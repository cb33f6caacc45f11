//! `cargo run --release -p eventcount-bench --bin plots -- --report R --rayon B --tokio T --out docs/plots`:
//! every plot of docs/benchmarks.md ("Plots") as SVG, from one run's JSON:
//! `bench-report --json-file R`, `scripts/rayon-bench --json > B` and
//! `cargo run --release -p eventcount-interop -- tokio-bench --json > T`.
//! Any one of the three draws the plots it has the data for.
//!
//! Drawing is kept apart from measuring: the plots can be redrawn from a
//! committed run's JSON at any time, without the machine that ran it.

mod draw;
mod input;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{ArgGroup, Parser};

use crate::input::{Cpu, RayonJson, ReportJson, Run, TokioJson};

/// Draw the benchmark plots (SVG) from the JSON of bench-report, of
/// scripts/rayon-bench and of eventcount-interop's tokio-bench. Each plot's
/// title names the machine, the commit and the rounds of the run it shows.
#[derive(Parser, Debug)]
#[command(name = "plots", group(ArgGroup::new("input").required(true).multiple(true).args(["report", "rayon", "tokio"])))]
struct Options {
    /// bench-report's JSON (`--json-file F`): B2's round trips, and B7/B8
    /// on the example pool.
    #[arg(long, value_name = "F")]
    report: Option<PathBuf>,

    /// scripts/rayon-bench's JSON (`--json`): B7/B8 on the rayon drop-in.
    #[arg(long, value_name = "F")]
    rayon: Option<PathBuf>,

    /// eventcount-interop's `tokio-bench --json` (its standard output):
    /// tokio on eventcount against stock tokio, each case and metric.
    #[arg(long, value_name = "F")]
    tokio: Option<PathBuf>,

    /// Directory the SVG files go to; created if missing.
    #[arg(long, value_name = "DIR", default_value = "docs/plots")]
    out: PathBuf,

    /// How the titles name the machine [default: "the project's 2-vCPU VM"
    /// if the JSON says 2 vCPUs, else "a N-vCPU machine"]. Name it when
    /// the run was on another 2-vCPU machine.
    #[arg(long, value_name = "TEXT")]
    machine: Option<String>,

    /// The CPU on the y axis of the CPU-vs-latency plots.
    #[arg(long, value_enum, default_value_t = Cpu::Wasted)]
    cpu: Cpu,
}

/// The machine as the titles name it.
fn machine(flag: Option<&str>, run: &Run) -> String {
    match (flag, run.vcpus) {
        (Some(name), _) => name.to_string(),
        (None, Some(2)) => "the project's 2-vCPU VM".to_string(),
        (None, Some(n)) => format!("a {n}-vCPU machine"),
        (None, None) => "a machine the JSON does not name".to_string(),
    }
}

/// One plot to write, or why it cannot be drawn.
type Plot = (&'static str, Result<String, String>);

/// Every plot bench-report's JSON has the data for.
fn report_plots(report: &ReportJson, machine_flag: Option<&str>, cpu: Cpu) -> Vec<Plot> {
    let run = report.run();
    let machine = machine(machine_flag, &run);
    let missing =
        |bench: &str| format!("the report has no {bench} (bench-report --only ran without it)");
    let placements = report.round_trips();
    let b2 = if placements.is_empty() {
        Err(missing("B2"))
    } else {
        let mut svg = String::new();
        draw::round_trips(&mut svg, &placements, &run, &machine)
            .map(|()| svg)
            .map_err(|e| e.to_string())
    };
    let mut plots = vec![("b2-round-trip.svg", b2)];
    for (bench, file) in [
        ("B7", "pool-b7-cpu-latency.svg"),
        ("B8", "pool-b8-cpu-latency.svg"),
    ] {
        let plot = match report.scatter(bench, cpu) {
            None => Err(missing(bench)),
            Some(scatter) => {
                let mut svg = String::new();
                draw::scatter(&mut svg, &scatter, "example pool", &run, &machine)
                    .map(|()| svg)
                    .map_err(|e| e.to_string())
            }
        };
        plots.push((file, plot));
    }
    plots
}

/// Every plot rayon-bench's JSON has the data for.
fn rayon_plots(rayon: &RayonJson, machine_flag: Option<&str>, cpu: Cpu) -> Vec<Plot> {
    let run = rayon.run();
    let machine = machine(machine_flag, &run);
    [
        ("B7", "rayon-b7-cpu-latency.svg"),
        ("B8", "rayon-b8-cpu-latency.svg"),
    ]
    .into_iter()
    .map(|(bench, file)| {
        let plot = match rayon.scatter(bench, cpu) {
            None => Err(format!(
                "the rayon-bench JSON has no {bench} with both its latency and CPU rows"
            )),
            Some(scatter) => {
                let mut svg = String::new();
                draw::scatter(&mut svg, &scatter, "rayon drop-in", &run, &machine)
                    .map(|()| svg)
                    .map_err(|e| e.to_string())
            }
        };
        (file, plot)
    })
    .collect()
}

/// tokio-bench's one plot: every row its JSON has.
fn tokio_plots(tokio: &TokioJson, machine_flag: Option<&str>) -> Vec<Plot> {
    let run = tokio.run();
    let machine = machine(machine_flag, &run);
    let lines = tokio.lines();
    let plot = if lines.is_empty() {
        Err("the tokio-bench JSON has no rows".to_string())
    } else {
        let mut svg = String::new();
        draw::ratios(&mut svg, &lines, &run, &machine)
            .map(|()| svg)
            .map_err(|e| e.to_string())
    };
    vec![("tokio-ratios.svg", plot)]
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn main() -> ExitCode {
    // A bad flag exits with status 2 and says what is wrong.
    let opts = Options::parse();
    let flag = opts.machine.as_deref();
    let mut plots = Vec::new();
    let inputs = (|| -> Result<(), String> {
        if let Some(path) = &opts.report {
            let report = ReportJson::parse(&read(path)?)
                .map_err(|e| format!("{} is not bench-report's JSON: {e}", path.display()))?;
            plots.extend(report_plots(&report, flag, opts.cpu));
        }
        if let Some(path) = &opts.rayon {
            let rayon = RayonJson::parse(&read(path)?)
                .map_err(|e| format!("{} is not rayon-bench's JSON: {e}", path.display()))?;
            plots.extend(rayon_plots(&rayon, flag, opts.cpu));
        }
        if let Some(path) = &opts.tokio {
            let tokio = TokioJson::parse(&read(path)?)
                .map_err(|e| format!("{} is not tokio-bench's JSON: {e}", path.display()))?;
            plots.extend(tokio_plots(&tokio, flag));
        }
        std::fs::create_dir_all(&opts.out)
            .map_err(|e| format!("cannot create {}: {e}", opts.out.display()))
    })();
    if let Err(message) = inputs {
        eprintln!("plots: {message}");
        return ExitCode::from(2);
    }
    let mut written = 0;
    for (file, plot) in plots {
        let path = opts.out.join(file);
        match plot {
            Ok(svg) => match std::fs::write(&path, svg) {
                Ok(()) => {
                    println!("{}", path.display());
                    written += 1;
                }
                Err(e) => {
                    eprintln!("plots: cannot write {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            },
            Err(why) => eprintln!("plots: no {file}: {why}"),
        }
    }
    if written == 0 {
        eprintln!("plots: nothing to draw");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::fixtures::{RAYON, REPORT, TOKIO};

    #[test]
    fn every_plot_draws_from_the_fixtures_with_its_title_and_legend() {
        let report = ReportJson::parse(REPORT).unwrap();
        let rayon = RayonJson::parse(RAYON).unwrap();
        let tokio = TokioJson::parse(TOKIO).unwrap();
        let plots: Vec<Plot> = report_plots(&report, None, Cpu::Wasted)
            .into_iter()
            .chain(rayon_plots(&rayon, None, Cpu::Wasted))
            .chain(tokio_plots(&tokio, None))
            .collect();
        let files: Vec<&str> = plots.iter().map(|(f, _)| *f).collect();
        assert_eq!(
            files,
            [
                "b2-round-trip.svg",
                "pool-b7-cpu-latency.svg",
                "pool-b8-cpu-latency.svg",
                "rayon-b7-cpu-latency.svg",
                "rayon-b8-cpu-latency.svg",
                "tokio-ratios.svg"
            ]
        );
        for (file, plot) in plots {
            let svg = plot.unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(svg.starts_with("<svg"), "{file}");
            for text in ["the project&apos;s 2-vCPU VM", "commit"] {
                assert!(svg.contains(text), "{file} does not say {text:?}");
            }
            // One legend line per build, or per thing B2 draws.
            let legend: &[&str] = match file {
                "b2-round-trip.svg" => &["p90: median over rounds", "raw futex p50", "this crate"],
                f if f.starts_with("pool") => &["pool+jec", "rayon&apos;s own pool: the baseline"],
                "tokio-ratios.svg" => &[
                    "JecSleep, tokio&apos;s policy (IdlePolicy::tokio())",
                    "NotifierSleep, tokio&apos;s policy",
                    "JecSleep, eventcount&apos;s default policy",
                    "NotifierSleep, eventcount&apos;s default policy",
                    "grey band:",
                ],
                _ => &[
                    "jec-rayon",
                    "stock again, same round: the noise",
                    "grey box:",
                ],
            };
            for text in legend {
                assert_eq!(svg.matches(text).count(), 1, "{file}: {text:?}");
            }
            // Only the bench-report fixture is a --quick run.
            let from_report = file.starts_with("b2") || file.starts_with("pool");
            assert_eq!(
                svg.contains("NOT results"),
                from_report,
                "{file}: a --quick report, and only it, must say it is not results"
            );
        }
    }

    #[test]
    fn the_machine_is_named_by_the_flag_or_by_its_vcpus() {
        let mut run = RayonJson::parse(RAYON).unwrap().run();
        assert_eq!(machine(None, &run), "the project's 2-vCPU VM");
        assert_eq!(machine(Some("a laptop"), &run), "a laptop");
        run.vcpus = Some(16);
        assert_eq!(machine(None, &run), "a 16-vCPU machine");
    }

    #[test]
    fn a_missing_bench_is_a_reason_not_a_plot() {
        let rayon = RayonJson::parse(
            r#"{"rounds": 1, "rayon": "1.12.0", "rayon-core": "1.13.0", "rows": []}"#,
        )
        .unwrap();
        for (file, plot) in rayon_plots(&rayon, None, Cpu::Pool) {
            assert!(plot.unwrap_err().contains("no B"), "{file}");
        }
    }

    #[test]
    fn the_tokio_plot_has_a_labelled_line_per_row_of_the_json() {
        let tokio = TokioJson::parse(TOKIO).unwrap();
        let [(_, plot)] = &tokio_plots(&tokio, Some("a test machine"))[..] else {
            panic!("tokio-bench's JSON draws one plot");
        };
        let svg = plot.as_ref().unwrap();
        for line in tokio.lines() {
            assert_eq!(svg.matches(&line.label).count(), 1, "{}", line.label);
        }
        for text in [
            "a test machine",
            "commit 5c0ffee",
            "medians of 3 rounds",
            "tokio 1.54.1",
        ] {
            assert!(svg.contains(text), "the title does not say {text:?}");
        }
        assert!(
            !svg.contains("not placeable"),
            "every fixture row has ratios"
        );
    }

    #[test]
    fn a_tokio_row_without_ratios_is_drawn_and_says_so() {
        let zero = r#"{"commit": "5c0ffee", "vcpus": 2, "tokio": "1.54.1", "rounds": 1,
            "rows": [{"bench": "tokio", "case": "ticker, 2 workers",
                      "metric": "worker cpu us per 1 ms tick",
                      "medians": {"stock": 0.0, "jec": 2.0}, "x_stock": {}}]}"#;
        let plots = tokio_plots(&TokioJson::parse(zero).unwrap(), None);
        let svg = plots[0].1.as_ref().unwrap();
        assert!(svg.contains("ticker, 2 workers — worker cpu us per 1 ms tick"));
        assert!(svg.contains("not placeable (ratio ≤ 0 or none): jec"));
        assert!(
            !svg.contains("grey band"),
            "no stock again, no band to explain"
        );
    }

    #[test]
    fn a_tokio_run_without_rows_is_a_reason_not_a_plot() {
        let empty = r#"{"commit": null, "vcpus": 2, "tokio": "1.54.1", "rounds": 5, "rows": []}"#;
        let plots = tokio_plots(&TokioJson::parse(empty).unwrap(), None);
        assert!(plots[0].1.as_ref().unwrap_err().contains("no rows"));
    }

    #[test]
    fn an_input_is_required_and_any_one_suffices() {
        let err = Options::try_parse_from(["plots"]).unwrap_err().to_string();
        for flag in ["--report", "--rayon", "--tokio"] {
            assert!(err.contains(flag), "{err}");
            let opts = Options::try_parse_from(["plots", flag, "run.json"]).unwrap();
            let given = [&opts.report, &opts.rayon, &opts.tokio];
            assert_eq!(given.iter().filter(|p| p.is_some()).count(), 1, "{flag}");
        }
    }
}

//! Stock rayon against rayon on JecSleep and on NotifierSleep: the same
//! workloads (`interop/workload/main.rs`), built three times, run in
//! alternating order, reported as same-round ratios against stock rayon.
//!
//! A fourth run of stock rayon in every round (`stock again`) measures the
//! noise: its ratio to the first stock run would be 1.00 on a quiet
//! machine, and its spread over the rounds is the band a row must leave to
//! count as a real difference.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::cmd::{self, Error};
use crate::patch;
use crate::sources::{RAYON_CORE_VERSION, RAYON_VERSION};
use crate::Protocol;

#[derive(clap::Args)]
pub struct Options {
    /// Rounds; every round runs each build once per workload, in an order
    /// rotated by one each round.
    #[arg(long, default_value_t = 11)]
    rounds: usize,
    /// Print the rows as JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// The builds compared. `StockAgain` is the same binary as `Stock`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Build {
    Stock,
    Jec,
    Notifier,
    StockAgain,
}

impl Build {
    const ALL: [Build; 4] = [Build::Stock, Build::Jec, Build::Notifier, Build::StockAgain];

    /// The workload binary this build runs.
    fn binary(self) -> &'static str {
        match self {
            Build::Stock | Build::StockAgain => "workload-stock",
            Build::Jec => "workload-jec",
            Build::Notifier => "workload-notifier",
        }
    }
}

/// One workload run: what to pass the workload binary and which of its
/// outputs to report.
struct Case {
    bench: &'static str,
    label: String,
    args: Vec<String>,
    metrics: &'static [(&'static str, &'static str)],
}

fn cases(iters: u32) -> Vec<Case> {
    let mut cases = Vec::new();
    let timed: &[(&str, &str, &str)] = &[
        ("B5", "fib", "fib(25) cutoff 10"),
        ("B5", "tree", "tree sum 2^18-1 nodes, depth 10"),
        ("par", "sum", "par_iter().map().sum() over 10^7 u64"),
        ("par", "sort", "par_sort of 2^20 u64"),
    ];
    for &(bench, workload, label) in timed {
        for threads in [2, 8] {
            cases.push(Case {
                bench,
                label: format!("{label}, {threads} threads"),
                args: vec![workload.into(), threads.to_string()],
                metrics: &[("ms", "ms per run"), ("switches", "ctx switches per run")],
            });
        }
    }
    for threads in [2, 8] {
        cases.push(Case {
            bench: "B6",
            label: format!("idle 300 ms after a burst, {threads} threads"),
            args: vec!["idle".into(), threads.to_string()],
            metrics: &[("cpu_ms", "pool cpu ms"), ("switches", "ctx switches")],
        });
    }
    for threads in [2, 8] {
        for gap_us in [20, 200, 2000] {
            cases.push(Case {
                bench: "B7",
                label: format!("ticks of 8 x 5 us, gap {gap_us} us, {threads} threads"),
                args: vec![
                    "ticks".into(),
                    threads.to_string(),
                    gap_us.to_string(),
                    iters.to_string(),
                ],
                metrics: &[
                    ("cpu_us", "pool cpu us per tick"),
                    ("p50_us", "p50 latency us"),
                    ("p90_us", "p90 latency us"),
                    ("switches", "ctx switches per tick"),
                ],
            });
        }
    }
    cases
}

/// Build everything, run every case, print the report. Ok(false) if the
/// builds computed different results (a broken build must not be timed).
pub fn run(scratch: &Path, options: &Options) -> Result<bool, Error> {
    if options.rounds == 0 {
        return Err("--rounds must be at least 1".into());
    }
    let tree = patch::prepare(scratch)?;
    let binaries = build(scratch, &tree.root)?;
    let binary = |build: Build| binaries[&build.binary()].clone();

    let calibration = workload(&binary(Build::Stock), &["calibrate".to_string()])?;
    let iters = calibration["iters"].as_u64().unwrap_or(1) as u32;
    let useful_us = calibration["useful_us"].as_f64().unwrap_or(f64::NAN);

    let mut rows = Vec::new();
    let mut consistent = true;
    for case in cases(iters) {
        // values[metric][build] = one value per round.
        let mut values: BTreeMap<&str, BTreeMap<Build, Vec<f64>>> = BTreeMap::new();
        for round in 0..options.rounds {
            let mut checks = Vec::new();
            for build in rotated(&Build::ALL, round) {
                let report = workload(&binary(build), &case.args)?;
                for &(metric, _) in case.metrics {
                    let value = report[metric].as_f64().ok_or_else(|| {
                        format!("workload {:?} printed no {metric}: {report}", case.args)
                    })?;
                    values
                        .entry(metric)
                        .or_default()
                        .entry(build)
                        .or_default()
                        .push(value);
                }
                if let Some(check) = report["check"].as_u64() {
                    checks.push((build, check));
                }
            }
            if checks.windows(2).any(|w| w[0].1 != w[1].1) {
                eprintln!(
                    "{}: the builds computed different results: {checks:?}",
                    case.label
                );
                consistent = false;
            }
        }
        for &(metric, unit) in case.metrics {
            rows.push(Row::new(case.bench, &case.label, unit, &values[metric]));
        }
        if !options.json {
            eprintln!("done: {}", case.label);
        }
    }

    if options.json {
        let rows: Vec<Value> = rows.iter().map(Row::to_json).collect();
        let report = json!({
            "rayon-core": RAYON_CORE_VERSION,
            "rayon": RAYON_VERSION,
            "rounds": options.rounds,
            "tick_job_iters": iters,
            "tick_useful_us": useful_us,
            "rows": rows,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", table(&rows, options.rounds, useful_us));
    }
    Ok(consistent)
}

/// Write the three workload crates and build them (release), sharing one
/// target directory. Returns the binaries by name.
fn build(scratch: &Path, patched: &Path) -> Result<BTreeMap<&'static str, PathBuf>, Error> {
    let source = crate::repo_root().join("interop/workload/main.rs");
    let core = patched.join("rayon-core");
    let target = scratch.join("bench-target");
    let mut binaries = BTreeMap::new();
    for (name, protocol) in [
        ("workload-stock", None),
        ("workload-jec", Some(Protocol::Jec)),
        ("workload-notifier", Some(Protocol::Notifier)),
    ] {
        let rayon_core = match protocol {
            None => format!("\"={RAYON_CORE_VERSION}\""),
            Some(p) => format!(
                "{{ version = \"={RAYON_CORE_VERSION}\", features = [\"{}\"] }}",
                p.feature()
            ),
        };
        let patch = if protocol.is_none() {
            String::new()
        } else {
            format!(
                "\n[patch.crates-io]\nrayon-core = {{ path = {} }}\n",
                Value::String(core.display().to_string())
            )
        };
        let dir = scratch.join("bench").join(name);
        cmd::write(
            &dir.join("Cargo.toml"),
            &format!(
                r#"# Written by eventcount's rayon-interop.
[package]
name = "{name}"
version = "0.0.0"
edition = "2021"
publish = false

[[bin]]
name = "{name}"
path = {path}

[dependencies]
rayon = "={RAYON_VERSION}"
rayon-core = {rayon_core}
serde_json = "1"
{patch}
[workspace]
"#,
                path = Value::String(source.display().to_string()),
            ),
        )?;
        let manifest = dir.join("Cargo.toml");
        cmd::checked(
            cmd::cargo()
                .env("CARGO_TARGET_DIR", &target)
                .args(["build", "--release", "--quiet", "--manifest-path"])
                .arg(&manifest),
            Duration::from_secs(900),
        )?;
        // The build must run the protocol it is named for.
        let tree = cmd::checked(
            cmd::cargo()
                .args([
                    "tree",
                    "-e",
                    "features",
                    "-i",
                    "rayon-core",
                    "--manifest-path",
                ])
                .arg(&manifest),
            Duration::from_secs(300),
        )?;
        let runs = Protocol::enabled_in(&String::from_utf8_lossy(&tree.stdout));
        if runs != protocol {
            return Err(format!("{name} would run {runs:?}, not {protocol:?}"));
        }
        binaries.insert(name, target.join("release").join(name));
    }
    Ok(binaries)
}

/// Run one workload and parse its JSON report.
fn workload(binary: &Path, args: &[String]) -> Result<Value, Error> {
    let output = cmd::checked(
        std::process::Command::new(binary).args(args),
        Duration::from_secs(120),
    )?;
    serde_json::from_slice(&output.stdout).map_err(|err| {
        format!(
            "{} {args:?} printed something that is not JSON ({err}): {}",
            binary.display(),
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// `items` rotated left by `round` (ABCD, BCDA, ...), so no build always
/// runs first.
fn rotated<T: Copy>(items: &[T], round: usize) -> Vec<T> {
    let k = round % items.len();
    items[k..].iter().chain(&items[..k]).copied().collect()
}

/// One metric of one case: medians and same-round ratios.
struct Row {
    bench: &'static str,
    case: String,
    metric: &'static str,
    medians: BTreeMap<Build, f64>,
    /// Per build other than stock: (median, min, max) of the per-round
    /// ratios to stock.
    ratios: BTreeMap<Build, (f64, f64, f64)>,
}

impl Row {
    fn new(
        bench: &'static str,
        case: &str,
        metric: &'static str,
        values: &BTreeMap<Build, Vec<f64>>,
    ) -> Row {
        let medians = values.iter().map(|(&b, v)| (b, median(v))).collect();
        let stock = &values[&Build::Stock];
        let ratios = values
            .iter()
            .filter(|(&b, _)| b != Build::Stock)
            .filter_map(|(&b, v)| {
                // A round whose stock value is zero (an idle pool that burnt
                // no measurable CPU) has no ratio; it is left out.
                let r: Vec<f64> = v
                    .iter()
                    .zip(stock)
                    .filter(|&(_, &s)| s > 0.0)
                    .map(|(x, s)| x / s)
                    .collect();
                let min = r.iter().copied().reduce(f64::min)?;
                let max = r.iter().copied().reduce(f64::max)?;
                Some((b, (median(&r), min, max)))
            })
            .collect();
        Row {
            bench,
            case: case.to_string(),
            metric,
            medians,
            ratios,
        }
    }

    /// Where `build`'s median ratio sits against the stock-vs-stock band.
    fn verdict(&self, build: Build) -> &'static str {
        let (Some(&(ratio, _, _)), Some(&(_, low, high))) =
            (self.ratios.get(&build), self.ratios.get(&Build::StockAgain))
        else {
            return "-";
        };
        if ratio < low {
            "below"
        } else if ratio > high {
            "above"
        } else {
            "noise"
        }
    }

    fn to_json(&self) -> Value {
        let ratio = |b: Build| {
            self.ratios
                .get(&b)
                .map(|&(median, min, max)| json!({"median": median, "min": min, "max": max}))
        };
        json!({
            "bench": self.bench,
            "case": self.case,
            "metric": self.metric,
            "stock": self.medians.get(&Build::Stock),
            "jec": self.medians.get(&Build::Jec),
            "notifier": self.medians.get(&Build::Notifier),
            "jec_x_stock": ratio(Build::Jec),
            "notifier_x_stock": ratio(Build::Notifier),
            "stock_again_x_stock": ratio(Build::StockAgain),
            "jec_vs_noise": self.verdict(Build::Jec),
            "notifier_vs_noise": self.verdict(Build::Notifier),
        })
    }
}

fn table(rows: &[Row], rounds: usize, useful_us: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "rayon {RAYON_VERSION} / rayon-core {RAYON_CORE_VERSION}: stock, on JecSleep (jec), on \
         NotifierSleep (notifier); medians of {rounds} rounds in rotated order.\n\
         x stock = median of the per-round ratios to the same round's stock run (min-max \
         over the rounds). A second stock run in every round measures the noise; the last \
         two columns say where jec's and notifier's median ratio falls against its min-max \
         band: below, noise or above.\n\
         B7's useful work: 8 jobs take {useful_us:.1} us on one thread."
    );
    let _ = writeln!(
        out,
        "\n{:<4} {:<50} {:<21} {:>9} {:>9} {:>9}  {:>18} {:>18}  {:>17}  {:>5} {:>5}",
        "",
        "case",
        "metric",
        "stock",
        "jec",
        "notifier",
        "jec x stock",
        "notifier x stock",
        "noise",
        "jec",
        "ntf"
    );
    for row in rows {
        let ratio = |b: Build| {
            row.ratios
                .get(&b)
                .map(|&(m, lo, hi)| format!("{m:.2} ({lo:.2}-{hi:.2})"))
                .unwrap_or_default()
        };
        let noise = ratio(Build::StockAgain);
        let _ = writeln!(
            out,
            "{:<4} {:<50} {:<21} {:>9} {:>9} {:>9}  {:>18} {:>18}  {:>18}  {:>5} {:>5}",
            row.bench,
            row.case,
            row.metric,
            number(row.medians[&Build::Stock]),
            number(row.medians[&Build::Jec]),
            number(row.medians[&Build::Notifier]),
            ratio(Build::Jec),
            ratio(Build::Notifier),
            noise,
            row.verdict(Build::Jec),
            row.verdict(Build::Notifier),
        );
    }
    out
}

fn number(v: f64) -> String {
    match v.abs() {
        a if !a.is_finite() => "-".into(),
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.3}"),
    }
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

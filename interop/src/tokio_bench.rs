//! Stock tokio against tokio parked on eventcount's protocols
//! (`tokio-bench`): the workloads of `interop/tokio/workload.rs`, built
//! once per build, run in rotated order, reported as same-round ratios to
//! stock tokio with a stock-vs-stock band, as `bench` does for rayon.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use eventcount_bench::workload::stats::rotated;
use serde_json::{json, Value};

use crate::bench::{number, Row, STOCK_AGAIN};
use crate::cmd::{self, Error};
use crate::sources::TOKIO_VERSION;
use crate::tokio_patch::{self, TokioBuild};
use crate::Protocol;

#[derive(clap::Args)]
pub struct Options {
    /// Rounds; every round runs each build once per case, in an order
    /// rotated by one each round.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Worker counts to run every case at.
    #[arg(long, value_delimiter = ',', default_values_t = [2, 4])]
    workers: Vec<usize>,
    /// Run only these cases (spawn_many_local, ..., echo, ticker).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Print the rows as JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// The cases and what each reports: (case, metrics as (key, unit)).
const CASES: &[(&str, &[(&str, &str)])] = &[
    ("spawn_many_local", &[("us", "us per run")]),
    ("spawn_many_remote_idle", &[("us", "us per run")]),
    ("spawn_many_remote_busy1", &[("us", "us per run")]),
    ("spawn_many_remote_busy2", &[("us", "us per run")]),
    ("yield_many", &[("us", "us per run")]),
    ("ping_pong", &[("us", "us per run")]),
    ("chained_spawn", &[("us", "us per run")]),
    (
        "echo",
        &[
            ("p50_us", "p50 latency us"),
            ("p99_us", "p99 latency us"),
            ("cpu_us", "worker cpu us per request"),
        ],
    ),
    ("ticker", &[("cpu_us", "worker cpu us per 1 ms tick")]),
];

/// The builds compared with stock: each protocol on tokio's preset and on
/// eventcount's default policy, and stock with the port's timer edit only
/// (which the protocols' copy has too), so that a row shows that edit's
/// share apart from the protocol's.
fn builds() -> Vec<TokioBuild> {
    let mut builds = vec![TokioBuild::STOCK];
    for default_policy in [false, true] {
        for protocol in Protocol::ALL {
            builds.push(TokioBuild::on(protocol, default_policy));
        }
    }
    builds.push(TokioBuild::STOCK_TIMER_EDIT);
    builds
}

/// Build everything, run every case, print the report.
pub fn run(scratch: &Path, options: &Options) -> Result<bool, Error> {
    if options.rounds == 0 || options.workers.contains(&0) {
        return Err("--rounds and every --workers must be at least 1".into());
    }
    if let Some(unknown) = options
        .only
        .iter()
        .find(|c| !CASES.iter().any(|(case, _)| case == c))
    {
        return Err(format!("--only: unknown case {unknown:?}"));
    }
    let trees = tokio_patch::prepare(scratch)?;
    let builds = builds();
    let mut runs: Vec<(String, PathBuf)> = Vec::new();
    for &build in &builds {
        runs.push((build.name(), compile(scratch, build.tree(&trees), build)?));
    }
    runs.push((STOCK_AGAIN.to_string(), runs[0].1.clone()));

    let mut rows = Vec::new();
    for &(case, metrics) in CASES {
        if !options.only.is_empty() && !options.only.iter().any(|c| c == case) {
            continue;
        }
        for &workers in &options.workers {
            let mut values: BTreeMap<&str, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
            let order: Vec<(&str, &Path)> = runs
                .iter()
                .map(|(name, binary)| (name.as_str(), binary.as_path()))
                .collect();
            for round in 0..options.rounds {
                for (name, binary) in rotated(&order, round) {
                    let report = workload(binary, case, workers)?;
                    for &(metric, _) in metrics {
                        let value = report[metric].as_f64().ok_or_else(|| {
                            format!("workload {case} printed no {metric}: {report}")
                        })?;
                        values
                            .entry(metric)
                            .or_default()
                            .entry(name)
                            .or_default()
                            .push(value);
                    }
                }
            }
            let label = format!("{case}, {workers} workers");
            for &(metric, unit) in metrics {
                rows.push(Row::new("tokio", &label, unit, &values[metric]));
            }
            if !options.json {
                eprintln!("done: {label}");
            }
        }
    }
    let names: Vec<String> = runs.iter().map(|(name, _)| name.clone()).collect();
    if options.json {
        let report = json!({
            "commit": eventcount_bench::workload::source_commit(),
            "vcpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
            "tokio": TOKIO_VERSION,
            "rounds": options.rounds,
            "builds": names,
            "rows": rows.iter().map(Row::to_json).collect::<Vec<_>>(),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", table(&rows, &names, options.rounds));
    }
    Ok(true)
}

/// Write the workload crate of one build and build it (release); all
/// builds share one target directory. Returns the binary.
fn compile(scratch: &Path, tree: &Path, build: TokioBuild) -> Result<PathBuf, Error> {
    let name = format!("tokio-workload-{}", build.name());
    let dir = scratch.join("bench").join(&name);
    let features: Vec<String> = build
        .features()
        .split(',')
        .map(|f| format!("\"{f}\""))
        .collect();
    let path = |p: &Path| Value::String(p.display().to_string());
    cmd::write(
        &dir.join("Cargo.toml"),
        &format!(
            r#"# Written by eventcount's interop tool (tokio-bench).
[package]
name = "{name}"
version = "0.0.0"
edition = "2021"
publish = false

[[bin]]
name = "{name}"
path = {source}

[dependencies]
tokio = {{ version = "={TOKIO_VERSION}", features = [{features}] }}
serde_json = "1"

[patch.crates-io]
tokio = {{ path = {tree} }}

[workspace]
"#,
            source = path(&crate::repo_root().join("interop/tokio/workload.rs")),
            features = features.join(", "),
            tree = path(tree),
        ),
    )?;
    let target = scratch.join("bench-target");
    cmd::checked(
        cmd::bench_cargo()
            .env("CARGO_TARGET_DIR", &target)
            .args(["build", "--release", "--quiet", "--manifest-path"])
            .arg(dir.join("Cargo.toml")),
        Duration::from_secs(3600),
    )?;
    Ok(target.join("release").join(name))
}

/// Run one case and parse its JSON report.
fn workload(binary: &Path, case: &str, workers: usize) -> Result<Value, Error> {
    let output = cmd::checked(
        std::process::Command::new(binary).args([case, &workers.to_string()]),
        Duration::from_secs(300),
    )?;
    serde_json::from_slice(&output.stdout).map_err(|err| {
        format!(
            "{} {case} {workers} printed something that is not JSON ({err})",
            binary.display()
        )
    })
}

fn table(rows: &[Row], names: &[String], rounds: usize) -> String {
    let compared: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|&n| n != "stock" && n != STOCK_AGAIN)
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "tokio {TOKIO_VERSION}: stock, and tokio on eventcount ({}; `-default-policy` is \
         eventcount's default policy, the others IdlePolicy::tokio(); `stock-timer-edit` is \
         stock tokio with the port's timer edit alone); medians of {rounds} \
         rounds in rotated order. x stock = median of the per-round ratios to the same \
         round's stock run (min-max). The stock-again column is the noise band; the \
         verdicts say where each build's median ratio falls against it.",
        compared.join(", ")
    );
    let _ = write!(out, "\n{:<36} {:<26} {:>9}", "case", "metric", "stock");
    for name in &compared {
        let _ = write!(out, " {:>24}", format!("{name} x stock"));
    }
    let _ = writeln!(out, "  {:>18}  vs noise", "stock again");
    for row in rows {
        let _ = write!(
            out,
            "{:<36} {:<26} {:>9}",
            row.case,
            row.metric,
            number(row.medians["stock"])
        );
        for name in &compared {
            let _ = write!(out, " {:>24}", row.ratio_cell(name));
        }
        let _ = writeln!(out, "{}", row.noise_cells(&compared));
    }
    out
}

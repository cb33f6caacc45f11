//! Stock rayon against rayon on eventcount's protocols: the same workloads
//! (`interop/workload/main.rs`), built once per protocol, run in
//! alternating order, reported as same-round ratios against stock rayon.
//!
//! A second run of stock rayon in every round (`stock again`) measures the
//! noise: its ratio to the first stock run would be 1.00 on a quiet
//! machine, and its spread over the rounds is the band a row must leave to
//! count as a real difference.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use eventcount_workload::source_commit;
use eventcount_workload::stats::{median, rotated};
use eventcount_workload::ticks::GAPS;
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
    /// The builds to compare with stock rayon (always run, twice):
    /// comma-separated names from jec, jec-nocap, notifier, notifier-nocap,
    /// jec-rayon, pr1314-adaptive, pr1314-bounded, eigen, or `all`.
    #[arg(long, default_value = "jec,notifier", value_parser = parse_builds)]
    builds: Builds,
    /// Print the rows as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Run only these benches: comma-separated from B5, par, sat, B6, B7,
    /// B8 (all of them by default).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

/// One build of the workloads: stock rayon, or rayon-core patched onto a
/// protocol, with a policy (eventcount's default if none is named).
#[derive(Debug, PartialEq, Eq)]
pub struct Build {
    name: &'static str,
    /// None: stock rayon-core.
    protocol: Option<Protocol>,
    /// The patched rayon-core's policy feature, if not the default.
    policy: Option<&'static str>,
}

const STOCK: Build = Build {
    name: "stock",
    protocol: None,
    policy: None,
};

/// The second stock run of every round: the same binary as `STOCK`.
pub(crate) const STOCK_AGAIN: &str = "stock again";

const fn patched(name: &'static str, protocol: Protocol, policy: Option<&'static str>) -> Build {
    Build {
        name,
        protocol: Some(protocol),
        policy,
    }
}

const PATCHED: [Build; 8] = [
    patched("jec", Protocol::Jec, None),
    patched("jec-nocap", Protocol::Jec, Some("nocap")),
    patched("notifier", Protocol::Notifier, None),
    patched("notifier-nocap", Protocol::Notifier, Some("nocap")),
    patched("jec-rayon", Protocol::Jec, Some("rayon-policy")),
    patched("pr1314-adaptive", Protocol::Jec, Some("pr1314-adaptive")),
    patched("pr1314-bounded", Protocol::Jec, Some("pr1314-bounded")),
    patched("eigen", Protocol::Eigen, Some("rayon-policy")),
];

/// The `--builds` list: one value, so that `all` can stand for several.
#[derive(Clone, Debug)]
struct Builds(Vec<&'static Build>);

fn parse_builds(list: &str) -> Result<Builds, String> {
    if list == "all" {
        return Ok(Builds(PATCHED.iter().collect()));
    }
    list.split(',')
        .map(|name| {
            PATCHED.iter().find(|b| b.name == name).ok_or_else(|| {
                let known: Vec<&str> = PATCHED.iter().map(|b| b.name).collect();
                format!(
                    "unknown build {name:?}: expected {} or all",
                    known.join(", ")
                )
            })
        })
        .collect::<Result<_, _>>()
        .map(Builds)
}

impl Build {
    fn binary(&self) -> String {
        format!("workload-{}", self.name)
    }

    /// The rayon-core dependency of this build's workload crate.
    fn rayon_core(&self) -> String {
        let Some(protocol) = self.protocol else {
            return format!("\"={RAYON_CORE_VERSION}\"");
        };
        let mut features = vec![format!("\"{}\"", protocol.feature())];
        if let Some(policy) = self.policy {
            features.push(format!("\"{policy}\""));
        }
        format!(
            "{{ version = \"={RAYON_CORE_VERSION}\", features = [{}] }}",
            features.join(", ")
        )
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
        ("sat", "fold", "saturating fold, 2^22 items of 8 rounds"),
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
        for gap_us in GAPS.map(|gap| gap.as_micros()) {
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
                    ("wasted_us", "wasted cpu us per tick"),
                    ("p50_us", "p50 latency us"),
                    ("p90_us", "p90 latency us"),
                    ("switches", "ctx switches per tick"),
                ],
            });
        }
    }
    for threads in [2, 8] {
        for (shape, shape_label) in [
            ("full", "8 regions x 64 x 10 us, 10 ms"),
            ("light", "8 regions x 8 x 5 us, 1 ms"),
        ] {
            for (mode, mode_label) in [("regions", "install per region"), ("tick", "one install")] {
                cases.push(Case {
                    bench: "B8",
                    label: format!("{shape_label}, {mode_label}, {threads} threads"),
                    args: vec![
                        "control".into(),
                        threads.to_string(),
                        mode.into(),
                        shape.into(),
                        iters.to_string(),
                    ],
                    metrics: &[
                        ("cpu_cores", "pool cpu in cores"),
                        ("cpu_per_useful", "cpu / useful work"),
                        ("wasted_us", "wasted cpu us per tick"),
                        ("tick_p50_us", "tick p50 us"),
                        ("tick_p99_us", "tick p99 us"),
                        ("region_p50_us", "region p50 us"),
                        ("region_p99_us", "region p99 us"),
                        ("switches", "ctx switches per tick"),
                    ],
                });
            }
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
    let mut builds: Vec<&Build> = vec![&STOCK];
    builds.extend(options.builds.0.iter().copied());
    let binaries = build(scratch, &tree.root, &builds)?;
    // Every round runs the stock binary twice: as "stock" and "stock again".
    let mut runs: Vec<(&str, &Path)> = builds
        .iter()
        .map(|b| (b.name, binaries[b.name].as_path()))
        .collect();
    runs.push((STOCK_AGAIN, binaries[STOCK.name].as_path()));

    let calibration = workload(&binaries[STOCK.name], &["calibrate".to_string()])?;
    let iters = calibration["iters"].as_u64().unwrap_or(1) as u32;
    let useful_us = calibration["useful_us"].as_f64().unwrap_or(f64::NAN);

    let mut rows = Vec::new();
    let mut consistent = true;
    let known = ["B5", "par", "sat", "B6", "B7", "B8"];
    if let Some(unknown) = options.only.iter().find(|b| !known.contains(&b.as_str())) {
        return Err(format!(
            "--only: unknown bench {unknown:?}: expected some of {}",
            known.join(", ")
        ));
    }
    let chosen =
        |case: &Case| options.only.is_empty() || options.only.iter().any(|b| b == case.bench);
    for case in cases(iters).into_iter().filter(chosen) {
        // values[metric][build] = one value per round.
        let mut values: BTreeMap<&str, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
        for round in 0..options.rounds {
            let mut checks = Vec::new();
            for (name, binary) in rotated(&runs, round) {
                let report = workload(binary, &case.args)?;
                for &(metric, _) in case.metrics {
                    let value = report[metric].as_f64().ok_or_else(|| {
                        format!("workload {:?} printed no {metric}: {report}", case.args)
                    })?;
                    values
                        .entry(metric)
                        .or_default()
                        .entry(name)
                        .or_default()
                        .push(value);
                }
                if let Some(check) = report["check"].as_u64() {
                    checks.push((name, check));
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
    let names: Vec<&str> = runs.iter().map(|(name, _)| *name).collect();

    if options.json {
        let rows: Vec<Value> = rows.iter().map(Row::to_json).collect();
        let report = json!({
            // Which run a plot of these rows shows (docs/benchmarks.md, "Plots").
            "commit": source_commit(),
            "vcpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
            "rayon-core": RAYON_CORE_VERSION,
            "rayon": RAYON_VERSION,
            "rounds": options.rounds,
            "builds": names,
            "tick_job_iters": iters,
            "tick_useful_us": useful_us,
            "rows": rows,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", table(&rows, &names, options.rounds, useful_us));
    }
    Ok(consistent)
}

/// Write one workload crate per build and build them (release), sharing
/// one target directory. Returns the binaries by build name.
fn build(
    scratch: &Path,
    patched: &Path,
    builds: &[&Build],
) -> Result<BTreeMap<&'static str, PathBuf>, Error> {
    let source = crate::repo_root().join("interop/workload/main.rs");
    // The workloads themselves, by path: cargo builds them against the
    // rayon this manifest resolves, patched or not.
    let workload = crate::repo_root().join("workload");
    let core = patched.join("rayon-core");
    let target = scratch.join("bench-target");
    let mut binaries = BTreeMap::new();
    for build in builds {
        let name = build.binary();
        let patch = if build.protocol.is_none() {
            String::new()
        } else {
            format!(
                "\n[patch.crates-io]\nrayon-core = {{ path = {} }}\n",
                Value::String(core.display().to_string())
            )
        };
        let dir = scratch.join("bench").join(&name);
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
eventcount-workload = {{ path = {workload} }}
serde_json = "1"
{patch}
[workspace]
"#,
                path = Value::String(source.display().to_string()),
                rayon_core = build.rayon_core(),
                workload = Value::String(workload.display().to_string()),
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
        // The build must run the protocol and policy it is named for.
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
        let tree = String::from_utf8_lossy(&tree.stdout);
        let runs = (Protocol::enabled_in(&tree), crate::policy_enabled_in(&tree));
        if runs != (build.protocol, build.policy) {
            return Err(format!(
                "{name} would run {runs:?}, not {:?}",
                (build.protocol, build.policy)
            ));
        }
        binaries.insert(build.name, target.join("release").join(&name));
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

/// One metric of one case: medians and same-round ratios (tokio-bench
/// reports its rows with it too).
pub(crate) struct Row {
    pub(crate) bench: &'static str,
    pub(crate) case: String,
    pub(crate) metric: &'static str,
    pub(crate) medians: BTreeMap<String, f64>,
    /// Per build other than stock: (median, min, max) of the per-round
    /// ratios to stock.
    pub(crate) ratios: BTreeMap<String, (f64, f64, f64)>,
}

impl Row {
    pub(crate) fn new(
        bench: &'static str,
        case: &str,
        metric: &'static str,
        values: &BTreeMap<&str, Vec<f64>>,
    ) -> Row {
        let medians = values
            .iter()
            .map(|(&b, v)| (b.to_string(), median(v)))
            .collect();
        let stock = &values[STOCK.name];
        let ratios = values
            .iter()
            .filter(|(&b, _)| b != STOCK.name)
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
                Some((b.to_string(), (median(&r), min, max)))
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
    pub(crate) fn verdict(&self, build: &str) -> &'static str {
        let (Some(&(ratio, _, _)), Some(&(_, low, high))) =
            (self.ratios.get(build), self.ratios.get(STOCK_AGAIN))
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

    pub(crate) fn to_json(&self) -> Value {
        let ratios: serde_json::Map<String, Value> = self
            .ratios
            .iter()
            .map(|(b, &(median, min, max))| {
                (
                    b.clone(),
                    json!({"median": median, "min": min, "max": max, "vs_noise": self.verdict(b)}),
                )
            })
            .collect();
        json!({
            "bench": self.bench,
            "case": self.case,
            "metric": self.metric,
            "medians": self.medians,
            "x_stock": ratios,
        })
    }
}

fn table(rows: &[Row], names: &[&str], rounds: usize, useful_us: f64) -> String {
    let compared: Vec<&str> = names
        .iter()
        .copied()
        .filter(|&n| n != STOCK.name && n != STOCK_AGAIN)
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "rayon {RAYON_VERSION} / rayon-core {RAYON_CORE_VERSION}: stock, and rayon-core on \
         eventcount ({}); medians of {rounds} rounds in rotated order.\n\
         x stock = median of the per-round ratios to the same round's stock run (min-max \
         over the rounds). A second stock run in every round measures the noise; the \
         verdicts say where each build's median ratio falls against its min-max band: \
         below, noise or above.\n\
         B7's useful work: 8 jobs take {useful_us:.1} us on one thread.",
        compared.join(", ")
    );
    let _ = write!(
        out,
        "\n{:<4} {:<50} {:<21} {:>9}",
        "", "case", "metric", "stock"
    );
    for name in &compared {
        let _ = write!(out, " {:>9} {:>18}", name, format!("{name} x stock"));
    }
    let _ = writeln!(out, "  {:>18}  vs noise", "stock again x stock");
    for row in rows {
        let ratio = |b: &str| {
            row.ratios
                .get(b)
                .map(|&(m, lo, hi)| format!("{m:.2} ({lo:.2}-{hi:.2})"))
                .unwrap_or_default()
        };
        let _ = write!(
            out,
            "{:<4} {:<50} {:<21} {:>9}",
            row.bench,
            row.case,
            row.metric,
            number(row.medians[STOCK.name]),
        );
        for name in &compared {
            let _ = write!(
                out,
                " {:>9} {:>18}",
                number(row.medians[*name]),
                ratio(name)
            );
        }
        let verdicts: Vec<String> = compared
            .iter()
            .map(|n| format!("{n}: {}", row.verdict(n)))
            .collect();
        let _ = writeln!(out, "  {:>18}  {}", ratio(STOCK_AGAIN), verdicts.join(", "));
    }
    out
}

pub(crate) fn number(v: f64) -> String {
    match v.abs() {
        a if !a.is_finite() => "-".into(),
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.3}"),
    }
}

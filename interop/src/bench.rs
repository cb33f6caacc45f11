//! Stock rayon against rayon on eventcount's protocols: the same workloads
//! (`interop/workload/main.rs`), built once per protocol, run in
//! alternating order, reported as same-round ratios against stock rayon.
//!
//! A second run of stock rayon in every round (`stock again`) measures the
//! noise: its ratio to the first stock run would be 1.00 on a quiet
//! machine, and its spread over the rounds is the band a row must leave to
//! count as a real difference.
//!
//! With `--oracle`, the default build of each protocol named also runs
//! once per budget of `--budgets`, the budget passed in the environment
//! (those builds carry the shim's `fixed-budget` feature), in the cases
//! with a waste and a latency (B7-B9); each such row gets the oracle's
//! verdict (`eventcount_bench::workload::oracle`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use eventcount_bench::workload::hog::Hogs;
use eventcount_bench::workload::oracle::{judge, Band, Measured, Oracle};
use eventcount_bench::workload::source_commit;
use eventcount_bench::workload::stats::{median, rotated};
use eventcount_bench::workload::sweep::{gap_trace_name, Budgets, Protocol as Swept, Protocols};
use eventcount_bench::workload::ticks::GAPS;
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
    /// comma-separated names from jec, notifier, jec-rayon,
    /// notifier-rayon, pr1314-adaptive, pr1314-bounded, eigen, or `all`.
    #[arg(long, default_value = "jec,notifier", value_parser = parse_builds)]
    builds: Builds,
    /// Print the rows as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Run only these benches: comma-separated from B5, par, sat, B6, B7,
    /// B8, B9 (all of them by default).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// The oracle sweep: each protocol listed (jec, notifier) also runs
    /// with the default policy's search budget fixed at each of --budgets,
    /// in B7-B9, and each row reports the best budget whose latency stays
    /// in the stock-vs-stock band [default list: jec,notifier].
    #[arg(long, value_name = "LIST", num_args = 0..=1, default_missing_value = "jec,notifier")]
    oracle: Option<Protocols>,
    /// The fixed search budgets of --oracle, in µs [default: 0,10,25,50,100,200,500].
    #[arg(long, value_name = "LIST", requires = "oracle")]
    budgets: Option<Budgets>,
    /// Record the idle gaps of every run of a patched build on its own
    /// policy into DIR, one file per case and build (appended round after
    /// round), for `policy-sim --trace`: the builds get eventcount's
    /// `policy-tools` feature.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
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
    /// With the `fixed-budget` feature: a run with `BUDGET_VARIABLE` in
    /// its environment has its search budget fixed at that many µs; a run
    /// without it runs `policy`.
    fixed_budget: bool,
}

const STOCK: Build = Build {
    name: "stock",
    protocol: None,
    policy: None,
    fixed_budget: false,
};

/// The patched rayon-core's feature that fixes the search budget from
/// `BUDGET_VARIABLE` (the shim's `policy`).
const BUDGET_FEATURE: &str = "fixed-budget";

/// The environment variable the shim reads the fixed budget from, in µs.
const BUDGET_VARIABLE: &str = "EVENTCOUNT_SEARCH_BUDGET_US";

/// The build whose runs sweep `protocol`'s budgets: its default, which
/// also runs without one, the oracle's comparison.
fn sweep_build(protocol: Swept) -> &'static Build {
    let protocol = match protocol {
        Swept::Jec => Protocol::Jec,
        Swept::Notifier => Protocol::Notifier,
    };
    PATCHED
        .iter()
        .find(|b| b.protocol == Some(protocol) && b.policy.is_none())
        .expect("a default build per protocol")
}

/// The second stock run of every round: the same binary as `STOCK`.
pub(crate) const STOCK_AGAIN: &str = "stock again";

const fn patched(name: &'static str, protocol: Protocol, policy: Option<&'static str>) -> Build {
    Build {
        name,
        protocol: Some(protocol),
        policy,
        // The defaults also serve the oracle's budgets: no build more.
        fixed_budget: policy.is_none(),
    }
}

const PATCHED: [Build; 7] = [
    patched("jec", Protocol::Jec, None),
    patched("notifier", Protocol::Notifier, None),
    patched("jec-rayon", Protocol::Jec, Some("rayon-policy")),
    patched("notifier-rayon", Protocol::Notifier, Some("rayon-policy")),
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

    /// The rayon-core dependency of this build's workload crate, recording
    /// its gaps if `record`.
    fn rayon_core(&self, record: bool) -> String {
        let Some(protocol) = self.protocol else {
            return format!("\"={RAYON_CORE_VERSION}\"");
        };
        let mut features = vec![format!("\"{}\"", protocol.feature())];
        if record {
            features.push("\"policy-tools\"".to_string());
        }
        if let Some(policy) = self.policy {
            features.push(format!("\"{policy}\""));
        }
        if self.fixed_budget {
            features.push(format!("\"{BUDGET_FEATURE}\""));
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
    /// CPU-hog processes running meanwhile (B9).
    hogs: usize,
}

impl Case {
    /// Whether the case has a waste and a latency: the oracle's rows, the
    /// only cases its fixed budgets run in.
    fn has_oracle(&self) -> bool {
        self.metrics.iter().any(|(m, _)| *m == WASTE)
    }
}

/// The waste the oracle minimises, as the workload program names it.
const WASTE: &str = "wasted_us";

/// The latencies the oracle holds to the band, as the workload program
/// names them.
const LATENCIES: [&str; 6] = [
    "p50_us",
    "p90_us",
    "tick_p50_us",
    "tick_p99_us",
    "region_p50_us",
    "region_p99_us",
];

/// B7's metrics.
const TICKS_METRICS: &[(&str, &str)] = &[
    ("cpu_us", "pool cpu us per tick"),
    (WASTE, "wasted cpu us per tick"),
    ("p50_us", "p50 latency us"),
    ("p90_us", "p90 latency us"),
    ("switches", "ctx switches per tick"),
];

/// B8's metrics.
const CONTROL_METRICS: &[(&str, &str)] = &[
    ("cpu_cores", "pool cpu in cores"),
    ("cpu_per_useful", "cpu / useful work"),
    (WASTE, "wasted cpu us per tick"),
    ("tick_p50_us", "tick p50 us"),
    ("tick_p99_us", "tick p99 us"),
    ("region_p50_us", "region p50 us"),
    ("region_p99_us", "region p99 us"),
    ("switches", "ctx switches per tick"),
];

/// B8's shapes: the workload program's name, and the table's.
const SHAPES: [(&str, &str); 2] = [
    ("full", "8 regions x 64 x 10 us, 10 ms"),
    ("light", "8 regions x 8 x 5 us, 1 ms"),
];

/// B8's modes: the workload program's name, and the table's.
const MODES: [(&str, &str); 2] = [("regions", "install per region"), ("tick", "one install")];

/// B9's CPU hogs: one per vCPU of the machine the benchmarks are written
/// for, beside a pool of 2.
const HOGS: usize = 2;

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
                hogs: 0,
            });
        }
    }
    for threads in [2, 8] {
        cases.push(Case {
            bench: "B6",
            label: format!("idle 300 ms after a burst, {threads} threads"),
            args: vec!["idle".into(), threads.to_string()],
            metrics: &[("cpu_ms", "pool cpu ms"), ("switches", "ctx switches")],
            hogs: 0,
        });
    }
    for threads in [2, 8] {
        for gap_us in GAPS.map(|gap| gap.as_micros()) {
            cases.push(Case {
                bench: "B7",
                label: format!("ticks of 8 x 5 us, gap {gap_us} us, {threads} threads"),
                args: ticks_args(threads, gap_us, iters),
                metrics: TICKS_METRICS,
                hogs: 0,
            });
        }
    }
    for threads in [2, 8] {
        for (shape, shape_label) in SHAPES {
            for (mode, mode_label) in MODES {
                cases.push(Case {
                    bench: "B8",
                    label: format!("{shape_label}, {mode_label}, {threads} threads"),
                    args: control_args("control", threads, mode, shape, iters),
                    metrics: CONTROL_METRICS,
                    hogs: 0,
                });
            }
        }
    }
    // B9: oversubscription the pool did not choose, at 2 threads.
    for gap_us in GAPS.map(|gap| gap.as_micros()) {
        cases.push(Case {
            bench: "B9",
            label: format!("{HOGS} CPU hogs, B7 gap {gap_us} us, 2 threads"),
            args: ticks_args(2, gap_us, iters),
            metrics: TICKS_METRICS,
            hogs: HOGS,
        });
    }
    for (program, what, hogs) in [
        ("control", format!("{HOGS} CPU hogs"), HOGS),
        ("control-pair", "two pools at once".to_string(), 0),
    ] {
        for (shape, shape_label) in SHAPES {
            for (mode, mode_label) in MODES {
                cases.push(Case {
                    bench: "B9",
                    label: format!("{what}, B8 {shape_label}, {mode_label}, 2 threads"),
                    args: control_args(program, 2, mode, shape, iters),
                    metrics: CONTROL_METRICS,
                    hogs,
                });
            }
        }
    }
    cases
}

fn ticks_args(threads: u32, gap_us: u128, iters: u32) -> Vec<String> {
    vec![
        "ticks".into(),
        threads.to_string(),
        gap_us.to_string(),
        iters.to_string(),
    ]
}

fn control_args(program: &str, threads: u32, mode: &str, shape: &str, iters: u32) -> Vec<String> {
    vec![
        program.into(),
        threads.to_string(),
        mode.into(),
        shape.into(),
        iters.to_string(),
    ]
}

/// One run of a round: a build's binary, with a fixed budget in its
/// environment for the oracle's builds.
struct Run<'a> {
    name: String,
    binary: &'a Path,
    budget_us: Option<u32>,
    /// Where its gaps go, for a patched build on its own policy with
    /// `--record`: a directory, the file named by case and run.
    record: Option<&'a Path>,
}

/// Build everything, run every case, print the report. Ok(false) if the
/// builds computed different results (a broken build must not be timed).
pub fn run(scratch: &Path, options: &Options) -> Result<bool, Error> {
    if options.rounds == 0 {
        return Err("--rounds must be at least 1".into());
    }
    let known = ["B5", "par", "sat", "B6", "B7", "B8", "B9"];
    if let Some(unknown) = options.only.iter().find(|b| !known.contains(&b.as_str())) {
        return Err(format!(
            "--only: unknown bench {unknown:?}: expected some of {}",
            known.join(", ")
        ));
    }
    let tree = patch::prepare(scratch)?;
    let mut builds: Vec<&Build> = vec![&STOCK];
    builds.extend(options.builds.0.iter().copied());
    let sweep: &[Swept] = options.oracle.as_ref().map_or(&[], |p| p.list());
    let budgets = options.budgets.clone().unwrap_or_default();
    for &protocol in sweep {
        // The oracle measures the default against the budgets, which run
        // on the same build.
        let build = sweep_build(protocol);
        if !builds.contains(&build) {
            builds.push(build);
        }
    }
    let record = options.record.as_deref();
    if let Some(dir) = record {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let binaries = build(scratch, &tree.root, &builds, record.is_some())?;
    // Every round runs the stock binary twice, as "stock" and "stock
    // again", and a swept protocol's default build once more per budget.
    let mut runs: Vec<Run> = builds
        .iter()
        .map(|b| Run {
            name: b.name.to_string(),
            binary: binaries[b.name].as_path(),
            budget_us: None,
            record: record.filter(|_| b.protocol.is_some()),
        })
        .collect();
    for &protocol in sweep {
        for &us in budgets.us() {
            runs.push(Run {
                name: protocol.variant(us),
                binary: binaries[sweep_build(protocol).name].as_path(),
                budget_us: Some(us),
                record: None,
            });
        }
    }
    runs.push(Run {
        name: STOCK_AGAIN.to_string(),
        binary: binaries[STOCK.name].as_path(),
        budget_us: None,
        record: None,
    });

    let calibration = workload(
        &binaries[STOCK.name],
        &["calibrate".to_string()],
        None,
        None,
    )?;
    let iters = calibration["iters"].as_u64().unwrap_or(1) as u32;
    let useful_us = calibration["useful_us"].as_f64().unwrap_or(f64::NAN);

    let mut rows = Vec::new();
    let mut oracles = Vec::new();
    let mut consistent = true;
    let chosen =
        |case: &Case| options.only.is_empty() || options.only.iter().any(|b| b == case.bench);
    // A case that fails (a workload that crashed, a binary gone) ends the
    // run, but the cases measured before it are still printed: a long run
    // keeps what it measured.
    let mut failure = None;
    for case in cases(iters).into_iter().filter(chosen) {
        // The fixed budgets run only where the oracle has a row.
        let case_runs: Vec<&Run> = runs
            .iter()
            .filter(|r| r.budget_us.is_none() || case.has_oracle())
            .collect();
        match measure(&case, &case_runs, options.rounds, sweep, &budgets) {
            Ok(measured) => {
                consistent &= measured.consistent;
                rows.extend(measured.rows);
                oracles.extend(measured.oracles);
                if !options.json {
                    eprintln!("done: {}", case.label);
                }
            }
            Err(err) => {
                failure = Some(format!("{}: {err}", case.label));
                break;
            }
        }
    }
    let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();

    if options.json {
        let rows: Vec<Value> = rows.iter().map(Row::to_json).collect();
        let oracles: Vec<Value> = oracles.iter().map(OracleRow::to_json).collect();
        let report = json!({
            // Which run a plot of these rows shows (docs/benchmarks.md, "Plots").
            "commit": source_commit(),
            "vcpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
            "rayon-core": RAYON_CORE_VERSION,
            "rayon": RAYON_VERSION,
            "rounds": options.rounds,
            "builds": names,
            "oracle": sweep.iter().map(|p| p.name()).collect::<Vec<_>>(),
            "budgets_us": if sweep.is_empty() { Vec::new() } else { budgets.us().to_vec() },
            "tick_job_iters": iters,
            "tick_useful_us": useful_us,
            "rows": rows,
            "oracle_rows": oracles,
            // Set if a case failed: the rows are the cases before it.
            "failed": failure,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", table(&rows, &names, options.rounds, useful_us));
        if !oracles.is_empty() {
            print!("{}", oracle_table(&oracles));
        }
    }
    match failure {
        Some(err) => Err(format!(
            "{err} (the {} rows printed are the cases measured before it)",
            rows.len()
        )),
        None => Ok(consistent),
    }
}

/// What one case measured.
struct CaseResult {
    rows: Vec<Row>,
    oracles: Vec<OracleRow>,
    /// Whether every build computed the same result in every round.
    consistent: bool,
}

/// Run `case` on `runs` for `rounds` alternating rounds.
fn measure(
    case: &Case,
    runs: &[&Run],
    rounds: usize,
    sweep: &[Swept],
    budgets: &Budgets,
) -> Result<CaseResult, Error> {
    // Started for this case's runs; stopped when dropped, at its end.
    let _hogs = match case.hogs {
        0 => None,
        n => Some(Hogs::start(n).map_err(|e| format!("cannot start CPU hogs: {e}"))?),
    };
    let mut consistent = true;
    // values[metric][run] = one value per round.
    let mut values: BTreeMap<&str, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
    for round in 0..rounds {
        let mut checks = Vec::new();
        for run in rotated(runs, round) {
            let trace = run
                .record
                .map(|dir| dir.join(gap_trace_name(case.bench, &case.label, &run.name)));
            let report = workload(run.binary, &case.args, run.budget_us, trace.as_deref())?;
            for &(metric, _) in case.metrics {
                let value = report[metric].as_f64().ok_or_else(|| {
                    format!("workload {:?} printed no {metric}: {report}", case.args)
                })?;
                values
                    .entry(metric)
                    .or_default()
                    .entry(run.name.as_str())
                    .or_default()
                    .push(value);
            }
            if let Some(check) = report["check"].as_u64() {
                checks.push((run.name.as_str(), check));
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
    let case_rows: Vec<(&str, Row)> = case
        .metrics
        .iter()
        .map(|&(metric, unit)| {
            (
                metric,
                Row::new(case.bench, &case.label, unit, &values[metric]),
            )
        })
        .collect();
    let row_of = |metric: &str| case_rows.iter().find(|(m, _)| *m == metric).map(|(_, r)| r);
    let mut oracles = Vec::new();
    if let Some(waste) = row_of(WASTE) {
        for metric in LATENCIES {
            let Some(latency) = row_of(metric) else {
                continue;
            };
            for &protocol in sweep {
                if let Some(oracle) = oracle_of(latency, waste, protocol, budgets) {
                    oracles.push(OracleRow {
                        bench: case.bench,
                        case: case.label.clone(),
                        metric: latency.metric,
                        protocol,
                        oracle,
                    });
                }
            }
        }
    }
    Ok(CaseResult {
        rows: case_rows.into_iter().map(|(_, row)| row).collect(),
        oracles,
        consistent,
    })
}

/// One row's verdict for one swept protocol.
struct OracleRow {
    bench: &'static str,
    case: String,
    metric: &'static str,
    protocol: Swept,
    oracle: Oracle,
}

impl OracleRow {
    fn to_json(&self) -> Value {
        let mut object = serde_json::Map::new();
        object.insert("bench".into(), json!(self.bench));
        object.insert("case".into(), json!(self.case));
        object.insert("metric".into(), json!(self.metric));
        object.insert("protocol".into(), json!(self.protocol.name()));
        for (key, value) in self.oracle.fields() {
            object.insert(key.into(), json!(value));
        }
        object.insert(
            "default_in_band".into(),
            json!(self.oracle.default_in_band()),
        );
        object.insert("summary".into(), json!(self.oracle.summary()));
        Value::Object(object)
    }
}

/// The oracle of one latency row against the waste row of the same case,
/// for `protocol`: `None` without a band (no second stock run) or without
/// stock's waste.
fn oracle_of(latency: &Row, waste: &Row, protocol: Swept, budgets: &Budgets) -> Option<Oracle> {
    let &(_, low, high) = latency.ratios.get(STOCK_AGAIN)?;
    let band = Band { low, high };
    let measured = |name: &str| Measured {
        latency_ratio: latency.ratios.get(name).map_or(f64::NAN, |r| r.0),
        wasted_us: waste.medians.get(name).copied().unwrap_or(f64::NAN),
    };
    let default = sweep_build(protocol);
    let swept: Vec<(u32, Measured)> = budgets
        .us()
        .iter()
        .map(|&us| (us, measured(&protocol.variant(us))))
        .collect();
    let stock = *waste.medians.get(STOCK.name)?;
    Some(judge(band, stock, measured(default.name), &swept))
}

fn oracle_table(oracles: &[OracleRow]) -> String {
    let mut out = String::from(
        "\noracle: per case and latency metric, the fixed budget with the least waste whose \
         latency ratio to stock is at most the top of the stock-vs-stock band\n",
    );
    for o in oracles {
        let _ = writeln!(
            out,
            "{:<4} {} | {} | {}: {}",
            o.bench,
            o.case,
            o.metric,
            o.protocol.name(),
            o.oracle.summary()
        );
    }
    out
}

/// Write one workload crate per build and build them (release), sharing
/// one target directory. Returns the binaries by build name.
fn build(
    scratch: &Path,
    patched: &Path,
    builds: &[&Build],
    record: bool,
) -> Result<BTreeMap<&'static str, PathBuf>, Error> {
    let source = crate::repo_root().join("interop/workload/main.rs");
    // The workloads themselves, by path: cargo builds them against the
    // rayon this manifest resolves, patched or not.
    let workload = crate::repo_root().join("bench");
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
eventcount-bench = {{ path = {workload}, default-features = false, features = ["rayon"] }}
serde_json = "1"
{patch}
[workspace]
"#,
                path = Value::String(source.display().to_string()),
                rayon_core = build.rayon_core(record),
                workload = Value::String(workload.display().to_string()),
            ),
        )?;
        let manifest = dir.join("Cargo.toml");
        cmd::checked(
            cmd::bench_cargo()
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
        let fixed = tree.contains(&format!("rayon-core feature \"{BUDGET_FEATURE}\""));
        let runs = (
            Protocol::enabled_in(&tree),
            crate::policy_enabled_in(&tree),
            fixed,
        );
        if runs != (build.protocol, build.policy, build.fixed_budget) {
            return Err(format!(
                "{name} would run {runs:?} (protocol, policy, fixed budget), not {:?}",
                (build.protocol, build.policy, build.fixed_budget)
            ));
        }
        binaries.insert(build.name, target.join("release").join(&name));
    }
    Ok(binaries)
}

/// Run one workload and parse its JSON report.
/// With `budget_us`, the budget goes in the run's environment; without,
/// the variable is removed from it, so that a build with the
/// `fixed-budget` feature runs its own policy whatever the caller's
/// environment holds.
/// With `trace`, the workers' idle gaps are appended to that file.
fn workload(
    binary: &Path,
    args: &[String],
    budget_us: Option<u32>,
    trace: Option<&Path>,
) -> Result<Value, Error> {
    let mut command = std::process::Command::new(binary);
    command.args(args);
    match trace {
        Some(path) => command.env("EVENTCOUNT_GAP_TRACE", path),
        None => command.env_remove("EVENTCOUNT_GAP_TRACE"),
    };
    match budget_us {
        Some(us) => command.env(BUDGET_VARIABLE, us.to_string()),
        None => command.env_remove(BUDGET_VARIABLE),
    };
    let output = cmd::checked(&mut command, Duration::from_secs(120))?;
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

    /// `build`'s median, NaN if it did not run in this case.
    fn median(&self, build: &str) -> f64 {
        self.medians.get(build).copied().unwrap_or(f64::NAN)
    }

    /// `build`'s ratio cell: the median ratio to stock and its min-max over
    /// the rounds, empty if it has none. Both reports' tables print it.
    pub(crate) fn ratio_cell(&self, build: &str) -> String {
        self.ratios
            .get(build)
            .map(|&(m, lo, hi)| format!("{m:.2} ({lo:.2}-{hi:.2})"))
            .unwrap_or_default()
    }

    /// The row's last two columns in both reports' tables: the stock-again
    /// ratio cell (the noise band), then where each of `compared` falls
    /// against it.
    pub(crate) fn noise_cells(&self, compared: &[&str]) -> String {
        let verdicts: Vec<String> = compared
            .iter()
            .map(|n| format!("{n}: {}", self.verdict(n)))
            .collect();
        format!(
            "  {:>18}  {}",
            self.ratio_cell(STOCK_AGAIN),
            verdicts.join(", ")
        )
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
        let _ = write!(
            out,
            "{:<4} {:<50} {:<21} {:>9}",
            row.bench,
            row.case,
            row.metric,
            number(row.median(STOCK.name)),
        );
        for name in &compared {
            let _ = write!(
                out,
                " {:>9} {:>18}",
                number(row.median(name)),
                row.ratio_cell(name)
            );
        }
        let _ = writeln!(out, "{}", row.noise_cells(&compared));
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        options: Options,
    }

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        Cli::try_parse_from(std::iter::once("bench").chain(args.iter().copied())).map(|c| c.options)
    }

    #[test]
    fn oracle_alone_sweeps_both_protocols_over_every_budget() {
        let options = parse(&["--oracle", "--rounds", "3"]).unwrap();
        assert_eq!(options.oracle, Some(Protocols::default()));
        assert_eq!(options.budgets, None);
        let options = parse(&["--oracle", "jec", "--budgets", "25"]).unwrap();
        assert_eq!(options.oracle.unwrap().list(), &[Swept::Jec]);
        assert_eq!(options.budgets.unwrap().us(), &[25]);
        assert!(parse(&[]).unwrap().oracle.is_none());
    }

    #[test]
    fn bad_oracle_flags_are_errors() {
        for (args, expected) in [
            (&["--budgets", "25"][..], "--oracle"),
            (&["--oracle", "eigen"][..], "expected jec or notifier"),
            (
                &["--oracle", "--budgets", "2000000"][..],
                "above the largest",
            ),
        ] {
            let message = parse(args).err().expect("an error").to_string();
            assert!(message.contains(expected), "{args:?}: {message}");
        }
    }

    #[test]
    fn a_swept_protocol_runs_its_budgets_on_its_default_build() {
        for protocol in Swept::ALL {
            let build = sweep_build(protocol);
            assert_eq!(build.name, protocol.name());
            assert_eq!(build.policy, None);
            assert!(build.fixed_budget);
            assert!(build
                .rayon_core(false)
                .contains(&format!("\"{BUDGET_FEATURE}\"")));
        }
        // Only the defaults carry the feature.
        for build in PATCHED.iter().filter(|b| b.policy.is_some()) {
            assert!(!build.fixed_budget && !build.rayon_core(false).contains(BUDGET_FEATURE));
            assert!(build.rayon_core(true).contains("\"policy-tools\""));
        }
    }

    #[test]
    fn the_shim_and_the_patch_know_the_fixed_budget() {
        assert!(patch::SHIM.contains(&format!("cfg!(feature = \"{BUDGET_FEATURE}\")")));
        assert!(patch::SHIM.contains(&format!("\"{BUDGET_VARIABLE}\"")));
        assert!(patch::SHIM.contains("IdlePolicy::fixed_budget("));
    }

    #[test]
    fn b9_runs_at_two_threads_and_the_oracle_only_where_waste_is_measured() {
        let cases = cases(100);
        let b9: Vec<&Case> = cases.iter().filter(|c| c.bench == "B9").collect();
        assert_eq!(b9.len(), 3 + 4 + 4);
        assert!(b9
            .iter()
            .all(|c| c.args[1] == "2" && c.label.ends_with("2 threads")));
        assert_eq!(b9.iter().filter(|c| c.hogs == HOGS).count(), 7);
        assert_eq!(b9.iter().filter(|c| c.args[0] == "control-pair").count(), 4);
        for case in &cases {
            let expected = matches!(case.bench, "B7" | "B8" | "B9");
            assert_eq!(case.has_oracle(), expected, "{}", case.label);
            assert!(case.hogs == 0 || case.bench == "B9");
        }
    }

    /// Values of one metric per run, over two rounds.
    fn values<'a>(runs: &[(&'a str, [f64; 2])]) -> BTreeMap<&'a str, Vec<f64>> {
        runs.iter().map(|(name, v)| (*name, v.to_vec())).collect()
    }

    #[test]
    fn the_oracle_of_a_row_comes_from_its_latency_and_waste_rows() {
        let latency = Row::new(
            "B7",
            "case",
            "p50 latency us",
            &values(&[
                ("stock", [100.0, 100.0]),
                (STOCK_AGAIN, [98.0, 103.0]),
                ("jec", [101.0, 101.0]),
                ("jec@0us", [150.0, 150.0]),
                ("jec@25us", [102.0, 102.0]),
            ]),
        );
        let waste = Row::new(
            "B7",
            "case",
            "wasted cpu us per tick",
            &values(&[
                ("stock", [20.0, 20.0]),
                (STOCK_AGAIN, [20.0, 20.0]),
                ("jec", [12.0, 12.0]),
                ("jec@0us", [2.0, 2.0]),
                ("jec@25us", [8.0, 8.0]),
            ]),
        );
        let swept: Budgets = "0,25".parse().unwrap();
        let oracle = oracle_of(&latency, &waste, Swept::Jec, &swept).unwrap();
        assert_eq!((oracle.band.low, oracle.band.high), (0.98, 1.03));
        let best = oracle.best.unwrap();
        assert_eq!(best.budget_us, 25, "0 us is out of band");
        assert_eq!(oracle.distance(), Some(1.5));
        let json = OracleRow {
            bench: "B7",
            case: "case".into(),
            metric: latency.metric,
            protocol: Swept::Jec,
            oracle,
        }
        .to_json();
        assert_eq!(json["oracle_budget_us"], 25.0);
        assert_eq!(json["distance"], 1.5);
        assert_eq!(json["default_in_band"], true);
        // No second stock run: no band, no oracle.
        let mut no_band = latency;
        no_band.ratios.remove(STOCK_AGAIN);
        assert!(oracle_of(&no_band, &waste, Swept::Jec, &swept).is_none());
    }
}

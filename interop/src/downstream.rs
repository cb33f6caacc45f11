//! `downstream-check`: a project of its own on an exported rayon-core,
//! built and tested the way a user's would be.
//!
//! It exports a copy (eventcount by path to this checkout, which is not on
//! crates.io), writes a small crate that depends on rayon as a user would,
//! with the `[patch.crates-io]` lines that `export` prints, and runs its
//! `cargo test`: a `par_iter` sum, a `join` recursion, and the line its
//! pool prints with `EVENTCOUNT_LOG=1`, which proves the build runs the
//! patched copy on the chosen protocol and policy.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cmd::{self, Error};
use crate::export::{self, Eventcount};
use crate::sources::RAYON_CORE_VERSION;
use crate::{suite, Policy, Protocol};

#[derive(clap::Args)]
pub struct Options {
    /// The protocol the copy is exported with.
    #[arg(long, value_enum, default_value_t = Protocol::Notifier)]
    protocol: Protocol,
    /// The idle policy the copy is exported with.
    #[arg(long, value_enum, default_value_t = Policy::Default)]
    policy: Policy,
}

/// The threads of the pool whose line the check reads: not the machine's
/// core count, so that the line says the pool's size was passed through.
const LOGGED_THREADS: usize = 3;

/// The crate's tests: as `cargo test` names them, so that each must pass.
const TESTS: [&str; 3] = [
    "par_iter_sum_is_the_sequential_sum",
    "join_computes_fib",
    "the_log_names_the_protocol_and_policy",
];

/// Export, write the crate, run its tests. Ok(true) when all of them pass.
pub fn run(scratch: &Path, options: &Options) -> Result<bool, Error> {
    let start = Instant::now();
    let dir = scratch.join("downstream");
    cmd::remove_tree(&dir)?;
    let exported = export::export(
        scratch,
        &dir.join("rayon-core"),
        options.protocol,
        options.policy,
        &Eventcount::Path(crate::repo_root()),
        false,
    )?;
    let project = dir.join("project");
    write_project(&project, &exported)?;

    // Its own target directory, outside `dir`, so that a second run
    // rebuilds only what changed.
    let mut command = cmd::cargo();
    command
        .current_dir(&project)
        .env("CARGO_TARGET_DIR", scratch.join("downstream-target"))
        .env_remove("EVENTCOUNT_LOG")
        .args(["test", "--no-fail-fast"]);
    let output = cmd::output_within(&mut command, Duration::from_secs(900))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let log = scratch.join("logs").join("downstream.log");
    cmd::write(&log, &format!("{stderr}\n{stdout}"))?;
    if stderr.contains("was not used in the crate graph") {
        return Err(format!(
            "cargo did not use the exported rayon-core (see {}):\n{stderr}",
            log.display()
        ));
    }
    if stderr.contains("could not compile") {
        return Err(format!(
            "the downstream crate did not build (see {}):\n{stderr}",
            log.display()
        ));
    }

    let counts = suite::parse(&stdout);
    let passed: Vec<&str> = TESTS
        .into_iter()
        .filter(|t| stdout.contains(&format!("test {t} ... ok")))
        .collect();
    let all_passed = output.status.success() && passed.len() == TESTS.len();
    println!(
        "downstream crate on rayon-core {RAYON_CORE_VERSION} exported for {} (policy {}): \
         {} passed, {} failed    ({:.0} s)",
        options.protocol.feature(),
        options.policy.name(),
        counts.passed,
        counts.failed,
        start.elapsed().as_secs_f64()
    );
    for test in TESTS.iter().filter(|t| !passed.contains(t)) {
        println!("  FAILED or not run: {test}");
    }
    if !all_passed {
        println!("  the whole output: {}", log.display());
    }
    Ok(all_passed)
}

/// The downstream crate: rayon as a user depends on it, the lines `export`
/// printed, a binary whose pool logs its line, and the tests.
fn write_project(project: &Path, exported: &export::Exported) -> Result<(), Error> {
    cmd::write(
        &project.join("Cargo.toml"),
        &format!(
            r#"# Written by eventcount's rayon-interop downstream-check: a project that
# uses rayon, patched as `export` says.
[package]
name = "downstream-check"
version = "0.0.0"
edition = "2021"
publish = false

{lines}
[workspace]
"#,
            lines = exported.project_lines()
        ),
    )?;
    cmd::write(
        &project.join("src").join("main.rs"),
        &format!(
            r#"//! One pool and one join: with EVENTCOUNT_LOG=1, the pool's line.
fn main() {{
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads({LOGGED_THREADS})
        .build()
        .expect("a pool");
    let (a, b) = pool.install(|| rayon::join(|| 1, || 2));
    println!("{{}}", a + b);
}}
"#
        ),
    )?;
    // A Rust string literal of the line, for the test to compare with.
    let expected = format!("{:?}", exported.log_line(LOGGED_THREADS));
    cmd::write(
        &project.join("tests").join("downstream.rs"),
        &format!(
            r#"//! rayon as a project uses it, on the exported rayon-core.
use rayon::prelude::*;
use std::process::Command;

#[test]
fn {sum}() {{
    let items: Vec<u64> = (0..1_000_000).collect();
    let parallel: u64 = items.par_iter().map(|x| x * x % 1_000_003).sum();
    let sequential: u64 = items.iter().map(|x| x * x % 1_000_003).sum();
    assert_eq!(parallel, sequential);
}}

fn fib(n: u64) -> u64 {{
    if n < 12 {{
        return if n < 2 {{ n }} else {{ fib(n - 1) + fib(n - 2) }};
    }}
    let (a, b) = rayon::join(|| fib(n - 1), || fib(n - 2));
    a + b
}}

#[test]
fn {fib}() {{
    assert_eq!(fib(27), 196_418);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    assert_eq!(pool.install(|| fib(27)), 196_418);
}}

/// What the crate's binary prints to stderr with EVENTCOUNT_LOG set to
/// `value`, or unset.
fn stderr_with(value: Option<&str>) -> String {{
    let mut command = Command::new(env!("CARGO_BIN_EXE_downstream-check"));
    match value {{
        Some(value) => command.env("EVENTCOUNT_LOG", value),
        None => command.env_remove("EVENTCOUNT_LOG"),
    }};
    let output = command.output().expect("the crate's binary runs");
    assert!(output.status.success(), "{{output:?}}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "3\n");
    String::from_utf8(output.stderr).unwrap()
}}

#[test]
fn {log}() {{
    assert_eq!(stderr_with(Some("1")), concat!({expected}, "\n"));
    assert_eq!(stderr_with(None), "");
    assert_eq!(stderr_with(Some("0")), "");
}}
"#,
            sum = TESTS[0],
            fib = TESTS[1],
            log = TESTS[2],
        ),
    )?;
    Ok(())
}

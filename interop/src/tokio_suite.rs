//! tokio's own tests of its multi-thread runtime, on stock tokio and on
//! tokio parked on each of eventcount's protocols (`tokio-suite`).
//!
//! The tests are the files under tokio's `tests/` that use the
//! multi-thread runtime: their text names `multi_thread` (a builder, a
//! flavor) or the `rt-multi-thread` feature. Each build is
//! compiled once, with `--no-run`, and each test file's binary is then run
//! on its own, with a watchdog, so that every count belongs to one file and
//! a crash or a hang is charged to the file it happened in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cmd::{self, Error};
use crate::sources::TOKIO_VERSION;
use crate::suite::{self, Counts};
use crate::tokio_patch::{self, TokioBuild};

/// How long one test file may run before it counts as hung.
const FILE_LIMIT: Duration = Duration::from_secs(10 * 60);

/// How long the build of every test file may take on a loaded machine.
const BUILD_LIMIT: Duration = Duration::from_secs(90 * 60);

/// Tests that assert a behaviour of stock tokio that the port changes on
/// purpose, as (file, test, why). Such a test that fails on a patched
/// build is counted apart, by name, as differing by design: never as
/// passed, and never on stock. None today: the port once differed on
/// `rt_unstable_eager_driver_handoff`'s `deadlocks_consistently` (tokio
/// issue #4730), when a worker back from the driver handed off at the end
/// of its search; since the crate counts such a worker busy, the port
/// keeps stock's behaviour there, deadlock included.
const BY_DESIGN: &[(&str, &str, &str)] = &[];

/// What one test file's binary did.
struct FileRun {
    counts: Counts,
    /// Failed tests of `BY_DESIGN`, taken out of `counts`' failures.
    by_design: Vec<&'static str>,
    /// It exited without printing a result line (a crash or a hang).
    ended_without_result: Option<String>,
}

/// The files of one build, by name.
type BuildRun = BTreeMap<String, FileRun>;

/// The test files that build a multi-thread runtime, by their `--test`
/// name, or only those of `only` (each must be one of them).
pub fn test_files(tokio: &Path, only: &[String]) -> Result<Vec<String>, Error> {
    let dir = tokio.join("tests");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|err| format!("{}: {err}", dir.display()))? {
        let path = entry
            .map_err(|err| format!("{}: {err}", dir.display()))?
            .path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".rs"))
        else {
            continue;
        };
        let text = cmd::read(&path)?;
        if text.contains("multi_thread") || text.contains("rt-multi-thread") {
            files.push(name.to_string());
        }
    }
    files.sort();
    if let Some(unknown) = only.iter().find(|f| !files.contains(f)) {
        return Err(format!(
            "--test {unknown}: not one of tokio's test files that build a multi-thread \
             runtime ({})",
            files.join(", ")
        ));
    }
    if !only.is_empty() {
        files.retain(|f| only.contains(f));
    }
    Ok(files)
}

/// Build and run the test files on each build. Ok(true) when every test
/// that passes on stock tokio passes on every other build, and none fails
/// on stock.
pub fn run(scratch: &Path, builds: &[TokioBuild], only: &[String]) -> Result<bool, Error> {
    let trees = tokio_patch::prepare(scratch)?;
    print!("{}", trees.edit);
    let files = test_files(&trees.stock, only)?;
    println!(
        "tokio {TOKIO_VERSION}: {} test file{} that use the multi-thread runtime, \
         with --features full",
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    let mut results: Vec<(TokioBuild, BuildRun)> = Vec::new();
    for &build in builds {
        let start = Instant::now();
        let run = run_build(scratch, build.tree(&trees), build, &files)?;
        println!(
            "{}    ({:.0} s)",
            totals_line(build, &run),
            start.elapsed().as_secs_f64()
        );
        for (file, result) in &run {
            for name in &result.counts.failed_names {
                println!("  FAILED: {file}: {name}");
            }
            for name in &result.by_design {
                let why = BY_DESIGN.iter().find(|d| d.0 == file && d.1 == *name);
                println!(
                    "  differs by design: {file}: {name}: {}",
                    why.map_or("", |d| d.2)
                );
            }
            for name in &result.counts.ignored_names {
                println!("  not runnable: {file}: {name}: ignored by tokio's own source");
            }
            if let Some(why) = &result.ended_without_result {
                println!("  FAILED: {file}: {why}");
            }
        }
        results.push((build, run));
    }
    let empty: Vec<&String> = files
        .iter()
        .filter(|f| {
            results.iter().all(|(_, run)| {
                run.get(*f).is_some_and(|r| {
                    r.counts.passed + r.counts.failed + r.counts.ignored == 0
                        && r.ended_without_result.is_none()
                })
            })
        })
        .collect();
    if !empty.is_empty() {
        println!(
            "files with no test in this build ({}; their tests need cfgs or features \
             that --features full does not set, such as tokio_unstable): {}",
            empty.len(),
            empty
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let regressions = regressions(&results);
    for line in &regressions {
        println!("  {line}");
    }
    println!();
    let all_passed = results.iter().all(|(_, run)| failures(run) == 0);
    let lines: Vec<String> = results
        .iter()
        .map(|(build, run)| totals_line(*build, run))
        .collect();
    for line in &lines {
        println!("{line}");
    }
    let same_counts = results
        .windows(2)
        .all(|pair| totals(&pair[0].1) == totals(&pair[1].1));
    println!(
        "summary: {}; {}",
        results
            .iter()
            .map(|(build, run)| {
                let (passed, failed, not_runnable) = totals(run);
                let by_design = by_design(run);
                let apart = if by_design > 0 {
                    format!(" +{by_design} by design")
                } else {
                    String::new()
                };
                format!("{} {passed}/{failed}/{not_runnable}{apart}", build.name())
            })
            .collect::<Vec<_>>()
            .join(", ")
            + " (passed/failed/not runnable)",
        if all_passed && regressions.is_empty() && same_counts {
            "every runnable test passed, the same count on every build"
        } else if all_passed && regressions.is_empty() {
            "every runnable test passed"
        } else {
            "SOME TESTS FAILED"
        }
    );
    Ok(all_passed && regressions.is_empty())
}

/// (passed, failed, not runnable) over every file of a build.
fn totals(run: &BuildRun) -> (usize, usize, usize) {
    run.values().fold((0, 0, 0), |(p, f, n), r| {
        (
            p + r.counts.passed,
            f + r.counts.failed + usize::from(r.ended_without_result.is_some()),
            n + r.counts.ignored,
        )
    })
}

fn failures(run: &BuildRun) -> usize {
    totals(run).1
}

/// Tests of `BY_DESIGN` that failed in a build.
fn by_design(run: &BuildRun) -> usize {
    run.values().map(|r| r.by_design.len()).sum()
}

fn totals_line(build: TokioBuild, run: &BuildRun) -> String {
    let (passed, failed, not_runnable) = totals(run);
    let by_design = by_design(run);
    let apart = if by_design > 0 {
        format!(", {by_design} differs from stock by design")
    } else {
        String::new()
    };
    format!(
        "tokio on {}: {passed} passed, {failed} failed, {not_runnable} not runnable{apart}",
        build.name()
    )
}

/// Tests that pass on stock tokio and not on another build: each would be
/// a test the port broke, whatever its outcome there.
fn regressions(results: &[(TokioBuild, BuildRun)]) -> Vec<String> {
    let Some((_, stock)) = results.iter().find(|(b, _)| *b == TokioBuild::STOCK) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for (build, run) in results.iter().filter(|(b, _)| *b != TokioBuild::STOCK) {
        for (file, result) in run {
            let Some(on_stock) = stock.get(file) else {
                continue;
            };
            if result.counts.passed + result.by_design.len() < on_stock.counts.passed {
                lines.push(format!(
                    "REGRESSION: {file}: {} passed on {}, {} on stock",
                    result.counts.passed,
                    build.name(),
                    on_stock.counts.passed
                ));
            }
        }
    }
    lines
}

/// Build every test file of one build with `--no-run`, then run each
/// binary on its own.
fn run_build(
    scratch: &Path,
    tree: &Path,
    build: TokioBuild,
    files: &[String],
) -> Result<BuildRun, Error> {
    let target = scratch.join(build.target_dir());
    let mut command = cmd::cargo();
    command
        .current_dir(tree)
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "test",
            "--no-run",
            "--message-format",
            "json-render-diagnostics",
            "--features",
        ])
        .arg(build.features());
    for file in files {
        command.args(["--test", file]);
    }
    let output = cmd::output_within(&mut command, BUILD_LIMIT)?;
    let logs = scratch.join("logs");
    cmd::write(
        &logs.join(format!("{}-build.log", build.name())),
        &String::from_utf8_lossy(&output.stderr),
    )?;
    if !output.status.success() {
        return Err(format!(
            "tokio's tests did not build on {} (log: {}):\n{}",
            build.name(),
            logs.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let binaries = test_binaries(&String::from_utf8_lossy(&output.stdout));
    let mut run = BuildRun::new();
    let mut log = String::new();
    for file in files {
        let binary = binaries
            .get(file)
            .ok_or_else(|| format!("cargo built no test binary for {file}"))?;
        let mut command = std::process::Command::new(binary);
        command.current_dir(tree);
        let result = match cmd::output_within(&mut command, FILE_LIMIT) {
            Ok(output) => {
                let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
                log.push_str(&format!(
                    "==== {file}\n{stdout}{}\n",
                    String::from_utf8_lossy(&output.stderr)
                ));
                let mut counts = suite::parse(&stdout);
                let has_result = stdout.lines().any(|l| l.starts_with("test result: "));
                let mut by_design = Vec::new();
                if build.protocol.is_some() {
                    for &(_, name, _) in BY_DESIGN.iter().filter(|d| d.0 == file) {
                        if let Some(at) = counts.failed_names.iter().position(|n| n == name) {
                            counts.failed_names.remove(at);
                            counts.failed -= 1;
                            by_design.push(name);
                        }
                    }
                }
                FileRun {
                    ended_without_result: (!has_result)
                        .then(|| format!("ended without a result ({})", output.status)),
                    counts,
                    by_design,
                }
            }
            Err(err) => {
                log.push_str(&format!("==== {file}\n{err}\n"));
                FileRun {
                    counts: Counts::default(),
                    by_design: Vec::new(),
                    ended_without_result: Some(err),
                }
            }
        };
        run.insert(file.clone(), result);
    }
    cmd::write(&logs.join(format!("{}-tests.log", build.name())), &log)?;
    Ok(run)
}

/// The test binaries in cargo's JSON messages, by target name.
fn test_binaries(messages: &str) -> BTreeMap<String, PathBuf> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| {
            let name = m["target"]["name"].as_str()?.to_string();
            let executable = m["executable"].as_str()?;
            Some((name, PathBuf::from(executable)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_test_binaries_in_cargo_messages() {
        let messages = r#"{"reason":"compiler-artifact","target":{"name":"rt_threaded","kind":["test"]},"executable":"/t/rt_threaded-1"}
{"reason":"compiler-artifact","target":{"name":"tokio","kind":["lib"]},"executable":null}
{"reason":"build-finished","success":true}"#;
        let found = test_binaries(messages);
        assert_eq!(found.len(), 1);
        assert_eq!(found["rt_threaded"], PathBuf::from("/t/rt_threaded-1"));
    }
}

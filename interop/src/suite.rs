//! rayon-core's and rayon's own test suites on the patched rayon-core.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cmd::{self, Error};
use crate::patch;
use crate::Protocol;

/// Why rayon's source marks a test `#[ignore]`.
#[derive(Clone, Copy)]
enum Ignored {
    /// It cannot run in this setting: the reason.
    NotRunnable(&'static str),
    /// Another test runs it, in a child process: that test's name.
    RunBy(&'static str),
}

/// The ignored tests of both suites. Every ignored test is reported by name
/// on every run; one missing from this table counts as not runnable, with
/// "no reason recorded".
const IGNORED: &[(&str, Ignored)] = &[
    (
        "iter::test::check_repeat_unbounded",
        Ignored::NotRunnable(
            "counts an endless `repeat(())` until usize overflows: 2^64 items on a \
             64-bit target, which would take centuries; rayon ignores it for that reason",
        ),
    ),
    (
        "run_with_small_stack",
        Ignored::RunBy("stack_overflow_crash"),
    ),
    (
        "run_with_large_stack",
        Ignored::RunBy("stack_overflow_crash"),
    ),
];

/// The longest a suite may take before it counts as hung.
const SUITE_LIMIT: Duration = Duration::from_secs(30 * 60);

/// Which suite: rayon-core's or rayon's.
#[derive(Clone, Copy)]
enum Suite {
    RayonCore,
    Rayon,
}

impl Suite {
    fn package(self) -> &'static str {
        match self {
            Suite::RayonCore => "rayon-core",
            Suite::Rayon => "rayon",
        }
    }
}

/// What one suite run printed, summed over its test binaries and doctests.
#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) ignored: usize,
    pub(crate) failed_names: Vec<String>,
    pub(crate) ignored_names: Vec<String>,
    /// Test binaries that started but printed no result (crashed).
    unfinished: usize,
}

/// Patch rayon-core, then run the suites on each protocol, with the policy
/// feature `policy` (eventcount's default policy if None). Ok(true) when
/// every test that can run passed.
pub fn run(
    scratch: &Path,
    protocols: &[Protocol],
    with_rayon: bool,
    policy: Option<&'static str>,
) -> Result<bool, Error> {
    let tree = patch::prepare(scratch)?;
    print!("{}", tree.edit);
    let suites: &[Suite] = if with_rayon {
        &[Suite::RayonCore, Suite::Rayon]
    } else {
        &[Suite::RayonCore]
    };
    let target = scratch.join("target");
    let mut all_passed = true;
    let mut summary = Vec::new();
    for &protocol in protocols {
        for &suite in suites {
            let start = Instant::now();
            let counts = run_one(&tree.root, &target, suite, protocol, policy)?;
            let run_by: Vec<(&String, &str)> = counts
                .ignored_names
                .iter()
                .filter_map(|name| match ignored(name) {
                    Ignored::RunBy(parent) => Some((name, parent)),
                    Ignored::NotRunnable(_) => None,
                })
                .collect();
            let line = format!(
                "{} on {}: {} passed, {} failed, {} not runnable",
                suite.package(),
                label(protocol, policy),
                counts.passed,
                counts.failed + counts.unfinished,
                counts.ignored - run_by.len()
            );
            println!("{line}    ({:.0} s)", start.elapsed().as_secs_f64());
            for name in &counts.failed_names {
                println!("  FAILED: {name}");
            }
            if counts.unfinished > 0 {
                println!(
                    "  {} test binary(ies) ended without a result (crashed)",
                    counts.unfinished
                );
            }
            for name in &counts.ignored_names {
                match ignored(name) {
                    Ignored::NotRunnable(why) => println!("  not runnable: {name}: {why}"),
                    Ignored::RunBy(parent) => println!(
                        "  ignored but run: {name} runs inside {parent}, in a child process \
                         (rayon ignores it so that only {parent} starts it)"
                    ),
                }
            }
            all_passed &= counts.failed == 0 && counts.unfinished == 0;
            summary.push(line);
        }
    }
    println!();
    for line in &summary {
        println!("{line}");
    }
    println!(
        "{}",
        if all_passed {
            "every runnable test passed"
        } else {
            "SOME TESTS FAILED"
        }
    );
    Ok(all_passed)
}

fn ignored(name: &str) -> Ignored {
    IGNORED.iter().find(|(known, _)| *known == name).map_or(
        Ignored::NotRunnable("ignored by rayon's own source; no reason recorded here"),
        |&(_, why)| why,
    )
}

/// How a run is named: the protocol, and the policy if not the default.
fn label(protocol: Protocol, policy: Option<&str>) -> String {
    match policy {
        None => protocol.feature().to_string(),
        Some(policy) => format!("{} ({policy})", protocol.feature()),
    }
}

/// Run one suite (unit tests, tests/, doctests) on one protocol and policy.
fn run_one(
    workspace: &Path,
    target: &Path,
    suite: Suite,
    protocol: Protocol,
    policy: Option<&'static str>,
) -> Result<Counts, Error> {
    let chosen: Vec<&str> = std::iter::once(protocol.feature()).chain(policy).collect();
    let features: Vec<String> = match suite {
        // rayon-core's own features choose the protocol and the policy.
        Suite::RayonCore => vec![
            "--no-default-features".into(),
            "--features".into(),
            chosen.join(","),
        ],
        // rayon asks for rayon-core's default features (jec); `notifier`
        // wins when both are on.
        Suite::Rayon => vec![
            "--features".into(),
            chosen
                .iter()
                .map(|f| format!("rayon-core/{f}"))
                .collect::<Vec<_>>()
                .join(","),
        ],
    };
    check_protocol(workspace, target, suite, &features, protocol, policy)?;
    let mut command = cmd::cargo();
    command
        .current_dir(workspace)
        .env("CARGO_TARGET_DIR", target)
        .args(["test", "--no-fail-fast", "-p", suite.package()])
        .args(&features);
    let output = cmd::output_within(&mut command, SUITE_LIMIT)?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The whole output, for a reader who wants every test's name.
    let log = workspace
        .parent()
        .unwrap_or(workspace)
        .join("logs")
        .join(format!(
            "{}-{}.log",
            suite.package(),
            std::iter::once(protocol.feature())
                .chain(policy)
                .collect::<Vec<_>>()
                .join("-")
        ));
    cmd::write(&log, &format!("{stderr}\n{stdout}"))?;
    if stderr.contains("could not compile") {
        return Err(format!(
            "{} did not build on {}:\n{stderr}",
            suite.package(),
            label(protocol, policy)
        ));
    }
    let mut counts = parse(&stdout);
    // cargo names every test binary it starts on stderr ("Running ...",
    // "Doc-tests ..."); each must end with a "test result" line.
    let started = stderr
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with("Running ") || l.starts_with("Doc-tests ")
        })
        .count();
    let finished = stdout
        .lines()
        .filter(|l| l.starts_with("test result: "))
        .count();
    counts.unfinished = started.saturating_sub(finished);
    if !output.status.success() && counts.failed == 0 && counts.unfinished == 0 {
        return Err(format!(
            "{} on {} failed without a failing test:\n{stderr}",
            suite.package(),
            label(protocol, policy)
        ));
    }
    Ok(counts)
}

/// Make sure the build under test really runs `protocol` and `policy`: ask
/// cargo which features of rayon-core the same command line enables.
fn check_protocol(
    workspace: &Path,
    target: &Path,
    suite: Suite,
    features: &[String],
    protocol: Protocol,
    policy: Option<&'static str>,
) -> Result<(), Error> {
    let output = cmd::checked(
        cmd::cargo()
            .current_dir(workspace)
            .env("CARGO_TARGET_DIR", target)
            .args([
                "tree",
                "-p",
                suite.package(),
                "-e",
                "features",
                "-i",
                "rayon-core",
            ])
            .args(features),
        Duration::from_secs(300),
    )?;
    let tree = String::from_utf8_lossy(&output.stdout);
    let runs = (Protocol::enabled_in(&tree), crate::policy_enabled_in(&tree));
    if runs != (Some(protocol), policy) {
        return Err(format!(
            "{} built for {} would run {runs:?}; cargo tree says:\n{tree}",
            suite.package(),
            label(protocol, policy)
        ));
    }
    Ok(())
}

/// Sum the libtest output: per-test lines for names, "test result" lines
/// for the counts.
pub(crate) fn parse(stdout: &str) -> Counts {
    let mut counts = Counts::default();
    for line in stdout.lines() {
        if let Some(result) = line.strip_prefix("test result: ") {
            counts.passed += field(result, " passed");
            counts.failed += field(result, " failed");
            counts.ignored += field(result, " ignored");
        } else if let Some(test) = line.strip_prefix("test ") {
            // "test <name> ... <outcome>"; doctest names contain spaces.
            if let Some((name, outcome)) = test.rsplit_once(" ... ") {
                if outcome.starts_with("FAILED") {
                    counts.failed_names.push(name.to_string());
                } else if outcome.starts_with("ignored") {
                    counts.ignored_names.push(name.to_string());
                }
            }
        }
    }
    counts
}

/// The number before `label` in "ok. 3 passed; 0 failed; ...".
fn field(result: &str, label: &str) -> usize {
    result
        .split(';')
        .find_map(|part| part.trim().split_once(label))
        .and_then(|(before, _)| before.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_libtest_output() {
        let out = "\
test a::b ... ok
test a::c ... FAILED
test src/lib.rs - join (line 12) ... ignored
test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s
test result: ok. 40 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.00s
";
        let c = parse(out);
        assert_eq!((c.passed, c.failed, c.ignored), (41, 1, 1));
        assert_eq!(c.failed_names, ["a::c"]);
        assert_eq!(c.ignored_names, ["src/lib.rs - join (line 12)"]);
    }
}

//! rayon-core on eventcount: swap rayon-core's private sleep module for a
//! shim over this crate's `SleepProtocol`, then run rayon's own test suites
//! (`suite`) or rayon's workloads against stock rayon (`bench`), or write a
//! copy for a user's project (`export`) and check that a project builds and
//! runs on it (`downstream-check`).
//!
//! `scripts/rayon-suite` and `scripts/rayon-bench` call this program;
//! docs/rayon.md explains the whole setup. Nothing of rayon is kept in this
//! repository: the sources come from the package registry through cargo at
//! run time, and the edit is made by the code in `patch.rs`.

mod bench;
mod cmd;
mod downstream;
mod export;
mod patch;
mod sources;
mod suite;
mod tokio_bench;
mod tokio_patch;
mod tokio_suite;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// rayon-core 1.13, rayon 1.12 and tokio 1.54's multi-thread scheduler on
/// eventcount's sleep protocols.
#[derive(Parser)]
#[command(name = "rayon-interop", version, about)]
struct Cli {
    /// Where the scratch copies, builds and results go [default: inside
    /// the checkout this tool was built from, its target/rayon-interop, or
    /// target/tokio-interop for the tokio commands; run anywhere else, a
    /// directory under the system's temporary one].
    #[arg(long)]
    scratch: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Patch rayon-core and run rayon-core's and rayon's own test suites
    /// (unit tests, tests/, doctests) on the chosen protocols.
    Suite {
        /// Which protocol(s) rayon-core sleeps with.
        #[arg(value_enum, default_value_t = Which::All)]
        protocol: Which,
        /// Run only rayon-core's suite (rayon's takes several minutes more).
        #[arg(long)]
        core_only: bool,
        /// The patched rayon-core's idle policy, if not eventcount's default.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(POLICY_FEATURES))]
        policy: Option<String>,
    },
    /// Build stock rayon and rayon on both protocols, run the same
    /// workloads on all three in alternating order, and print same-run
    /// ratios against stock rayon.
    Bench(bench::Options),
    /// Only apply the edit to a scratch copy and print what it changed.
    Patch,
    /// Write a patched rayon-core for your own project, with the protocol
    /// and the policy fixed in its source, and print the
    /// `[patch.crates-io]` lines that put your build on it.
    Export(export::Options),
    /// Export a copy (eventcount by path to this checkout) and run a small
    /// crate's tests on it: a `par_iter` sum, a `join` recursion, and the
    /// line that `EVENTCOUNT_LOG=1` prints.
    DownstreamCheck(downstream::Options),
    /// Patch tokio and run tokio's own tests of its multi-thread runtime
    /// on stock tokio and on each protocol.
    TokioSuite {
        /// Which protocol(s) tokio's workers park on (stock runs too).
        #[arg(value_enum, default_value_t = Which::All)]
        protocol: Which,
        /// Run only these test files (tokio's `--test` names), not every
        /// file that builds a multi-thread runtime.
        #[arg(long = "test")]
        tests: Vec<String>,
        /// Run the patched builds on eventcount's default idle policy, not
        /// on `IdlePolicy::tokio()`.
        #[arg(long)]
        default_policy: bool,
        /// Leave stock tokio out.
        #[arg(long)]
        no_stock: bool,
    },
    /// Build stock tokio and tokio on both protocols (with tokio's idle
    /// policy and with eventcount's default), run the same workloads on
    /// all of them in rotated order, and print same-round ratios against
    /// stock tokio.
    TokioBench(tokio_bench::Options),
    /// Apply the tokio edit to a scratch copy and print what it changed;
    /// with `--out`, write a patched tokio for your own project instead.
    TokioPatch {
        /// Write the patched tokio here (a new or empty directory), for a
        /// `[patch.crates-io]` of your project.
        #[arg(long)]
        out: Option<PathBuf>,
        /// The eventcount the copy depends on, by path (written into its
        /// manifest as given; a relative path is read from --out). By
        /// default, this checkout.
        #[arg(long, requires = "out")]
        eventcount: Option<PathBuf>,
    },
}

/// A protocol choice on the command line.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    Jec,
    Notifier,
    All,
}

impl Which {
    /// The protocols this choice names: one, or all in `Protocol::ALL` order.
    fn protocols(self) -> Vec<Protocol> {
        match self {
            Which::Jec => vec![Protocol::Jec],
            Which::Notifier => vec![Protocol::Notifier],
            Which::All => Protocol::ALL.to_vec(),
        }
    }
}

/// The policy features of the patched rayon-core (see the shim), lowest
/// precedence first. Without one, it runs eventcount's default policy.
pub const POLICY_FEATURES: [&str; 3] = ["rayon-policy", "pr1314-adaptive", "pr1314-bounded"];

/// The policy a build runs, from what `cargo tree -e features -i
/// rayon-core` printed for it: the feature of highest precedence, or None
/// for the default.
pub fn policy_enabled_in(cargo_tree: &str) -> Option<&'static str> {
    POLICY_FEATURES
        .into_iter()
        .rev()
        .find(|f| cargo_tree.contains(&format!("rayon-core feature \"{f}\"")))
}

/// A protocol the patched rayon-core can run, chosen by its feature:
/// eventcount's two, and the Eigen-style benchmark peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    Jec,
    Notifier,
    /// A benchmark's peer: never offered on the command line.
    #[value(skip)]
    Eigen,
}

impl Protocol {
    /// The protocols rayon's own suites run on: the crate's.
    pub const ALL: [Protocol; 2] = [Protocol::Jec, Protocol::Notifier];

    /// The feature name in the patched rayon-core.
    pub fn feature(self) -> &'static str {
        match self {
            Protocol::Jec => "jec",
            Protocol::Notifier => "notifier",
            Protocol::Eigen => "eigen",
        }
    }

    /// The type the shim sleeps on.
    pub fn type_path(self) -> &'static str {
        match self {
            Protocol::Jec => "eventcount::JecSleep",
            Protocol::Notifier => "eventcount::NotifierSleep",
            Protocol::Eigen => "eigen::EigenSleep",
        }
    }

    /// Which protocol a build runs, from what `cargo tree -e features -i
    /// rayon-core` printed for it: the shim picks `eigen` over `notifier`
    /// over `jec`. None for stock rayon-core, which has none of them.
    pub fn enabled_in(cargo_tree: &str) -> Option<Protocol> {
        let on =
            |p: Protocol| cargo_tree.contains(&format!("rayon-core feature \"{}\"", p.feature()));
        [Protocol::Eigen, Protocol::Notifier, Protocol::Jec]
            .into_iter()
            .find(|&p| on(p))
    }
}

/// An idle policy a patched rayon-core can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Policy {
    /// eventcount's default: a search budget each worker learns.
    #[value(name = "default")]
    Default,
    /// rayon's own: 32 yield rounds, no cap.
    #[value(name = "rayon")]
    Rayon,
    /// rayon PR #1314's default: rayon's rounds, and a worker woken to no
    /// work sleeps again at once.
    #[value(name = "pr1314-adaptive")]
    Pr1314Adaptive,
    /// rayon PR #1314's bounded searchers: at most one per busy worker.
    #[value(name = "pr1314-bounded")]
    Pr1314Bounded,
}

impl Policy {
    pub const ALL: [Policy; 4] = [
        Policy::Default,
        Policy::Rayon,
        Policy::Pr1314Adaptive,
        Policy::Pr1314Bounded,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Default => "default",
            Policy::Rayon => "rayon",
            Policy::Pr1314Adaptive => "pr1314-adaptive",
            Policy::Pr1314Bounded => "pr1314-bounded",
        }
    }

    /// The feature that picks it in the shim's feature-chosen form (the
    /// default needs none).
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Policy::Default => None,
            Policy::Rayon => Some("rayon-policy"),
            Policy::Pr1314Adaptive => Some("pr1314-adaptive"),
            Policy::Pr1314Bounded => Some("pr1314-bounded"),
        }
    }

    /// The expression that builds it, as the shim writes it.
    pub fn expr(self) -> &'static str {
        match self {
            Policy::Default => "IdlePolicy::new()",
            Policy::Rayon => "IdlePolicy::rayon()",
            Policy::Pr1314Adaptive => "IdlePolicy::rayon().sleep_after_empty_wake(true)",
            Policy::Pr1314Bounded => "IdlePolicy::rayon().max_searching_busy()",
        }
    }

    /// Whether it is one of rayon PR #1314's, which eventcount exposes only
    /// with its `internals` feature: they are for comparison, not for use.
    pub fn needs_internals(self) -> bool {
        matches!(self, Policy::Pr1314Adaptive | Policy::Pr1314Bounded)
    }

    /// The same policy as a value, for what the shim prints of it.
    pub fn value(self) -> eventcount::IdlePolicy {
        use eventcount::IdlePolicy;
        match self {
            Policy::Default => IdlePolicy::default(),
            Policy::Rayon => IdlePolicy::rayon(),
            Policy::Pr1314Adaptive => IdlePolicy::rayon().sleep_after_empty_wake(true),
            Policy::Pr1314Bounded => IdlePolicy::rayon().max_searching_busy(),
        }
    }
}

/// The repository this tool belongs to (the eventcount crate's root).
pub fn repo_root() -> PathBuf {
    let interop = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    interop
        .parent()
        .expect("interop/ sits inside the eventcount repository")
        .to_path_buf()
}

/// Where scratch work goes unless --scratch says: inside the checkout this
/// tool was built from (the suites, the benchmark, CI), its
/// `target/<name>`; run anywhere else, as `export` is after `cargo
/// install`, a directory under the system's temporary one, so that nothing
/// is written into cargo's copy of the sources.
fn default_scratch(name: &str) -> PathBuf {
    let root = repo_root();
    let inside = std::env::current_dir()
        .and_then(|cwd| cwd.canonicalize())
        .ok()
        .zip(root.canonicalize().ok())
        .is_some_and(|(cwd, root)| cwd.starts_with(root));
    if inside {
        root.join("target").join(name)
    } else {
        std::env::temp_dir().join(format!("eventcount-{name}"))
    }
}

fn main() -> ExitCode {
    // The CPU hogs of the bench's B9 are this program again.
    eventcount_bench::workload::hog::run_if_hog();
    let cli = Cli::parse();
    let tokio = matches!(
        cli.command,
        Command::TokioSuite { .. } | Command::TokioPatch { .. } | Command::TokioBench(_)
    );
    let scratch = cli.scratch.unwrap_or_else(|| {
        let name = if tokio {
            "tokio-interop"
        } else {
            "rayon-interop"
        };
        default_scratch(name)
    });
    let result = match cli.command {
        Command::Patch => patch::prepare(&scratch).map(|tree| {
            print!("{}", tree.edit);
            true
        }),
        Command::Suite {
            protocol,
            core_only,
            policy,
        } => {
            let protocols = protocol.protocols();
            let policy = policy.and_then(|p| POLICY_FEATURES.into_iter().find(|&f| f == p));
            suite::run(&scratch, &protocols, !core_only, policy)
        }
        Command::Bench(options) => bench::run(&scratch, &options),
        Command::Export(options) => export::run(&scratch, &options).map(|done| {
            print!("{done}");
            true
        }),
        Command::DownstreamCheck(options) => downstream::run(&scratch, &options),
        Command::TokioSuite {
            protocol,
            tests,
            default_policy,
            no_stock,
        } => {
            let patched = protocol
                .protocols()
                .into_iter()
                .map(|p| tokio_patch::TokioBuild::on(p, default_policy));
            let builds: Vec<_> = (!no_stock)
                .then_some(tokio_patch::TokioBuild::STOCK)
                .into_iter()
                .chain(patched)
                .collect();
            tokio_suite::run(&scratch, &builds, &tests)
        }
        Command::TokioBench(options) => tokio_bench::run(&scratch, &options),
        Command::TokioPatch { out: None, .. } => tokio_patch::prepare(&scratch).map(|trees| {
            print!("{}", trees.edit);
            true
        }),
        Command::TokioPatch {
            out: Some(out),
            eventcount,
        } => {
            let eventcount = eventcount.unwrap_or_else(repo_root);
            tokio_patch::export(&scratch, &out, &eventcount).map(|edit| {
                print!("{edit}");
                println!(
                    "wrote a patched tokio {} to {}; in your project's Cargo.toml:\n\n\
                     [dependencies]\ntokio = {{ version = \"={}\", features = [\"full\", \
                     \"eventcount-notifier\"] }}\n\n[patch.crates-io]\ntokio = {{ path = {} }}",
                    sources::TOKIO_VERSION,
                    out.display(),
                    sources::TOKIO_VERSION,
                    serde_json::Value::String(out.display().to_string()),
                );
                true
            })
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("rayon-interop: {err}");
            ExitCode::from(2)
        }
    }
}

//! rayon-core on eventcount: swap rayon-core's private sleep module for a
//! shim over this crate's `SleepProtocol`, then run rayon's own test suites
//! (`suite`) or rayon's workloads against stock rayon (`bench`).
//!
//! `scripts/rayon-suite` and `scripts/rayon-bench` call this program;
//! docs/rayon.md explains the whole setup. Nothing of rayon is kept in this
//! repository: the sources come from the package registry through cargo at
//! run time, and the edit is made by the code in `patch.rs`.

mod bench;
mod cmd;
mod patch;
mod sources;
mod suite;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// rayon-core 1.13 and rayon 1.12 on eventcount's sleep protocols.
#[derive(Parser)]
#[command(name = "rayon-interop", version, about)]
struct Cli {
    /// Where the scratch copies, builds and results go.
    #[arg(long, default_value_os_t = default_scratch())]
    scratch: PathBuf,
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
}

/// A protocol choice on the command line.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    Jec,
    Notifier,
    All,
}

/// The policy features of the patched rayon-core (see the shim), lowest
/// precedence first. Without one, it runs eventcount's default policy.
pub const POLICY_FEATURES: [&str; 4] =
    ["nocap", "rayon-policy", "pr1314-adaptive", "pr1314-bounded"];

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Jec,
    Notifier,
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

/// The repository this tool belongs to (the eventcount crate's root).
pub fn repo_root() -> PathBuf {
    let interop = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    interop
        .parent()
        .expect("interop/ sits inside the eventcount repository")
        .to_path_buf()
}

fn default_scratch() -> PathBuf {
    repo_root().join("target").join("rayon-interop")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Patch => patch::prepare(&cli.scratch).map(|tree| {
            print!("{}", tree.edit);
            true
        }),
        Command::Suite {
            protocol,
            core_only,
            policy,
        } => {
            let protocols: Vec<Protocol> = match protocol {
                Which::Jec => vec![Protocol::Jec],
                Which::Notifier => vec![Protocol::Notifier],
                Which::All => Protocol::ALL.to_vec(),
            };
            let policy = policy.and_then(|p| POLICY_FEATURES.into_iter().find(|&f| f == p));
            suite::run(&cli.scratch, &protocols, !core_only, policy)
        }
        Command::Bench(options) => bench::run(&cli.scratch, &options),
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

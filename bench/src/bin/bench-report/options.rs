//! The command line.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::{CommandFactory, Parser};
use eventcount::IdlePolicy;
use eventcount_bench::pool::PoolKind;
use eventcount_bench::workload::sweep::{Budgets, Protocol, Protocols};

const BENCHMARKS: &str = "\
BENCHMARKS:
    B1  notify with nobody waiting: ns per call over a tight loop, against a
        bare fence(SeqCst) + load (the floor); 1 thread and 2 threads
    B2  ping-pong round trip between two sleeping threads, against a raw
        futex; unpinned, and pinned with taskset to two vCPUs / one vCPU
    B3  fan-out: 4 sleepers, one wake-all, time until all 4 acknowledged;
        futex wakes per notify_all for the Notifier
    B4  bursty queue: 2 producers, 4 consumers, bursts of 32 items, 50 us gaps
    B5  fork-join in the example pool (both protocols) vs rayon::join inside
        rayon's pool: fib(25) cutoff 10, tree sum of 2^18-1 nodes depth 10,
        and a saturating fold of 2^22 items, at 2 and 8 threads
    B6  after a burst: pool CPU in the next 300 ms, time until every worker
        sleeps (ours), wakes while idle
    B7  ticks: 200 ticks of 8 jobs x ~5 us, gaps of 20 us (main thread
        spins), 200 us and 2 ms (main thread sleeps); pool CPU per tick against
        the useful work, and latency from submit to all 8 done
    B8  a control loop (rayon PR #1318's shape): ticks of 8 regions of
        64 leaves x 10 us by nested join, 20 us of serial work between
        regions, every 10 ms; and a lighter tick (8 x 8 x 5 us, every 1 ms).
        Each region its own install from the main thread, or the whole tick
        one install. Pool CPU in cores, over useful work, wasted per tick;
        tick and region p50/p99
    B9  oversubscription the pool did not choose, at 2 threads: B7 and B8
        while two CPU-hog processes run; and B8 on two pools at once in one
        process (CPU per tick per pool)

ORACLE (--oracle, B7-B9):
    Each protocol named also runs with the default policy's search budget
    fixed at each of --budgets (µs), and rayon runs twice a round: the
    second run's ratio to the first is the stock-vs-stock band. Per case
    and latency metric, the oracle is the budget that wastes the least CPU
    while its latency ratio to rayon stays at or below the band's top;
    the summary gives the default's waste over the oracle's (distance), or
    over rayon's where no budget is in band.

Exit status: 0 on success, 1 if a workload computed a wrong result, 2 on a
bad command line or an unwritable --json-file.";

/// Short versions of the benchmarks B1-B8 of docs/benchmarks.md, run in one
/// process. Within each round every implementation of a benchmark runs
/// once, in a rotating order; the tables show the median over rounds of
/// each value, and of each ratio taken within a round.
#[derive(Parser, Debug)]
#[command(name = "bench-report", after_help = BENCHMARKS)]
pub struct Options {
    /// Print the results as JSON instead of tables.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,

    /// Print the results as the Markdown tables of docs/benchmarks.md.
    #[arg(long)]
    pub markdown: bool,

    /// Also write the results as JSON to file F.
    #[arg(long, value_name = "F")]
    pub json_file: Option<PathBuf>,

    /// Alternating rounds per benchmark (a median needs at least 3).
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u16).range(3..=50))]
    pub rounds: u16,

    /// Comma-separated subset of B1,B2,B3,B4,B5,B6,B7,B8,B9 [default: all].
    #[arg(long, value_name = "LIST", value_parser = parse_only)]
    only: Option<BTreeSet<u8>>,

    /// Fewer iterations per round (a smoke test, ~10 s).
    #[arg(long)]
    pub quick: bool,

    /// Idle policy of our pools (B5-B8): N yield rounds, then sleep, no
    /// searcher cap [default: eventcount's default, a learned budget].
    #[arg(long, value_name = "N", value_parser = parse_idle)]
    idle: Option<IdlePolicy>,

    /// Also run B5-B9 on every pool: rayon's policy and rayon PR #1314's two on JecSleep, and the
    /// Eigen-style peer.
    #[arg(long)]
    pub every_pool: bool,

    /// Run B5-B9 on these pools only, and rayon's (a comma-separated list
    /// of jec, notifier, jec-rayon, pr1314-adaptive, pr1314-bounded, eigen)
    /// [default: jec,notifier].
    #[arg(long, value_name = "LIST", value_parser = parse_pools, conflicts_with = "every_pool")]
    pools: Option<PoolList>,

    /// Also run B7-B9 on each protocol listed with fixed search budgets
    /// (the oracle sweep, see below) [default list: jec,notifier].
    #[arg(long, value_name = "LIST", num_args = 0..=1, default_missing_value = "jec,notifier")]
    pub oracle: Option<Protocols>,

    /// The fixed search budgets of --oracle, in µs [default: 0,10,25,50,100,200,500].
    #[arg(long, value_name = "LIST", requires = "oracle")]
    budgets: Option<Budgets>,
}

impl Options {
    /// The command line, checked: a bad one exits with status 2 and says
    /// what is wrong.
    pub fn parse_checked() -> Options {
        let options = Options::parse();
        if let Err(message) = options.check() {
            Options::command()
                .error(clap::error::ErrorKind::ArgumentConflict, message)
                .exit();
        }
        options
    }

    /// What clap cannot check alone: the oracle measures each protocol's
    /// distance from that protocol on the policy given, so `--pools` must
    /// name it.
    fn check(&self) -> Result<(), String> {
        let (Some(pools), Some(protocols)) = (&self.pools, &self.oracle) else {
            return Ok(());
        };
        for &protocol in protocols.list() {
            let kind = match protocol {
                Protocol::Jec => PoolKind::Jec,
                Protocol::Notifier => PoolKind::Notifier,
            };
            if !pools.0.contains(&kind) {
                return Err(format!(
                    "--oracle {} measures the distance from the '{}' pool: add it to --pools",
                    protocol.name(),
                    kind.name(),
                ));
            }
        }
        Ok(())
    }

    /// The benchmarks to run, by number.
    pub fn only(&self) -> BTreeSet<u8> {
        self.only.clone().unwrap_or_else(|| (1..=9).collect())
    }

    /// The fixed budgets of the oracle sweep.
    pub fn budgets(&self) -> Budgets {
        self.budgets.clone().unwrap_or_default()
    }

    /// The pools B5-B8 compare, rayon last.
    pub fn pools(&self) -> &[PoolKind] {
        if self.every_pool {
            &PoolKind::EVERY
        } else if let Some(list) = &self.pools {
            &list.0
        } else {
            &PoolKind::ALL
        }
    }

    /// Ours among them: each gets a target against rayon.
    pub fn ours(&self) -> impl Iterator<Item = PoolKind> + '_ {
        self.pools()
            .iter()
            .copied()
            .filter(|&k| k != PoolKind::Rayon)
    }

    /// The idle policy of our pools.
    pub fn idle_policy(&self) -> IdlePolicy {
        self.idle.unwrap_or_default()
    }

    /// Rounds per benchmark.
    pub fn rounds(&self) -> usize {
        usize::from(self.rounds)
    }
}

/// `B2,B5` (or `b2, 5`) as {2, 5}.
fn parse_only(text: &str) -> Result<BTreeSet<u8>, String> {
    let mut only = BTreeSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let number = part
            .strip_prefix(['B', 'b'])
            .unwrap_or(part)
            .parse::<u8>()
            .ok()
            .filter(|n| (1..=9).contains(n))
            .ok_or_else(|| format!("unknown benchmark '{part}': expected B1 to B9"))?;
        only.insert(number);
    }
    if only.is_empty() {
        return Err("expected at least one of B1 to B9".to_string());
    }
    Ok(only)
}

/// The pools `--pools` names, each once, in the order given, and rayon's
/// last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolList(Vec<PoolKind>);

/// `jec,jec-rayon` as those pools, then rayon's.
fn parse_pools(text: &str) -> Result<PoolList, String> {
    let mut pools = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let known = PoolKind::EVERY
            .iter()
            .copied()
            .filter(|&k| k != PoolKind::Rayon);
        let kind = known.clone().find(|k| k.name() == part).ok_or_else(|| {
            let names: Vec<&str> = known.map(PoolKind::name).collect();
            format!(
                "unknown pool '{part}': expected one of {}",
                names.join(", ")
            )
        })?;
        if !pools.contains(&kind) {
            pools.push(kind);
        }
    }
    if pools.is_empty() {
        return Err("expected at least one pool".to_string());
    }
    pools.push(PoolKind::Rayon);
    Ok(PoolList(pools))
}

/// `32` as 32 yield rounds.
fn parse_idle(text: &str) -> Result<IdlePolicy, String> {
    let rounds = text
        .trim()
        .parse()
        .map_err(|_| "expected a whole number of yield rounds, like 32".to_string())?;
    Ok(IdlePolicy::rounds(rounds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        Options::try_parse_from(std::iter::once("bench-report").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_run_everything_five_rounds_with_the_default_policy() {
        let options = parse(&[]).unwrap();
        assert_eq!(options.only(), (1..=9).collect());
        assert_eq!(options.oracle, None);
        assert_eq!(options.rounds(), 5);
        assert_eq!(options.idle_policy(), IdlePolicy::default());
        assert!(!options.json && !options.markdown && !options.quick);
    }

    #[test]
    fn pools_takes_a_list_of_names_and_adds_rayon_last() {
        let options = parse(&["--pools", "jec-rayon, jec,jec"]).unwrap();
        assert_eq!(
            options.pools(),
            [PoolKind::JecRayon, PoolKind::Jec, PoolKind::Rayon]
        );
        let err = parse(&["--pools", "jec,rayon"]).unwrap_err().to_string();
        assert!(err.contains("unknown pool 'rayon'"), "{err}");
        assert!(err.contains("jec-rayon"), "{err}");
        assert!(parse(&["--pools", ","]).is_err());
        assert!(parse(&["--pools", "jec", "--every-pool"]).is_err());
        let oracle = parse(&["--pools", "jec-rayon", "--oracle", "jec"]).unwrap();
        let err = oracle.check().unwrap_err();
        assert!(err.contains("'jec' pool"), "{err}");
        let oracle = parse(&["--pools", "jec,jec-rayon", "--oracle", "jec"]).unwrap();
        assert_eq!(oracle.check(), Ok(()));
        assert_eq!(parse(&[]).unwrap().pools(), PoolKind::ALL);
    }

    #[test]
    fn only_takes_a_list_with_or_without_the_b() {
        let options = parse(&["--only", "B2, b5,7"]).unwrap();
        assert_eq!(options.only(), [2, 5, 7].into());
    }

    #[test]
    fn idle_sets_yield_rounds() {
        let options = parse(&["--idle", "8"]).unwrap();
        assert_eq!(options.idle_policy(), IdlePolicy::rounds(8));
        assert!(parse(&["--idle", "4,8"]).is_err());
    }

    #[test]
    fn oracle_alone_sweeps_both_protocols_over_every_budget() {
        let options = parse(&["--oracle"]).unwrap();
        assert_eq!(options.oracle, Some(Protocols::default()));
        assert_eq!(options.budgets(), Budgets::default());
        let options = parse(&["--oracle", "notifier", "--budgets", "25,0"]).unwrap();
        assert_eq!(options.oracle, Some("notifier".parse().unwrap()));
        assert_eq!(options.budgets().us(), &[0, 25]);
        // A bare --oracle before another flag takes no value from it.
        let options = parse(&["--oracle", "--quick"]).unwrap();
        assert!(options.quick && options.oracle.is_some());
    }

    #[test]
    fn bad_values_are_errors_that_say_what_is_expected() {
        for (args, expected) in [
            (&["--rounds", "2"][..], "3..=50"),
            (&["--rounds", "many"][..], "invalid digit"),
            (&["--only", "B10"][..], "expected B1 to B9"),
            (&["--only", ","][..], "at least one of B1 to B9"),
            (&["--oracle", "rayon"][..], "expected jec or notifier"),
            (&["--oracle", "--budgets", "5us"][..], "not a whole number"),
            (&["--budgets", "25"][..], "--oracle"),
            (&["--idle", "4,8"][..], "whole number of yield rounds"),
            (&["--json", "--markdown"][..], "cannot be used with"),
            (&["--json-file"][..], "a value is required"),
            (&["--frobnicate"][..], "unexpected argument"),
        ] {
            let message = parse(args).unwrap_err().to_string();
            assert!(
                message.contains(expected),
                "{args:?}: {message:?} does not say {expected:?}"
            );
        }
    }
}

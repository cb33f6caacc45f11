//! `cargo run --release --example pool`: the crate's main job. Builds the
//! example work-stealing pool (the `pool` module of the benchmark harness, eventcount-bench) on
//! both sleep protocols, runs the workloads, and prints one table with
//! rayon measured in the same run as the reference.
//!
//! Run with `--help` for the flags, the default idle policy and the
//! columns; the columns' legend is also printed under the table.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use eventcount::IdlePolicy;
use eventcount_bench::pool::procstat::ProcUsage;
use eventcount_bench::pool::{make_tree, AnyPool, PoolKind, Workload as Work};

/// xorshift rounds per burst job: a few microseconds of work.
const BURST_ITERS: u32 = 2000;

/// What each column of the table means: in `--help`, and printed under
/// every table, so that a table read on its own explains itself.
const LEGEND: &str = "    wall ms/run    median wall time of one run
    cpu ms/run     CPU time of the whole process over all runs, divided by
                   the runs (cpu / wall is how many cores a run kept busy)
    sleeps/run     futex waits by the protocol, divided by the runs (rayon:
                   the process's voluntary context switches)
    wakes/run      futex wakes by the protocol, divided by the runs (rayon:
                   not available, '-')
    idle cpu ms    CPU the process burned in the 200 ms after the last run
";

/// The help text. The default policy is printed from the value a plain run
/// uses, so the two cannot disagree.
fn help() -> String {
    format!(
        "\
pool: run the example work-stealing pool on each sleep protocol, with rayon
as the reference, and print wall time, CPU time, sleeps and wakes, and the
CPU burned while idle afterwards.

USAGE:
    cargo run --release --example pool -- [OPTIONS]

OPTIONS:
    --protocol <P>   jec | notifier | rayon | all          [default: all]
    --workload <W>   fib | tree | bursts | all             [default: all]
    --threads <N>    worker threads, 1..=512               [default: cores]
    --idle <N>       our pools' idle policy becomes fixed rounds: N yield
                     rounds, then sleep, every idle worker searching
                     (rayon's own is 32)
                     [default: the crate's default, IdlePolicy::default(): each
                     worker learns its search budget from what its sleeps
                     cost, and a pool with more workers than CPUs idles
                     as rayon's; its
                     Debug: {default:?}]
    --quick          small inputs, one repetition (for CI)
    -h, --help       print this help

COLUMNS (all per run of the workload, so they compare with each other;
printed under every table too):
{LEGEND}",
        default = IdlePolicy::default()
    )
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Workload {
    Fib,
    Tree,
    Bursts,
}

struct Options {
    protocols: Vec<PoolKind>,
    workloads: Vec<Workload>,
    threads: usize,
    quick: bool,
    policy: IdlePolicy,
}

fn parse_args() -> Result<Option<Options>, String> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut options = Options {
        protocols: PoolKind::ALL.to_vec(),
        workloads: vec![Workload::Fib, Workload::Tree, Workload::Bursts],
        threads: cores,
        quick: false,
        policy: IdlePolicy::default(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value; see --help"))
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--quick" => options.quick = true,
            "--protocol" => {
                options.protocols = match value("--protocol")?.as_str() {
                    "jec" => vec![PoolKind::Jec],
                    "notifier" => vec![PoolKind::Notifier],
                    "rayon" => vec![PoolKind::Rayon],
                    "all" => PoolKind::ALL.to_vec(),
                    other => {
                        return Err(format!(
                            "unknown protocol '{other}': expected jec, notifier, rayon or all"
                        ))
                    }
                }
            }
            "--workload" => {
                options.workloads = match value("--workload")?.as_str() {
                    "fib" => vec![Workload::Fib],
                    "tree" => vec![Workload::Tree],
                    "bursts" => vec![Workload::Bursts],
                    "all" => vec![Workload::Fib, Workload::Tree, Workload::Bursts],
                    other => {
                        return Err(format!(
                            "unknown workload '{other}': expected fib, tree, bursts or all"
                        ))
                    }
                }
            }
            "--idle" => {
                let text = value("--idle")?;
                let Ok(rounds) = text.parse::<u32>() else {
                    return Err(format!(
                        "--idle takes a whole number of yield rounds, like 32; not '{text}'"
                    ));
                };
                options.policy = IdlePolicy::rounds(rounds);
            }
            "--threads" => {
                let text = value("--threads")?;
                options.threads = match text.parse::<usize>() {
                    Ok(n) if (1..=512).contains(&n) => n,
                    _ => {
                        return Err(format!(
                            "--threads takes a whole number from 1 to 512, not '{text}'"
                        ))
                    }
                }
            }
            other => return Err(format!("unknown argument '{other}'; see --help")),
        }
    }
    Ok(Some(options))
}

/// One workload's parameters.
struct Sizes {
    fib_n: u32,
    fib_cutoff: u32,
    tree_nodes: usize,
    tree_depth: u32,
    bursts: usize,
    burst_jobs: u32,
    burst_gap: Duration,
    reps: usize,
}

impl Sizes {
    fn new(quick: bool) -> Self {
        if quick {
            Sizes {
                fib_n: 24,
                fib_cutoff: 12,
                tree_nodes: (1 << 16) - 1,
                tree_depth: 8,
                bursts: 20,
                burst_jobs: 16,
                burst_gap: Duration::from_micros(500),
                reps: 1,
            }
        } else {
            Sizes {
                fib_n: 32,
                fib_cutoff: 16,
                tree_nodes: (1 << 22) - 1,
                tree_depth: 10,
                bursts: 200,
                burst_jobs: 64,
                burst_gap: Duration::from_millis(1),
                reps: 5,
            }
        }
    }
}

struct Row {
    workload: &'static str,
    protocol: &'static str,
    wall: Duration,
    cpu: Duration,
    sleeps: Option<f64>,
    wakes: Option<f64>,
    idle_cpu: Duration,
    check: u64,
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// One row of the table: `workload` on a fresh pool of `kind`.
fn run_row(
    kind: PoolKind,
    workload: Workload,
    sizes: &Sizes,
    threads: usize,
    policy: IdlePolicy,
) -> Row {
    let pool = AnyPool::new(kind, threads, policy);
    let tree = (workload == Workload::Tree).then(|| make_tree(sizes.tree_nodes));
    let run = |pool: &AnyPool| match workload {
        Workload::Fib => pool.run(&Work::Fib {
            n: sizes.fib_n,
            cutoff: sizes.fib_cutoff,
        }),
        Workload::Tree => pool.run(&Work::TreeSum {
            tree: tree.clone().expect("tree built"),
            depth: sizes.tree_depth,
        }),
        Workload::Bursts => (0..sizes.bursts as u64).fold(0u64, |total, burst| {
            let jobs = Work::Burst {
                seed: burst * 1000,
                jobs: sizes.burst_jobs,
                iters: BURST_ITERS,
            };
            let total = total.wrapping_add(pool.run(&jobs));
            std::thread::sleep(sizes.burst_gap);
            total
        }),
    };
    // Warm up: threads started, caches and allocator primed.
    run(&pool);
    let stats_before = pool.stats();
    let usage_before = ProcUsage::now();
    let mut walls = Vec::new();
    let mut check = 0;
    for _ in 0..sizes.reps {
        let start = Instant::now();
        check = run(&pool);
        walls.push(start.elapsed());
    }
    let usage = ProcUsage::now().since(&usage_before);
    let stats = stats_before
        .zip(pool.stats())
        .map(|(before, after)| after - before);
    let idle_cpu = idle_cpu_after();
    pool.shutdown();
    Row {
        workload: workload_name(workload),
        protocol: kind.name(),
        wall: median(walls),
        cpu: usage.cpu / sizes.reps as u32,
        // rayon counts no sleeps of its own: its voluntary context
        // switches stand in.
        sleeps: Some(
            stats.map_or(usage.voluntary_switches, |s| s.waits) as f64 / sizes.reps as f64,
        ),
        wakes: stats.map(|s| s.wakes as f64 / sizes.reps as f64),
        idle_cpu,
        check,
    }
}

/// CPU the process burns in a 200 ms window right after the last run, with
/// the pool still alive and idle.
fn idle_cpu_after() -> Duration {
    let before = ProcUsage::now();
    std::thread::sleep(Duration::from_millis(200));
    ProcUsage::now().since(&before).cpu
}

fn workload_name(workload: Workload) -> &'static str {
    match workload {
        Workload::Fib => "fib",
        Workload::Tree => "tree sum",
        Workload::Bursts => "bursts",
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(Some(options)) => options,
        Ok(None) => {
            print!("{}", help());
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("pool: {message}");
            return ExitCode::from(2);
        }
    };
    let sizes = Sizes::new(options.quick);
    let threads = options.threads;
    println!(
        "example pool, {threads} threads on {} cores, idle policy {:?}; fib({}) cutoff {}, \
         tree of {} nodes, {} bursts of {} jobs with {:?} gaps; median of {} run(s)\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        options.policy,
        sizes.fib_n,
        sizes.fib_cutoff,
        sizes.tree_nodes,
        sizes.bursts,
        sizes.burst_jobs,
        sizes.burst_gap,
        sizes.reps,
    );
    println!(
        "{:<9} {:<9} {:>11} {:>10} {:>10} {:>9} {:>11}",
        "workload",
        "protocol",
        "wall ms/run",
        "cpu ms/run",
        "sleeps/run",
        "wakes/run",
        "idle cpu ms"
    );
    let mut failed = false;
    for &workload in &options.workloads {
        let mut expected = None;
        for &protocol in &options.protocols {
            let row = run_row(protocol, workload, &sizes, threads, options.policy);
            let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
            println!(
                "{:<9} {:<9} {:>11} {:>10} {:>10} {:>9} {:>11}",
                row.workload,
                row.protocol,
                ms(row.wall),
                ms(row.cpu),
                opt(row.sleeps),
                opt(row.wakes),
                ms(row.idle_cpu),
            );
            match expected {
                None => expected = Some(row.check),
                Some(value) if value != row.check => {
                    eprintln!(
                        "pool: {} on {} computed {}, expected {value}",
                        row.workload, row.protocol, row.check
                    );
                    failed = true;
                }
                Some(_) => {}
            }
        }
    }
    println!("\nColumns, per run of the workload:\n{LEGEND}");
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

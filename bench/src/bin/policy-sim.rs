//! `policy-sim`: eventcount's idle policy on a virtual clock (the crate's
//! own policy code, `bench/src/sim/`), against fixed budgets, the
//! clairvoyant policy and rayon's rounds, on every trace family and wake
//! cost; on traces recorded from real runs; and against this VM's own
//! ranking of the fixed budgets.
//!
//! ```text
//! policy-sim                                  # the table, and the bounds
//! policy-sim --measure                        # also this machine, measured
//! policy-sim --trace F.gaps [--idle-dominated]  # recorded traces instead
//! policy-sim --calibrate R.json --traces DIR  # the simulator's ranking against the VM's
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use eventcount_bench::sim::table::{self, Row};
use eventcount_bench::sim::{calibrate, measure, traces, Machine, Pool};

/// eventcount's idle policy on a virtual clock.
#[derive(Parser)]
struct Options {
    /// Gaps per worker of each generated trace.
    #[arg(long, default_value_t = 2_000)]
    periods: usize,
    /// Measure this machine (a search round, a wake, a sleep's CPU) and
    /// run every table on it too.
    #[arg(long)]
    measure: bool,
    /// Replay these traces, recorded with the crate's `policy-tools`
    /// feature (EVENTCOUNT_GAP_TRACE), instead of the generated families.
    #[arg(long)]
    trace: Vec<PathBuf>,
    /// The recorded traces are idle-dominated (long gaps between bursts).
    #[arg(long)]
    idle_dominated: bool,
    /// Rank the fixed budgets as `scripts/rayon-bench --oracle --record
    /// DIR --json > R.json` measured them, and as the simulator does on the
    /// traces of DIR (`--traces`), on this machine's measured costs.
    #[arg(long, value_name = "R.json", requires = "traces")]
    calibrate: Option<PathBuf>,
    /// The traces of `--calibrate`.
    #[arg(long, value_name = "DIR")]
    traces: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run(Options::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("policy-sim: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: Options) -> Result<(), String> {
    let mut machines = Machine::ALL.to_vec();
    if options.measure || options.calibrate.is_some() {
        let here = measure::this_machine(2_000);
        println!(
            "this machine: a wake {:.1} µs, a sleep's CPU {:.1} µs, a wake call's {:.1} µs, a round {:.2} µs\n",
            here.wake_ns as f64 / 1e3,
            here.sleep_cpu_ns as f64 / 1e3,
            here.waker_cpu_ns as f64 / 1e3,
            here.round_ns as f64 / 1e3
        );
        machines.push(here);
    }
    if let (Some(report), Some(dir)) = (&options.calibrate, &options.traces) {
        let text =
            std::fs::read_to_string(report).map_err(|e| format!("{}: {e}", report.display()))?;
        let report =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", report.display()))?;
        let here = machines.last().expect("measured");
        let calibrations = calibrate::calibrate(&report, dir, here)?;
        print!("{}", calibrate::markdown(&calibrations));
        return Ok(());
    }
    let rows = if options.trace.is_empty() {
        table::rows(&traces::families(options.periods), &machines)
    } else {
        let mut rows = Vec::new();
        for path in &options.trace {
            let (trace, cost) = traces::load(path, options.idle_dominated)?;
            println!(
                "{}: {} gaps, the run's median sleep cost {} µs",
                trace.name,
                trace.workers.iter().map(Vec::len).sum::<usize>(),
                cost / 1_000
            );
            let pool = Pool {
                workers: trace.workers.len(),
                cpus: std::thread::available_parallelism().map_or(2, |n| n.get()),
                peer_round_ns: Pool::OVERSIZED.peer_round_ns,
            };
            for machine in &machines {
                rows.push(Row::new(&trace, *machine, pool));
            }
        }
        rows
    };
    print!("{}", table::markdown(&rows));
    println!();
    for machine in &machines {
        println!(
            "timer ticks on {}: the last tick that searched: {} from a fresh worker, {} after a burst",
            machine.name,
            table::last_tick_that_searched(machine, false),
            table::last_tick_that_searched(machine, true)
        );
    }
    let broken: Vec<String> = rows
        .iter()
        .flat_map(Row::violations)
        .map(|v| v.to_string())
        .collect();
    if broken.is_empty() {
        println!("every bound holds");
    } else {
        println!("bounds broken:");
        for line in &broken {
            println!("  {line}");
        }
    }
    Ok(())
}

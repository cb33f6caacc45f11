//! `policy-sim`: eventcount's idle policy on a virtual clock (the crate's
//! own policy code, `bench/src/sim/`), against fixed budgets, the
//! clairvoyant policy and rayon's rounds, on every trace family and wake
//! cost; or on traces recorded from real runs.
//!
//! ```text
//! cargo run --release -p eventcount-bench --bin policy-sim            # the table
//! cargo run --release -p eventcount-bench --bin policy-sim -- --trace F.gaps [--idle-dominated]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use eventcount_bench::sim::table::{self, Row};
use eventcount_bench::sim::{traces, Machine, Pool};

/// eventcount's idle policy on a virtual clock.
#[derive(Parser)]
struct Options {
    /// Gaps per worker of each generated trace.
    #[arg(long, default_value_t = 2_000)]
    periods: usize,
    /// Replay these traces, recorded with the crate's `policy-tools`
    /// feature (EVENTCOUNT_GAP_TRACE), instead of the generated families:
    /// on the three machines, and on this one as the trace measured it.
    #[arg(long)]
    trace: Vec<PathBuf>,
    /// The recorded traces are idle-dominated (long gaps between bursts).
    #[arg(long)]
    idle_dominated: bool,
    /// Also print each fixed budget's ranking by cost, one line per row.
    #[arg(long)]
    ranks: bool,
}

fn main() -> ExitCode {
    let options = Options::parse();
    let rows = if options.trace.is_empty() {
        table::rows(&traces::families(options.periods))
    } else {
        let mut rows = Vec::new();
        for path in &options.trace {
            let (trace, cost) = match traces::load(path, options.idle_dominated) {
                Ok(loaded) => loaded,
                Err(err) => {
                    eprintln!("policy-sim: {err}");
                    return ExitCode::FAILURE;
                }
            };
            let pool = Pool {
                workers: trace.workers.len(),
                cpus: std::thread::available_parallelism().map_or(2, |n| n.get()),
                peer_round_ns: Pool::OVERSIZED.peer_round_ns,
            };
            for machine in Machine::ALL {
                rows.push(Row::new(&trace, machine, pool));
            }
            println!(
                "{}: {} gaps, the run's median sleep cost {} µs",
                trace.name,
                trace.workers.iter().map(Vec::len).sum::<usize>(),
                cost / 1_000
            );
        }
        rows
    };
    print!("{}", table::markdown(&rows));
    if options.ranks {
        for row in &rows {
            let mut order: Vec<(u64, u64)> =
                row.fixed.iter().map(|(us, o)| (o.cost_ns(), *us)).collect();
            order.sort_unstable();
            let names: Vec<String> = order.iter().map(|(_, us)| us.to_string()).collect();
            println!(
                "ranks {} on {}: {}",
                row.trace,
                row.machine.name,
                names.join(" < ")
            );
        }
    }
    println!();
    for machine in Machine::ALL {
        println!(
            "timer ticks on {}: last tick that searched {} from a fresh worker, {} after a burst",
            machine.name,
            table::last_tick_that_searched(&machine, false),
            table::last_tick_that_searched(&machine, true)
        );
    }
    let broken: Vec<String> = rows.iter().flat_map(Row::violations).collect();
    if broken.is_empty() {
        println!("every bound holds");
    } else {
        println!("bounds broken:");
        for line in &broken {
            println!("  {line}");
        }
    }
    ExitCode::SUCCESS
}

//! `cargo run --release --example sizing`: is my pool too big? Runs the
//! example work-stealing pool twice on the same bursty work, once with far
//! more workers than the machine has cores and once with one per core, and
//! prints what `SleepStats` says about each, for the whole pool and per
//! worker. The guide's "Sizing a pool" reads this output.
//!
//! `--quick` runs fewer bursts (for CI); `--threads N` sets the big pool's
//! size (default: 8 per core).

use std::hint::black_box;
use std::process::ExitCode;
use std::thread;
use std::time::{Duration, Instant};

use eventcount::{JecSleep, NotifierSleep, SleepProtocol, SleepStats};
use eventcount_bench::pool::{Pool, WorkerCtx};

/// Jobs per burst, and xorshift rounds per job (tens of microseconds).
const JOBS: u32 = 8;
const ITERS: u32 = 20_000;
/// The pause between bursts: the pool idles in it.
const GAP: Duration = Duration::from_millis(1);

/// A few microseconds of CPU per thousand rounds, seeded.
fn busy(mut x: u64, iters: u32) -> u64 {
    for _ in 0..iters {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    black_box(x)
}

/// `jobs` busy jobs spread over the pool with a join tree.
fn burst<S: SleepProtocol>(ctx: &WorkerCtx<S>, seed: u64, jobs: u32) -> u64 {
    if jobs <= 1 {
        return busy(seed | 1, ITERS);
    }
    let half = jobs / 2;
    let (a, b) = ctx.join(
        move |ctx| burst(ctx, seed, half),
        move |ctx| burst(ctx, seed + u64::from(half), jobs - half),
    );
    a.wrapping_add(b)
}

/// Run `bursts` bursts on a pool of `threads` workers on `sleep`, and print
/// what its counters say.
fn measure<S: SleepProtocol + 'static>(
    name: &str,
    sleep: S,
    threads: usize,
    bursts: u64,
    cores: usize,
) {
    let pool = Pool::new(threads, sleep);
    pool.install(|ctx| burst(ctx, 0, JOBS)); // every worker started
    let before = pool.sleep().stats();
    let workers_before: Vec<SleepStats> =
        (0..threads).map(|w| pool.sleep().worker_stats(w)).collect();
    let started = Instant::now();
    for seed in 0..bursts {
        black_box(pool.install(move |ctx| burst(ctx, seed, JOBS)));
        thread::sleep(GAP);
    }
    let window = started.elapsed();
    let during = pool.sleep().stats() - before;
    let per_worker: Vec<SleepStats> = (0..threads)
        .map(|w| pool.sleep().worker_stats(w) - workers_before[w])
        .collect();
    pool.shutdown();

    println!(
        "{threads} workers on {cores} cores, {name}: {bursts} bursts in {:.0} ms",
        window.as_secs_f64() * 1e3
    );
    println!("  {during}");
    print_reading(&during, threads, window, bursts);
    println!("  per worker:");
    println!(
        "    worker  sleeps   wakes  empty  searching wall / CPU      found  gave up   parked"
    );
    for (w, s) in per_worker.iter().enumerate() {
        let cpu = s
            .searching_cpu
            .map_or("-".to_string(), |cpu| format!("{:.1} ms", ms(cpu)));
        println!(
            "    {w:>6} {:>7} {:>7} {:>6} {:>9.1} ms / {:>9} {:>6} {:>8} {:>6.0} ms",
            s.waits,
            s.wakes,
            s.empty_wakes,
            ms(s.searching),
            cpu,
            s.searches_found_work,
            s.searches_gave_up,
            ms(s.parked)
        );
    }
    println!();
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The ratios the guide reads, with what each says.
fn print_reading(s: &SleepStats, threads: usize, window: Duration, bursts: u64) {
    let per_burst = |n: u64| n as f64 / bursts as f64;
    println!(
        "  per burst: {:.1} sleeps, {:.1} wakes, {:.1} of them empty",
        per_burst(s.waits),
        per_burst(s.wakes),
        per_burst(s.empty_wakes)
    );
    let empty = ratio(s.empty_wakes as f64, s.wakes as f64);
    println!(
        "  empty wakes: {:.0}% of wakes found nothing{}",
        empty * 100.0,
        if empty > 0.3 {
            ": more workers are woken than the work needs"
        } else {
            ""
        }
    );
    if let Some(cpu) = s.searching_cpu {
        let crowding = ratio(ms(s.searching), ms(cpu));
        println!(
            "  searching: wall {:.1}x its CPU time{}",
            crowding,
            if crowding > 2.0 {
                ": searchers wait for a CPU, more threads than cores"
            } else {
                ""
            }
        );
    } else {
        println!("  searching: no per-thread CPU clock on this platform");
    }
    let searches = s.searches_found_work + s.searches_gave_up;
    println!(
        "  searches: {:.0}% found work",
        ratio(s.searches_found_work as f64, searches as f64) * 100.0
    );
    let asleep = ratio(ms(s.parked), ms(window) * threads as f64);
    println!(
        "  parked: {:.0}% of the workers' time{}",
        asleep * 100.0,
        if asleep > 0.8 {
            ": most workers sleep most of the time"
        } else {
            ""
        }
    );
}

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

fn main() -> ExitCode {
    let cores = thread::available_parallelism().map_or(1, usize::from);
    let mut bursts = 300;
    let mut big = 8 * cores;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => bursts = 30,
            "--threads" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => big = n,
                _ => {
                    eprintln!("sizing: --threads needs a number of workers above 0");
                    return ExitCode::FAILURE;
                }
            },
            "-h" | "--help" => {
                println!("usage: cargo run --release --example sizing -- [--quick] [--threads N]");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("sizing: unknown argument {other:?} (try --help)");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("Bursts of {JOBS} jobs, {GAP:?} apart. Too big, then one worker per core:\n");
    measure("jec", JecSleep::new(big), big, bursts, cores);
    measure("jec", JecSleep::new(cores), cores, bursts, cores);
    measure("notifier", NotifierSleep::new(big), big, bursts, cores);
    measure("notifier", NotifierSleep::new(cores), cores, bursts, cores);
    ExitCode::SUCCESS
}

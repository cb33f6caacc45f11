//! Traces of idle gaps: for each worker, the idle periods it goes through,
//! each the time from the worker's first empty round to the work that ends
//! it. Generated ones are seeded, so every run gives the same gaps.

use std::path::Path;

use eventcount::policy_tools::WaitKind;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// One idle period: how long until its work came, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The worker's top-level loop, or a wait on a job's latch.
    pub kind: WaitKind,
    /// From the first empty round to the work.
    pub ns: u64,
    /// The work comes at a deadline the worker sleeps until (a timer's
    /// tick): a sleep ends by itself, with no waker.
    pub timer: bool,
    /// It is part of the stretch a benchmark measures its waste over:
    /// false for the periods before it (B6's burst, before the idle window
    /// B6 measures). Every period counts in the trace's cost.
    pub counted: bool,
}

impl Gap {
    fn idle(ns: u64) -> Gap {
        Gap {
            kind: WaitKind::Idle,
            ns,
            timer: false,
            counted: true,
        }
    }

    fn join(ns: u64) -> Gap {
        Gap {
            kind: WaitKind::Join,
            ..Gap::idle(ns)
        }
    }
}

/// The gaps of every worker of one run.
#[derive(Clone, Debug)]
pub struct Trace {
    /// Its name in the tables.
    pub name: String,
    /// Most of its time is idle between long gaps: the rows where a policy
    /// is judged by the CPU it wastes against rayon's.
    pub idle_dominated: bool,
    /// One list of gaps per worker, in order.
    pub workers: Vec<Vec<Gap>>,
}

/// xorshift64: the same numbers on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Exponential with mean `mean`.
    fn exp(&mut self, mean: f64) -> u64 {
        (-mean * (1.0 - self.unit()).ln()) as u64
    }

    /// `ns` give or take `jitter` (uniform).
    fn around(&mut self, ns: u64, jitter: u64) -> u64 {
        (ns + (self.unit() * 2.0 * jitter as f64) as u64).saturating_sub(jitter)
    }
}

/// Two workers, `periods` gaps each, from `gap`.
fn two_workers(
    name: &str,
    idle_dominated: bool,
    seed: u64,
    periods: usize,
    mut gap: impl FnMut(&mut Rng) -> Gap,
) -> Trace {
    let mut rng = Rng(seed);
    Trace {
        name: name.to_string(),
        idle_dominated,
        workers: (0..2)
            .map(|_| (0..periods).map(|_| gap(&mut rng)).collect())
            .collect(),
    }
}

/// A timer's ticks every `period` (±5%): each worker sleeps until the
/// deadline of its next tick, as a server's worker does.
pub fn timer(period: u64, periods: usize) -> Trace {
    let name = format!("timer {} ms", period / MS);
    two_workers(&name, true, period, periods, |rng| Gap {
        timer: true,
        ..Gap::idle(rng.around(period, period / 20))
    })
}

/// B6, as its recorded runs show it: each run a fresh pool, whose burst
/// of fork-join work leaves a worker a handful of join waits and a couple
/// of short idle gaps (most of its searches find work at once, and teach
/// nothing), then the idle window B6 measures, in which only that window
/// counts. `runs` runs, one a worker.
pub fn b6(runs: usize) -> Trace {
    let mut rng = Rng(6);
    let burst = |rng: &mut Rng| {
        let mut gaps: Vec<Gap> = (0..18)
            .map(|k| {
                let gap = if k % 9 == 0 { Gap::idle } else { Gap::join };
                Gap {
                    counted: false,
                    ..gap(rng.exp(3.0 * US as f64))
                }
            })
            .collect();
        gaps.push(Gap::idle(300 * MS));
        gaps
    };
    Trace {
        name: "B6 burst, then idle".to_string(),
        idle_dominated: true,
        workers: (0..runs).map(|_| burst(&mut rng)).collect(),
    }
}

/// B7: ticks of 8 jobs of 5 µs in a join tree, `gap` apart: a worker waits
/// twice a tick on a join, a few µs each, and waits out the gap between
/// ticks in its idle loop.
pub fn b7(gap: u64, periods: usize) -> Trace {
    let name = format!("B7 {} us gaps", gap / US);
    let mut n = 0;
    two_workers(&name, gap >= 200 * US, 7 + gap, periods, move |rng| {
        n += 1;
        if n % 3 == 0 {
            Gap::idle(rng.around(gap, gap / 10))
        } else {
            Gap::join(rng.exp(3.0 * US as f64))
        }
    })
}

/// rayon's tick_bench (PR #1318): 8 regions of parallel work with 20 µs of
/// serial work between them, every 10 ms: seven gaps of about 20 µs and
/// one of about 9 ms a tick.
pub fn tick_bench(periods: usize) -> Trace {
    let mut n = 0;
    two_workers("tick_bench", false, 1318, periods, move |rng| {
        n += 1;
        if n % 8 == 0 {
            Gap::idle(rng.around(9 * MS, MS / 2))
        } else {
            Gap::idle(rng.around(22 * US, 4 * US))
        }
    })
}

/// Work arriving as a Poisson process: exponential gaps of mean `mean`.
pub fn poisson(mean: u64, periods: usize) -> Trace {
    let name = format!("Poisson, mean {} us", mean / US);
    two_workers(&name, mean >= 200 * US, mean, periods, |rng| {
        Gap::idle(rng.exp(mean as f64))
    })
}

/// Gaps of `short` (a fraction `p_short` of them) or `long`, at random.
pub fn bimodal(p_short: f64, short: u64, long: u64, periods: usize) -> Trace {
    let name = format!(
        "bimodal {:.0}% {} us / {} ms",
        p_short * 100.0,
        short / US,
        long / MS
    );
    two_workers(&name, false, 2, periods, |rng| {
        Gap::idle(if rng.unit() < p_short { short } else { long })
    })
}

/// Waits on a job's latch (the stolen half of a join): lognormal-ish
/// lengths around `median` (a tenth of them ten times longer).
pub fn joins(median: u64, periods: usize) -> Trace {
    let name = format!("join waits ~{} us", median / US);
    two_workers(&name, false, 11, periods, |rng| {
        let tail = if rng.unit() < 0.1 { 10 } else { 1 };
        Gap::join(rng.exp(median as f64) * tail)
    })
}

/// Every generated family, `periods` gaps per worker.
pub fn families(periods: usize) -> Vec<Trace> {
    vec![
        timer(MS, periods),
        timer(5 * MS, periods),
        b6(periods / 10),
        b7(20 * US, periods),
        b7(200 * US, periods),
        b7(2 * MS, periods),
        tick_bench(periods),
        poisson(10 * US, periods),
        poisson(100 * US, periods),
        poisson(MS, periods),
        bimodal(0.5, 5 * US, 2 * MS, periods),
        bimodal(0.8, 20 * US, 2 * MS, periods),
        joins(20 * US, periods),
    ]
}

/// A trace recorded by the crate's `policy-tools` feature
/// (`EVENTCOUNT_GAP_TRACE`): lines of `worker kind gap_ns sleep_cost_ns`.
/// Returns the trace and the median sleep cost the run measured (0 if it
/// measured none). `idle_dominated` is the caller's to say.
pub fn load(path: &Path, idle_dominated: bool) -> Result<(Trace, u64), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut workers: Vec<Vec<Gap>> = Vec::new();
    let mut costs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let bad = || {
            format!(
                "{}:{}: expected `worker kind gap_ns sleep_cost_ns`",
                path.display(),
                n + 1
            )
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [worker, kind, gap, cost] = fields[..] else {
            return Err(bad());
        };
        let worker: usize = worker.parse().map_err(|_| bad())?;
        let kind = match kind {
            "idle" => WaitKind::Idle,
            "join" => WaitKind::Join,
            _ => return Err(bad()),
        };
        let ns: u64 = gap.parse().map_err(|_| bad())?;
        let cost: u64 = cost.parse().map_err(|_| bad())?;
        if cost > 0 {
            costs.push(cost);
        }
        if workers.len() <= worker {
            workers.resize(worker + 1, Vec::new());
        }
        workers[worker].push(Gap {
            kind,
            ..Gap::idle(ns)
        });
    }
    costs.sort_unstable();
    let median = costs.get(costs.len() / 2).copied().unwrap_or(0);
    let name = path.file_stem().map_or_else(
        || "recorded".to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    workers.retain(|gaps| !gaps.is_empty());
    Ok((
        Trace {
            name,
            idle_dominated,
            workers,
        },
        median,
    ))
}

//! `cargo run --release --example bench_report`: short versions of the
//! benchmark suite B1-B7 (docs/benchmarks.md) in one process, each
//! implementation alternating with the others over several rounds, printed
//! as medians and as ratios taken within each round.
//!
//! Run with `--help` for the flags; `--json` prints the same numbers as
//! JSON (scripts/plot_benchmarks.py turns that into the plots in docs/).

// Under `--cfg loom` (the model-checking build of `cargo test`) the
// alternatives measured here are not dependencies: build a stub.
#[cfg(not(loom))]
#[path = "../benches/support/forkjoin.rs"]
mod forkjoin;
#[cfg(not(loom))]
#[path = "pool/pool.rs"]
mod pool;
#[cfg(not(loom))]
#[path = "pool/procstat.rs"]
#[allow(dead_code)] // only the context switch counts are used here
mod procstat;
#[cfg(not(loom))]
#[path = "../benches/support/wake_impls.rs"]
mod wake_impls;

#[cfg(not(loom))]
fn main() -> std::process::ExitCode {
    report::main()
}

#[cfg(loom)]
fn main() {
    eprintln!("bench_report: not available in a --cfg loom build");
    std::process::exit(2);
}

#[cfg(not(loom))]
mod report {
    use std::collections::BTreeSet;
    use std::fmt::Write as _;
    use std::hint::black_box;
    use std::process::{Command, ExitCode, Stdio};
    use std::sync::atomic::{fence, AtomicU64, Ordering};
    use std::sync::Arc;
    use std::thread;
    use std::time::{Duration, Instant};

    use event_listener::Event;
    use eventcount::{JecSleep, Notifier, NotifierSleep, SleepProtocol, SleepStats};

    use crate::forkjoin;
    use crate::pool::{self, Pool};
    use crate::procstat::ProcUsage;
    use crate::wake_impls::{self, BurstConfig, BurstImpl, FanImpl, Fanout, PingImpl, PingPong};

    const HELP: &str = "\
bench_report: short versions of the benchmarks B1-B7 of docs/benchmarks.md,
run in one process. Within each round every implementation of a benchmark
runs once, in a rotating order; the table shows the median over rounds of
each value, and of each ratio taken within a round.

USAGE:
    cargo run --release --example bench_report -- [OPTIONS]

OPTIONS:
    --json            print the results as JSON instead of tables
    --json-file <F>   print the tables, and also write the JSON to file F
    --rounds <N>      alternating rounds per benchmark, 3..=50   [default: 5]
    --only <LIST>     comma-separated subset of B1,B2,B3,B4,B5,B6,B7
    --idle <S>,<Y>    idle policy of our pools (B5-B7): S spin rounds, then Y
                      yield rounds, then sleep (default 0,32, Rayon's)
                                                               [default: all]
    --quick           fewer iterations per round (a smoke test, ~10 s)
    -h, --help        print this help

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
        at 2 and 8 threads
    B6  after a burst: pool CPU in the next 300 ms, time until every worker
        sleeps (ours), wakes while idle
    B7  ticks: 200 ticks of 8 jobs x ~5 us, gaps of 20 us (main thread
        spins), 200 us and 2 ms (main thread sleeps); pool CPU per tick against
        the useful work, and latency from submit to all 8 done

Exit status: 0 on success, 1 if a workload computed a wrong result, 2 on a
bad command line.
";

    // ---------------------------------------------------------------------------
    // Command line.

    #[derive(Clone, Debug)]
    struct Options {
        json: bool,
        json_file: Option<String>,
        rounds: usize,
        only: BTreeSet<u8>,
        quick: bool,
    }

    /// The idle policy our pools use (`--idle`; Rayon's by default).
    static IDLE_POLICY: std::sync::OnceLock<eventcount::IdlePolicy> = std::sync::OnceLock::new();

    pub(crate) fn idle_policy() -> eventcount::IdlePolicy {
        IDLE_POLICY.get().copied().unwrap_or_default()
    }

    fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
        let mut options = Options {
            json: false,
            json_file: None,
            rounds: 5,
            only: (1..=7).collect(),
            quick: false,
        };
        let mut policy = None;
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "-h" | "--help" => return Ok(None),
                "--json" => options.json = true,
                "--idle" => {
                    let text = args.next().ok_or("--idle needs a value like 0,32")?;
                    let parsed = text
                        .split_once(',')
                        .and_then(|(s, y)| Some((s.parse::<u32>().ok()?, y.parse::<u32>().ok()?)));
                    let Some((spin, yields)) = parsed else {
                        return Err(format!(
                            "--idle takes spin rounds and yield rounds, like 0,32; not '{text}'"
                        ));
                    };
                    policy = Some(
                        eventcount::IdlePolicy::new()
                            .spin_rounds(spin)
                            .yield_rounds(yields),
                    );
                }
                "--quick" => options.quick = true,
                "--json-file" => {
                    let path = args.next().ok_or("--json-file needs a file name")?;
                    if path.starts_with('-') {
                        return Err(format!("--json-file needs a file name, not '{path}'"));
                    }
                    options.json_file = Some(path);
                }
                "--rounds" => {
                    let text = args
                        .next()
                        .ok_or("--rounds needs a value, a whole number from 3 to 50")?;
                    options.rounds = match text.parse::<usize>() {
                        Ok(n) if (3..=50).contains(&n) => n,
                        _ => {
                            return Err(format!(
                                "--rounds takes a whole number from 3 to 50, not '{text}' \
                             (medians need at least 3 rounds)"
                            ))
                        }
                    };
                }
                "--only" => {
                    let text = args
                        .next()
                        .ok_or("--only needs a value, e.g. --only B2,B5")?;
                    options.only.clear();
                    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                        let id = part
                            .strip_prefix(['B', 'b'])
                            .and_then(|n| n.parse::<u8>().ok())
                            .filter(|n| (1..=7).contains(n))
                            .ok_or_else(|| {
                                format!("--only: unknown benchmark '{part}': expected B1 to B7")
                            })?;
                        options.only.insert(id);
                    }
                    if options.only.is_empty() {
                        return Err("--only needs at least one of B1 to B7".to_string());
                    }
                }
                other => return Err(format!("unknown argument '{other}'; see --help")),
            }
        }
        let _ = IDLE_POLICY.set(policy.unwrap_or_default());
        Ok(Some(options))
    }

    // ---------------------------------------------------------------------------
    // Results: per (bench, case, implementation, metric), one value per round.

    struct Series {
        bench: &'static str,
        case: String,
        imp: String,
        metric: &'static str,
        values: Vec<f64>,
    }

    /// A target's outcome. Ratios are compared round by round: a target is
    /// met (or missed) only if every round agrees; rounds that disagree mean
    /// the difference is within the run-to-run noise.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Verdict {
        Met,
        NotMet,
        Tie,
    }

    impl Verdict {
        fn label(self) -> &'static str {
            match self {
                Verdict::Met => "MET",
                Verdict::NotMet => "NOT MET",
                Verdict::Tie => "TIE",
            }
        }
    }

    struct Check {
        bench: &'static str,
        target: String,
        measured: String,
        verdict: Verdict,
    }

    #[derive(Default)]
    struct Report {
        series: Vec<Series>,
        checks: Vec<Check>,
        notes: Vec<String>,
        wrong_results: Vec<String>,
        /// (benchmark, percent of the machine other processes used meanwhile).
        foreign_load: Vec<(u8, f64)>,
    }

    impl Report {
        fn add(
            &mut self,
            bench: &'static str,
            case: &str,
            imp: &str,
            metric: &'static str,
            v: f64,
        ) {
            if let Some(s) = self
                .series
                .iter_mut()
                .find(|s| s.bench == bench && s.case == case && s.imp == imp && s.metric == metric)
            {
                s.values.push(v);
            } else {
                self.series.push(Series {
                    bench,
                    case: case.to_string(),
                    imp: imp.to_string(),
                    metric,
                    values: vec![v],
                });
            }
        }

        /// Record each implementation's value for this round and its ratio to
        /// `baseline`'s value in the same round.
        fn add_round(
            &mut self,
            bench: &'static str,
            case: &str,
            metric: &'static str,
            values: &[(String, f64)],
            baseline: &str,
            ratio_metric: &'static str,
        ) {
            let base = values.iter().find(|(imp, _)| imp == baseline).map(|v| v.1);
            for (imp, v) in values {
                self.add(bench, case, imp, metric, *v);
                if let Some(base) = base.filter(|b| *b > 0.0) {
                    self.add(bench, case, imp, ratio_metric, v / base);
                }
            }
        }

        fn median(&self, bench: &str, case: &str, imp: &str, metric: &str) -> Option<f64> {
            self.series
                .iter()
                .find(|s| s.bench == bench && s.case == case && s.imp == imp && s.metric == metric)
                .map(|s| median(&s.values))
        }

        /// Per-round values of one series (round order).
        fn values(&self, bench: &str, case: &str, imp: &str, metric: &str) -> Vec<f64> {
            self.series
                .iter()
                .find(|s| s.bench == bench && s.case == case && s.imp == imp && s.metric == metric)
                .map_or_else(Vec::new, |s| s.values.clone())
        }

        /// Per-round ratio of `a` to `b` on `metric`.
        fn round_ratios(
            &self,
            bench: &str,
            case: &str,
            a: &str,
            b: &str,
            metric: &str,
        ) -> Vec<f64> {
            let (va, vb) = (
                self.values(bench, case, a, metric),
                self.values(bench, case, b, metric),
            );
            va.iter().zip(&vb).map(|(x, y)| x / y).collect()
        }

        /// A count or exact target: met or not.
        fn check(&mut self, bench: &'static str, target: String, measured: String, met: bool) {
            self.checks.push(Check {
                bench,
                target,
                measured,
                verdict: if met { Verdict::Met } else { Verdict::NotMet },
            });
        }

        /// A ratio target, judged round by round: `ratio <= limit` (or `<` if
        /// `strict`) in every round is MET, in none NOT MET, otherwise TIE.
        fn check_ratios(
            &mut self,
            bench: &'static str,
            target: String,
            ratios: &[f64],
            limit: f64,
            strict: bool,
            unit: &str,
        ) {
            if ratios.is_empty() {
                return;
            }
            let ok = |r: &&f64| if strict { **r < limit } else { **r <= limit };
            let meeting = ratios.iter().filter(ok).count();
            let (lo, hi) = ratios
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                    (lo.min(*r), hi.max(*r))
                });
            let verdict = if meeting == ratios.len() {
                Verdict::Met
            } else if meeting == 0 {
                Verdict::NotMet
            } else {
                Verdict::Tie
            };
            self.checks.push(Check {
                bench,
                target,
                measured: format!(
                    "median {:.2}x {unit} (rounds {lo:.2}-{hi:.2}; {meeting} of {} rounds meet it)",
                    median(ratios),
                    ratios.len()
                ),
                verdict,
            });
        }

        fn note(&mut self, note: String) {
            self.notes.push(note);
        }

        /// The same answer from every implementation, or a recorded failure.
        fn expect_same(&mut self, what: &str, results: &[(String, u64)]) {
            if let Some((_, first)) = results.first() {
                for (imp, value) in results {
                    if value != first {
                        self.wrong_results.push(format!(
                            "{what}: {imp} computed {value}, {} computed {first}",
                            results[0].0
                        ));
                    }
                }
            }
        }
    }

    fn median(values: &[f64]) -> f64 {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            f64::NAN
        } else if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }

    fn percentile(values: &mut [f64], p: f64) -> f64 {
        values.sort_by(f64::total_cmp);
        let idx = ((values.len() as f64 - 1.0) * p).round() as usize;
        values[idx.min(values.len() - 1)]
    }

    /// `items` in the order for round `round`: rotated by one each round, so
    /// no implementation always runs first (ABC, BCA, CAB, ...).
    fn rotated<T: Copy>(items: &[T], round: usize) -> Vec<T> {
        let k = round % items.len();
        items[k..].iter().chain(&items[..k]).copied().collect()
    }

    fn diff(after: SleepStats, before: SleepStats) -> SleepStats {
        after - before
    }

    // ---------------------------------------------------------------------------
    // B1: notify with nobody waiting.

    #[derive(Clone, Copy, PartialEq, Eq)]
    enum B1 {
        Floor,
        FetchAdd,
        NotifyOne,
        NotifyN,
        NotifyAll,
        JecInternal,
        JecInjected,
        TraitNotifierSleep,
        StdCondvar,
        ParkingLotCondvar,
        EventListener,
        CrossbeamUnpark,
        StdUnpark,
    }

    impl B1 {
        const ALL: [B1; 13] = [
            B1::Floor,
            B1::FetchAdd,
            B1::NotifyOne,
            B1::NotifyN,
            B1::NotifyAll,
            B1::JecInternal,
            B1::JecInjected,
            B1::TraitNotifierSleep,
            B1::StdCondvar,
            B1::ParkingLotCondvar,
            B1::EventListener,
            B1::CrossbeamUnpark,
            B1::StdUnpark,
        ];
        /// The rows measured with two threads calling at once.
        const CONCURRENT: [B1; 5] = [
            B1::Floor,
            B1::FetchAdd,
            B1::NotifyOne,
            B1::JecInternal,
            B1::JecInjected,
        ];

        fn name(self) -> &'static str {
            match self {
                B1::Floor => "floor: fence+load",
                B1::FetchAdd => "folly-style fetch_add",
                B1::NotifyOne => "notifier.notify_one",
                B1::NotifyN => "notifier.notify_n(4)",
                B1::NotifyAll => "notifier.notify_all",
                B1::JecInternal => "jec.new_internal_jobs",
                B1::JecInjected => "jec.new_injected_jobs",
                B1::TraitNotifierSleep => "trait: notifier_sleep post",
                B1::StdCondvar => "std condvar.notify_one",
                B1::ParkingLotCondvar => "parking_lot condvar.notify_one",
                B1::EventListener => "event_listener.notify(1)",
                B1::CrossbeamUnpark => "crossbeam unparker.unpark",
                B1::StdUnpark => "std thread.unpark",
            }
        }

        /// Calls per timing: fewer for the paths that make a syscall.
        fn calls(self, quick: bool) -> u64 {
            let full = match self {
                B1::StdCondvar => 1_000_000,
                _ => 10_000_000,
            };
            if quick {
                full / 10
            } else {
                full
            }
        }
    }

    /// Everything B1 notifies, built once.
    struct B1Targets {
        word: AtomicU64,
        notifier: Notifier,
        jec: JecSleep,
        notifier_sleep: NotifierSleep,
        condvar: std::sync::Condvar,
        pl_condvar: parking_lot::Condvar,
        event: Event,
        unparker: crossbeam_utils::sync::Unparker,
        thread: thread::Thread,
    }

    /// One call of each path, never inlined: every row of B1 pays the same
    /// call, loop and `black_box` overhead as the floor, so the ratios
    /// compare the paths themselves.
    mod paths {
        use super::*;

        #[inline(never)]
        pub fn floor(word: &AtomicU64) -> u64 {
            fence(Ordering::SeqCst);
            word.load(Ordering::Acquire)
        }
        #[inline(never)]
        pub fn fetch_add(word: &AtomicU64) -> u64 {
            word.fetch_add(1, Ordering::SeqCst)
        }
        #[inline(never)]
        pub fn notify_one(n: &Notifier) -> bool {
            n.notify_one()
        }
        #[inline(never)]
        pub fn notify_n(n: &Notifier) -> usize {
            n.notify_n(4)
        }
        #[inline(never)]
        pub fn notify_all(n: &Notifier) -> usize {
            n.notify_all()
        }
        #[inline(never)]
        pub fn jec_internal(s: &JecSleep) {
            s.new_internal_jobs(1, true)
        }
        #[inline(never)]
        pub fn jec_injected(s: &JecSleep) {
            s.new_injected_jobs(1, true)
        }
        #[inline(never)]
        pub fn trait_post<S: SleepProtocol>(s: &S) {
            s.new_internal_jobs(1, true)
        }
        #[inline(never)]
        pub fn std_condvar(c: &std::sync::Condvar) {
            c.notify_one()
        }
        #[inline(never)]
        pub fn pl_condvar(c: &parking_lot::Condvar) -> bool {
            c.notify_one()
        }
        #[inline(never)]
        pub fn event(e: &Event) -> usize {
            e.notify(1)
        }
        #[inline(never)]
        pub fn crossbeam_unpark(u: &crossbeam_utils::sync::Unparker) {
            u.unpark()
        }
        #[inline(never)]
        pub fn std_unpark(t: &thread::Thread) {
            t.unpark()
        }
    }

    /// `calls` calls of `f` on `x`; ns per call (wall time: on this VM a
    /// thread's own CPU-time reading only moves at the 4 ms scheduler tick).
    #[inline(always)]
    fn time_calls<T, R>(x: &T, calls: u64, f: fn(&T) -> R) -> f64 {
        let start = Instant::now();
        for _ in 0..calls {
            black_box(f(black_box(x)));
        }
        start.elapsed().as_nanos() as f64 / calls as f64
    }

    /// ns per call of `which`, over `calls` calls.
    fn time_b1(t: &B1Targets, which: B1, calls: u64) -> f64 {
        match which {
            B1::Floor => time_calls(&t.word, calls, paths::floor),
            B1::FetchAdd => time_calls(&t.word, calls, paths::fetch_add),
            B1::NotifyOne => time_calls(&t.notifier, calls, paths::notify_one),
            B1::NotifyN => time_calls(&t.notifier, calls, paths::notify_n),
            B1::NotifyAll => time_calls(&t.notifier, calls, paths::notify_all),
            B1::JecInternal => time_calls(&t.jec, calls, paths::jec_internal),
            B1::JecInjected => time_calls(&t.jec, calls, paths::jec_injected),
            B1::TraitNotifierSleep => {
                time_calls(&t.notifier_sleep, calls, paths::trait_post::<NotifierSleep>)
            }
            B1::StdCondvar => time_calls(&t.condvar, calls, paths::std_condvar),
            B1::ParkingLotCondvar => time_calls(&t.pl_condvar, calls, paths::pl_condvar),
            B1::EventListener => time_calls(&t.event, calls, paths::event),
            B1::CrossbeamUnpark => time_calls(&t.unparker, calls, paths::crossbeam_unpark),
            B1::StdUnpark => time_calls(&t.thread, calls, paths::std_unpark),
        }
    }

    fn run_b1(report: &mut Report, opts: &Options) {
        let parker = crossbeam_utils::sync::Parker::new();
        let finished = thread::spawn(|| {});
        let other = finished.thread().clone();
        finished.join().expect("empty thread");
        let targets = Arc::new(B1Targets {
            word: AtomicU64::new(0),
            notifier: Notifier::new(8),
            jec: JecSleep::new(8),
            notifier_sleep: NotifierSleep::new(8),
            condvar: std::sync::Condvar::new(),
            pl_condvar: parking_lot::Condvar::new(),
            event: Event::new(),
            unparker: parker.unparker().clone(),
            thread: other,
        });
        // Warm-up: every path once, briefly.
        for which in B1::ALL {
            time_b1(&targets, which, 10_000);
        }
        let case = "1 thread";
        for round in 0..opts.rounds {
            let mut values = Vec::new();
            for which in rotated(&B1::ALL, round) {
                values.push((
                    which.name().to_string(),
                    time_b1(&targets, which, which.calls(opts.quick)),
                ));
            }
            report.add_round("B1", case, "ns/call", &values, B1::Floor.name(), "x floor");
        }
        // Two threads posting at once: a path that writes a shared line slows
        // down; fence+load does not.
        let case2 = "2 threads at once";
        for round in 0..opts.rounds {
            let mut values = Vec::new();
            for which in rotated(&B1::CONCURRENT, round) {
                let calls = which.calls(opts.quick);
                let per_call: Vec<f64> = thread::scope(|s| {
                    let handles: Vec<_> = (0..2)
                        .map(|_| {
                            let t = &targets;
                            s.spawn(move || time_b1(t, which, calls))
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap()).collect()
                });
                values.push((which.name().to_string(), median(&per_call)));
            }
            report.add_round("B1", case2, "ns/call", &values, B1::Floor.name(), "x floor");
        }
        if targets.notifier.stats().wakes != 0 || targets.jec.stats().wakes != 0 {
            report.note("B1: a fast path made a wake syscall with nobody waiting".to_string());
        }
        for (which, limit) in [
            (B1::NotifyOne, 1.3),
            (B1::NotifyN, 1.3),
            (B1::NotifyAll, 1.3),
            (B1::JecInternal, 1.5),
            (B1::JecInjected, 1.5),
        ] {
            let ratios = report.values("B1", case, which.name(), "x floor");
            report.check_ratios(
                "B1",
                format!("{} <= {limit}x floor (1 thread)", which.name()),
                &ratios,
                limit,
                false,
                "floor",
            );
        }
    }

    // ---------------------------------------------------------------------------
    // B2: ping-pong.

    /// Pin thread `tid` to `cpus` (a taskset list). False if taskset failed.
    fn pin(tid: u64, cpus: &str) -> bool {
        Command::new("taskset")
            .args(["-p", "-c", cpus, &tid.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Placement {
        Unpinned,
        Cross,
        Same,
    }

    impl Placement {
        fn name(self) -> &'static str {
            match self {
                Placement::Unpinned => "unpinned",
                Placement::Cross => "pinned, 2 vCPUs",
                Placement::Same => "pinned, 1 vCPU",
            }
        }
    }

    fn run_b2(report: &mut Report, opts: &Options) {
        let trips = if opts.quick { 300 } else { 2000 };
        let cpus = thread::available_parallelism().map_or(1, |n| n.get());
        let all_cpus = format!("0-{}", cpus.saturating_sub(1));
        let main_tid = wake_impls::current_tid();
        let can_pin = main_tid.is_some_and(|tid| pin(tid, &all_cpus));
        let mut placements = vec![Placement::Unpinned];
        if can_pin {
            if cpus >= 2 {
                placements.push(Placement::Cross);
            }
            placements.push(Placement::Same);
        } else {
            report.note("B2: taskset unavailable: only the unpinned case ran".to_string());
        }
        for &placement in &placements {
            let case = placement.name();
            for round in 0..opts.rounds {
                let mut medians = Vec::new();
                for imp in rotated(&PingImpl::ALL, round) {
                    let mut pair = PingPong::start(imp);
                    if let (Some(main), Some(partner)) = (main_tid, pair.partner_tid()) {
                        match placement {
                            Placement::Unpinned => {}
                            Placement::Cross => {
                                pin(main, "0");
                                pin(partner, "1");
                            }
                            Placement::Same => {
                                pin(main, "0");
                                pin(partner, "0");
                            }
                        }
                    }
                    for _ in 0..trips / 10 {
                        pair.round_trip();
                    }
                    let before = pair.stats();
                    let mut times = Vec::with_capacity(trips);
                    for _ in 0..trips {
                        let start = Instant::now();
                        pair.round_trip();
                        times.push(start.elapsed().as_nanos() as f64 / 1e3);
                    }
                    if let (Some(before), Some(after)) = (before, pair.stats()) {
                        let d = diff(after, before);
                        report.add(
                            "B2",
                            case,
                            imp.name(),
                            "futex waits/trip",
                            d.waits as f64 / trips as f64,
                        );
                        report.add(
                            "B2",
                            case,
                            imp.name(),
                            "futex wakes/trip",
                            d.wakes as f64 / trips as f64,
                        );
                    }
                    report.add(
                        "B2",
                        case,
                        imp.name(),
                        "p90 us",
                        percentile(&mut times.clone(), 0.9),
                    );
                    medians.push((imp.name().to_string(), median(&times)));
                    drop(pair);
                    if let Some(main) = main_tid {
                        pin(main, &all_cpus);
                    }
                }
                report.add_round(
                    "B2",
                    case,
                    "p50 us/trip",
                    &medians,
                    "raw_futex",
                    "x raw_futex",
                );
            }
            let ratios = report.values("B2", case, "notifier", "x raw_futex");
            report.check_ratios(
                "B2",
                format!("notifier round trip <= 1.10x raw futex ({case})"),
                &ratios,
                1.10,
                false,
                "raw futex",
            );
            for other in ["std_condvar", "event_listener"] {
                let ratios = report.round_ratios("B2", case, "notifier", other, "p50 us/trip");
                report.check_ratios(
                    "B2",
                    format!("notifier round trip below {other} ({case})"),
                    &ratios,
                    1.0,
                    true,
                    other,
                );
            }
        }
    }

    // ---------------------------------------------------------------------------
    // B3: fan-out.

    fn run_b3(report: &mut Report, opts: &Options) {
        let n = 4;
        let fanouts = if opts.quick { 30 } else { 100 };
        let case = "N=4";
        let mut total_wakes = 0u64;
        let mut total_notifies = 0u64;
        let mut total_waits = 0u64;
        for round in 0..opts.rounds {
            let mut values = Vec::new();
            for imp in rotated(&FanImpl::ALL, round) {
                let mut fan = Fanout::start(imp, n);
                for _ in 0..10 {
                    fan.round();
                }
                let before = fan.stats();
                let mut times: Vec<f64> = (0..fanouts)
                    .map(|_| fan.round().as_nanos() as f64 / 1e3)
                    .collect();
                if let (Some(before), Some(after)) = (before, fan.stats()) {
                    let d = diff(after, before);
                    total_wakes += d.wakes;
                    total_waits += d.waits;
                    total_notifies += fanouts as u64;
                    report.add(
                        "B3",
                        case,
                        imp.name(),
                        "futex wakes/notify_all",
                        d.wakes as f64 / fanouts as f64,
                    );
                }
                report.add(
                    "B3",
                    case,
                    imp.name(),
                    "p90 us",
                    percentile(&mut times, 0.9),
                );
                values.push((imp.name().to_string(), median(&times)));
            }
            report.add_round(
                "B3",
                case,
                "p50 us to all awake",
                &values,
                "raw_futex_wake_all",
                "x raw_futex",
            );
        }
        report.check(
            "B3",
            format!("notifier: exactly one futex wake per sleeping waiter ({n} per notify_all)"),
            format!(
                "{total_wakes} wakes / {total_notifies} notify_all = {:.3} per notify_all; \
             {:.3} waits per sleeper per round",
                total_wakes as f64 / total_notifies.max(1) as f64,
                total_waits as f64 / (total_notifies.max(1) * n as u64) as f64
            ),
            total_notifies > 0 && total_wakes == total_notifies * n as u64,
        );
    }

    // ---------------------------------------------------------------------------
    // B4: bursty producer/consumer.

    fn run_b4(report: &mut Report, opts: &Options) {
        let cfg = BurstConfig::small(if opts.quick { 5 } else { 20 });
        let runs = 3;
        let case = "2P/4C, 32-item bursts, 50 us gaps";
        for round in 0..opts.rounds {
            let mut wall = Vec::new();
            let mut cpu = Vec::new();
            let mut sums = Vec::new();
            for imp in rotated(&BurstImpl::ALL, round) {
                let results: Vec<_> = (0..runs)
                    .map(|_| wake_impls::run_bursty(imp, &cfg))
                    .collect();
                let per_item = |d: Duration| d.as_nanos() as f64 / cfg.items() as f64;
                wall.push((
                    imp.name().to_string(),
                    median(
                        &results
                            .iter()
                            .map(|r| per_item(r.elapsed))
                            .collect::<Vec<_>>(),
                    ),
                ));
                cpu.push((
                    imp.name().to_string(),
                    median(&results.iter().map(|r| per_item(r.cpu)).collect::<Vec<_>>()),
                ));
                let stats: Vec<_> = results.iter().filter_map(|r| r.stats).collect();
                if !stats.is_empty() {
                    let wakes: u64 = stats.iter().map(|s| s.wakes).sum();
                    report.add(
                        "B4",
                        case,
                        imp.name(),
                        "futex wakes/item",
                        wakes as f64 / (cfg.items() * stats.len()) as f64,
                    );
                }
                sums.push((imp.name().to_string(), results[0].checksum));
            }
            report.expect_same("B4 checksum", &sums);
            report.add_round(
                "B4",
                case,
                "wall ns/item",
                &wall,
                "std_condvar",
                "wall x condvar",
            );
            report.add_round(
                "B4",
                case,
                "cpu ns/item",
                &cpu,
                "std_condvar",
                "cpu x condvar",
            );
        }
    }

    // ---------------------------------------------------------------------------
    // Pools: ours on either protocol, and rayon.

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum PoolImpl {
        Jec,
        Notifier,
        Rayon,
    }

    impl PoolImpl {
        const ALL: [PoolImpl; 3] = [PoolImpl::Jec, PoolImpl::Notifier, PoolImpl::Rayon];

        fn name(self) -> &'static str {
            match self {
                PoolImpl::Jec => "pool+jec",
                PoolImpl::Notifier => "pool+notifier",
                PoolImpl::Rayon => "rayon",
            }
        }
    }

    /// A pool of either kind, built for one measurement.
    enum AnyPool {
        Jec(Pool<JecSleep>),
        Notifier(Pool<NotifierSleep>),
        Rayon(rayon::ThreadPool),
    }

    #[derive(Clone, Copy)]
    enum Work {
        Fib { n: u32, cutoff: u32 },
        Tree { depth: u32 },
        Tick { jobs: u32, iters: u32, seed: u64 },
    }

    impl AnyPool {
        fn new(imp: PoolImpl, threads: usize) -> AnyPool {
            let policy = idle_policy();
            match imp {
                PoolImpl::Jec => {
                    AnyPool::Jec(Pool::new(threads, JecSleep::with_policy(threads, policy)))
                }
                PoolImpl::Notifier => AnyPool::Notifier(Pool::new(
                    threads,
                    NotifierSleep::with_policy(threads, policy),
                )),
                PoolImpl::Rayon => AnyPool::Rayon(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .expect("rayon pool"),
                ),
            }
        }

        fn run(&self, work: Work, tree: &Arc<Vec<u64>>) -> u64 {
            fn ours<S: SleepProtocol + 'static>(
                p: &Pool<S>,
                work: Work,
                tree: &Arc<Vec<u64>>,
            ) -> u64 {
                match work {
                    Work::Fib { n, cutoff } => p.install(move |ctx| pool::fib(ctx, n, cutoff)),
                    Work::Tree { depth } => {
                        let tree = tree.clone();
                        p.install(move |ctx| pool::tree_sum(ctx, &tree, 0, depth))
                    }
                    Work::Tick { jobs, iters, seed } => {
                        p.install(move |ctx| forkjoin::burst_tree(ctx, seed, jobs, iters))
                    }
                }
            }
            match self {
                AnyPool::Jec(p) => ours(p, work, tree),
                AnyPool::Notifier(p) => ours(p, work, tree),
                AnyPool::Rayon(p) => match work {
                    Work::Fib { n, cutoff } => p.install(|| forkjoin::rayon_fib(n, cutoff)),
                    Work::Tree { depth } => p.install(|| forkjoin::rayon_tree(tree, 0, depth)),
                    Work::Tick { jobs, iters, seed } => {
                        p.install(|| forkjoin::rayon_burst(seed, jobs, iters))
                    }
                },
            }
        }

        /// Workers asleep right now (ours only).
        fn sleeping(&self) -> Option<usize> {
            match self {
                AnyPool::Jec(p) => Some(p.sleep().num_sleeping()),
                AnyPool::Notifier(p) => Some(p.sleep().num_sleeping()),
                AnyPool::Rayon(_) => None,
            }
        }

        fn stats(&self) -> Option<SleepStats> {
            match self {
                AnyPool::Jec(p) => Some(p.sleep().stats()),
                AnyPool::Notifier(p) => Some(p.sleep().stats()),
                AnyPool::Rayon(_) => None,
            }
        }

        /// Shut down and make sure every worker thread is gone, so the next
        /// measurement's process CPU is its own.
        fn finish(self, threads_before: usize) {
            match self {
                AnyPool::Jec(p) => p.shutdown(),
                AnyPool::Notifier(p) => p.shutdown(),
                // rayon's pool exits its threads asynchronously after drop.
                AnyPool::Rayon(p) => drop(p),
            }
            let deadline = Instant::now() + Duration::from_secs(2);
            while live_threads() > threads_before && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(1));
            }
        }
    }

    fn live_threads() -> usize {
        std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
    }

    /// CPU of every thread but the calling one (the pool's workers), and
    /// the process's voluntary context switches, as one reading.
    struct PoolCpu {
        cpu: Duration,
        process: ProcUsage,
    }

    impl PoolCpu {
        fn now() -> PoolCpu {
            PoolCpu {
                cpu: wake_impls::other_threads_cpu(wake_impls::current_tid()),
                process: ProcUsage::now(),
            }
        }
        fn since(&self, earlier: &PoolCpu) -> Duration {
            self.cpu.saturating_sub(earlier.cpu)
        }
    }

    // ---------------------------------------------------------------------------
    // B5: fork-join.

    fn run_b5(report: &mut Report, opts: &Options) {
        let tree = pool::make_tree((1 << 18) - 1);
        let runs = if opts.quick { 5 } else { 15 };
        // The first two are the targets' inputs; the third, coarser one shows
        // how much of the gap is per-join overhead (it is not a target).
        let workloads = [
            ("fib(25) cutoff 10", Work::Fib { n: 25, cutoff: 10 }, true),
            ("tree 2^18-1 depth 10", Work::Tree { depth: 10 }, true),
            ("fib(30) cutoff 15", Work::Fib { n: 30, cutoff: 15 }, false),
        ];
        // 1 thread isolates the pools' per-join overhead (against sequential).
        for threads in [1usize, 2, 8] {
            for (label, work, is_target) in workloads {
                let case = format!(
                    "{label}, {threads} thread{}",
                    if threads == 1 { "" } else { "s" }
                );
                for round in 0..opts.rounds {
                    let mut values = Vec::new();
                    let mut results = Vec::new();
                    for imp in rotated(&PoolImpl::ALL, round) {
                        let before = live_threads();
                        let p = AnyPool::new(imp, threads);
                        for _ in 0..3 {
                            black_box(p.run(work, &tree));
                        }
                        let mut times = Vec::new();
                        let mut check = 0;
                        let stats0 = p.stats();
                        let switches0 = ProcUsage::now().voluntary_switches;
                        for _ in 0..runs {
                            let start = Instant::now();
                            check = p.run(work, &tree);
                            times.push(start.elapsed().as_nanos() as f64 / 1e6);
                        }
                        let switches = ProcUsage::now().voluntary_switches - switches0;
                        // Every thread's voluntary switches, the caller's
                        // wait for the result included.
                        report.add(
                            "B5",
                            &case,
                            imp.name(),
                            "ctx switches/run",
                            switches as f64 / runs as f64,
                        );
                        if let (Some(s0), Some(s1)) = (stats0, p.stats()) {
                            report.add(
                                "B5",
                                &case,
                                imp.name(),
                                "futex waits/run",
                                diff(s1, s0).waits as f64 / runs as f64,
                            );
                        }
                        p.finish(before);
                        values.push((imp.name().to_string(), median(&times)));
                        results.push((imp.name().to_string(), check));
                    }
                    // The sequential baseline, on this thread.
                    let mut seq = Vec::new();
                    for _ in 0..runs.min(5) {
                        let start = Instant::now();
                        black_box(match work {
                            Work::Fib { n, .. } => pool::fib_seq(black_box(n)),
                            Work::Tree { .. } => pool::tree_sum_seq(black_box(&tree), 0),
                            Work::Tick { .. } => 0,
                        });
                        seq.push(start.elapsed().as_nanos() as f64 / 1e6);
                    }
                    values.push(("sequential".to_string(), median(&seq)));
                    report.expect_same(&format!("B5 {case}"), &results);
                    report.add_round("B5", &case, "ms", &values, "rayon", "x rayon");
                }
                for imp in [PoolImpl::Jec, PoolImpl::Notifier] {
                    if threads == 1 || !is_target {
                        continue; // overhead and scaling only: no target
                    }
                    let ratios = report.values("B5", &case, imp.name(), "x rayon");
                    report.check_ratios(
                        "B5",
                        format!("{} no slower than rayon: {case}", imp.name()),
                        &ratios,
                        1.0,
                        false,
                        "rayon",
                    );
                }
            }
        }
    }

    // ---------------------------------------------------------------------------
    // B6: idle after a burst.

    fn run_b6(report: &mut Report, opts: &Options) {
        let tree = pool::make_tree(1);
        let burst = Work::Fib { n: 25, cutoff: 10 };
        let window = Duration::from_millis(if opts.quick { 100 } else { 300 });
        for threads in [2usize, 8] {
            let case = format!("{threads} threads");
            for round in 0..opts.rounds {
                let mut cpu_values = Vec::new();
                for imp in rotated(&PoolImpl::ALL, round) {
                    let before = live_threads();
                    let p = AnyPool::new(imp, threads);
                    black_box(p.run(burst, &tree));
                    // Time to quiescence (ours): poll every 20 us after a burst.
                    if p.sleeping().is_some() {
                        black_box(p.run(burst, &tree));
                        let start = Instant::now();
                        let deadline = start + Duration::from_secs(1);
                        while p.sleeping() != Some(threads) && Instant::now() < deadline {
                            thread::sleep(Duration::from_micros(20));
                        }
                        let us = start.elapsed().as_nanos() as f64 / 1e3;
                        report.add("B6", &case, imp.name(), "us until all asleep", us);
                    }
                    // CPU in the window after a burst; nothing else runs.
                    black_box(p.run(burst, &tree));
                    let stats0 = p.stats();
                    let cpu0 = PoolCpu::now();
                    let voluntary0 = cpu0.process.voluntary_switches;
                    thread::sleep(window);
                    let cpu1 = PoolCpu::now();
                    let cpu_ms = cpu1.since(&cpu0).as_nanos() as f64 / 1e6;
                    let switches = cpu1.process.voluntary_switches - voluntary0;
                    report.add("B6", &case, imp.name(), "context switches", switches as f64);
                    if let (Some(s0), Some(s1)) = (stats0, p.stats()) {
                        // Wakes after every worker fell asleep must be 0; the
                        // window also holds the spin-down, so count both.
                        let d = diff(s1, s0);
                        report.add("B6", &case, imp.name(), "futex wakes", d.wakes as f64);
                    }
                    cpu_values.push((imp.name().to_string(), cpu_ms));
                    p.finish(before);
                }
                report.add_round(
                    "B6",
                    &case,
                    "cpu ms in window",
                    &cpu_values,
                    "rayon",
                    "x rayon",
                );
            }
            let rayon_cpu = report.median("B6", &case, "rayon", "cpu ms in window");
            for imp in [PoolImpl::Jec, PoolImpl::Notifier] {
                let ratios = report.values("B6", &case, imp.name(), "x rayon");
                report.check_ratios(
                    "B6",
                    format!(
                        "{} idle CPU after a burst below rayon's ({case}, {} ms window)",
                        imp.name(),
                        window.as_millis()
                    ),
                    &ratios,
                    1.0,
                    true,
                    "rayon",
                );
                if let (Some(ours), Some(theirs), Some(check)) = (
                    report.median("B6", &case, imp.name(), "cpu ms in window"),
                    rayon_cpu,
                    report.checks.last_mut(),
                ) {
                    let _ = write!(check.measured, "; {ours:.3} ms vs {theirs:.3} ms");
                }
            }
        }
    }

    // ---------------------------------------------------------------------------
    // B7: ticks.

    fn run_b7(report: &mut Report, opts: &Options) {
        let tree = pool::make_tree(1);
        let jobs = 8u32;
        let job_time = Duration::from_micros(5);
        let iters = forkjoin::calibrate_busy_work(job_time);
        // Useful work per tick, measured the same way the jobs run it.
        let useful_us = {
            let mut t = Vec::new();
            for seed in 0..21 {
                let start = Instant::now();
                for j in 0..jobs {
                    black_box(forkjoin::busy_work(seed * 8 + j as u64, iters));
                }
                t.push(start.elapsed().as_nanos() as f64 / 1e3);
            }
            median(&t)
        };
        report.note(format!(
            "B7: one job = {iters} xorshift rounds; 8 jobs take {useful_us:.1} us on one thread"
        ));
        let ticks = if opts.quick { 50 } else { 200 };
        for threads in [2usize, 8] {
            for gap in [
                Duration::from_micros(20),
                Duration::from_micros(200),
                Duration::from_millis(2),
            ] {
                let case = format!("{threads} threads, gap {gap:?}");
                for round in 0..opts.rounds {
                    let mut cpu_values = Vec::new();
                    let mut lat_values = Vec::new();
                    let mut sums = Vec::new();
                    for imp in rotated(&PoolImpl::ALL, round) {
                        let before = live_threads();
                        let p = AnyPool::new(imp, threads);
                        let tick = |i: u64| Work::Tick {
                            jobs,
                            iters,
                            seed: i * 8,
                        };
                        for i in 0..20 {
                            black_box(p.run(tick(i), &tree));
                            pause(gap);
                        }
                        let stats0 = p.stats();
                        let cpu0 = PoolCpu::now();
                        let mut latencies = Vec::with_capacity(ticks);
                        let mut sum = 0u64;
                        for i in 0..ticks as u64 {
                            let start = Instant::now();
                            sum = sum.wrapping_add(p.run(tick(i), &tree));
                            latencies.push(start.elapsed().as_nanos() as f64 / 1e3);
                            pause(gap);
                        }
                        let cpu = PoolCpu::now().since(&cpu0);
                        let cpu_us = cpu.as_nanos() as f64 / 1e3 / ticks as f64;
                        if let (Some(s0), Some(s1)) = (stats0, p.stats()) {
                            let d = diff(s1, s0);
                            report.add(
                                "B7",
                                &case,
                                imp.name(),
                                "futex wakes/tick",
                                d.wakes as f64 / ticks as f64,
                            );
                        }
                        report.add("B7", &case, imp.name(), "cpu/useful", cpu_us / useful_us);
                        report.add(
                            "B7",
                            &case,
                            imp.name(),
                            "p90 latency us",
                            percentile(&mut latencies.clone(), 0.9),
                        );
                        p.finish(before);
                        cpu_values.push((imp.name().to_string(), cpu_us));
                        lat_values.push((imp.name().to_string(), median(&latencies)));
                        sums.push((imp.name().to_string(), sum));
                    }
                    report.expect_same(&format!("B7 {case}"), &sums);
                    report.add_round(
                        "B7",
                        &case,
                        "cpu us/tick",
                        &cpu_values,
                        "rayon",
                        "cpu x rayon",
                    );
                    report.add_round(
                        "B7",
                        &case,
                        "p50 latency us",
                        &lat_values,
                        "rayon",
                        "latency x rayon",
                    );
                }
                for imp in [PoolImpl::Jec, PoolImpl::Notifier] {
                    let cpu = report.values("B7", &case, imp.name(), "cpu x rayon");
                    report.check_ratios(
                        "B7",
                        format!("{} less CPU per tick than rayon ({case})", imp.name()),
                        &cpu,
                        1.0,
                        true,
                        "rayon",
                    );
                    let lat = report.values("B7", &case, imp.name(), "latency x rayon");
                    report.check_ratios(
                        "B7",
                        format!("{} burst latency no worse than rayon ({case})", imp.name()),
                        &lat,
                        1.0,
                        false,
                        "rayon",
                    );
                }
            }
        }
        report.add(
            "B7",
            "useful work",
            "8 jobs on one thread",
            "us/tick",
            useful_us,
        );
    }

    /// The gap between ticks: short gaps are serial work on the main thread
    /// (it spins), long ones are idle time (it sleeps).
    fn pause(gap: Duration) {
        if gap < Duration::from_micros(100) {
            let until = Instant::now() + gap;
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        } else {
            thread::sleep(gap);
        }
    }

    // ---------------------------------------------------------------------------
    // Output.

    fn fmt_num(v: f64) -> String {
        let a = v.abs();
        if !v.is_finite() {
            "-".to_string()
        } else if a >= 1000.0 {
            format!("{v:.0}")
        } else if a >= 100.0 {
            format!("{v:.1}")
        } else if a >= 10.0 {
            format!("{v:.2}")
        } else {
            format!("{v:.3}")
        }
    }

    const TITLES: [(&str, &str); 7] = [
        ("B1", "notify with nobody waiting"),
        ("B2", "ping-pong round trip"),
        ("B3", "fan-out to 4 sleepers"),
        ("B4", "bursty producer/consumer"),
        ("B5", "fork-join, wall time per run"),
        ("B6", "idle after a burst"),
        ("B7", "ticks of 8 x 5 us jobs"),
    ];

    fn print_tables(report: &Report, machine: &Machine, opts: &Options) {
        println!(
            "bench_report: {} | {} vCPUs | Linux {} | {} | {} rounds{}\n\
         every value is the median over rounds; ratios are taken within a round\n",
            machine.cpu,
            machine.cpus,
            machine.kernel,
            machine.rustc,
            opts.rounds,
            if opts.quick { " (quick)" } else { "" }
        );
        for (bench, title) in TITLES {
            let rows: Vec<&Series> = report.series.iter().filter(|s| s.bench == bench).collect();
            if rows.is_empty() {
                continue;
            }
            println!("{bench}: {title}");
            let mut cases: Vec<&str> = Vec::new();
            for s in &rows {
                if !cases.contains(&s.case.as_str()) {
                    cases.push(&s.case);
                }
            }
            for case in cases {
                let in_case: Vec<&&Series> = rows.iter().filter(|s| s.case == case).collect();
                let mut metrics: Vec<&str> = Vec::new();
                let mut imps: Vec<&str> = Vec::new();
                for s in &in_case {
                    if !metrics.contains(&s.metric) {
                        metrics.push(s.metric);
                    }
                    if !imps.contains(&s.imp.as_str()) {
                        imps.push(&s.imp);
                    }
                }
                let width = imps.iter().map(|i| i.len()).max().unwrap_or(4).max(14);
                let mut header = format!("  {case:<width$}");
                for m in &metrics {
                    let _ = write!(header, " {m:>w$}", w = m.len().max(9));
                }
                println!("{header}");
                for imp in imps {
                    let mut line = format!("  {imp:<width$}");
                    for m in &metrics {
                        let v = report.median(bench, case, imp, m).unwrap_or(f64::NAN);
                        let _ = write!(line, " {:>w$}", fmt_num(v), w = m.len().max(9));
                    }
                    println!("{line}");
                }
            }
            println!();
        }
        if !report.checks.is_empty() {
            println!("targets");
            for c in &report.checks {
                println!(
                    "  {} {:<8} {} -- {}",
                    c.bench,
                    c.verdict.label(),
                    c.target,
                    c.measured
                );
            }
            println!();
        }
        if !report.foreign_load.is_empty() {
            let loads: Vec<String> = report
                .foreign_load
                .iter()
                .map(|(id, pct)| format!("B{id} {pct:.1}%"))
                .collect();
            println!(
                "other processes' share of the machine meanwhile: {}",
                loads.join(", ")
            );
        }
        for note in &report.notes {
            println!("note: {note}");
        }
    }

    fn json_str(s: &str) -> String {
        let mut out = String::with_capacity(s.len() + 2);
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    fn json_num(v: f64) -> String {
        if v.is_finite() {
            format!("{v}")
        } else {
            "null".to_string()
        }
    }

    fn to_json(report: &Report, machine: &Machine, opts: &Options) -> String {
        let mut out = String::new();
        out.push_str("{\n");
        let _ = writeln!(
            out,
            "  \"machine\": {{\"cpu\": {}, \"vcpus\": {}, \"kernel\": {}, \"rustc\": {}}},",
            json_str(&machine.cpu),
            machine.cpus,
            json_str(&machine.kernel),
            json_str(&machine.rustc)
        );
        let _ = writeln!(
            out,
            "  \"config\": {{\"rounds\": {}, \"quick\": {}, \"only\": [{}]}},",
            opts.rounds,
            opts.quick,
            opts.only
                .iter()
                .map(|b| json_str(&format!("B{b}")))
                .collect::<Vec<_>>()
                .join(", ")
        );
        // Rows: one per (bench, case, impl), metrics as medians plus the
        // per-round values.
        out.push_str("  \"rows\": [");
        let mut keys: Vec<(&str, &str, &str)> = Vec::new();
        for s in &report.series {
            let key = (s.bench, s.case.as_str(), s.imp.as_str());
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        for (i, (bench, case, imp)) in keys.iter().enumerate() {
            let series: Vec<&Series> = report
                .series
                .iter()
                .filter(|s| s.bench == *bench && s.case == *case && s.imp == *imp)
                .collect();
            let medians = series
                .iter()
                .map(|s| format!("{}: {}", json_str(s.metric), json_num(median(&s.values))))
                .collect::<Vec<_>>()
                .join(", ");
            let rounds = series
                .iter()
                .map(|s| {
                    format!(
                        "{}: [{}]",
                        json_str(s.metric),
                        s.values
                            .iter()
                            .map(|v| json_num(*v))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let _ = write!(
                out,
                "{}\n    {{\"bench\": {}, \"case\": {}, \"impl\": {}, \"median\": {{{medians}}}, \
             \"rounds\": {{{rounds}}}}}",
                if i == 0 { "" } else { "," },
                json_str(bench),
                json_str(case),
                json_str(imp),
            );
        }
        out.push_str("\n  ],\n  \"checks\": [");
        for (i, c) in report.checks.iter().enumerate() {
            let _ = write!(
                out,
                "{}\n    {{\"bench\": {}, \"target\": {}, \"measured\": {}, \"verdict\": {}}}",
                if i == 0 { "" } else { "," },
                json_str(c.bench),
                json_str(&c.target),
                json_str(&c.measured),
                json_str(&c.verdict.label().to_lowercase()),
            );
        }
        out.push_str("\n  ],\n  \"foreign_load_percent\": {");
        out.push_str(
            &report
                .foreign_load
                .iter()
                .map(|(id, pct)| format!("{}: {}", json_str(&format!("B{id}")), json_num(*pct)))
                .collect::<Vec<_>>()
                .join(", "),
        );
        out.push_str("},\n  \"notes\": [");
        out.push_str(
            &report
                .notes
                .iter()
                .map(|n| json_str(n))
                .collect::<Vec<_>>()
                .join(", "),
        );
        out.push_str("]\n}\n");
        out
    }

    /// CPU used on the whole machine and by this process, to tell how much
    /// other processes took while a benchmark ran.
    struct LoadReading {
        at: Instant,
        machine_busy: u64,
        own: u64,
    }

    impl LoadReading {
        /// Clock ticks (USER_HZ, 100 per second) from /proc/stat and
        /// /proc/self/stat; `None` off Linux.
        fn now() -> Option<LoadReading> {
            let stat = std::fs::read_to_string("/proc/stat").ok()?;
            let cpu: Vec<u64> = stat
                .lines()
                .next()?
                .split_whitespace()
                .skip(1)
                .filter_map(|v| v.parse().ok())
                .collect();
            // user nice system idle iowait irq softirq steal: all but idle and
            // iowait are busy.
            let machine_busy = cpu.iter().take(8).sum::<u64>() - cpu.get(3)? - cpu.get(4)?;
            let own_stat = std::fs::read_to_string("/proc/self/stat").ok()?;
            let fields: Vec<&str> = own_stat.rsplit_once(')')?.1.split_whitespace().collect();
            let own = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
            Some(LoadReading {
                at: Instant::now(),
                machine_busy,
                own,
            })
        }

        /// Percent of the machine's CPUs that other processes kept busy since
        /// `earlier`.
        fn foreign_percent(&self, earlier: &LoadReading, cpus: usize) -> f64 {
            let ticks = self.machine_busy.saturating_sub(earlier.machine_busy) as f64
                - self.own.saturating_sub(earlier.own) as f64;
            let capacity = self.at.duration_since(earlier.at).as_secs_f64() * 100.0 * cpus as f64;
            (ticks.max(0.0) / capacity.max(1e-9) * 100.0).min(100.0)
        }
    }

    struct Machine {
        cpu: String,
        cpus: usize,
        kernel: String,
        rustc: String,
    }

    impl Machine {
        fn probe() -> Machine {
            let cpu = std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|info| {
                    info.lines()
                        .find_map(|l| l.strip_prefix("model name"))
                        .map(|rest| rest.trim_start_matches([' ', '\t', ':']).trim().to_string())
                })
                .unwrap_or_else(|| "unknown CPU".to_string());
            let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unknown".to_string());
            let rustc =
                Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string()))
                    .arg("--version")
                    .stderr(Stdio::null())
                    .output()
                    .ok()
                    .filter(|o| o.status.success())
                    .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                    .unwrap_or_else(|| "rustc (unknown version)".to_string());
            Machine {
                cpu,
                cpus: thread::available_parallelism().map_or(0, |n| n.get()),
                kernel,
                rustc,
            }
        }
    }

    /// One benchmark of the suite.
    type BenchFn = fn(&mut Report, &Options);

    pub fn main() -> ExitCode {
        let opts = match parse_args(std::env::args().skip(1)) {
            Ok(Some(opts)) => opts,
            Ok(None) => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            Err(message) => {
                eprintln!("bench_report: {message}");
                return ExitCode::from(2);
            }
        };
        // Fail on an unwritable --json-file now, not after the benchmarks.
        if let Some(path) = &opts.json_file {
            if let Err(err) = std::fs::File::create(path) {
                eprintln!("bench_report: cannot write {path}: {err}");
                return ExitCode::from(2);
            }
        }
        if cfg!(debug_assertions) {
            eprintln!(
                "bench_report: this is a debug build; timings mean little. \
             Use `cargo run --release --example bench_report`."
            );
        }
        let machine = Machine::probe();
        let mut report = Report::default();
        let benches: [(u8, BenchFn); 7] = [
            (1, run_b1),
            (2, run_b2),
            (3, run_b3),
            (4, run_b4),
            (5, run_b5),
            (6, run_b6),
            (7, run_b7),
        ];
        for (id, run) in benches {
            if opts.only.contains(&id) {
                let start = Instant::now();
                let load0 = LoadReading::now();
                run(&mut report, &opts);
                let foreign = load0
                    .zip(LoadReading::now())
                    .map(|(a, b)| b.foreign_percent(&a, machine.cpus));
                eprintln!(
                    "bench_report: B{id} done in {:.1} s",
                    start.elapsed().as_secs_f64()
                );
                if let Some(foreign) = foreign {
                    report.foreign_load.push((id, foreign));
                    if foreign > 5.0 {
                        report.note(format!(
                        "B{id}: other processes kept {foreign:.0}% of the machine busy while it ran; \
                         its numbers are unreliable, run again on a quiet machine"
                    ));
                    }
                }
            }
        }
        if opts.json {
            print!("{}", to_json(&report, &machine, &opts));
        } else {
            print_tables(&report, &machine, &opts);
        }
        if let Some(path) = &opts.json_file {
            if let Err(err) = std::fs::write(path, to_json(&report, &machine, &opts)) {
                eprintln!("bench_report: cannot write {path}: {err}");
                return ExitCode::from(2);
            }
        }
        if report.wrong_results.is_empty() {
            ExitCode::SUCCESS
        } else {
            for wrong in &report.wrong_results {
                eprintln!("bench_report: wrong result: {wrong}");
            }
            ExitCode::FAILURE
        }
    }
}

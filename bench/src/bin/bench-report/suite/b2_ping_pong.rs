//! B2: one round trip between two sleeping threads, every peer against a
//! raw futex, unpinned and pinned with taskset.

use std::process::{Command, Stdio};
use std::thread;
use std::time::Instant;

use eventcount_bench::pingpong::{self, RoundTrips};
use eventcount_bench::workload::procstat::current_tid;

use crate::options::Options;
use crate::report::Report;
use eventcount_bench::workload::stats::{median, percentile, rotated};

/// Where the two threads may run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// Wherever the kernel puts them.
    Unpinned,
    /// One on vCPU 0, the other on vCPU 1: every wake crosses vCPUs.
    Cross,
    /// Both on vCPU 0: every wake is a context switch.
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

    /// The vCPUs of side A and side B, if pinned.
    fn cpus(self) -> Option<(&'static str, &'static str)> {
        match self {
            Placement::Unpinned => None,
            Placement::Cross => Some(("0", "1")),
            Placement::Same => Some(("0", "0")),
        }
    }
}

/// Pin thread `tid` to `cpus` (a taskset list). False if taskset failed.
fn pin(tid: u64, cpus: &str) -> bool {
    Command::new("taskset")
        .args(["-p", "-c", cpus, &tid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Every peer, `opts.rounds()` times in rotated order, for each placement
/// taskset allows.
pub fn run(report: &mut Report, opts: &Options) {
    let trips = if opts.quick { 300 } else { 2000 };
    let cpus = thread::available_parallelism().map_or(1, |n| n.get());
    let all_cpus = format!("0-{}", cpus.saturating_sub(1));
    let main_tid = current_tid();
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
    for placement in placements {
        let case = placement.name();
        for round in 0..opts.rounds() {
            let mut medians = Vec::new();
            for kind in rotated(&pingpong::PEERS, round) {
                let mut pair = pingpong::start(kind);
                if let (Some(main), Some(partner), Some((a, b))) =
                    (main_tid, pair.partner_tid(), placement.cpus())
                {
                    pin(main, a);
                    pin(partner, b);
                }
                let times = time_round_trips(report, case, kind.name(), &mut *pair, trips);
                medians.push((kind.name().to_string(), median(&times)));
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

/// Warm `pair` up, then time `trips` round trips one by one (us each);
/// records their p90 and, for the Notifier, its futex calls per trip.
fn time_round_trips(
    report: &mut Report,
    case: &str,
    peer: &str,
    pair: &mut dyn RoundTrips,
    trips: usize,
) -> Vec<f64> {
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
    if let Some(during) = before.zip(pair.stats()).map(|(b, a)| a - b) {
        let per_trip = |count: u64| count as f64 / trips as f64;
        report.add("B2", case, peer, "futex waits/trip", per_trip(during.waits));
        report.add("B2", case, peer, "futex wakes/trip", per_trip(during.wakes));
    }
    report.add(
        "B2",
        case,
        peer,
        "p90 us",
        percentile(&mut times.clone(), 0.9),
    );
    times
}

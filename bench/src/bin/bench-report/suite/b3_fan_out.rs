//! B3: one wake-all to 4 sleepers, until all 4 acknowledged; and whether
//! the Notifier makes exactly one futex wake per sleeper.

use eventcount_bench::fanout;

use crate::options::Options;
use crate::report::Report;
use eventcount_bench::workload::stats::{median, percentile, rotated};

const SLEEPERS: usize = 4;

/// Every peer with a wake-all, `opts.rounds()` times in rotated order.
pub fn run(report: &mut Report, opts: &Options) {
    let fanouts = if opts.quick { 30 } else { 100 };
    let case = "N=4";
    let (mut wakes, mut waits, mut notifies) = (0u64, 0u64, 0u64);
    for round in 0..opts.rounds() {
        let mut values = Vec::new();
        for kind in rotated(&fanout::PEERS, round) {
            let mut fan = fanout::start(kind, SLEEPERS);
            for _ in 0..10 {
                fan.round();
            }
            let before = fan.stats();
            let mut times: Vec<f64> = (0..fanouts)
                .map(|_| fan.round().as_nanos() as f64 / 1e3)
                .collect();
            if let Some(during) = before.zip(fan.stats()).map(|(b, a)| a - b) {
                wakes += during.wakes;
                waits += during.waits;
                notifies += fanouts as u64;
                let per_notify = during.wakes as f64 / fanouts as f64;
                report.add(
                    "B3",
                    case,
                    kind.name(),
                    "futex wakes/notify_all",
                    per_notify,
                );
            }
            report.add(
                "B3",
                case,
                kind.name(),
                "p90 us",
                percentile(&mut times, 0.9),
            );
            values.push((kind.name().to_string(), median(&times)));
        }
        report.add_round(
            "B3",
            case,
            "p50 us to all awake",
            &values,
            "raw_futex",
            "x raw_futex",
        );
    }
    let sleepers = SLEEPERS as u64;
    report.check(
        "B3",
        format!("notifier: exactly one futex wake per sleeping waiter ({SLEEPERS} per notify_all)"),
        format!(
            "{wakes} wakes / {notifies} notify_all = {:.3} per notify_all; \
             {:.3} waits per sleeper per round",
            wakes as f64 / notifies.max(1) as f64,
            waits as f64 / (notifies.max(1) * sleepers) as f64
        ),
        notifies > 0 && wakes == notifies * sleepers,
    );
}

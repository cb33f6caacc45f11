//! The benchmarks B1-B9, one module each, and the list that names them.

mod b1_fast_paths;
mod b2_ping_pong;
mod b3_fan_out;
mod b4_bursty;
mod b5_fork_join;
mod b6_idle;
mod b7_ticks;
mod b8_control;
mod b9_oversubscribed;
pub mod pools;

use crate::options::Options;
use crate::report::Report;

/// One benchmark: it runs its rounds and records into the report.
pub type BenchFn = fn(&mut Report, &Options);

/// (number, title, run) of every benchmark, in the order they run.
pub const SUITE: [(u8, &str, BenchFn); 9] = [
    (1, "notify with nobody waiting", b1_fast_paths::run),
    (2, "ping-pong round trip", b2_ping_pong::run),
    (3, "fan-out to 4 sleepers", b3_fan_out::run),
    (4, "bursty producer/consumer", b4_bursty::run),
    (5, "fork-join, wall time per run", b5_fork_join::run),
    (6, "idle after a burst", b6_idle::run),
    (7, "ticks of 8 x 5 us jobs", b7_ticks::run),
    (8, "a control loop", b8_control::run),
    (
        9,
        "oversubscription the pool did not choose",
        b9_oversubscribed::run,
    ),
];

/// The title of benchmark `bench` ("B3").
pub fn title(bench: &str) -> &'static str {
    SUITE
        .iter()
        .find(|(id, _, _)| bench.strip_prefix('B') == Some(&id.to_string()))
        .map_or("", |(_, title, _)| title)
}

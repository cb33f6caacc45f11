//! The three JSON documents the plots are drawn from, and what the plots
//! take out of them: `bench-report --json-file` (the example pool, B2),
//! `scripts/rayon-bench --json` (the rayon drop-in) and
//! `eventcount-interop tokio-bench --json` (tokio on eventcount).
//!
//! Only the fields the plots use are declared; serde skips the rest, so a
//! report with more benches or metrics still reads. `null` stands for a
//! value the run could not compute (NaN: a median of nothing, a ratio to
//! zero), which is why every number is an `Option`.

use std::collections::BTreeMap;

use serde::Deserialize;

/// `bench-report --json-file F`.
#[derive(Debug, Deserialize)]
pub struct ReportJson {
    machine: MachineJson,
    /// Absent in reports written before the field was added.
    #[serde(default)]
    commit: Option<String>,
    config: ConfigJson,
    rows: Vec<ReportRow>,
}

#[derive(Debug, Deserialize)]
struct MachineJson {
    cpu: String,
    vcpus: usize,
    kernel: String,
}

#[derive(Debug, Deserialize)]
struct ConfigJson {
    rounds: usize,
    quick: bool,
}

/// One implementation in one case: each metric's median over rounds and
/// its value in every round.
#[derive(Debug, Deserialize)]
struct ReportRow {
    bench: String,
    case: String,
    #[serde(rename = "impl")]
    imp: String,
    median: BTreeMap<String, Option<f64>>,
    rounds: BTreeMap<String, Vec<Option<f64>>>,
}

/// `scripts/rayon-bench --json`.
#[derive(Debug, Deserialize)]
pub struct RayonJson {
    /// Absent in runs written before the field was added.
    #[serde(default)]
    commit: Option<String>,
    #[serde(default)]
    vcpus: Option<usize>,
    rounds: usize,
    rayon: String,
    #[serde(rename = "rayon-core")]
    rayon_core: String,
    rows: Vec<InteropRow>,
}

/// `cargo run --release -p eventcount-interop -- tokio-bench --json`.
#[derive(Debug, Deserialize)]
pub struct TokioJson {
    /// null when git could not say which commit was built.
    commit: Option<String>,
    /// 0 when the run could not count the vCPUs.
    vcpus: usize,
    rounds: usize,
    tokio: String,
    rows: Vec<InteropRow>,
}

/// One metric of one case, as eventcount-interop prints it for
/// rayon-bench and tokio-bench alike (its `Row::to_json`): every build's
/// median, and the median, min and max over rounds of its ratio to stock
/// in the same round.
#[derive(Debug, Deserialize)]
struct InteropRow {
    bench: String,
    case: String,
    metric: String,
    medians: BTreeMap<String, Option<f64>>,
    x_stock: BTreeMap<String, RatioJson>,
}

#[derive(Debug, Deserialize)]
struct RatioJson {
    median: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
}

/// Which run a plot shows, for its title.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// vCPUs of the machine, if the JSON says.
    pub vcpus: Option<usize>,
    /// What else the JSON says about the machine or the software measured.
    pub detail: String,
    pub commit: Option<String>,
    pub rounds: usize,
    /// A `--quick` smoke run: shorter rounds, not results.
    pub quick: bool,
}

/// B2: one placement's round trips, peer by peer.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// `unpinned`, `pinned, 2 vCPUs`, `pinned, 1 vCPU`.
    pub case: String,
    pub peers: Vec<Trip>,
}

/// One peer's round trip in one placement, in µs.
#[derive(Clone, Debug, PartialEq)]
pub struct Trip {
    pub peer: String,
    /// The median over rounds of each round's p50.
    pub p50: f64,
    /// Each round's p50.
    pub p50_rounds: Vec<f64>,
    /// The median over rounds of each round's p90.
    pub p90: Option<f64>,
    /// The median of the per-round ratios of p50 to the raw futex's.
    pub x_floor: Option<f64>,
}

/// A ratio to the baseline measured in the same round: its median over the
/// rounds and the range the rounds span.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Ratio {
    /// The ratio of the baseline to itself.
    pub const ONE: Ratio = Ratio {
        median: 1.0,
        min: 1.0,
        max: 1.0,
    };

    /// From a median and the extremes of the rounds. None unless the
    /// median is finite and positive: a log axis cannot place it. Extremes
    /// it cannot place are left out of the range.
    fn new(median: Option<f64>, extremes: &[Option<f64>]) -> Option<Ratio> {
        let median = median.filter(|m| m.is_finite() && *m > 0.0)?;
        let placeable = extremes
            .iter()
            .flatten()
            .filter(|r| r.is_finite() && **r > 0.0);
        let (min, max) = placeable.fold((median, median), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        Some(Ratio { median, min, max })
    }

    /// The median of per-round ratios, and their range.
    fn of_rounds(ratios: &[f64]) -> Option<Ratio> {
        let mut sorted = ratios.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => return None,
            n if n % 2 == 1 => sorted[n / 2],
            n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        let extremes: Vec<Option<f64>> = sorted.into_iter().map(Some).collect();
        Ratio::new(Some(median), &extremes)
    }
}

/// One build (or pool) in one case: latency against CPU, both as ratios.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub build: String,
    pub latency: Ratio,
    pub cpu: Ratio,
}

/// One case of B7 or B8.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub case: String,
    /// Every build with both ratios; the baseline's is (1.0, 1.0).
    pub points: Vec<Point>,
    /// The baseline run twice in each round (rayon-bench's `stock again`):
    /// where it lands, and the box its rounds span, is the noise.
    pub noise: Option<Point>,
    /// Builds the case ran that have no ratio a log axis can show: a
    /// metric that was zero or negative (wasted CPU is, when the machine
    /// was so busy that the useful work timed slower than the pool ran it)
    /// or missing.
    pub missing: Vec<String>,
}

impl Panel {
    /// The panel of `case`, its points in legend order.
    fn new(
        case: &str,
        mut points: Vec<Point>,
        noise: Option<Point>,
        missing: Vec<String>,
    ) -> Panel {
        points.sort_by_key(|p| rank(&p.build));
        Panel {
            case: case.to_string(),
            points,
            noise,
            missing,
        }
    }
}

/// CPU against latency on one bench, one panel per case.
#[derive(Clone, Debug, PartialEq)]
pub struct Scatter {
    pub bench: String,
    /// What the ratios are taken against: `stock` or `rayon`.
    pub baseline: String,
    /// The metrics on the axes, as the plot's axis labels name them.
    pub latency: &'static str,
    pub cpu: &'static str,
    pub panels: Vec<Panel>,
}

impl Scatter {
    /// The plot of `panels` on `axes`, with ratios to `baseline`; None
    /// without a panel.
    fn of(
        bench: &str,
        baseline: &str,
        (latency, cpu): (Axis, Axis),
        panels: Vec<Panel>,
    ) -> Option<Scatter> {
        (!panels.is_empty()).then(|| Scatter {
            bench: bench.to_string(),
            baseline: baseline.to_string(),
            latency: latency.label,
            cpu: cpu.label,
            panels,
        })
    }
}

/// tokio-bench: one case and metric, each build's ratio to stock tokio.
#[derive(Clone, Debug, PartialEq)]
pub struct RatioLine {
    /// `echo, 2 workers — p50 latency us`: the case, then the metric with
    /// its unit.
    pub label: String,
    /// Every build with a ratio a log axis can place, in legend order.
    pub builds: Vec<(String, Ratio)>,
    /// Stock against stock in the same round (`stock again`): the noise.
    pub noise: Option<Ratio>,
    /// Builds of the row with no ratio a log axis can place: a round with
    /// stock at zero has no ratio, so a row whose stock was zero in every
    /// round has none at all.
    pub missing: Vec<String>,
}

/// Which CPU the y axis of the CPU-vs-latency plots shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Cpu {
    /// The pool's CPU per tick minus the tick's useful work: what the idle
    /// policy spends searching, yielding, sleeping and waking.
    #[default]
    Wasted,
    /// All of the pool's CPU (per tick in B7, in cores in B8): never
    /// negative, so it plots even when a busy machine made the useful
    /// work time slower than the pool ran it.
    Pool,
}

/// An axis of the CPU-vs-latency plots: its label and its metric in each
/// JSON.
struct Axis {
    label: &'static str,
    report: &'static str,
    rayon: &'static str,
}

/// The axes of a bench's CPU-vs-latency plot; None for other benches.
/// B8's latency is the region's p50, from the `install` of one parallel
/// region to its return: the wake-up cost a policy controls. The tick's
/// p50 adds the serial work between regions to it.
fn axes(bench: &str, cpu: Cpu) -> Option<(Axis, Axis)> {
    let latency = match bench {
        "B7" => Axis {
            label: "p50 latency",
            report: "p50 latency us",
            rayon: "p50 latency us",
        },
        "B8" => Axis {
            label: "region p50 latency",
            report: "region p50 us",
            rayon: "region p50 us",
        },
        _ => return None,
    };
    let cpu = match (cpu, bench) {
        (Cpu::Wasted, _) => Axis {
            label: "wasted CPU per tick",
            report: "wasted us/tick",
            rayon: "wasted cpu us per tick",
        },
        (Cpu::Pool, "B7") => Axis {
            label: "pool CPU per tick",
            report: "cpu us/tick",
            rayon: "pool cpu us per tick",
        },
        (Cpu::Pool, _) => Axis {
            label: "pool CPU in cores",
            report: "cpu cores",
            rayon: "pool cpu in cores",
        },
    };
    Some((latency, cpu))
}

/// The builds of rayon-bench and tokio-bench and the pools of
/// bench-report, in the order the legends list them; unknown names follow,
/// in the order they came.
pub const ORDER: [&str; 12] = [
    "stock",
    "rayon",
    "jec-rayon",
    "jec",
    "notifier",
    "jec-default-policy",
    "notifier-default-policy",
    "stock-timer-edit",
    "pr1314-adaptive",
    "pr1314-bounded",
    "eigen",
    "stock again",
];

/// A bench-report pool's name without the `pool+` its tables put in front.
pub fn build_key(name: &str) -> &str {
    name.strip_prefix("pool+").unwrap_or(name)
}

/// Where `build` goes in a legend.
pub fn rank(build: &str) -> usize {
    ORDER
        .iter()
        .position(|&b| b == build_key(build))
        .unwrap_or(ORDER.len())
}

/// The distinct values of `items`, in the order they first appear.
fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

impl ReportJson {
    pub fn parse(text: &str) -> Result<ReportJson, serde_json::Error> {
        serde_json::from_str(text)
    }

    pub fn run(&self) -> Run {
        Run {
            vcpus: Some(self.machine.vcpus),
            detail: format!("{}, Linux {}", self.machine.cpu, self.machine.kernel),
            commit: self.commit.clone(),
            rounds: self.config.rounds,
            quick: self.config.quick,
        }
    }

    /// B2's placements in the order they ran; empty if B2 did not run.
    pub fn round_trips(&self) -> Vec<Placement> {
        let rows: Vec<&ReportRow> = self.rows.iter().filter(|r| r.bench == "B2").collect();
        let metric = "p50 us/trip";
        let median = |r: &ReportRow, metric: &str| r.median.get(metric).copied().flatten();
        distinct(rows.iter().map(|r| r.case.as_str()))
            .into_iter()
            .map(|case| Placement {
                case: case.to_string(),
                peers: rows
                    .iter()
                    .filter(|r| r.case == case)
                    .filter_map(|r| {
                        Some(Trip {
                            peer: r.imp.clone(),
                            p50: median(r, metric)?,
                            p50_rounds: r
                                .rounds
                                .get(metric)
                                .map(|v| v.iter().flatten().copied().collect())
                                .unwrap_or_default(),
                            p90: median(r, "p90 us"),
                            x_floor: median(r, "x raw_futex"),
                        })
                    })
                    .collect(),
            })
            .filter(|p| !p.peers.is_empty())
            .collect()
    }

    /// CPU against latency on B7 or B8 for every pool, as ratios to rayon's
    /// pool in the same round (the median of the per-round ratios, as the
    /// report's own ratio columns); None if the bench did not run.
    pub fn scatter(&self, bench: &str, cpu: Cpu) -> Option<Scatter> {
        let (latency, cpu) = axes(bench, cpu)?;
        let baseline = "rayon";
        let rows: Vec<&ReportRow> = self.rows.iter().filter(|r| r.bench == bench).collect();
        let panels: Vec<Panel> = distinct(rows.iter().map(|r| r.case.as_str()))
            .into_iter()
            .filter_map(|case| {
                let pools: Vec<&ReportRow> = rows
                    .iter()
                    .filter(|r| r.case == case && r.rounds.contains_key(latency.report))
                    .copied()
                    .collect();
                // "useful work" rows have no latency, and a case without
                // rayon has nothing to take ratios to: no panel.
                let base = pools.iter().find(|r| r.imp == baseline)?;
                let mut points = vec![Point {
                    build: baseline.to_string(),
                    latency: Ratio::ONE,
                    cpu: Ratio::ONE,
                }];
                let mut missing = Vec::new();
                for pool in pools.iter().filter(|r| r.imp != baseline) {
                    let ratio = |metric| same_round(pool, base, metric);
                    match (ratio(latency.report), ratio(cpu.report)) {
                        (Some(latency), Some(cpu)) => points.push(Point {
                            build: pool.imp.clone(),
                            latency,
                            cpu,
                        }),
                        _ => missing.push(pool.imp.clone()),
                    }
                }
                Some(Panel::new(case, points, None, missing))
            })
            .collect();
        Scatter::of(bench, baseline, (latency, cpu), panels)
    }
}

/// `row`'s `metric` over `base`'s in the same round, round by round: a
/// round where either is missing or the base is not positive has none.
fn same_round(row: &ReportRow, base: &ReportRow, metric: &str) -> Option<Ratio> {
    let (values, bases) = (row.rounds.get(metric)?, base.rounds.get(metric)?);
    let ratios: Vec<f64> = values
        .iter()
        .zip(bases)
        .filter_map(|pair| match pair {
            (Some(v), Some(b)) if *b > 0.0 => Some(v / b),
            _ => None,
        })
        .collect();
    Ratio::of_rounds(&ratios)
}

impl RayonJson {
    pub fn parse(text: &str) -> Result<RayonJson, serde_json::Error> {
        serde_json::from_str(text)
    }

    pub fn run(&self) -> Run {
        Run {
            vcpus: self.vcpus,
            detail: format!("rayon {} / rayon-core {}", self.rayon, self.rayon_core),
            commit: self.commit.clone(),
            rounds: self.rounds,
            quick: false,
        }
    }

    /// CPU against latency on B7 or B8 for every build, as ratios to stock
    /// rayon in the same round, with `stock again` as the noise; None if
    /// the bench did not run.
    pub fn scatter(&self, bench: &str, cpu: Cpu) -> Option<Scatter> {
        let (latency, cpu) = axes(bench, cpu)?;
        let (baseline, again) = ("stock", "stock again");
        let rows: Vec<&InteropRow> = self.rows.iter().filter(|r| r.bench == bench).collect();
        let row = |case: &str, metric: &str| {
            rows.iter()
                .find(|r| r.case == case && r.metric == metric)
                .copied()
        };
        let ratio = |row: &InteropRow, build: &str| {
            let r = row.x_stock.get(build)?;
            Ratio::new(r.median, &[r.min, r.max])
        };
        let panels: Vec<Panel> = distinct(rows.iter().map(|r| r.case.as_str()))
            .into_iter()
            .filter_map(|case| {
                let (lat, cpu) = (row(case, latency.rayon)?, row(case, cpu.rayon)?);
                let point = |build: &str| {
                    Some(Point {
                        build: build.to_string(),
                        latency: ratio(lat, build)?,
                        cpu: ratio(cpu, build)?,
                    })
                };
                let mut points = vec![Point {
                    build: baseline.to_string(),
                    latency: Ratio::ONE,
                    cpu: Ratio::ONE,
                }];
                let mut missing = Vec::new();
                let builds = distinct(
                    lat.medians
                        .keys()
                        .chain(cpu.medians.keys())
                        .map(String::as_str),
                );
                for build in builds {
                    if build == baseline {
                        continue;
                    }
                    match point(build) {
                        Some(p) if build != again => points.push(p),
                        Some(_) => {}
                        None => missing.push(build.to_string()),
                    }
                }
                missing.sort_by_key(|b| rank(b));
                Some(Panel::new(case, points, point(again), missing))
            })
            .collect();
        Scatter::of(bench, baseline, (latency, cpu), panels)
    }
}

impl TokioJson {
    pub fn parse(text: &str) -> Result<TokioJson, serde_json::Error> {
        serde_json::from_str(text)
    }

    pub fn run(&self) -> Run {
        Run {
            vcpus: (self.vcpus > 0).then_some(self.vcpus),
            detail: format!("tokio {}", self.tokio),
            commit: self.commit.clone(),
            rounds: self.rounds,
            quick: false,
        }
    }

    /// Every row, in the order the run printed it (a run of some cases
    /// only, `--only echo,ticker`, has only their rows), with `stock again`
    /// as its noise.
    pub fn lines(&self) -> Vec<RatioLine> {
        let (baseline, again) = ("stock", "stock again");
        self.rows
            .iter()
            .map(|row| {
                let ratio = |build: &str| {
                    let r = row.x_stock.get(build)?;
                    Ratio::new(r.median, &[r.min, r.max])
                };
                // A build whose every round lacks a ratio is in the medians
                // only; it still belongs on the line, as missing.
                let mut builds = distinct(
                    row.medians
                        .keys()
                        .chain(row.x_stock.keys())
                        .map(String::as_str),
                );
                builds.retain(|&b| b != baseline && b != again);
                builds.sort_by_key(|b| rank(b));
                let mut placed = Vec::new();
                let mut missing = Vec::new();
                for build in builds {
                    match ratio(build) {
                        Some(r) => placed.push((build.to_string(), r)),
                        None => missing.push(build.to_string()),
                    }
                }
                RatioLine {
                    label: format!("{} — {}", row.case, row.metric),
                    builds: placed,
                    noise: ratio(again),
                    missing,
                }
            })
            .collect()
    }
}

/// The runs the tests draw from.
#[cfg(test)]
pub mod fixtures {
    /// Trimmed from `bench-report --quick --only B2,B7,B8 --rounds 3`.
    pub const REPORT: &str = include_str!("testdata/bench-report.json");
    /// Trimmed from `scripts/rayon-bench --rounds 1 --only B7,B8`.
    pub const RAYON: &str = include_str!("testdata/rayon-bench.json");
    /// Written by hand in the shape of `tokio-bench --json --rounds 3
    /// --only echo,ticker`, without echo's 4-worker rows; the numbers are
    /// made up, not measured.
    pub const TOKIO: &str = include_str!("testdata/tokio-bench.json");
}

#[cfg(test)]
mod tests {
    use super::fixtures::{RAYON, REPORT, TOKIO};
    use super::*;

    #[test]
    fn bench_report_run_says_machine_commit_and_rounds() {
        let report = ReportJson::parse(REPORT).unwrap();
        assert_eq!(
            report.run(),
            Run {
                vcpus: Some(2),
                detail: "Intel(R) Xeon(R) Processor, Linux 6.18.44-fc-v595".to_string(),
                commit: Some("6e5593a".to_string()),
                rounds: 3,
                quick: true,
            }
        );
    }

    /// Equal to float rounding: the ratios are computed.
    fn near(ratio: Ratio, (min, median, max): (f64, f64, f64)) -> bool {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        close(ratio.min, min) && close(ratio.median, median) && close(ratio.max, max)
    }

    #[test]
    fn b2_keeps_placements_and_peers_in_run_order_with_every_round() {
        let placements = ReportJson::parse(REPORT).unwrap().round_trips();
        let cases: Vec<&str> = placements.iter().map(|p| p.case.as_str()).collect();
        assert_eq!(cases, ["unpinned", "pinned, 2 vCPUs"]);
        let unpinned = &placements[0];
        let peers: Vec<&str> = unpinned.peers.iter().map(|t| t.peer.as_str()).collect();
        assert_eq!(peers, ["raw_futex", "notifier", "event_listener"]);
        assert_eq!(
            unpinned.peers[1],
            Trip {
                peer: "notifier".to_string(),
                p50: 1.9735,
                p50_rounds: vec![1.9735, 1.96, 2.01],
                p90: Some(2.555),
                x_floor: Some(0.979),
            }
        );
        assert_eq!(unpinned.peers[2].p90, None, "a null p90 is no p90");
    }

    #[test]
    fn pool_scatter_takes_same_round_ratios_to_rayon() {
        let report = ReportJson::parse(REPORT).unwrap();
        let b7 = report.scatter("B7", Cpu::Wasted).unwrap();
        assert_eq!((b7.baseline.as_str(), b7.latency), ("rayon", "p50 latency"));
        assert_eq!(b7.cpu, "wasted CPU per tick");
        assert_eq!(b7.panels.len(), 1, "the useful-work row is not a case");
        let panel = &b7.panels[0];
        assert_eq!(panel.case, "2 threads, gap 2ms");
        let builds: Vec<&str> = panel.points.iter().map(|p| p.build.as_str()).collect();
        assert_eq!(builds, ["rayon", "pool+jec"]);
        assert_eq!(panel.points[0].cpu, Ratio::ONE);
        let jec = &panel.points[1];
        assert!(near(jec.latency, (0.9, 0.94, 1.1)), "{:?}", jec.latency);
        // Rayon wasted nothing in round 2: that round has no ratio.
        assert!(near(jec.cpu, (0.51, 0.555, 0.6)), "{:?}", jec.cpu);
        // Its wasted CPU was negative: nothing a log axis can place.
        assert_eq!(panel.missing, ["pool+notifier"]);

        let pool_cpu = report.scatter("B7", Cpu::Pool).unwrap();
        assert_eq!(pool_cpu.cpu, "pool CPU per tick");
        let notifier = &pool_cpu.panels[0].points[2];
        assert!(
            near(notifier.cpu, (90.0 / 140.0, 95.0 / 140.0, 0.8)),
            "{notifier:?}"
        );

        let b8 = report.scatter("B8", Cpu::Pool).unwrap();
        assert_eq!(
            (b8.latency, b8.cpu),
            ("region p50 latency", "pool CPU in cores")
        );
        let notifier = &b8.panels[0].points[2];
        assert_eq!(notifier.build, "pool+notifier");
        assert!(near(notifier.latency, (1.0, 1.05, 1.1)), "{notifier:?}");
        assert!(report.scatter("B5", Cpu::Wasted).is_none());
    }

    #[test]
    fn rayon_run_has_versions_and_the_commit() {
        let rayon = RayonJson::parse(RAYON).unwrap();
        assert_eq!(
            rayon.run(),
            Run {
                vcpus: Some(2),
                detail: "rayon 1.12.0 / rayon-core 1.13.0".to_string(),
                commit: Some("af9f856".to_string()),
                rounds: 1,
                quick: false,
            }
        );
    }

    #[test]
    fn rayon_scatter_puts_stock_at_one_and_stock_again_as_noise() {
        let rayon = RayonJson::parse(RAYON).unwrap();
        let b7 = rayon.scatter("B7", Cpu::Wasted).unwrap();
        assert_eq!(b7.baseline, "stock");
        let panel = &b7.panels[0];
        assert_eq!(panel.case, "ticks of 8 x 5 us, gap 20 us, 2 threads");
        let builds: Vec<&str> = panel.points.iter().map(|p| p.build.as_str()).collect();
        assert_eq!(builds, ["stock", "jec-rayon", "jec"]);
        assert_eq!(panel.points[0].latency, Ratio::ONE);
        let jec = &panel.points[2];
        assert!(near(jec.latency, (0.91, 0.91, 0.91)));
        assert!(near(jec.cpu, (0.6, 0.74, 0.8)));
        let noise = panel.noise.as_ref().unwrap();
        assert_eq!((noise.latency.median, noise.cpu.median), (1.02, 1.5));
        assert!(panel.missing.is_empty());
        // The second case has no wasted-CPU row: no panel rather than a
        // panel without its y axis.
        assert_eq!(b7.panels.len(), 1);
        let b8 = rayon.scatter("B8", Cpu::Wasted).unwrap();
        assert_eq!(b8.panels[0].points.len(), 2);
        assert_eq!(b8.panels[0].missing, ["jec-rayon"], "its latency is null");
        assert!(rayon.scatter("B6", Cpu::Wasted).is_none());
        assert!(rayon.scatter("B7", Cpu::Pool).is_none(), "no pool CPU rows");
    }

    #[test]
    fn tokio_run_has_the_version_and_the_commit() {
        let tokio = TokioJson::parse(TOKIO).unwrap();
        assert_eq!(
            tokio.run(),
            Run {
                vcpus: Some(2),
                detail: "tokio 1.54.1".to_string(),
                commit: Some("5c0ffee".to_string()),
                rounds: 3,
                quick: false,
            }
        );
        // What tokio-bench writes when it could not count the vCPUs or ask
        // git for the commit.
        let blind = r#"{"commit": null, "vcpus": 0, "tokio": "1.54.1", "rounds": 1, "rows": []}"#;
        let run = TokioJson::parse(blind).unwrap().run();
        assert_eq!((run.commit, run.vcpus), (None, None));
    }

    #[test]
    fn tokio_lines_keep_run_order_with_stock_again_as_noise() {
        let lines = TokioJson::parse(TOKIO).unwrap().lines();
        let labels: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "echo, 2 workers — p50 latency us",
                "echo, 2 workers — p99 latency us",
                "echo, 2 workers — worker cpu us per request",
                "ticker, 2 workers — worker cpu us per 1 ms tick",
                "ticker, 4 workers — worker cpu us per 1 ms tick",
            ]
        );
        let p50 = &lines[0];
        let builds: Vec<&str> = p50.builds.iter().map(|(b, _)| b.as_str()).collect();
        assert_eq!(
            builds,
            [
                "jec",
                "notifier",
                "jec-default-policy",
                "notifier-default-policy"
            ],
            "legend order, not the medians' alphabetical one"
        );
        assert!(near(p50.builds[1].1, (1.2, 1.29, 1.4)));
        assert!(near(p50.noise.unwrap(), (0.88, 1.0, 1.16)));
        assert!(p50.missing.is_empty());
        let p99 = lines[1].noise.unwrap();
        assert_eq!(
            (p99.min, p99.max),
            (0.01, 40.0),
            "the band spans every round"
        );
    }

    #[test]
    fn a_tokio_row_without_ratios_keeps_its_builds_as_missing() {
        // Stock measured zero in every round: no build has a ratio.
        let zero = r#"{"commit": "5c0ffee", "vcpus": 2, "tokio": "1.54.1", "rounds": 1,
            "rows": [{"bench": "tokio", "case": "ticker, 2 workers",
                      "metric": "worker cpu us per 1 ms tick",
                      "medians": {"stock": 0.0, "stock again": 0.0, "notifier": 3.0, "jec": 2.0},
                      "x_stock": {}}]}"#;
        let lines = TokioJson::parse(zero).unwrap().lines();
        assert_eq!(lines.len(), 1);
        assert!(lines[0].builds.is_empty() && lines[0].noise.is_none());
        assert_eq!(lines[0].missing, ["jec", "notifier"]);
    }

    #[test]
    fn json_without_the_newer_fields_still_reads() {
        let old = r#"{"rounds": 7, "rayon": "1.12.0", "rayon-core": "1.13.0", "rows": []}"#;
        let run = RayonJson::parse(old).unwrap().run();
        assert_eq!((run.commit, run.vcpus), (None, None));
        assert!(
            ReportJson::parse("{}").is_err(),
            "a report needs its machine"
        );
    }
}

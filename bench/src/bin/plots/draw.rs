//! The plots, drawn with plotters into SVG text.
//!
//! A figure is a title band, its panels, and one legend for all of them:
//! a chart of its own beside or below the panels, whose series carry only
//! a label and a mark, laid out by plotters (`configure_series_labels`).
//! It never covers a point, and it lists every build of every panel once.

use std::error::Error;

use plotters::chart::{ChartContext, SeriesAnno, SeriesLabelPosition};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::{DashedPathElement, IntoDynElement};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::input::{build_key, rank, Placement, Ratio, RatioLine, Run, Scatter, Trip};

pub type Result<T = ()> = std::result::Result<T, Box<dyn Error>>;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A point in pixels, from the area's top left corner.
type Pixel = (i32, i32);

/// A chart that is only a legend: its series have labels and marks, no
/// points.
type Legend<'a> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

const FONT: &str = "sans-serif";
const GREY: RGBColor = RGBColor(110, 110, 110);
const LIGHT: RGBColor = RGBColor(215, 215, 215);
/// Warnings: a quick run is not a result, a build that cannot be placed.
const WARN: RGBColor = RGBColor(190, 30, 30);

/// Okabe and Ito's colour-blind-safe palette, by build; hollow marks are
/// the `bounded` variants of the filled one of the same
/// colour, so related builds read as related. tokio-bench's
/// `-default-policy` builds keep the shape of their protocol's build and
/// take a lighter shade of its hue instead: in that plot every build has a
/// colour of its own, and a protocol's two builds still read as related.
fn mark_of(build: &str) -> Mark {
    let (r, g, b, shape, filled) = match build_key(build) {
        "stock" | "rayon" => (0, 0, 0, Shape::Star, true),
        "stock again" => (120, 120, 120, Shape::Circle, false),
        "jec" => (0, 114, 178, Shape::Circle, true),
        "jec-rayon" => (86, 180, 233, Shape::Square, true),
        "notifier" => (213, 94, 0, Shape::Triangle, true),
        "jec-default-policy" => (86, 180, 233, Shape::Circle, true),
        "notifier-default-policy" => (230, 159, 0, Shape::Triangle, true),
        "stock-timer-edit" => (0, 0, 0, Shape::Diamond, false),
        "pr1314-adaptive" => (0, 158, 115, Shape::Diamond, true),
        "pr1314-bounded" => (0, 158, 115, Shape::Diamond, false),
        "eigen" => (204, 121, 167, Shape::Square, true),
        _ => (230, 159, 0, Shape::Square, false),
    };
    Mark {
        color: RGBColor(r, g, b),
        shape,
        filled,
    }
}

/// What each build is, for the legend.
fn describe(build: &str) -> &'static str {
    match build_key(build) {
        "stock" => "stock rayon-core: the baseline",
        "rayon" => "rayon's own pool: the baseline",
        "stock again" => "stock again, same round: the noise",
        "jec" => "JecSleep, eventcount's adaptive default",
        "jec-rayon" => "JecSleep with rayon's fixed policy",
        "notifier" => "NotifierSleep, adaptive default",
        "pr1314-adaptive" => "rayon PR #1314's adaptive policy, JecSleep",
        "pr1314-bounded" => "rayon PR #1314's bounded searchers, JecSleep",
        "eigen" => "Eigen-style event count, rayon's policy",
        _ => "",
    }
}

/// What each of tokio-bench's builds is, for its legend. Its `jec` and
/// `notifier` run tokio's own policy, not eventcount's default as the
/// rayon builds of those names do, so [`describe`] would misname them.
fn describe_tokio(build: &str) -> &'static str {
    match build {
        "jec" => "JecSleep, tokio's policy (IdlePolicy::tokio())",
        "notifier" => "NotifierSleep, tokio's policy",
        "jec-default-policy" => "JecSleep, eventcount's default policy",
        "notifier-default-policy" => "NotifierSleep, eventcount's default policy",
        "stock-timer-edit" => "stock tokio with the port's timer edit alone",
        _ => "",
    }
}

#[derive(Clone, Copy)]
enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
    Star,
}

#[derive(Clone, Copy)]
struct Mark {
    color: RGBColor,
    shape: Shape,
    filled: bool,
}

impl Mark {
    /// B2's p50: a dot.
    fn p50(color: RGBColor) -> Mark {
        Mark {
            color,
            shape: Shape::Circle,
            filled: true,
        }
    }

    /// B2's p90: a hollow diamond.
    fn p90(color: RGBColor) -> Mark {
        Mark {
            color,
            shape: Shape::Diamond,
            filled: false,
        }
    }
}

/// `$body`, with `$make` bound to a closure that turns a point (of a
/// chart's coordinates, or a legend line's pixels) into `$mark` centred on
/// it, as a plotters element. Circles, filled triangles and the asterisk's
/// diagonals are plotters' own point markers; it has no square, diamond or
/// hollow triangle marker, so those are its rectangle, polygon and path. A
/// macro rather than a function: each shape is an element of its own type,
/// and a series, or a legend line, takes elements of one type.
macro_rules! with_marker {
    ($mark:expr, |$make:ident| $body:expr) => {{
        let mark: Mark = $mark;
        let (fill, line) = (mark.color.filled(), mark.color.stroke_width(2));
        let style = if mark.filled { fill } else { line };
        // The baseline's asterisk: larger and bolder than the others, so it
        // stands out even under other points.
        let bold = mark.color.stroke_width(3);
        match (mark.shape, mark.filled) {
            (Shape::Circle, _) => {
                let $make = move |at| EmptyElement::at(at) + Circle::new((0, 0), 6, style);
                $body
            }
            (Shape::Square, _) => {
                let $make =
                    move |at| EmptyElement::at(at) + Rectangle::new([(-5, -5), (5, 5)], style);
                $body
            }
            (Shape::Triangle, true) => {
                let $make = move |at| EmptyElement::at(at) + TriangleMarker::new((0, 0), 8, fill);
                $body
            }
            (Shape::Diamond, true) => {
                let $make = move |at| EmptyElement::at(at) + Polygon::new(DIAMOND.to_vec(), fill);
                $body
            }
            (Shape::Triangle | Shape::Diamond, false) => {
                let corners: &[Pixel] = match mark.shape {
                    Shape::Triangle => &TRIANGLE,
                    _ => &DIAMOND,
                };
                let $make =
                    move |at| EmptyElement::at(at) + PathElement::new(closed(corners), line);
                $body
            }
            (Shape::Star, _) => {
                let $make = move |at| {
                    EmptyElement::at(at)
                        + Cross::new((0, 0), 7, bold)
                        + PathElement::new(vec![(-9, 0), (9, 0)], bold)
                        + PathElement::new(vec![(0, -9), (0, 9)], bold)
                };
                $body
            }
        }
    }};
}

/// The corners of plotters' triangle marker of size 8, as it rounds them:
/// the hollow triangle is the filled one's outline.
const TRIANGLE: [Pixel; 3] = [(0, -8), (7, 4), (-6, 4)];
/// The corners of a diamond as wide as the circle with its outline.
const DIAMOND: [Pixel; 4] = [(0, -7), (7, 0), (0, 7), (-7, 0)];

/// `corners` as a closed path.
fn closed<P: Copy>(corners: &[P]) -> Vec<P> {
    corners.iter().chain(corners.first()).copied().collect()
}

/// Draw `mark` at `at` on `chart`, as a series of one point.
fn draw_marker<'a, CT>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    at: CT::From,
    mark: Mark,
) -> Result
where
    CT: CoordTranslate,
    CT::From: Clone + 'a,
{
    with_marker!(mark, |make| chart.draw_series([make(at)]))?;
    Ok(())
}

/// One line of `legend`: `label` after `mark`.
fn legend_marker(legend: &mut Legend<'_>, label: &str, mark: Mark) -> Result {
    let line = legend_text(legend, label)?;
    with_marker!(mark, |make| line.legend(move |(x, y)| make((x + 10, y))));
    Ok(())
}

/// A legend chart over all of `area`, under `caption` if there is one.
fn legend_chart<'a>(area: &Area<'a>, caption: Option<&str>) -> Result<Legend<'a>> {
    let mut builder = ChartBuilder::on(area);
    if let Some(caption) = caption {
        builder.caption(caption, font(15));
    }
    Ok(builder.build_cartesian_2d(0.0..1.0, 0.0..1.0)?)
}

/// One line of `legend`: `label`, after the mark `sample` draws at the
/// line's left end.
fn legend_line<'a, E: IntoDynElement<'a, SVGBackend<'a>, Pixel>>(
    legend: &mut Legend<'a>,
    label: &str,
    sample: impl Fn(Pixel) -> E + 'a,
) -> Result {
    legend_text(legend, label)?.legend(sample);
    Ok(())
}

/// One line of `legend` with no mark: `label` alone, under the text of the
/// lines above.
fn legend_text<'a, 'b>(
    legend: &'b mut Legend<'a>,
    label: &str,
) -> Result<&'b mut SeriesAnno<'a, SVGBackend<'a>>> {
    // A series without points: only its line in the legend shows.
    let series = legend.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?;
    Ok(series.label(label))
}

/// Draw `legend`'s lines from `at`, in `size` px.
fn draw_legend(legend: &mut Legend<'_>, at: (i32, i32), size: u32) -> Result {
    legend
        .configure_series_labels()
        .position(SeriesLabelPosition::Coordinate(at.0, at.1))
        .legend_area_size(26)
        .margin(4)
        .label_font(font(size))
        .border_style(TRANSPARENT)
        .background_style(TRANSPARENT)
        .draw()?;
    Ok(())
}

fn font(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// Draw `lines` top-down from `(x, y)`, each `(text, size, colour)`.
fn text_lines(area: &Area<'_>, (x, mut y): (i32, i32), lines: &[(&str, u32, RGBColor)]) -> Result {
    for &(text, size, color) in lines {
        area.draw_text(text, &(FONT, size).into_font().color(&color), (x, y))?;
        y += size as i32 + 7;
    }
    Ok(())
}

/// The title band: what the plot shows, then which machine, commit and
/// run, then a warning on smoke data.
fn title(area: &Area<'_>, what: &[&str], run: &Run, machine: &str) -> Result {
    let mut lines: Vec<(&str, u32, RGBColor)> = Vec::new();
    if let Some((first, rest)) = what.split_first() {
        lines.push((first, 20, BLACK));
        lines.extend(rest.iter().map(|l| (*l, 14, BLACK)));
    }
    let source = source_line(run, machine);
    lines.push((&source, 14, GREY));
    let warning = "--quick smoke run: short rounds on a shared machine; NOT results";
    if run.quick {
        lines.push((warning, 14, WARN));
    }
    text_lines(area, (16, 12), &lines)
}

/// "on the project's 2-vCPU VM (Intel…, Linux …); commit abc; 5 rounds".
fn source_line(run: &Run, machine: &str) -> String {
    let commit = run.commit.as_deref().unwrap_or("not recorded");
    let rounds = match run.rounds {
        1 => "1 round (no spread)".to_string(),
        n => format!("medians of {n} rounds"),
    };
    format!("on {machine} ({}); commit {commit}; {rounds}", run.detail)
}

/// Height of the title band that [`title`] draws for `what`.
fn title_height(what: &[&str], run: &Run) -> u32 {
    // The 20 px first line, then 14 px lines: the rest of `what`, the
    // source line and the quick-run warning.
    let small = what.len().saturating_sub(1) as u32 + 1 + u32::from(run.quick);
    12 + 27 + 21 * small + 10
}

/// Tick values for a log axis over `lo..hi`: the finest ladder of round
/// numbers that leaves at most `most` ticks (at least the coarsest one).
/// plotters' own log ticks are powers of ten only, which leaves a ratio
/// axis from 0.8 to 1.25 with one label.
fn log_ticks(lo: f64, hi: f64, most: usize) -> Vec<f64> {
    const LADDERS: [&[f64]; 5] = [
        &[1.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0],
        &[1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0],
        &[
            1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0,
            9.0,
        ],
    ];
    let ticks = |ladder: &[f64]| -> Vec<f64> {
        let first = lo.log10().floor() as i32;
        let last = hi.log10().ceil() as i32;
        (first..=last)
            .flat_map(|e| ladder.iter().map(move |m| m * 10f64.powi(e)))
            // Round away the float error of m * 10^e (0.30000000000000004).
            .map(|v| (v * 1e6).round() / 1e6)
            .filter(|v| *v >= lo && *v <= hi)
            .collect()
    };
    let mut best = ticks(LADDERS[0]);
    for ladder in &LADDERS[1..] {
        let finer = ticks(ladder);
        if finer.len() > most {
            break;
        }
        best = finer;
    }
    best
}

/// A tick label: as few digits as the value needs.
fn tick_label(v: &f64) -> String {
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `lo..hi` padded by `pad` (a factor) on both sides, and at least `span`
/// wide (a factor), on a log axis.
fn log_range(lo: f64, hi: f64, pad: f64, span: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (lo / pad, hi * pad);
    let missing = span / (hi / lo);
    if missing > 1.0 {
        lo /= missing.sqrt();
        hi *= missing.sqrt();
    }
    (lo, hi)
}

/// `text` in at most two lines, broken at the ", " nearest its middle if
/// longer than `width` characters.
fn two_lines(text: &str, width: usize) -> (String, Option<String>) {
    if text.chars().count() <= width {
        return (text.to_string(), None);
    }
    let middle = text.len() / 2;
    match text
        .match_indices(", ")
        .map(|(i, _)| i)
        .min_by_key(|i| i.abs_diff(middle))
    {
        Some(i) => (text[..i + 1].to_string(), Some(text[i + 2..].to_string())),
        None => (text.to_string(), None),
    }
}

/// `text` in lines of at most `width` characters, broken at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// B2's peers by the names a reader knows.
fn peer_label(peer: &str) -> &str {
    match peer {
        "raw_futex" => "raw futex (floor)",
        "notifier" => "eventcount Notifier",
        "std_condvar" => "std Mutex + Condvar",
        "parking_lot_condvar" => "parking_lot Condvar",
        "event_listener" => "event-listener",
        "crossbeam_parker" => "crossbeam Parker",
        "std_park" => "std thread::park",
        other => other,
    }
}

/// What each B2 placement means.
fn placement_label(case: &str) -> String {
    let why = match case {
        "unpinned" => ": where the kernel puts the two threads",
        "pinned, 2 vCPUs" => ": one thread per vCPU, every wake crosses vCPUs",
        "pinned, 1 vCPU" => ": both threads on vCPU 0, every wake is a context switch",
        _ => "",
    };
    format!("{case}{why}")
}

/// B2: each peer's round trip, one panel per placement, on one log axis
/// shared by the panels so that placements compare too.
pub fn round_trips(svg: &mut String, placements: &[Placement], run: &Run, machine: &str) -> Result {
    let peers = placements.iter().map(|p| p.peers.len()).max().unwrap_or(1);
    let panel_height = 70 + 30 * peers as u32;
    let what = [
        "B2: ping-pong round trip between two sleeping threads, by peer",
        "p50 of each round's round trips (dot), its range over the rounds (bar), p90 (hollow diamond); µs, log scale",
    ];
    let top = title_height(&what, run);
    let legend = 100;
    let (width, height) = (1100, top + panel_height * placements.len() as u32 + legend);
    {
        let root = SVGBackend::with_string(svg, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (head, rest) = root.split_vertically(top);
        title(&head, &what, run, machine)?;
        let (body, foot) = rest.split_vertically(height - top - legend);
        let values = placements.iter().flat_map(|p| &p.peers).flat_map(|t| {
            t.p50_rounds
                .iter()
                .copied()
                .chain([t.p50])
                .chain(t.p90)
                .filter(|v| *v > 0.0)
        });
        let (lo, hi) = values.fold((f64::INFINITY, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if !(lo.is_finite() && hi > 0.0) {
            return Err("B2 has no positive round-trip times to plot".into());
        }
        let (lo, hi) = log_range(lo, hi, 1.25, 4.0);
        for (placement, area) in placements
            .iter()
            .zip(body.split_evenly((placements.len(), 1)))
        {
            round_trip_panel(&area, placement, (lo, hi))?;
        }
        round_trip_legend(&foot)?;
        root.present()?;
    }
    Ok(())
}

fn round_trip_panel(area: &Area<'_>, placement: &Placement, (lo, hi): (f64, f64)) -> Result {
    let n = placement.peers.len() as i32;
    // The first peer (the floor) at the top.
    let row = |i: usize| SegmentValue::CenterOf(n - 1 - i as i32);
    let names: Vec<&str> = placement
        .peers
        .iter()
        .map(|t| peer_label(&t.peer))
        .collect();
    let mut chart = ChartBuilder::on(area)
        .caption(placement_label(&placement.case), font(15))
        .margin_left(12)
        .margin_right(150)
        .margin_top(4)
        .x_label_area_size(34)
        .y_label_area_size(170)
        .build_cartesian_2d(
            (lo..hi).log_scale().with_key_points(log_ticks(lo, hi, 12)),
            (0..n - 1).into_segmented(),
        )?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(LIGHT)
        .light_line_style(TRANSPARENT)
        .x_desc("round trip, µs (log scale)")
        .x_label_formatter(&tick_label)
        .y_labels(names.len())
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => names
                .get((n - 1 - i) as usize)
                .map_or(String::new(), |s| s.to_string()),
            _ => String::new(),
        })
        .label_style(font(13))
        .axis_desc_style(font(13))
        .draw()?;
    if let Some(floor) = placement.peers.iter().find(|t| t.peer == "raw_futex") {
        chart.draw_series([DashedPathElement::new(
            vec![
                (floor.p50, SegmentValue::Exact(0)),
                (floor.p50, SegmentValue::Last),
            ],
            5,
            4,
            GREY.stroke_width(1),
        )])?;
    }
    for (i, trip) in placement.peers.iter().enumerate() {
        let y = row(i);
        let (min, max) = trip
            .p50_rounds
            .iter()
            .fold((trip.p50, trip.p50), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        let color = peer_color(trip);
        chart.draw_series([PathElement::new(
            vec![(min, y.clone()), (max, y.clone())],
            color.mix(0.45).stroke_width(7),
        )])?;
        draw_marker(&mut chart, (trip.p50, y.clone()), Mark::p50(color))?;
        if let Some(p90) = trip.p90 {
            draw_marker(&mut chart, (p90, y.clone()), Mark::p90(color))?;
        }
        let right = trip.p90.unwrap_or(max).max(max);
        // The report's own ratio: the median of the per-round ratios.
        let label = match trip.x_floor {
            Some(x) if trip.peer != "raw_futex" => {
                format!("{} µs, {x:.2}× raw futex", short(trip.p50))
            }
            _ => format!("{} µs", short(trip.p50)),
        };
        chart.draw_series([EmptyElement::at((right, y))
            + Text::new(
                label,
                (12, 0),
                font(12).pos(Pos::new(HPos::Left, VPos::Center)),
            )])?;
    }
    Ok(())
}

/// The crate's own peer in its build colour, the others in one.
fn peer_color(trip: &Trip) -> RGBColor {
    if trip.peer == "notifier" {
        mark_of("notifier").color
    } else {
        mark_of("jec").color
    }
}

/// Three significant digits at most.
fn short(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.2}"),
    }
}

/// B2's legend, its left edge under the panels' axes.
fn round_trip_legend(area: &Area<'_>) -> Result {
    let blue = mark_of("jec").color;
    let orange = mark_of("notifier").color;
    let mut legend = legend_chart(area, None)?;
    legend_marker(&mut legend, "p50: median over rounds", Mark::p50(blue))?;
    legend_line(&mut legend, "p50: range over rounds", move |(x, y)| {
        let bar = blue.mix(0.45).stroke_width(7);
        PathElement::new(vec![(x + 2, y), (x + 18, y)], bar)
    })?;
    legend_marker(&mut legend, "p90: median over rounds", Mark::p90(blue))?;
    legend_line(&mut legend, "raw futex p50", |(x, y)| {
        let line = vec![(x + 10, y - 9), (x + 10, y + 9)];
        DashedPathElement::new(line, 5, 4, GREY.stroke_width(1))
    })?;
    legend_marker(&mut legend, "this crate", Mark::p50(orange))?;
    draw_legend(&mut legend, (170, 0), 13)
}

/// What a bench's ticks are, for the title.
fn bench_label(bench: &str) -> &str {
    match bench {
        "B7" => "B7, ticks of 8 jobs x 5 µs with idle gaps",
        "B8" => "B8, a control loop of join-tree regions",
        other => other,
    }
}

/// CPU against latency: one panel per case, one point per build, both axes
/// ratios to the baseline in the same round, on log scales (a ratio of 0.5
/// is as far from 1 as one of 2).
pub fn scatter(svg: &mut String, plot: &Scatter, pool: &str, run: &Run, machine: &str) -> Result {
    let cols = match plot.bench.as_str() {
        // Cases run threads outermost: a row per thread count.
        "B7" => 3,
        _ => 4,
    }
    .min(plot.panels.len());
    let rows = plot.panels.len().div_ceil(cols);
    let (panel_w, panel_h) = (370, 360);
    let legend_w = 340;
    let headline = format!(
        "{pool}, {}: {} against {}",
        bench_label(&plot.bench),
        plot.cpu,
        plot.latency
    );
    let axes = format!(
        "Both axes: ratio to {} measured in the same round (1.0 = {}), median over rounds; log scales. Lower left is better: less CPU, lower latency.",
        plot.baseline, plot.baseline
    );
    let what = [headline.as_str(), axes.as_str()];
    let top = title_height(&what, run);
    let width = panel_w * cols as u32 + legend_w;
    let height = top + panel_h * rows as u32 + 10;
    {
        let root = SVGBackend::with_string(svg, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (head, rest) = root.split_vertically(top);
        title(&head, &what, run, machine)?;
        let (grid, legend) = rest.split_horizontally(panel_w * cols as u32);
        let areas = grid.split_evenly((rows, cols));
        for (panel, area) in plot.panels.iter().zip(&areas) {
            scatter_panel(area, plot, panel)?;
        }
        scatter_legend(&legend, plot)?;
        root.present()?;
    }
    Ok(())
}

fn scatter_panel(area: &Area<'_>, plot: &Scatter, panel: &crate::input::Panel) -> Result {
    let (first, second) = two_lines(&panel.case, 42);
    let (head, body) = area.split_vertically(42);
    let mut lines = vec![(first.as_str(), 14, BLACK)];
    if let Some(second) = &second {
        lines.push((second.as_str(), 14, BLACK));
    }
    text_lines(&head, (60, 6), &lines)?;
    let all = panel.points.iter().chain(&panel.noise);
    let span = |r: &Ratio| [r.min, r.max];
    let xs: Vec<f64> = all.clone().flat_map(|p| span(&p.latency)).collect();
    let ys: Vec<f64> = all.flat_map(|p| span(&p.cpu)).collect();
    let bounds = |v: &[f64]| {
        let lo = v.iter().copied().fold(1.0, f64::min);
        let hi = v.iter().copied().fold(1.0, f64::max);
        log_range(lo, hi, 1.15, 1.5)
    };
    let ((x0, x1), (y0, y1)) = (bounds(&xs), bounds(&ys));
    let mut chart = ChartBuilder::on(&body)
        .margin(6)
        .margin_right(14)
        .x_label_area_size(40)
        .y_label_area_size(52)
        .build_cartesian_2d(
            (x0..x1).log_scale().with_key_points(log_ticks(x0, x1, 7)),
            (y0..y1).log_scale().with_key_points(log_ticks(y0, y1, 8)),
        )?;
    chart
        .configure_mesh()
        .bold_line_style(LIGHT.mix(0.6))
        .light_line_style(TRANSPARENT)
        .x_desc(format!("{} × {}", plot.latency, plot.baseline))
        .y_desc(format!("{} × {}", plot.cpu, plot.baseline))
        .x_label_formatter(&tick_label)
        .y_label_formatter(&tick_label)
        .label_style(font(12))
        .axis_desc_style(font(13))
        .draw()?;
    if let Some(noise) = &panel.noise {
        let (l, c) = (noise.latency, noise.cpu);
        chart.draw_series([Rectangle::new(
            [(l.min, c.min), (l.max, c.max)],
            GREY.mix(0.18).filled(),
        )])?;
    }
    chart.draw_series(
        [vec![(1.0, y0), (1.0, y1)], vec![(x0, 1.0), (x1, 1.0)]]
            .map(|line| DashedPathElement::new(line, 5, 4, GREY.stroke_width(1))),
    )?;
    let points = || panel.points.iter().chain(&panel.noise);
    chart.draw_series(points().flat_map(|point| {
        let whisker = mark_of(&point.build).color.mix(0.7).stroke_width(1);
        let (l, c) = (point.latency, point.cpu);
        [
            PathElement::new(vec![(l.min, c.median), (l.max, c.median)], whisker),
            PathElement::new(vec![(l.median, c.min), (l.median, c.max)], whisker),
        ]
    }))?;
    // The baseline last but one and the others over it, in legend order
    // reversed, so the first builds of the legend stay on top.
    for point in panel.noise.iter().chain(panel.points.iter().rev()) {
        let at = (point.latency.median, point.cpu.median);
        draw_marker(&mut chart, at, mark_of(&point.build))?;
    }
    if !panel.missing.is_empty() {
        // No line break inside a name ("stock again").
        let names: Vec<String> = panel
            .missing
            .iter()
            .map(|b| b.replace(' ', "\u{a0}"))
            .collect();
        let note = format!("not placeable (ratio ≤ 0 or none): {}", names.join(", "));
        let wrapped = wrap(&note, 48);
        let lines: Vec<(&str, u32, RGBColor)> =
            wrapped.iter().map(|l| (l.as_str(), 12, WARN)).collect();
        text_lines(&chart.plotting_area().strip_coord_spec(), (8, 6), &lines)?;
    }
    Ok(())
}

/// The builds of every panel, each once, in legend order, with what the
/// whiskers, the grey box and the dashed lines mean.
fn scatter_legend(area: &Area<'_>, plot: &Scatter) -> Result {
    let mut builds: Vec<&str> = Vec::new();
    for panel in &plot.panels {
        for point in panel.points.iter().chain(&panel.noise) {
            if !builds.contains(&point.build.as_str()) {
                builds.push(&point.build);
            }
        }
    }
    builds.sort_by_key(|b| rank(b));
    let mut legend = legend_chart(area, Some("builds"))?;
    for build in builds {
        legend_marker(&mut legend, build, mark_of(build))?;
        legend_text(&mut legend, describe(build))?;
    }
    legend_line(
        &mut legend,
        "whiskers: min to max of the per-round",
        |(x, y)| {
            let whisker = GREY.stroke_width(1);
            EmptyElement::at((x + 10, y))
                + PathElement::new(vec![(-8, 0), (8, 0)], whisker)
                + PathElement::new(vec![(0, -8), (0, 8)], whisker)
        },
    )?;
    legend_text(&mut legend, "ratios (none with one round)")?;
    if plot.panels.iter().any(|p| p.noise.is_some()) {
        legend_line(
            &mut legend,
            "grey box: stock against stock over the",
            |(x, y)| {
                let shade = GREY.mix(0.18).filled();
                Rectangle::new([(x + 2, y - 8), (x + 18, y + 8)], shade)
            },
        )?;
        legend_text(&mut legend, "rounds; a build inside it is within noise")?;
    }
    legend_line(&mut legend, &format!("1.0: {}", plot.baseline), |(x, y)| {
        let line = vec![(x + 2, y), (x + 18, y)];
        DashedPathElement::new(line, 5, 4, GREY.stroke_width(1))
    })?;
    draw_legend(&mut legend, (4, 0), 13)?;
    if plot.panels.iter().any(|p| !p.missing.is_empty()) {
        // Wasted CPU is the pool's CPU minus the useful work timed on one
        // thread: on a busy machine that timing runs slow and the
        // difference goes negative.
        let bottom = area.dim_in_pixel().1 as i32;
        text_lines(
            area,
            (14, bottom - 4 * 19 - 10),
            &[
                ("red: builds without a ratio > 0 in that case;", 12, WARN),
                ("wasted CPU goes negative when a busy machine", 12, WARN),
                ("slows the timing of the useful work (--cpu pool", 12, WARN),
                ("plots all of the pool's CPU instead)", 12, WARN),
            ],
        )?;
    }
    Ok(())
}

/// tokio-bench: each build's ratio to stock tokio, one line per case and
/// metric, on one log axis. A line gives each build a lane of its own, in
/// legend order, so that builds with close ratios do not cover each other;
/// the band behind the line is where stock against itself landed.
pub fn ratios(svg: &mut String, lines: &[RatioLine], run: &Run, machine: &str) -> Result {
    let mut builds: Vec<&str> = Vec::new();
    for line in lines {
        for (build, _) in &line.builds {
            if !builds.contains(&build.as_str()) {
                builds.push(build);
            }
        }
    }
    builds.sort_by_key(|b| rank(b));
    let what = [
        "tokio on eventcount: each build's ratio to stock tokio, by case and metric",
        "Ratio to stock measured in the same round (1.0 = stock): median over rounds (mark), min to max (whisker); log scale. Left of 1.0 is better: less time, less CPU.",
    ];
    let top = title_height(&what, run);
    // plotters cannot measure text without the system fonts; 6 px a
    // character is the width of the 13 px labels in a wide sans-serif with
    // room to spare.
    let longest = lines.iter().map(|l| l.label.chars().count()).max();
    let label_w = (longest.unwrap_or(0) as u32 * 6 + 30).max(160);
    let (plot_w, legend_w) = (600, 360);
    // A lane of 13 px a build: the marks are 12 to 14 px across.
    let line_h = 13 * builds.len().max(1) as u32 + 16;
    // The legend needs its height even beside a line or two.
    let body_h = (line_h * lines.len() as u32 + 60).max(380);
    let (width, height) = (label_w + plot_w + legend_w, top + body_h);
    {
        let root = SVGBackend::with_string(svg, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (head, rest) = root.split_vertically(top);
        title(&head, &what, run, machine)?;
        let (body, legend) = rest.split_horizontally(label_w + plot_w);
        ratio_lines(&body, lines, &builds, label_w)?;
        ratio_legend(&legend, lines, &builds)?;
        root.present()?;
    }
    Ok(())
}

/// The height of one line of the ratio plot in its y units.
const LINE: i32 = 100;

fn ratio_lines(area: &Area<'_>, lines: &[RatioLine], builds: &[&str], label_w: u32) -> Result {
    let n = lines.len();
    if n == 0 {
        return Err("no rows to plot".into());
    }
    let spans = lines.iter().flat_map(|l| {
        let ratios = l.builds.iter().map(|(_, r)| r).chain(&l.noise);
        ratios.flat_map(|r| [r.min, r.max])
    });
    let (lo, hi) = spans.fold((1f64, 1f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (x0, x1) = log_range(lo, hi, 1.15, 1.5);
    // y counts hundredths of a line, in integers: plotters labels an axis
    // of chosen key points only if its values have a default format, which
    // integers have and floats lack. The first line is at the top.
    let top = n as i32 * LINE;
    let centre = |i: usize| top - LINE / 2 - i as i32 * LINE;
    let centres: Vec<i32> = (0..n).map(centre).collect();
    let mut chart = ChartBuilder::on(area)
        .margin(8)
        .margin_right(16)
        .x_label_area_size(44)
        .y_label_area_size(label_w)
        .build_cartesian_2d(
            (x0..x1).log_scale().with_key_points(log_ticks(x0, x1, 12)),
            (0..top).with_key_points(centres),
        )?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(LIGHT)
        .light_line_style(TRANSPARENT)
        .x_desc("ratio to stock tokio in the same round (log scale)")
        .x_label_formatter(&tick_label)
        .y_labels(n)
        .y_label_formatter(&|v| {
            let i = (top - v) / LINE;
            usize::try_from(i)
                .ok()
                .and_then(|i| lines.get(i))
                .map_or(String::new(), |l| l.label.clone())
        })
        .label_style(font(13))
        .axis_desc_style(font(13))
        .draw()?;
    // Rules between the lines, so that each band and its lanes read as one
    // line.
    chart.draw_series((1..n as i32).map(|i| {
        let y = i * LINE;
        PathElement::new(vec![(x0, y), (x1, y)], LIGHT.stroke_width(1))
    }))?;
    // The band has an outline: with one round it has no width, and the
    // outline is the line where stock again landed. A path, because SVG
    // draws no rectangle of width zero, not even its stroke.
    for (i, line) in lines.iter().enumerate() {
        let (Some(noise), y) = (line.noise, centre(i)) else {
            continue;
        };
        let (lo, hi) = ((noise.min, y - 45), (noise.max, y + 45));
        let outline = closed(&[lo, (hi.0, lo.1), hi, (lo.0, hi.1)]);
        chart.draw_series([Rectangle::new([lo, hi], GREY.mix(0.18).filled())])?;
        chart.draw_series([PathElement::new(outline, GREY.mix(0.4).stroke_width(1))])?;
    }
    chart.draw_series([DashedPathElement::new(
        vec![(1.0, 0), (1.0, top)],
        5,
        4,
        GREY.stroke_width(1),
    )])?;
    // The lanes fill the middle 70% of a line, the first build on top.
    let lane = |build: &str| {
        let k = builds.len() as i32;
        let j = builds.iter().position(|b| *b == build).unwrap_or(0) as i32;
        if k < 2 {
            0
        } else {
            35 - 70 * j / (k - 1)
        }
    };
    for (i, line) in lines.iter().enumerate() {
        let y = centre(i);
        for (build, r) in &line.builds {
            let y = y + lane(build);
            let whisker = mark_of(build).color.mix(0.7).stroke_width(2);
            chart.draw_series([PathElement::new(vec![(r.min, y), (r.max, y)], whisker)])?;
            draw_marker(&mut chart, (r.median, y), mark_of(build))?;
        }
        if !line.missing.is_empty() {
            let note = format!(
                "not placeable (ratio ≤ 0 or none): {}",
                line.missing.join(", ")
            );
            let style = (FONT, 12)
                .into_font()
                .color(&WARN)
                .pos(Pos::new(HPos::Right, VPos::Center));
            chart.draw_series([EmptyElement::at((x1, y)) + Text::new(note, (-8, 0), style)])?;
        }
    }
    Ok(())
}

/// The builds of every line, each once, in legend order, with what the
/// whiskers, the band and the dashed line mean.
fn ratio_legend(area: &Area<'_>, lines: &[RatioLine], builds: &[&str]) -> Result {
    let mut legend = legend_chart(area, Some("builds"))?;
    for &build in builds {
        legend_marker(&mut legend, build, mark_of(build))?;
        legend_text(&mut legend, describe_tokio(build))?;
    }
    legend_line(
        &mut legend,
        "whisker: min to max of the per-round",
        |(x, y)| PathElement::new(vec![(x + 2, y), (x + 18, y)], GREY.stroke_width(2)),
    )?;
    legend_text(&mut legend, "ratios (none with one round)")?;
    if lines.iter().any(|l| l.noise.is_some()) {
        legend_line(
            &mut legend,
            "grey band: stock against stock over the",
            |(x, y)| {
                let (shade, outline) = (GREY.mix(0.18).filled(), GREY.mix(0.4).stroke_width(1));
                EmptyElement::at((x + 10, y))
                    + Rectangle::new([(-8, -8), (8, 8)], shade)
                    + Rectangle::new([(-8, -8), (8, 8)], outline)
            },
        )?;
        legend_text(&mut legend, "rounds; a build inside it is within noise")?;
    }
    legend_line(&mut legend, "1.0: stock", |(x, y)| {
        let line = vec![(x + 10, y - 9), (x + 10, y + 9)];
        DashedPathElement::new(line, 5, 4, GREY.stroke_width(1))
    })?;
    draw_legend(&mut legend, (4, 0), 13)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_pick_round_numbers_and_keep_one() {
        assert_eq!(log_ticks(0.8, 1.25, 8), [0.8, 0.9, 1.0, 1.1, 1.2]);
        assert_eq!(
            log_ticks(1.0, 70.0, 12),
            [1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0, 70.0]
        );
        assert_eq!(log_ticks(0.3, 3.0, 7), [0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0]);
        assert_eq!(log_ticks(0.3, 3.0, 6), [0.5, 1.0, 2.0]);
        assert_eq!(tick_label(&0.30000000000000004), "0.3");
        assert_eq!(tick_label(&1.0), "1");
    }

    #[test]
    fn long_case_names_break_at_the_middle_comma() {
        let (a, b) = two_lines(
            "8 regions x 64 x 10 us, 10 ms, install per region, 2 threads",
            42,
        );
        assert_eq!(a, "8 regions x 64 x 10 us, 10 ms,");
        assert_eq!(b.as_deref(), Some("install per region, 2 threads"));
        assert_eq!(two_lines("unpinned", 42), ("unpinned".to_string(), None));
        assert_eq!(
            wrap("not placeable: jec, eigen", 16),
            ["not placeable:", "jec, eigen"]
        );
    }
}

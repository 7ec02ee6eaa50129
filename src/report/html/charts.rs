//! Inline SVG plots, drawn from metric FIELDS (never from names): busbw vs message size from
//! metrics with `size_bytes`, per-rail bandwidth from metrics with `rail` (grouped by `node`).

use super::super::{fmt_in, fmt_metric, fmt_num};
use super::labels::short_labels;
use super::styles::esc;
use crate::report::matrix::{Cell, Verdict};
use crate::run::model::{Metric, RunResult, Status};
use crate::util::fmt::human_bytes;
use std::fmt::Write;

/// Pair matrices (`test_pairs` meshes): a node × node table per metric, each cell coloured by
/// that pair's verdict (never by rank: six failed pairs are six red cells), with a legend and
/// the slowest pairs.
pub fn matrices(h: &mut String, run: &RunResult) {
    let ms = crate::report::matrix::matrices(run);
    if ms.is_empty() {
        return;
    }
    h.push_str("<section id=\"matrix\"><h2>Pair matrices</h2>");
    h.push_str(MATRIX_LEGEND);
    for m in &ms {
        let _ = write!(
            h,
            "<h3>{} <span class=\"muted\">({}; row → column; {} pairs)</span></h3><div class=\"plot\"><table class=\"matrix\"><tr><th></th>",
            esc(&m.metric),
            esc(&m.unit),
            m.cells.len()
        );
        for b in &m.nodes {
            let _ = write!(h, "<th>{}</th>", esc(b));
        }
        h.push_str("</tr>");
        for a in &m.nodes {
            let _ = write!(h, "<tr><th>{}</th>", esc(a));
            for b in &m.nodes {
                match m.cells.get(&(a.clone(), b.clone())) {
                    Some(c) => matrix_cell(h, a, b, c, &m.unit),
                    None => h.push_str("<td class=\"muted\">·</td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
        let worst: Vec<String> = m
            .worst(5)
            .iter()
            .map(|((a, b), v)| {
                format!(
                    "{} → {}: {} {}",
                    esc(a),
                    esc(b),
                    esc(&fmt_in(*v, &m.unit)),
                    esc(&m.unit)
                )
            })
            .collect();
        let _ = write!(h, "<p>Slowest pairs: {}</p></div>", worst.join(" · "));
    }
    h.push_str("</section>\n");
}

/// What the matrix colours mean.
const MATRIX_LEGEND: &str = "<p class=\"legend\">Cell colour is the pair's verdict: \
    <span class=\"cell v-pass\">pass</span> meets its threshold, test passed · \
    <span class=\"cell v-fail\">fail ✗</span> misses its threshold, or the pair's test failed · \
    <span class=\"cell v-error\">error</span> the test could not be made, the value proves nothing · \
    <span class=\"cell v-none\">no threshold</span> a number, not a verdict.</p>";

/// One pair's cell: the value, coloured by its verdict, the verdict in words in the tooltip.
fn matrix_cell(h: &mut String, a: &str, b: &str, c: &Cell, unit: &str) {
    let mark = match c.verdict {
        Verdict::Fail => " ✗",
        Verdict::Error => " err",
        _ => "",
    };
    let judged = match c.threshold {
        Some(th) => format!("threshold {} {unit}", fmt_in(th, unit)),
        None => "no threshold".to_string(),
    };
    let why = c
        .message
        .as_deref()
        .filter(|_| matches!(c.status, Status::Failure | Status::Error))
        .map(|m| format!(": {}", crate::report::one_line(m)))
        .unwrap_or_default();
    let _ = write!(
        h,
        "<td class=\"num cell {}\" title=\"{} -> {}: {} {unit}, {judged}; test {}{}\">{}{mark}</td>",
        c.verdict.class(),
        esc(a),
        esc(b),
        esc(&fmt_in(c.value, unit)),
        c.status.label(),
        esc(&why),
        esc(&fmt_in(c.value, unit))
    );
}

/// The plots section, if any metric asks for one.
pub fn section(h: &mut String, run: &RunResult) {
    let busbw = busbw_plot(run);
    let rails = rail_plot(run);
    if busbw.is_some() || rails.is_some() {
        h.push_str("<section id=\"plots\"><h2>Plots</h2>");
        if let Some(p) = busbw {
            h.push_str("<h3>NCCL bus bandwidth vs message size</h3><div class=\"plot\">");
            h.push_str(&p);
            h.push_str("</div>");
        }
        if let Some(p) = rails {
            h.push_str("<h3>RDMA bandwidth per rail and node</h3><div class=\"plot\">");
            h.push_str(&p);
            h.push_str("</div>");
        }
        h.push_str("</section>\n");
    }
}

const PALETTE: [&str; 10] = [
    "#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83", "#bf3989", "#4d2d00",
    "#6e7781", "#9a6700",
];

/// A "nice" step for about `n` ticks over 0..max.
fn nice_step(max: f64, n: f64) -> f64 {
    let raw = (max / n).max(1e-12);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nf = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nf * mag
}

/// One line of the busbw plot: a test's per-size points and the thresholds its busbw carries.
struct Series {
    label: String,
    /// (size in bytes, value), by size.
    pts: Vec<(f64, f64)>,
    /// Thresholds of the test's metrics in the series' unit that are not per-size points (the
    /// best-busbw verdict: `nccl::busbw_at_least` records `nccl_busbw_max_gbs` with one).
    thresholds: Vec<f64>,
}

/// The busbw plot's data: a series per test with `size_bytes` metrics, and their unit.
fn busbw_series(run: &RunResult) -> (Vec<Series>, String) {
    let has_points = |s: &&crate::run::model::SuiteResult| {
        s.tests
            .iter()
            .flat_map(|t| &t.metrics)
            .any(|m| m.size_bytes.is_some())
    };
    let multi_suite = run.suites.iter().filter(has_points).count() > 1;
    let mut series = Vec::new();
    let mut unit = String::new();
    for s in &run.suites {
        for t in &s.tests {
            let points: Vec<&Metric> = t
                .metrics
                .iter()
                .filter(|m| m.size_bytes.is_some_and(|b| b > 0) && m.value.is_finite())
                .collect();
            let Some(first) = points.first() else {
                continue;
            };
            if unit.is_empty() {
                unit = first.unit.clone();
            }
            let mut pts: Vec<(f64, f64)> = points
                .iter()
                .map(|m| (m.size_bytes.unwrap_or(1) as f64, m.value))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut thresholds: Vec<f64> = t
                .metrics
                .iter()
                .filter(|m| m.size_bytes.is_none() && m.unit == first.unit)
                .filter_map(|m| m.threshold.filter(|th| th.is_finite()))
                .collect();
            thresholds.dedup();
            let label = if multi_suite {
                format!("{} / {}", s.name, t.name)
            } else {
                t.name.clone()
            };
            series.push(Series {
                label,
                pts,
                thresholds,
            });
        }
    }
    (series, unit)
}

/// Where the busbw plot draws: margins, plot size, and the axes' ranges.
struct Frame {
    ml: f64,
    mt: f64,
    pw: f64,
    ph: f64,
    /// log2 of the smallest and largest message size on the x axis.
    xmin: f64,
    xmax: f64,
    ytop: f64,
    ystep: f64,
}

impl Frame {
    /// The frame that holds every point and every threshold of `series`.
    fn around(series: &[Series]) -> Frame {
        let (mut xmin, mut xmax, mut ymax) = (f64::INFINITY, 0f64, 0f64);
        for sr in series {
            for &(x, y) in &sr.pts {
                xmin = xmin.min(x.log2());
                xmax = xmax.max(x.log2());
                ymax = ymax.max(y);
            }
            ymax = sr.thresholds.iter().fold(ymax, |a, &t| a.max(t));
        }
        let ystep = nice_step(if ymax > 0.0 { ymax } else { 1.0 }, 6.0);
        Frame {
            ml: 70.0,
            mt: 20.0,
            pw: 1100.0 - 70.0 - 20.0,
            ph: 340.0,
            xmin: xmin.floor(),
            xmax: xmax.ceil().max(xmin.floor() + 1.0),
            ytop: ((ymax / ystep).ceil().max(1.0)) * ystep,
            ystep,
        }
    }

    fn sx(&self, bytes: f64) -> f64 {
        self.ml + (bytes.log2() - self.xmin) / (self.xmax - self.xmin) * self.pw
    }

    fn sy(&self, v: f64) -> f64 {
        self.mt + self.ph - (v / self.ytop) * self.ph
    }

    /// Where legend entry `i` goes (three per row under the plot).
    fn legend_at(&self, i: usize) -> (f64, f64) {
        (
            self.ml + (i % 3) as f64 * (self.pw / 3.0),
            self.mt + self.ph + 60.0 + (i / 3) as f64 * 20.0,
        )
    }
}

/// Busbw vs message size (log2 x axis), one line per test, each test's threshold as a dashed
/// line of its colour.
fn busbw_plot(run: &RunResult) -> Option<String> {
    let (series, unit) = busbw_series(run);
    if series.is_empty() {
        return None;
    }
    let f = Frame::around(&series);
    let legend_rows = (series.len() + 1).div_ceil(3) as f64;
    let hgt = f.mt + f.ph + 60.0 + legend_rows * 20.0 + 6.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1100 {hgt}\" width=\"100%\" role=\"img\" aria-label=\"bus bandwidth vs message size\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    busbw_axes(&mut s, &f, &unit);
    let labels: Vec<String> = series.iter().map(|sr| sr.label.clone()).collect();
    let short = short_labels(&labels, 48);
    for (i, sr) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        busbw_line(&mut s, sr, color, &unit, &f);
        for &th in &sr.thresholds {
            let py = f.sy(th);
            let _ = write!(
                s,
                "<line class=\"threshold\" x1=\"{}\" x2=\"{}\" y1=\"{py:.1}\" y2=\"{py:.1}\" stroke=\"{color}\" stroke-width=\"1.6\" stroke-dasharray=\"7 4\"><title>{}: threshold {} {}</title></line><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{color}\">threshold {} {}</text>",
                f.ml,
                f.ml + f.pw,
                esc(&sr.label),
                fmt_in(th, &unit),
                esc(&unit),
                f.ml + f.pw - 4.0,
                py - 4.0,
                fmt_in(th, &unit),
                esc(&unit)
            );
        }
        let (lx, ly) = f.legend_at(i);
        let _ = write!(
            s,
            "<line x1=\"{lx}\" x2=\"{}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"3\"/><text x=\"{}\" y=\"{}\" fill=\"#1f2328\"><title>{}</title>{}</text>",
            lx + 22.0,
            lx + 28.0,
            ly + 4.0,
            esc(&sr.label),
            esc(&short[i])
        );
    }
    if series.iter().any(|sr| !sr.thresholds.is_empty()) {
        let (lx, ly) = f.legend_at(series.len());
        let _ = write!(
            s,
            "<line x1=\"{lx}\" x2=\"{}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"#1f2328\" stroke-width=\"1.6\" stroke-dasharray=\"7 4\"/><text x=\"{}\" y=\"{}\" fill=\"#1f2328\">threshold of the best busbw (the test's colour)</text>",
            lx + 22.0,
            lx + 28.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>");
    Some(s)
}

/// Grid, ticks, axes and axis titles of the busbw plot.
fn busbw_axes(s: &mut String, f: &Frame, unit: &str) {
    let (ml, mt, pw, ph) = (f.ml, f.mt, f.pw, f.ph);
    let mut y = 0.0;
    while y <= f.ytop + f.ystep * 0.01 {
        let py = f.sy(y);
        let _ = write!(
            s,
            "<line x1=\"{ml}\" x2=\"{}\" y1=\"{py:.1}\" y2=\"{py:.1}\" stroke=\"#d0d7de\" stroke-width=\"1\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#57606a\">{}</text>",
            ml + pw,
            ml - 6.0,
            py + 4.0,
            fmt_num(y)
        );
        y += f.ystep;
    }
    // x ticks: powers of two, thinned to at most ~14 labels
    let span = (f.xmax - f.xmin) as usize;
    let every = span.div_ceil(14).max(1);
    for (i, e) in (f.xmin as i64..=f.xmax as i64).enumerate() {
        let px = f.sx(2f64.powi(e as i32));
        let _ = write!(
            s,
            "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{mt}\" y2=\"{}\" stroke=\"#eaeef2\"/>",
            mt + ph
        );
        if i % every == 0 {
            let _ = write!(
                s,
                "<text x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#57606a\">{}</text>",
                mt + ph + 16.0,
                human_bytes(2f64.powi(e as i32))
            );
        }
    }
    let _ = write!(
        s,
        "<line x1=\"{ml}\" x2=\"{ml}\" y1=\"{mt}\" y2=\"{}\" stroke=\"#1f2328\"/><line x1=\"{ml}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#1f2328\"/>",
        mt + ph,
        ml + pw,
        mt + ph,
        mt + ph
    );
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#1f2328\">message size (log2 scale)</text>",
        ml + pw / 2.0,
        mt + ph + 36.0
    );
    let _ = write!(
        s,
        "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\" fill=\"#1f2328\">bus bandwidth ({})</text>",
        mt + ph / 2.0,
        esc(if unit.is_empty() { "GB/s" } else { unit })
    );
}

/// A series' polyline and its points (value rounded in the tooltip).
fn busbw_line(s: &mut String, sr: &Series, color: &str, unit: &str, f: &Frame) {
    let p: Vec<String> = sr
        .pts
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", f.sx(x), f.sy(y)))
        .collect();
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2.2\" points=\"{}\"/>",
        p.join(" ")
    );
    for &(x, y) in &sr.pts {
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{}: {} → {} {}</title></circle>",
            f.sx(x),
            f.sy(y),
            esc(&sr.label),
            human_bytes(x),
            fmt_in(y, unit),
            esc(unit)
        );
    }
}

/// One bar of the rail plot.
struct Bar<'a> {
    /// The node (metric's `node`, else the test's node, else the test's name).
    group: String,
    /// The metric name; with the test (and the suite) where that alone is not unique in the
    /// group.
    label: String,
    suite: &'a str,
    test: &'a str,
    m: &'a Metric,
}

/// The rail plot's bars (metrics with a `rail`), grouped by node in order of first appearance.
fn rail_bars(run: &RunResult) -> Vec<Bar<'_>> {
    let mut bars: Vec<Bar> = Vec::new();
    for s in &run.suites {
        for t in &s.tests {
            for m in t.metrics.iter().filter(|m| m.rail.is_some()) {
                if m.value.is_finite() {
                    let group = m
                        .node
                        .clone()
                        .or_else(|| t.node.clone())
                        .unwrap_or_else(|| t.name.clone());
                    bars.push(Bar {
                        group,
                        label: m.name.clone(),
                        suite: &s.name,
                        test: &t.name,
                        m,
                    });
                }
            }
        }
    }
    let labels: Vec<String> = bars
        .iter()
        .map(|b| {
            let same = |x: &&Bar| x.group == b.group && x.m.name == b.m.name;
            let same_name = bars.iter().filter(same).count() > 1;
            let same_test = bars
                .iter()
                .filter(same)
                .filter(|x| x.test == b.test)
                .count()
                > 1;
            match (same_name, same_test) {
                (_, true) => format!("{} / {} · {}", b.suite, b.test, b.m.name),
                (true, false) => format!("{} · {}", b.test, b.m.name),
                _ => b.m.name.clone(),
            }
        })
        .collect();
    for (b, l) in bars.iter_mut().zip(labels) {
        b.label = l;
    }
    let mut groups: Vec<String> = Vec::new();
    for b in &bars {
        if !groups.contains(&b.group) {
            groups.push(b.group.clone());
        }
    }
    bars.sort_by_key(|b| groups.iter().position(|g| g == &b.group));
    bars
}

const GREEN: &str = "#2da44e";
const RED: &str = "#cf222e";
/// A bar with no threshold: a number, not a verdict.
const NEUTRAL: &str = "#8c959f";

/// Per-rail bandwidth, one bar per rail metric grouped by node. A bar is green or red only
/// against its `threshold` (solid line); a `reference` (a rail's share of the port limit) is a
/// dotted mark and the bar stays neutral: a reference never fails anything.
fn rail_plot(run: &RunResult) -> Option<String> {
    let bars = rail_bars(run);
    if bars.is_empty() {
        return None;
    }
    let unit = bars[0].m.unit.clone();
    let vmax = bars
        .iter()
        .map(|b| {
            b.m.value
                .max(b.m.threshold.or(b.m.reference).unwrap_or(0.0))
        })
        .fold(0f64, f64::max);
    let step = nice_step(if vmax > 0.0 { vmax } else { 1.0 }, 8.0);
    let xtop = ((vmax / step).ceil().max(1.0)) * step;
    let (w, ml, mr, mt) = (1100.0, 380.0, 90.0, 14.0);
    let (row, gap) = (22.0, 10.0);
    let breaks = bars.windows(2).filter(|p| p[0].group != p[1].group).count();
    let ph = bars.len() as f64 * row + breaks as f64 * gap;
    let hgt = mt + ph + 76.0;
    let pw = w - ml - mr;
    let sx = |v: f64| ml + (v / xtop) * pw;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {hgt}\" width=\"100%\" role=\"img\" aria-label=\"RDMA bandwidth per rail\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let mut v = 0.0;
    while v <= xtop + step * 0.01 {
        let px = sx(v);
        let _ = write!(
            s,
            "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{mt}\" y2=\"{}\" stroke=\"#d0d7de\"/><text x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#57606a\">{}</text>",
            mt + ph,
            mt + ph + 16.0,
            fmt_num(v)
        );
        v += step;
    }
    let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    let short = short_labels(&labels, 40);
    let mut y = mt;
    for (i, b) in bars.iter().enumerate() {
        let first_in_group = i == 0 || bars[i - 1].group != b.group;
        if first_in_group && i > 0 {
            y += gap;
        }
        if first_in_group {
            let _ = write!(
                s,
                "<text x=\"8\" y=\"{:.1}\" font-weight=\"bold\" fill=\"#1f2328\">{}</text>",
                y + 15.0,
                esc(&b.group)
            );
        }
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#1f2328\"><title>{}</title>{}</text>",
            ml - 8.0,
            y + 15.0,
            esc(&b.label),
            esc(&short[i])
        );
        rail_bar(&mut s, b, y, row, &sx);
        y += row;
    }
    let _ = write!(
        s,
        "<line x1=\"{ml}\" x2=\"{ml}\" y1=\"{mt}\" y2=\"{}\" stroke=\"#1f2328\"/>",
        mt + ph
    );
    let ly = mt + ph + 40.0;
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{ly}\" text-anchor=\"middle\" fill=\"#1f2328\">bandwidth ({})</text>",
        ml + pw / 2.0,
        esc(&unit)
    );
    rail_legend(&mut s, &bars, ly + 20.0);
    s.push_str("</svg>");
    Some(s)
}

/// A rail's bar, value and marks: coloured by its threshold only.
fn rail_bar(s: &mut String, b: &Bar, y: f64, row: f64, sx: &dyn Fn(f64) -> f64) {
    let m = b.m;
    let (color, class, mark) = match m.threshold {
        Some(th) if m.meets(th) => (GREEN, "bar-pass", ""),
        Some(_) => (RED, "bar-fail", " ✗"),
        None => (NEUTRAL, "bar-none", ""),
    };
    let ml = sx(0.0);
    let bw = (sx(m.value.max(0.0)) - ml).max(0.5);
    let line = match (m.threshold, m.reference) {
        (Some(t), _) => format!(" (threshold {})", fmt_in(t, &m.unit)),
        (None, Some(r)) => format!(" (no threshold; reference {})", fmt_in(r, &m.unit)),
        (None, None) => " (no threshold)".to_string(),
    };
    let _ = write!(
        s,
        "<rect class=\"{class}\" x=\"{ml}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{}\" fill=\"{color}\" rx=\"2\"><title>{} {}: {} {}{line}</title></rect>",
        y + 3.0,
        row - 6.0,
        esc(&b.group),
        esc(&m.name),
        fmt_metric(m),
        esc(&m.unit),
    );
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{}\">{}{mark}</text>",
        ml + bw + 6.0,
        y + 15.0,
        if color == RED { RED } else { "#1f2328" },
        fmt_metric(m),
    );
    if let Some(th) = m.threshold {
        let px = sx(th);
        let _ = write!(
            s,
            "<line class=\"threshold\" x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{y:.1}\" y2=\"{:.1}\" stroke=\"#1f2328\" stroke-width=\"2\"><title>threshold {}</title></line>",
            y + row,
            fmt_in(th, &m.unit)
        );
    } else if let Some(r) = m.reference {
        let px = sx(r);
        let _ = write!(
            s,
            "<line class=\"reference\" x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{y:.1}\" y2=\"{:.1}\" stroke=\"#57606a\" stroke-width=\"2\" stroke-dasharray=\"1 3\"><title>reference {} (informational, not a threshold)</title></line>",
            y + row,
            fmt_in(r, &m.unit)
        );
    }
}

/// The rail plot's legend: only the entries the plot uses.
fn rail_legend(s: &mut String, bars: &[Bar], ly: f64) {
    let has = |f: &dyn Fn(&Metric) -> bool| bars.iter().any(|b| f(b.m));
    let mut items: Vec<String> = Vec::new();
    if has(&|m| m.threshold.is_some_and(|t| m.meets(t))) {
        items.push(format!("<rect width=\"14\" height=\"10\" y=\"-9\" fill=\"{GREEN}\"/><text x=\"18\">meets threshold</text>"));
    }
    if has(&|m| m.threshold.is_some_and(|t| !m.meets(t))) {
        items.push(format!("<rect width=\"14\" height=\"10\" y=\"-9\" fill=\"{RED}\"/><text x=\"18\">below threshold ✗</text>"));
    }
    if has(&|m| m.threshold.is_none()) {
        items.push(format!("<rect width=\"14\" height=\"10\" y=\"-9\" fill=\"{NEUTRAL}\"/><text x=\"18\">no threshold (not judged)</text>"));
    }
    if has(&|m| m.threshold.is_some()) {
        items.push("<line x1=\"6\" x2=\"6\" y1=\"-11\" y2=\"2\" stroke=\"#1f2328\" stroke-width=\"2\"/><text x=\"14\">threshold</text>".to_string());
    }
    if has(&|m| m.threshold.is_none() && m.reference.is_some()) {
        items.push("<line x1=\"6\" x2=\"6\" y1=\"-11\" y2=\"2\" stroke=\"#57606a\" stroke-width=\"2\" stroke-dasharray=\"1 3\"/><text x=\"14\">reference (informational)</text>".to_string());
    }
    let mut x = 8.0;
    for it in items {
        let _ = write!(s, "<g transform=\"translate({x} {ly})\">{it}</g>");
        // About 6.5 px per character of the 12 px font, plus the swatch.
        let text = it.split("\">").last().unwrap_or("").chars().count();
        x += 34.0 + 6.5 * text as f64;
    }
}

#[cfg(test)]
mod tests {
    use crate::run::model::{Metric, RunResult, SuiteResult, TestResult};

    fn run_with(metrics: Vec<Metric>) -> RunResult {
        let t = TestResult {
            metrics,
            ..TestResult::new("t", "s")
        };
        RunResult {
            fabcheck_version: "0".into(),
            started: String::new(),
            duration_ms: 0,
            inventory: None,
            simulation: None,
            replayed: None,
            interrupted: false,
            params: Default::default(),
            suites: vec![SuiteResult {
                name: "s".into(),
                file: String::new(),
                timestamp: String::new(),
                duration_ms: 0,
                tests: vec![t],
            }],
            tool_versions: vec![],
        }
    }

    #[test]
    fn plots_read_fields_not_names() {
        // Named like a busbw point, but without size_bytes: no plot.
        let named_only = run_with(vec![Metric::new("busbw_gbs@1048576", 10.0, "GB/s")]);
        assert!(super::busbw_plot(&named_only).is_none());
        // Any name with size_bytes is a point.
        let mut a = Metric::new("allreduce_a", 10.0, "GB/s");
        a.size_bytes = Some(1 << 20);
        let mut b = Metric::new("allreduce_b", 20.0, "GB/s");
        b.size_bytes = Some(1 << 21);
        assert!(super::busbw_plot(&run_with(vec![a, b])).is_some());
        // Rails: by the `rail` field, grouped by the `node` field.
        assert!(super::rail_plot(&run_with(vec![Metric::new(
            "rdma_write_gbps[x:y]",
            95.0,
            "Gbit/s"
        )]))
        .is_none());
        let mut r = Metric::new("bw", 95.0, "Gbit/s");
        r.rail = Some("rocep1s0f1".into());
        r.node = Some("spark-02".into());
        r.reference = Some(90.0);
        let svg = super::rail_plot(&run_with(vec![r])).unwrap();
        assert!(svg.contains("spark-02"), "{svg}");
        assert_eq!(super::esc("<a&\x1b[31m>"), "&lt;a&amp;&gt;");
    }
}

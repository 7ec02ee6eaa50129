//! The busbw plot: bus bandwidth vs message size (log2 x axis), one line per test, from
//! metrics with `size_bytes` ([`busbw_series`] selects them, [`busbw_plot`] draws them).

use super::super::super::{fmt_in, fmt_num};
use super::super::labels::short_labels;
use super::super::styles::esc;
use super::svg::{self, nice_step, PALETTE};
use crate::run::model::{Metric, RunResult};
use crate::util::fmt::human_bytes;
use std::fmt::Write;

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
pub(super) fn busbw_plot(run: &RunResult) -> Option<String> {
    let (series, unit) = busbw_series(run);
    if series.is_empty() {
        return None;
    }
    let f = Frame::around(&series);
    let legend_rows = (series.len() + 1).div_ceil(3) as f64;
    let hgt = f.mt + f.ph + 60.0 + legend_rows * 20.0 + 6.0;
    let mut s = svg::open(1100.0, hgt, "bus bandwidth vs message size");
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

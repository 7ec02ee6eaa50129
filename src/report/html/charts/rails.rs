//! The rail plot: bandwidth per rail, bars grouped by node, from metrics with `rail`
//! ([`rail_bars`] selects them, [`rail_plot`] draws them).

use super::super::super::{fmt_in, fmt_metric, fmt_num};
use super::super::labels::short_labels;
use super::super::styles::esc;
use super::svg::{self, nice_step};
use crate::run::model::{Metric, RunResult};
use std::fmt::Write;

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
pub(super) fn rail_plot(run: &RunResult) -> Option<String> {
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
    let mut s = svg::open(w, hgt, "RDMA bandwidth per rail");
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

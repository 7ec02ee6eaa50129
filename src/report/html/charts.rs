//! Inline SVG plots, drawn from metric FIELDS (never from names): busbw vs message size from
//! metrics with `size_bytes`, per-rail bandwidth from metrics with `rail` (grouped by `node`).

use super::super::{clean_text, fmt_num};
use super::styles::esc;
use crate::run::model::{Metric, RunResult};
use std::fmt::Write;

/// Pair matrices (`test_pairs` meshes): a node × node heat map per metric and the worst pairs.
pub fn matrices(h: &mut String, run: &RunResult) {
    let ms = crate::report::matrix::matrices(run);
    if ms.is_empty() {
        return;
    }
    h.push_str("<section id=\"matrix\"><h2>Pair matrices</h2>");
    for m in &ms {
        let (lo, hi) = m.range();
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
                    Some(v) => {
                        // 0 = worst, 1 = best of this matrix.
                        let mut q = if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
                        if !m.higher_is_better {
                            q = 1.0 - q;
                        }
                        let hue = (q * 120.0).round();
                        let _ = write!(
                            h,
                            "<td class=\"num\" style=\"background:hsl({hue},70%,80%)\" title=\"{} -> {}\">{}</td>",
                            esc(a),
                            esc(b),
                            esc(&fmt_num(*v))
                        );
                    }
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
                    esc(&fmt_num(*v)),
                    esc(&m.unit)
                )
            })
            .collect();
        let _ = write!(h, "<p>Slowest pairs: {}</p></div>", worst.join(" · "));
    }
    h.push_str("</section>\n");
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

fn human_bytes(b: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    format!("{}{}", fmt_num((v * 10.0).round() / 10.0), units[i])
}

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

fn busbw_plot(run: &RunResult) -> Option<String> {
    // series label → points (size, value); unit of the first point.
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut unit = String::new();
    let multi_suite = run
        .suites
        .iter()
        .filter(|s| {
            s.tests
                .iter()
                .flat_map(|t| &t.metrics)
                .any(|m| m.size_bytes.is_some())
        })
        .count()
        > 1;
    for s in &run.suites {
        for t in &s.tests {
            let mut pts: Vec<(f64, f64)> = t
                .metrics
                .iter()
                .filter_map(|m| {
                    let size = m.size_bytes.filter(|&b| b > 0)?;
                    if !m.value.is_finite() {
                        return None;
                    }
                    if unit.is_empty() {
                        unit = m.unit.clone();
                    }
                    Some((size as f64, m.value))
                })
                .collect();
            if pts.is_empty() {
                continue;
            }
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let label = if multi_suite {
                format!("{} / {}", s.name, t.name)
            } else {
                t.name.clone()
            };
            series.push((label, pts));
        }
    }
    if series.is_empty() {
        return None;
    }
    let all = series.iter().flat_map(|(_, p)| p.iter());
    let (mut xmin, mut xmax, mut ymax) = (f64::INFINITY, 0f64, 0f64);
    for &(x, y) in all {
        xmin = xmin.min(x.log2());
        xmax = xmax.max(x.log2());
        ymax = ymax.max(y);
    }
    let (xmin, xmax) = (xmin.floor(), xmax.ceil().max(xmin.floor() + 1.0));
    let step = nice_step(if ymax > 0.0 { ymax } else { 1.0 }, 6.0);
    let ytop = ((ymax / step).ceil().max(1.0)) * step;
    let (w, ml, mr, mt, mb) = (1100.0, 70.0, 20.0, 20.0, 60.0);
    let legend_rows = series.len().div_ceil(3) as f64;
    let ph = 340.0;
    let hgt = mt + ph + mb + legend_rows * 20.0 + 6.0;
    let pw = w - ml - mr;
    let sx = |x: f64| ml + (x.log2() - xmin) / (xmax - xmin) * pw;
    let sy = |y: f64| mt + ph - (y / ytop) * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {hgt}\" width=\"100%\" role=\"img\" aria-label=\"bus bandwidth vs message size\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    // y grid and labels
    let mut y = 0.0;
    while y <= ytop + step * 0.01 {
        let py = sy(y);
        let _ = write!(
            s,
            "<line x1=\"{ml}\" x2=\"{}\" y1=\"{py:.1}\" y2=\"{py:.1}\" stroke=\"#d0d7de\" stroke-width=\"1\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#57606a\">{}</text>",
            ml + pw,
            ml - 6.0,
            py + 4.0,
            fmt_num(y)
        );
        y += step;
    }
    // x ticks: powers of two, thinned to at most ~14 labels
    let span = (xmax - xmin) as usize;
    let every = span.div_ceil(14).max(1);
    for (i, e) in (xmin as i64..=xmax as i64).enumerate() {
        let px = sx(2f64.powi(e as i32));
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
    // axes
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
        esc(if unit.is_empty() { "GB/s" } else { &unit })
    );
    // series
    for (i, (label, pts)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let p: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
            .collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2.2\" points=\"{}\"/>",
            p.join(" ")
        );
        for &(x, y) in pts {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{}: {} → {} {}</title></circle>",
                sx(x),
                sy(y),
                esc(label),
                human_bytes(x),
                fmt_num(y),
                esc(&unit)
            );
        }
        let lx = ml + (i % 3) as f64 * (pw / 3.0);
        let ly = mt + ph + mb + (i / 3) as f64 * 20.0;
        let mut l = clean_text(label);
        if l.chars().count() > 48 {
            l = l.chars().take(47).collect::<String>() + "…";
        }
        let _ = write!(
            s,
            "<line x1=\"{lx}\" x2=\"{}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"3\"/><text x=\"{}\" y=\"{}\" fill=\"#1f2328\">{}</text>",
            lx + 22.0,
            lx + 28.0,
            ly + 4.0,
            esc(&l)
        );
    }
    s.push_str("</svg>");
    Some(s)
}

fn rail_plot(run: &RunResult) -> Option<String> {
    // (group label = the test's node or else its name, test name, metric)
    let mut found: Vec<(String, &str, &Metric)> = Vec::new();
    for s in &run.suites {
        for t in &s.tests {
            for m in t.metrics.iter().filter(|m| m.rail.is_some()) {
                if m.value.is_finite() {
                    let group = m
                        .node
                        .clone()
                        .or_else(|| t.node.clone())
                        .unwrap_or_else(|| t.name.clone());
                    found.push((group, t.name.as_str(), m));
                }
            }
        }
    }
    // A bar is labelled with the metric name; with the test name too when the same metric
    // name appears more than once for a node (e.g. two RDMA tests on one node).
    let bars: Vec<(String, String, &Metric)> = found
        .iter()
        .map(|(g, t, m)| {
            let dup = found
                .iter()
                .filter(|(g2, _, m2)| g2 == g && m2.name == m.name)
                .count()
                > 1;
            let rail = if dup {
                format!("{t} · {}", m.name)
            } else {
                m.name.clone()
            };
            (g.clone(), rail, *m)
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    // Group bars by node, keeping first-seen order.
    let mut groups: Vec<String> = Vec::new();
    for b in &bars {
        if !groups.contains(&b.0) {
            groups.push(b.0.clone());
        }
    }
    let mut ordered: Vec<&(String, String, &Metric)> = Vec::new();
    for g in &groups {
        ordered.extend(bars.iter().filter(|b| &b.0 == g));
    }
    let unit = ordered[0].2.unit.clone();
    let vmax = ordered
        .iter()
        .map(|b| {
            b.2.value
                .max(b.2.threshold.or(b.2.reference).unwrap_or(0.0))
        })
        .fold(0f64, f64::max);
    let step = nice_step(if vmax > 0.0 { vmax } else { 1.0 }, 8.0);
    let xtop = ((vmax / step).ceil().max(1.0)) * step;
    let (w, ml, mr, mt) = (1100.0, 380.0, 90.0, 14.0);
    let row = 22.0;
    let gap = 10.0;
    let ph = ordered.len() as f64 * row + (groups.len().saturating_sub(1)) as f64 * gap;
    let hgt = mt + ph + 56.0;
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
    let mut y = mt;
    let mut prev_group: Option<&str> = None;
    for (group, rail, m) in &ordered {
        if let Some(p) = prev_group {
            if p != group {
                y += gap;
            }
        }
        let first_in_group = prev_group != Some(group.as_str());
        prev_group = Some(group.as_str());
        let ok = m
            .threshold
            .or(m.reference)
            .map(|th| m.meets(th))
            .unwrap_or(true);
        let color = if ok { "#2da44e" } else { "#cf222e" };
        let mut label = clean_text(rail);
        if label.chars().count() > 40 {
            label = label.chars().take(39).collect::<String>() + "…";
        }
        if first_in_group {
            let _ = write!(
                s,
                "<text x=\"8\" y=\"{:.1}\" font-weight=\"bold\" fill=\"#1f2328\">{}</text>",
                y + 15.0,
                esc(group)
            );
        }
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#1f2328\">{}</text>",
            ml - 8.0,
            y + 15.0,
            esc(&label)
        );
        let bw = (sx(m.value.max(0.0)) - ml).max(0.5);
        let _ = write!(
            s,
            "<rect x=\"{ml}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{}\" fill=\"{color}\" rx=\"2\"><title>{} {}: {} {}{}</title></rect>",
            y + 3.0,
            row - 6.0,
            esc(group),
            esc(&m.name),
            fmt_num(m.value),
            esc(&m.unit),
            m.threshold
                .map(|t| format!(" (threshold {})", fmt_num(t)))
                .unwrap_or_default()
        );
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{}\">{}{}</text>",
            ml + bw + 6.0,
            y + 15.0,
            if ok { "#1f2328" } else { "#cf222e" },
            fmt_num(m.value),
            if ok { "" } else { " ✗" }
        );
        if let Some(th) = m.threshold.or(m.reference) {
            let px = sx(th);
            let _ = write!(
                s,
                "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#1f2328\" stroke-width=\"2\" stroke-dasharray=\"3 2\"><title>threshold {}</title></line>",
                y,
                y + row,
                fmt_num(th)
            );
        }
        y += row;
    }
    let _ = write!(
        s,
        "<line x1=\"{ml}\" x2=\"{ml}\" y1=\"{mt}\" y2=\"{}\" stroke=\"#1f2328\"/>",
        mt + ph
    );
    let ly = mt + ph + 40.0;
    let ths: Vec<f64> = ordered
        .iter()
        .filter_map(|b| b.2.threshold.or(b.2.reference))
        .collect();
    let th_label = match ths.first() {
        Some(&t0) if ths.iter().all(|&t| t == t0) => format!(" = {} {}", fmt_num(t0), esc(&unit)),
        _ => String::new(),
    };
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{ly}\" text-anchor=\"middle\" fill=\"#1f2328\">bandwidth ({})</text>",
        ml + pw / 2.0,
        esc(&unit)
    );
    let _ = write!(
        s,
        "<rect x=\"8\" y=\"{:.1}\" width=\"14\" height=\"10\" fill=\"#2da44e\"/><text x=\"26\" y=\"{ly}\">meets threshold</text>\
         <rect x=\"130\" y=\"{:.1}\" width=\"14\" height=\"10\" fill=\"#cf222e\"/><text x=\"148\" y=\"{ly}\">below threshold</text>\
         <line x1=\"258\" x2=\"258\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#1f2328\" stroke-width=\"2\" stroke-dasharray=\"3 2\"/><text x=\"264\" y=\"{ly}\">threshold{}</text>",
        ly - 9.0,
        ly - 9.0,
        ly - 11.0,
        ly + 2.0,
        th_label
    );
    s.push_str("</svg>");
    Some(s)
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

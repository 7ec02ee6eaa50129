//! HTML report (`--html FILE`): one self-contained file (inline CSS and SVG, no scripts, no
//! network loads) for the engineer who opens it after a maintenance window.
//!
//! Order: SIMULATED banner (if any) · verdict header (PASSED/FAILED, run time, inventory,
//! counts) · failures and errors with message, detail and command output · plots · every test
//! per suite · metrics tables · tool versions.
//!
//! Plots are drawn from metrics that follow two naming conventions (see README "Reports"):
//! - **busbw vs message size**: metrics named `busbw_gbs@<size>` (any name containing `busbw`
//!   followed by `@<size>`; size in bytes, or with a `K`/`M`/`G` suffix = KiB/MiB/GiB). Each
//!   test is one series (a `test_each` test gives one series per node), so two NCCL runs
//!   (2 nodes, 6 nodes) recorded as two tests are two lines.
//! - **per-rail bandwidth**: metrics named `rdma_*_gbps` (optionally `rdma_*_gbps@<rail>`), one
//!   bar per metric, grouped by the test's node, with the metric's `threshold` drawn as a line.

use super::model::{Metric, RunResult, Status, TestResult};
use super::{clean_text, fmt_num};
use std::fmt::Write;

/// HTML-escape text (after removing ANSI sequences and control characters).
pub fn esc(s: &str) -> String {
    let c = clean_text(s);
    let mut o = String::with_capacity(c.len() + 16);
    for ch in c.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(ch),
        }
    }
    o
}

const CSS: &str = r#"
:root{--pass:#1a7f37;--fail:#cf222e;--err:#8250df;--skip:#9a6700;--line:#d0d7de;--muted:#57606a;--bg:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 -apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1200px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:20px;margin:0}
h2{font-size:18px;margin:28px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:18px 0 6px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:8px 10px;overflow:auto;max-height:480px;white-space:pre-wrap;word-break:break-all;margin:6px 0}
.sim{background:repeating-linear-gradient(45deg,#ffd33d,#ffd33d 18px,#ffdf5d 18px,#ffdf5d 36px);color:#3b2300;text-align:center;font-weight:700;font-size:20px;padding:12px;border-bottom:3px solid #9a6700;letter-spacing:.5px}
.sim small{display:block;font-weight:400;font-size:13px}
header{display:flex;gap:24px;align-items:center;flex-wrap:wrap;padding:18px 0 10px;border-bottom:1px solid var(--line)}
.verdict{font-size:34px;font-weight:800;color:#fff;padding:10px 26px;border-radius:8px;letter-spacing:1px}
.verdict.PASSED{background:var(--pass)}.verdict.FAILED{background:var(--fail)}.verdict.INTERRUPTED{background:var(--skip)}
.facts{display:grid;grid-template-columns:auto auto;gap:2px 14px;color:var(--muted)}
.facts b{color:#1f2328;font-weight:600}
.counts{display:flex;gap:8px;flex-wrap:wrap}
.chip{border-radius:16px;padding:3px 12px;font-weight:600;border:1px solid var(--line);background:var(--bg)}
.chip.pass{color:var(--pass)}.chip.failure{color:var(--fail)}.chip.error{color:var(--err)}.chip.skipped{color:var(--skip)}
.badge{display:inline-block;min-width:48px;text-align:center;border-radius:4px;color:#fff;font-weight:700;font-size:11.5px;padding:1px 6px}
.badge.pass{background:var(--pass)}.badge.failure{background:var(--fail)}.badge.error{background:var(--err)}.badge.skipped{background:var(--skip)}
.problem{border:1px solid var(--line);border-left:6px solid var(--fail);border-radius:6px;padding:8px 12px;margin:10px 0;background:#fff}
.problem.error{border-left-color:var(--err)}
.problem .msg{font-weight:600;margin:4px 0;white-space:pre-wrap;word-break:break-word}
.where{color:var(--muted);font-size:12.5px}
details{margin:4px 0}
summary{cursor:pointer;color:#0969da}
table{border-collapse:collapse;width:100%;margin:6px 0 12px}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--bg);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.failure td:first-child{border-left:4px solid var(--fail)}tr.error td:first-child{border-left:4px solid var(--err)}
tr.pass td:first-child{border-left:4px solid var(--pass)}tr.skipped td:first-child{border-left:4px solid var(--skip)}
.bad{color:var(--fail);font-weight:600}.good{color:var(--pass)}
.plot{border:1px solid var(--line);border-radius:6px;padding:8px;margin:8px 0 16px;background:#fff}
.muted{color:var(--muted)}
footer{margin-top:32px;color:var(--muted);font-size:12px}
"#;

fn status_class(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Failure => "failure",
        Status::Error => "error",
        Status::Skipped => "skipped",
    }
}

fn badge(s: Status) -> String {
    format!(
        "<span class=\"badge {}\">{}</span>",
        status_class(s),
        s.label()
    )
}

fn ms(d: u64) -> String {
    if d >= 60_000 {
        format!("{}m{:02}s", d / 60_000, (d % 60_000) / 1000)
    } else {
        format!("{:.1}s", d as f64 / 1000.0)
    }
}

/// Output and command log of a test (collapsible).
fn test_body(t: &TestResult, open: bool) -> String {
    let mut s = String::new();
    let o = if open { " open" } else { "" };
    if let Some(d) = t.detail.as_deref().filter(|d| !d.trim().is_empty()) {
        let _ = write!(
            s,
            "<details{o}><summary>detail</summary><pre>{}</pre></details>",
            esc(d)
        );
    }
    for w in &t.warnings {
        let _ = write!(s, "<div class=\"where\">warning: {}</div>", esc(w));
    }
    if t.attempts.len() > 1 {
        let mut a = String::new();
        for (i, at) in t.attempts.iter().enumerate() {
            let _ = writeln!(
                a,
                "attempt {}: {} ({}) {}",
                i + 1,
                at.status.label(),
                ms(at.duration_ms),
                at.message.as_deref().unwrap_or("")
            );
        }
        let _ = write!(
            s,
            "<details><summary>{} attempts</summary><pre>{}</pre></details>",
            t.attempts.len(),
            esc(&a)
        );
    }
    if !t.output.trim().is_empty() {
        let _ = write!(
            s,
            "<details><summary>output</summary><pre>{}</pre></details>",
            esc(&t.output)
        );
    }
    if !t.commands.is_empty() {
        let mut c = String::new();
        for cmd in &t.commands {
            let _ = write!(
                c,
                "<div class=\"mono\"><b>{}$ {}</b> <span class=\"muted\">(exit {}, {} ms)</span></div>",
                esc(&cmd.node),
                esc(&cmd.command),
                cmd.exit_code
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "-".into()),
                cmd.duration_ms
            );
            if let Some(e) = &cmd.error {
                let _ = write!(c, "<div class=\"bad\">{}</div>", esc(e));
            }
            if !cmd.stdout.is_empty() {
                let _ = write!(c, "<pre>{}</pre>", esc(&cmd.stdout));
            }
            if !cmd.stderr.is_empty() {
                let _ = write!(c, "<pre class=\"bad\">{}</pre>", esc(&cmd.stderr));
            }
        }
        let _ = write!(
            s,
            "<details><summary>{} command{}</summary>{c}</details>",
            t.commands.len(),
            if t.commands.len() == 1 { "" } else { "s" }
        );
    }
    s
}

fn where_(t: &TestResult) -> String {
    let mut w = String::new();
    if let Some(n) = &t.node {
        let _ = write!(w, "node {} · ", esc(n));
    }
    match t.line {
        Some(l) => {
            let _ = write!(w, "{}:{l}", esc(&t.file));
        }
        None => w.push_str(&esc(&t.file)),
    }
    let _ = write!(w, " · {}", ms(t.duration_ms));
    w
}

pub fn render(run: &RunResult) -> String {
    let c = run.counts();
    let verdict = if run.interrupted {
        "INTERRUPTED"
    } else if c.failure + c.error > 0 {
        "FAILED"
    } else {
        "PASSED"
    };
    let mut h = String::new();
    let title = format!(
        "fabcheck {verdict}{} — {}",
        if run.simulation.is_some() {
            " (SIMULATED)"
        } else {
            ""
        },
        run.started
    );
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{CSS}</style></head><body>\n",
        esc(&title)
    );
    if let Some(sim) = &run.simulation {
        let _ = writeln!(
            h,
            "<div class=\"sim\" id=\"simulation\">SIMULATED cluster: {}\
             <small>These results come from recorded transcripts, not from real nodes.</small></div>",
            esc(sim)
        );
    }
    h.push_str("<main>\n<header>");
    let _ = write!(h, "<div class=\"verdict {verdict}\">{verdict}</div>");
    h.push_str("<div><h1>fabcheck report</h1><div class=\"facts\">");
    let mut fact = |k: &str, v: String| {
        let _ = write!(h, "<span>{k}</span><b>{v}</b>");
    };
    fact("started", esc(&run.started));
    fact("duration", ms(run.duration_ms));
    fact(
        "inventory",
        run.inventory
            .as_deref()
            .map(esc)
            .unwrap_or_else(|| "(none: localhost)".into()),
    );
    if let Some(sim) = &run.simulation {
        fact("simulation", esc(sim));
    }
    if !run.params.is_empty() {
        let p: Vec<String> = run.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        fact("parameters", esc(&p.join(" ")));
    }
    fact("fabcheck", esc(&run.fabcheck_version));
    h.push_str("</div></div><div class=\"counts\">");
    let _ = write!(h, "<span class=\"chip\">{} tests</span>", c.total());
    for (n, cls, label) in [
        (c.pass, "pass", "passed"),
        (c.failure, "failure", "failed"),
        (c.error, "error", "errors"),
        (c.skipped, "skipped", "skipped"),
    ] {
        let _ = write!(h, "<span class=\"chip {cls}\">{n} {label}</span>");
    }
    h.push_str("</div></header>\n");
    if run.interrupted {
        h.push_str("<p class=\"bad\">The run was interrupted: these are partial results.</p>");
    }

    // Failures and errors first.
    let problems: Vec<(&str, &TestResult)> = run
        .suites
        .iter()
        .flat_map(|s| s.tests.iter().map(move |t| (s.name.as_str(), t)))
        .filter(|(_, t)| matches!(t.status, Status::Failure | Status::Error))
        .collect();
    if !problems.is_empty() {
        let _ = write!(
            h,
            "<section id=\"problems\"><h2>Failures and errors ({})</h2>",
            problems.len()
        );
        for (suite, t) in &problems {
            let _ = writeln!(
                h,
                "<div class=\"problem {}\">{} <b>{}</b> <span class=\"muted\">/ {}</span>\
                 <div class=\"msg\">{}</div><div class=\"where\">{}</div>{}</div>",
                status_class(t.status),
                badge(t.status),
                esc(&t.name),
                esc(suite),
                esc(t.message.as_deref().unwrap_or("(no message)")),
                where_(t),
                test_body(t, false)
            );
        }
        h.push_str("</section>\n");
    }

    // Plots.
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

    // Every test, per suite.
    h.push_str("<section id=\"tests\"><h2>All tests</h2>");
    for s in &run.suites {
        let sc = {
            let mut k = super::model::Counts::default();
            for t in &s.tests {
                match t.status {
                    Status::Pass => k.pass += 1,
                    Status::Failure => k.failure += 1,
                    Status::Error => k.error += 1,
                    Status::Skipped => k.skipped += 1,
                }
            }
            k
        };
        let _ = write!(
            h,
            "<h3>{} <span class=\"muted\">— {} · {} tests: {} passed, {} failed, {} errors, {} skipped · {}</span></h3>",
            esc(&s.name),
            esc(&s.file),
            sc.total(),
            sc.pass,
            sc.failure,
            sc.error,
            sc.skipped,
            ms(s.duration_ms)
        );
        h.push_str("<table><tr><th>status</th><th>test</th><th>node</th><th class=\"num\">time</th><th>message / metrics / output</th></tr>");
        for t in &s.tests {
            let metrics: Vec<String> = t
                .metrics
                .iter()
                .map(|m| {
                    format!(
                        "<span class=\"mono\">{} = {} {}</span>",
                        esc(&m.name),
                        esc(&fmt_num(m.value)),
                        esc(&m.unit)
                    )
                })
                .collect();
            let metrics = if metrics.len() > 4 {
                format!(
                    "<details><summary>{} metrics</summary>{}</details>",
                    metrics.len(),
                    metrics.join("<br>")
                )
            } else {
                metrics.join("<br>")
            };
            let msg = t
                .message
                .as_deref()
                .map(|m| format!("<div>{}</div>", esc(m)))
                .unwrap_or_default();
            let _ = write!(
                h,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{msg}{}{}</td></tr>",
                status_class(t.status),
                badge(t.status),
                esc(&t.name),
                t.node.as_deref().map(esc).unwrap_or_default(),
                ms(t.duration_ms),
                metrics,
                test_body(t, false)
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str("</section>\n");

    // Metrics tables.
    let any_metrics = run
        .suites
        .iter()
        .flat_map(|s| &s.tests)
        .any(|t| !t.metrics.is_empty());
    if any_metrics {
        h.push_str("<section id=\"metrics\"><h2>Metrics</h2>");
        for s in &run.suites {
            if s.tests.iter().all(|t| t.metrics.is_empty()) {
                continue;
            }
            let _ = write!(h, "<h3>{}</h3>", esc(&s.name));
            h.push_str("<table><tr><th>test</th><th>node</th><th>metric</th><th class=\"num\">value</th><th>unit</th><th class=\"num\">threshold</th><th>better</th></tr>");
            for t in &s.tests {
                for m in &t.metrics {
                    let (th, cls) = match m.threshold {
                        Some(th) => (fmt_num(th), if meets(m, th) { "good" } else { "bad" }),
                        None => (String::new(), ""),
                    };
                    let _ = write!(
                        h,
                        "<tr><td>{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"num {cls}\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"muted\">{}</td></tr>",
                        esc(&t.name),
                        t.node.as_deref().map(esc).unwrap_or_default(),
                        esc(&m.name),
                        esc(&fmt_num(m.value)),
                        esc(&m.unit),
                        esc(&th),
                        if m.higher_is_better { "higher" } else { "lower" }
                    );
                }
            }
            h.push_str("</table>");
        }
        h.push_str("</section>\n");
    }

    if !run.tool_versions.is_empty() {
        h.push_str("<section id=\"tools\"><h2>Tool versions</h2><table><tr><th>node</th><th>tool</th><th>version</th></tr>");
        for v in &run.tool_versions {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"mono\">{}</td></tr>",
                esc(&v.node),
                esc(&v.tool),
                esc(&v.version)
            );
        }
        h.push_str("</table></section>\n");
    }
    let _ = write!(
        h,
        "<footer>Generated by fabcheck {} · started {}{}</footer>\n</main></body></html>\n",
        esc(&run.fabcheck_version),
        esc(&run.started),
        if run.simulation.is_some() {
            " · SIMULATED cluster"
        } else {
            ""
        }
    );
    h
}

fn meets(m: &Metric, th: f64) -> bool {
    if m.higher_is_better {
        m.value >= th
    } else {
        m.value <= th
    }
}

// ---------------------------------------------------------------- plots

const PALETTE: [&str; 10] = [
    "#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83", "#bf3989", "#4d2d00",
    "#6e7781", "#9a6700",
];

/// `busbw_gbs@1048576`, `busbw@8M` → size in bytes.
pub fn busbw_size(name: &str) -> Option<u64> {
    let (base, size) = name.rsplit_once('@')?;
    if !base.contains("busbw") {
        return None;
    }
    let size = size.trim();
    let (digits, mult) = match size.chars().last()? {
        'K' | 'k' => (&size[..size.len() - 1], 1u64 << 10),
        'M' | 'm' => (&size[..size.len() - 1], 1 << 20),
        'G' | 'g' => (&size[..size.len() - 1], 1 << 30),
        _ => (size, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .map(|d| d * mult)
        .filter(|&b| b > 0)
}

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
                .any(|m| busbw_size(&m.name).is_some())
        })
        .count()
        > 1;
    for s in &run.suites {
        for t in &s.tests {
            let mut pts: Vec<(f64, f64)> = t
                .metrics
                .iter()
                .filter_map(|m| {
                    let size = busbw_size(&m.name)?;
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

/// `rdma_write_gbps`, `rdma_write_rocep1s0f1_gbps`, `rdma_write_gbps@rocep1s0f1`, and the
/// stdlib's `rdma_write_gbps[<node>:<rail>]`.
pub fn is_rail_metric(name: &str) -> bool {
    let base = name.split(['@', '[']).next().unwrap_or(name);
    base.starts_with("rdma_") && base.ends_with("_gbps")
}

/// The node named in a `metric[<node>:<rail>]` name, if any.
fn bracket_node(name: &str) -> Option<String> {
    let inner = name.split_once('[')?.1.strip_suffix(']')?;
    inner.split_once(':').map(|(n, _)| n.to_string())
}

fn rail_plot(run: &RunResult) -> Option<String> {
    // (group label = the test's node or else its name, test name, metric)
    let mut found: Vec<(String, &str, &Metric)> = Vec::new();
    for s in &run.suites {
        for t in &s.tests {
            for m in t.metrics.iter().filter(|m| is_rail_metric(&m.name)) {
                if m.value.is_finite() {
                    let group = bracket_node(&m.name)
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
        .map(|b| b.2.value.max(b.2.threshold.unwrap_or(0.0)))
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
        let ok = m.threshold.map(|th| meets(m, th)).unwrap_or(true);
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
        if let Some(th) = m.threshold {
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
    let ths: Vec<f64> = ordered.iter().filter_map(|b| b.2.threshold).collect();
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
    #[test]
    fn naming_conventions() {
        assert_eq!(super::busbw_size("busbw_gbs@1048576"), Some(1 << 20));
        assert_eq!(super::busbw_size("busbw@8M"), Some(8 << 20));
        assert_eq!(super::busbw_size("algbw_gbs@8"), None);
        assert!(super::is_rail_metric("rdma_write_gbps"));
        assert!(super::is_rail_metric("rdma_write_gbps@rocep1s0f1"));
        assert!(super::is_rail_metric(
            "rdma_write_gbps[spark-02:rocep1s0f1]"
        ));
        assert_eq!(
            super::bracket_node("rdma_write_gbps[spark-02:rocep1s0f1]").as_deref(),
            Some("spark-02")
        );
        assert!(!super::is_rail_metric("iperf_gbps"));
        assert_eq!(super::esc("<a&\x1b[31m>"), "&lt;a&amp;&gt;");
    }
}

//! The tables: every test per suite, metrics per suite, tool versions; a test's collapsible
//! output.

use super::super::{fmt_in, fmt_metric};
use super::styles::{esc, ms, status_class, test_badge};
use crate::run::model::{RunResult, Status, TestResult};
use std::fmt::Write;

/// Any one text block of the page (head + tail): 30 MB of stderr must not make a 120 MB page.
const BLOCK_CAP: usize = 64 * 1024;
/// A passing test's command output in the page: none (its commands and outcomes are listed;
/// stderr, which a passing command rarely has, is kept at BLOCK_CAP).
const PASSING_CAP: usize = 0;

fn capped(s: &str) -> String {
    crate::run::model::cap(s, BLOCK_CAP)
}

/// Output and command log of a test (collapsible).
pub(super) fn test_body(t: &TestResult, open: bool) -> String {
    let mut s = String::new();
    let o = if open { " open" } else { "" };
    if let Some(d) = t.detail.as_deref().filter(|d| !d.trim().is_empty()) {
        let _ = write!(
            s,
            "<details{o}><summary>detail</summary><pre>{}</pre></details>",
            esc(&capped(d))
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
                "attempt {}: {} ({}) {}{}",
                i + 1,
                at.status.label(),
                ms(at.duration_ms),
                at.message.as_deref().unwrap_or(""),
                if at.readings.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", at.readings.join(", "))
                }
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
            esc(&capped(&t.output))
        );
    }
    if !t.commands.is_empty() {
        // A passing test's command output is left to result.json and --record: a rack's
        // thousands of passing pair tests must not make a page of tens of MB (8 nodes x 8 rails
        // was 44 MB).
        let cap = if matches!(t.status, Status::Pass | Status::Skipped) {
            PASSING_CAP
        } else {
            BLOCK_CAP
        };
        let capped = |s: &str| crate::run::model::cap(s, cap);
        let mut c = String::new();
        for cmd in &t.commands {
            let _ = write!(
                c,
                "<div class=\"mono\"><b>{}$ {}</b> <span class=\"muted\">({})</span></div>",
                esc(&cmd.node),
                esc(&cmd.command),
                esc(&cmd.outcome())
            );
            if let Some(e) = &cmd.error {
                let _ = write!(c, "<div class=\"bad\">{}</div>", esc(e));
            }
            if !cmd.stdout.is_empty() && cap > 0 {
                let _ = write!(c, "<pre>{}</pre>", esc(&capped(&cmd.stdout)));
            }
            if !cmd.stderr.is_empty() {
                let _ = write!(
                    c,
                    "<pre class=\"bad\">{}</pre>",
                    esc(&crate::run::model::cap(&cmd.stderr, BLOCK_CAP))
                );
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

pub(super) fn where_(t: &TestResult) -> String {
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

/// Every test, per suite.
pub(super) fn all_tests(h: &mut String, run: &RunResult) {
    h.push_str("<section id=\"tests\"><h2>All tests</h2>");
    for s in &run.suites {
        let sc = {
            let mut k = crate::run::model::Counts::default();
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
            *h,
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
                        esc(&fmt_metric(m)),
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
                .map(|m| format!("<div>{}</div>", esc(&capped(m))))
                .unwrap_or_default();
            let _ = write!(
                *h,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{msg}{}{}</td></tr>",
                if t.flaky { "flaky" } else { status_class(t.status) },
                test_badge(t),
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
}

/// Metrics per suite, with threshold / reference and which direction is better.
pub(super) fn metrics(h: &mut String, run: &RunResult) {
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
            let _ = write!(*h, "<h3>{}</h3>", esc(&s.name));
            h.push_str("<table><tr><th>test</th><th>node</th><th>metric</th><th class=\"num\">value</th><th>unit</th><th class=\"num\">threshold</th><th>better</th></tr>");
            for t in &s.tests {
                for m in &t.metrics {
                    let (th, cls) = match (m.threshold, m.reference) {
                        (Some(th), _) => (
                            fmt_in(th, &m.unit),
                            if m.meets(th) { "good" } else { "bad" },
                        ),
                        (None, Some(r)) => (format!("reference {}", fmt_in(r, &m.unit)), ""),
                        (None, None) => (String::new(), ""),
                    };
                    let _ = write!(
                        *h,
                        "<tr><td>{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"num {cls}\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"muted\">{}</td></tr>",
                        esc(&t.name),
                        t.node.as_deref().map(esc).unwrap_or_default(),
                        esc(&m.name),
                        esc(&fmt_metric(m)),
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
}

/// Which platform profile each node got, why, and where each expectation came from.
pub(super) fn profiles(h: &mut String, run: &RunResult) {
    if run.profiles.is_empty() {
        return;
    }
    h.push_str("<section id=\"profiles\"><h2>Platform profiles</h2><table><tr><th>node</th><th>profile</th><th>why</th><th>expectations (where from)</th></tr>");
    for p in &run.profiles {
        let ex: Vec<String> = p
            .expectations
            .iter()
            .map(|e| format!("{} = {} ({})", esc(&e.key), esc(&e.value), esc(&e.from)))
            .collect();
        let _ = write!(
            *h,
            "<tr><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.node),
            esc(&p.profile.name),
            if p.profile.known {
                ""
            } else {
                " (platform unknown)"
            },
            esc(&p.profile.reason),
            ex.join("<br>")
        );
    }
    h.push_str("</table></section>\n");
}

pub(super) fn tool_versions(h: &mut String, run: &RunResult) {
    if !run.tool_versions.is_empty() {
        h.push_str("<section id=\"tools\"><h2>Tool versions</h2><table><tr><th>node</th><th>tool</th><th>version</th></tr>");
        for v in &run.tool_versions {
            let odd = v.differs;
            let _ = write!(
                *h,
                "<tr><td>{}</td><td>{}</td><td class=\"mono{}\">{}{}</td></tr>",
                esc(&v.node),
                esc(&v.tool),
                if odd { " bad" } else { "" },
                esc(&v.version),
                if odd { " (differs)" } else { "" }
            );
        }
        h.push_str("</table></section>\n");
    }
}

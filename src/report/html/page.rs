//! The page around the sections: head, SIMULATED banner, verdict header with the run's facts
//! and counts, failures and errors first, footer.

use super::styles::{badge, esc, ms, status_class, CSS};
use super::tables::{test_body, where_};
use crate::run::model::{RunResult, Status, TestResult};
use std::fmt::Write;

/// `<!DOCTYPE …>` through the verdict header.
pub(super) fn header(h: &mut String, run: &RunResult) {
    let c = run.counts();
    // Nothing passed and nothing failed (every test skipped, or none): not a green PASSED.
    let (verdict, class) = if run.interrupted {
        ("INTERRUPTED", "INTERRUPTED")
    } else if c.failure + c.error > 0 {
        ("FAILED", "FAILED")
    } else if c.pass == 0 {
        ("NOTHING CHECKED", "NOTHING")
    } else {
        ("PASSED", "PASSED")
    };
    let title = format!("fabcheck {verdict}{} — {}", origin_tag(run), run.started);
    let _ = write!(
        *h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{CSS}</style></head><body>\n",
        esc(&title)
    );
    if let Some(sim) = &run.simulation {
        let _ = writeln!(
            *h,
            "<div class=\"sim\" id=\"simulation\">SIMULATED cluster: {}\
             <small>These results come from recorded transcripts, not from real nodes.</small></div>",
            esc(sim)
        );
    } else if let Some(r) = &run.replayed {
        let _ = writeln!(
            *h,
            "<div class=\"sim\" id=\"replayed\">REPLAYED run: answers from {}\
             <small>No node was contacted: these results show what the transcripts recorded, not the cluster now.</small></div>",
            esc(r)
        );
    }
    h.push_str("<main>\n<header>");
    let _ = write!(*h, "<div class=\"verdict {class}\">{verdict}</div>");
    h.push_str("<div><h1>fabcheck report</h1><div class=\"facts\">");
    let mut fact = |k: &str, v: String| {
        let _ = write!(*h, "<span>{k}</span><b>{v}</b>");
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
    if let Some(r) = &run.replayed {
        fact("replayed", esc(r));
    }
    if !run.params.is_empty() {
        let p: Vec<String> = run.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        fact("parameters", esc(&p.join(" ")));
    }
    fact("fabcheck", esc(&run.fabcheck_version));
    h.push_str("</div></div><div class=\"counts\">");
    let _ = write!(*h, "<span class=\"chip\">{} tests</span>", c.total());
    for (n, cls, label) in [
        (c.pass, "pass", "passed"),
        (c.failure, "failure", "failed"),
        (c.error, "error", "errors"),
        (c.skipped, "skipped", "skipped"),
    ] {
        let _ = write!(*h, "<span class=\"chip {cls}\">{n} {label}</span>");
    }
    if c.flaky > 0 {
        let _ = write!(*h, "<span class=\"chip skipped\">{} flaky</span>", c.flaky);
    }
    h.push_str("</div></header>\n");
    if run.interrupted {
        h.push_str("<p class=\"bad\">The run was interrupted: these are partial results.</p>");
    }
    for l in &run.not_cleaned_up {
        let _ = write!(*h, "<p class=\"bad\">NOT CLEANED UP {}</p>", esc(&l.line()));
    }
}

/// The nodes never reached, and why: before the failures (each of their testcases says only
/// "not reached").
pub(super) fn unreachable(h: &mut String, run: &RunResult) {
    if run.unreachable.is_empty() {
        return;
    }
    let _ = write!(
        *h,
        "<section id=\"unreachable\"><h2>Unreachable nodes ({})</h2>\
         <p class=\"muted\">Every testcase that needed one of these nodes is an error.</p><ul>",
        run.unreachable.len()
    );
    for u in &run.unreachable {
        let _ = write!(*h, "<li><b>{}</b>: {}</li>", esc(&u.node), esc(&u.reason));
    }
    h.push_str("</ul></section>\n");
}

/// Failures and errors, each with message, place and output.
/// The diagnosis, first: per probable cause, the part, the results it explains, what next.
pub(super) fn diagnosis(h: &mut String, run: &RunResult) {
    if run.diagnosis.is_empty() {
        return;
    }
    let _ = write!(
        *h,
        "<section id=\"diagnosis\"><h2>Diagnosis ({} probable cause(s))</h2><ol>",
        run.diagnosis.len()
    );
    for d in &run.diagnosis {
        let next: String = d
            .next
            .iter()
            .map(|n| format!("<li><code>{}</code></li>", esc(n)))
            .collect();
        let _ = writeln!(
            *h,
            "<li class=\"diagnosis\" data-rule=\"{}\"><b>{}</b><div>part: {}</div>\
             <div class=\"muted\">explains: {}</div><div>next:<ul>{next}</ul></div></li>",
            esc(&d.rule),
            esc(&d.cause),
            esc(&d.part),
            esc(&d.evidence.join("; "))
        );
    }
    h.push_str("</ol></section>\n");
}

pub(super) fn problems(h: &mut String, run: &RunResult) {
    let problems: Vec<(&str, &TestResult)> = run
        .suites
        .iter()
        .flat_map(|s| s.tests.iter().map(move |t| (s.name.as_str(), t)))
        .filter(|(_, t)| matches!(t.status, Status::Failure | Status::Error))
        .collect();
    if !problems.is_empty() {
        let _ = write!(
            *h,
            "<section id=\"problems\"><h2>Failures and errors ({})</h2>",
            problems.len()
        );
        for (suite, t) in &problems {
            let _ = writeln!(
                *h,
                "<div class=\"problem {}\">{} <b>{}</b> <span class=\"muted\">/ {}</span>\
                 <div class=\"msg\">{}</div><div class=\"where\">{}</div>{}</div>",
                status_class(t.status),
                badge(t.status),
                esc(&t.name),
                esc(suite),
                esc(&crate::run::model::cap(
                    t.message.as_deref().unwrap_or("(no message)"),
                    4096
                )),
                where_(t),
                test_body(t, false)
            );
        }
        h.push_str("</section>\n");
    }
}

pub(super) fn footer(h: &mut String, run: &RunResult) {
    let _ = write!(
        *h,
        "<footer>Generated by fabcheck {} · started {}{}</footer>\n</main></body></html>\n",
        esc(&run.fabcheck_version),
        esc(&run.started),
        origin_tag(run)
    );
}

/// ` (SIMULATED)` / ` (REPLAYED)` after the verdict in the title and footer; empty for a live
/// run. A simulated cluster is replayed too: SIMULATED says more.
fn origin_tag(run: &RunResult) -> &'static str {
    if run.simulation.is_some() {
        " (SIMULATED)"
    } else if run.replayed.is_some() {
        " (REPLAYED)"
    } else {
        ""
    }
}

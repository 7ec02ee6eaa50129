//! JUnit XML through quick-junit: one `testsuite` per script, `failure` for assertions,
//! `error` for infrastructure, `skipped` with the reason; metrics as testsuite properties
//! `<test name>/<metric>`; commands and capped output in `system-out`. Valid against Jenkins'
//! xunit schema (no testsuites uuid/timestamp; no flaky elements: attempts go to system-out).

use super::{clean_text, one_line};
use crate::run::model::{RunResult, Status, TestResult};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// Most of a failure's detail kept in the testcase body (head + tail).
pub(crate) const DETAIL_CAP: usize = crate::run::model::MESSAGE_CAP;

fn system_out(t: &TestResult, run: &RunResult) -> String {
    let mut s = String::new();
    if let Some(sim) = &run.simulation {
        s.push_str(&format!("SIMULATED CLUSTER: {sim}\n"));
    }
    if let Some(r) = &run.replayed {
        s.push_str(&format!(
            "REPLAYED: answers from {r}; no node was contacted\n"
        ));
    }
    if !run.unreachable.is_empty() {
        let nodes: Vec<String> = run
            .unreachable
            .iter()
            .map(|u| format!("{} ({})", u.node, one_line(&u.reason)))
            .collect();
        s.push_str(&format!("UNREACHABLE NODES: {}\n", nodes.join("; ")));
    }
    if let Some(l) = t.line {
        s.push_str(&format!("test at {}:{l}\n", t.file));
    }
    for w in &t.warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    for m in &t.metrics {
        s.push_str(&format!(
            "metric {} = {} {}\n",
            m.name,
            super::fmt_metric(m),
            m.unit
        ));
    }
    if !t.output.is_empty() {
        s.push_str("--- output\n");
        s.push_str(&t.output);
        if !t.output.ends_with('\n') {
            s.push('\n');
        }
    }
    for c in &t.commands {
        s.push_str(&format!(
            "--- {}$ {}  ({})\n",
            c.node,
            c.command,
            c.outcome()
        ));
        if let Some(e) = &c.error {
            s.push_str(&format!("error: {e}\n"));
        }
        if !c.stdout.is_empty() {
            s.push_str(&c.stdout);
            if !c.stdout.ends_with('\n') {
                s.push('\n');
            }
        }
        if !c.stderr.is_empty() {
            s.push_str("[stderr]\n");
            s.push_str(&c.stderr);
            if !c.stderr.ends_with('\n') {
                s.push('\n');
            }
        }
    }
    clean_text(&crate::run::model::cap(&s, 256 * 1024))
}

fn case(t: &TestResult, run: &RunResult) -> TestCase {
    let mut status = match t.status {
        Status::Pass => TestCaseStatus::success(),
        Status::Failure => TestCaseStatus::non_success(NonSuccessKind::Failure),
        Status::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
        Status::Skipped => TestCaseStatus::skipped(),
    };
    if t.status != Status::Pass {
        if let Some(m) = &t.message {
            status.set_message(one_line(m));
        }
        let mut body = t.message.clone().unwrap_or_default();
        if let Some(d) = &t.detail {
            body.push('\n');
            body.push_str(d);
        }
        if t.attempts.len() > 1 {
            for (i, a) in t.attempts.iter().enumerate() {
                body.push_str(&format!(
                    "\nattempt {}: {} {}",
                    i + 1,
                    a.status.label(),
                    a.message.clone().unwrap_or_default()
                ));
                if !a.readings.is_empty() {
                    body.push_str(&format!(" [{}]", a.readings.join(", ")));
                }
            }
        }
        if t.status != Status::Skipped {
            status.set_type(match t.status {
                Status::Failure => "assertion",
                _ => "infrastructure",
            });
            // The body is capped too: 30 MB of stderr must not become a 60 MB report.
            status.set_description(clean_text(&crate::run::model::cap(&body, DETAIL_CAP)));
        }
    }
    let mut c = TestCase::new(clean_text(&t.name), status);
    c.set_classname(clean_text(&t.classname));
    c.set_time(Duration::from_millis(t.duration_ms));
    c.extra.insert("file".into(), t.file.clone().into());
    if let Some(l) = t.line {
        c.extra.insert("line".into(), l.to_string().into());
    }
    c.set_system_out(system_out(t, run));
    c
}

/// The run's diagnosis, first, as a `diagnosis` suite: one passing `diagnosis` testcase whose
/// system-out lists every probable cause, most specific first, and per cause the properties
/// `diagnosis.N.{rule,cause,part,evidence,next}` (Jenkins and GitLab show both). It passes
/// even when there are reds (issue 50): the reds are the run's testcases, each counted once, so
/// JUnit's failure count is the console's; the diagnosis explains them, it is not one more.
fn diagnosis_suite(run: &RunResult) -> Option<TestSuite> {
    run.diagnosis.first()?;
    let mut suite = TestSuite::new("diagnosis");
    for (i, d) in run.diagnosis.iter().enumerate() {
        let n = i + 1;
        for (k, v) in [
            ("rule", d.rule.clone()),
            ("cause", d.cause.clone()),
            ("part", d.part.clone()),
            ("evidence", d.evidence.join("; ")),
            ("next", d.next.join("; ")),
        ] {
            suite.add_property(Property::new(format!("diagnosis.{n}.{k}"), clean_text(&v)));
        }
    }
    let mut c = TestCase::new("diagnosis", TestCaseStatus::success());
    c.set_system_out(clean_text(&super::diagnosis_text(run)));
    c.set_classname("diagnosis");
    suite.add_test_case(c);
    Some(suite)
}

pub(crate) fn render(run: &RunResult) -> String {
    let mut report = Report::new(if run.simulation.is_some() {
        "fabcheck (SIMULATED cluster)"
    } else if run.replayed.is_some() {
        "fabcheck (REPLAYED from transcripts)"
    } else {
        "fabcheck"
    });
    report.set_time(Duration::from_millis(run.duration_ms));
    if let Some(suite) = diagnosis_suite(run) {
        report.add_test_suite(suite);
    }
    for s in &run.suites {
        let mut suite = TestSuite::new(clean_text(&s.name));
        if let Ok(ts) = chrono::DateTime::parse_from_rfc3339(&s.timestamp) {
            suite.set_timestamp(ts);
        }
        suite.set_time(Duration::from_millis(s.duration_ms));
        suite.extra.insert("file".into(), s.file.clone().into());
        // quick-junit counts skips as `disabled`; GitLab and most readers look for `skipped`.
        let skipped = s
            .tests
            .iter()
            .filter(|t| t.status == Status::Skipped)
            .count();
        suite
            .extra
            .insert("skipped".into(), skipped.to_string().into());
        if let Some(sim) = &run.simulation {
            suite.add_property(Property::new("simulation", clean_text(sim)));
        }
        if let Some(r) = &run.replayed {
            suite.add_property(Property::new("replayed", clean_text(r)));
        }
        if run.interrupted {
            suite.add_property(Property::new("interrupted", "true"));
        }
        for l in &run.not_cleaned_up {
            suite.add_property(Property::new(
                clean_text(&format!("not_cleaned_up/{}", l.node)),
                clean_text(&l.line()),
            ));
        }
        for p in &run.profiles {
            suite.add_property(Property::new(
                clean_text(&format!("profile[{}]", p.node)),
                clean_text(&format!("{}: {}", p.profile.name, p.profile.reason)),
            ));
            for e in &p.expectations {
                suite.add_property(Property::new(
                    clean_text(&format!("expect[{}:{}]", p.node, e.key)),
                    clean_text(&format!("{} ({})", e.value, e.from)),
                ));
            }
        }
        for t in &s.tests {
            for m in &t.metrics {
                suite.add_property(Property::new(
                    clean_text(&format!("{}/{}", t.name, m.name)),
                    super::fmt_metric(m),
                ));
            }
        }
        for t in &s.tests {
            suite.add_test_case(case(t, run));
        }
        report.add_test_suite(suite);
    }
    report.to_string().unwrap_or_else(|e| {
        // quick-junit only fails on I/O; keep the file well-formed whatever happens.
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"fabcheck\"><testsuite name=\"fabcheck\" tests=\"1\" errors=\"1\"><testcase name=\"report\"><error message=\"{}\"/></testcase></testsuite></testsuites>\n", one_line(&e.to_string()).replace(['"', '<', '>', '&'], "_"))
    })
}

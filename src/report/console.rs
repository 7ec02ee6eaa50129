//! Console output: one line per finished test, a live "running" line on a terminal, plain
//! line-by-line text when stdout is not a terminal or `CI` is set (with a progress line on
//! stderr at a steady interval: `progress`), a summary at the end.

use crate::run::model::{Metric, RunResult, Status, TestResult};
use crate::run::observer::{Event, Observer};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;

pub(crate) struct Console {
    live: bool,
    quiet: bool,
    /// What scripts print is shown: 0 nothing (`list`, `check`), 1 the top level (`run`),
    /// 2 every test's lines too (`run -v`).
    echo: u8,
    color: bool,
    running: Mutex<Vec<String>>,
    progress: std::sync::Arc<super::progress::Progress>,
}

impl Console {
    pub(crate) fn new(quiet: bool, echo: u8) -> Console {
        let tty = std::io::stdout().is_terminal();
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0");
        Console {
            live: tty && !ci,
            quiet,
            echo,
            color: tty && !ci && std::env::var_os("NO_COLOR").is_none(),
            running: Mutex::new(Vec::new()),
            progress: Default::default(),
        }
    }

    fn paint(&self, t: &TestResult) -> String {
        let s = t.status;
        let label = format!("{:5}", if t.flaky { "FLAKY" } else { s.label() });
        if !self.color {
            return label;
        }
        let code = match s {
            Status::Pass if t.flaky => "33",
            Status::Pass => "32",
            Status::Failure => "31",
            Status::Error => "35",
            Status::Skipped => "33",
        };
        format!("\x1b[{code}m{label}\x1b[0m")
    }

    fn redraw(&self, running: &[String]) {
        if !self.live {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\r\x1b[K");
        if !running.is_empty() {
            let first: Vec<String> = running.iter().take(3).map(|n| super::one_line(n)).collect();
            let more = if running.len() > 3 {
                format!(" +{} more", running.len() - 3)
            } else {
                String::new()
            };
            let done = self
                .progress
                .line()
                .and_then(|l| l.rsplit("; ").next().map(str::to_string))
                .map(|d| format!(" · {d}"))
                .unwrap_or_default();
            let _ = write!(out, "  running: {}{more}{done}", first.join(", "));
        }
        let _ = out.flush();
    }

    pub(crate) fn print_header(&self, run_label: &str) {
        if !self.quiet {
            println!("{run_label}");
        }
    }

    pub(crate) fn summary(&self, run: &RunResult, reports: &[String]) {
        self.progress.stop();
        let mut out = std::io::stdout().lock();
        if self.live {
            let _ = write!(out, "\r\x1b[K");
        }
        let _ = write!(out, "{}", summary_text(run, reports));
    }
}

/// The end-of-run summary: problems, simulation note, counts, report paths.
pub(crate) fn summary_text(run: &RunResult, reports: &[String]) -> String {
    let mut out = String::new();
    diagnosis_section(&mut out, run);
    unreachable_text(&mut out, run);
    problems_text(&mut out, run);
    flaky_text(&mut out, run);
    profiles_text(&mut out, run);
    notes_text(&mut out, run);
    totals_text(&mut out, run, reports);
    out
}

fn diagnosis_section(out: &mut String, run: &RunResult) {
    use std::fmt::Write as _;
    if !run.diagnosis.is_empty() {
        let _ = writeln!(
            out,
            "\nDiagnosis ({} probable cause(s), most specific first; docs/diagnosis.md):",
            run.diagnosis.len()
        );
        out.push_str(&super::diagnosis_text(run));
    }
}

fn unreachable_text(out: &mut String, run: &RunResult) {
    use std::fmt::Write as _;
    if !run.unreachable.is_empty() {
        let _ = writeln!(
            out,
            "\nUnreachable nodes ({}): every testcase that needed one is an ERROR",
            run.unreachable.len()
        );
        for u in &run.unreachable {
            let _ = writeln!(out, "  {}: {}", u.node, super::one_line(&u.reason));
        }
    }
}

/// The failed and errored testcases. One whose error is only that one of the unreachable
/// nodes was not reached is counted, not repeated (issue 50: 81 lines for 5 dead nodes); the
/// reports keep each.
fn problems_text(out: &mut String, run: &RunResult) {
    use std::fmt::Write as _;
    let (unreached, problems): (Vec<&TestResult>, Vec<&TestResult>) = run
        .suites
        .iter()
        .flat_map(|s| &s.tests)
        .filter(|t| matches!(t.status, Status::Failure | Status::Error))
        .partition(|t| only_unreached(run, t));
    if !unreached.is_empty() {
        let _ = writeln!(
            out,
            "  {} testcase(s) ERROR for these nodes alone (not listed again below; every one is in the reports)",
            unreached.len()
        );
    }
    if !problems.is_empty() {
        let _ = writeln!(out, "\nProblems:");
        for t in problems {
            let _ = writeln!(
                out,
                "  {} {} ({}): {}",
                t.status.label(),
                super::one_line(&t.name),
                super::one_line(&t.classname),
                super::one_line(t.message.as_deref().unwrap_or_default())
            );
        }
    }
}

fn flaky_text(out: &mut String, run: &RunResult) {
    use std::fmt::Write as _;
    let flaky: Vec<&TestResult> = run
        .suites
        .iter()
        .flat_map(|s| &s.tests)
        .filter(|t| t.flaky)
        .collect();
    if !flaky.is_empty() {
        let _ = writeln!(out, "\nFlaky (failed, then passed on a later attempt: not confirmed, not blamed; every reading in the reports):");
        for t in flaky {
            let _ = writeln!(
                out,
                "  FLAKY {} ({})",
                super::one_line(&t.name),
                super::one_line(&t.classname)
            );
        }
    }
}

/// Simulated or replayed, interrupted, and what was not cleaned up.
fn notes_text(out: &mut String, run: &RunResult) {
    use std::fmt::Write as _;
    if let Some(sim) = &run.simulation {
        let _ = writeln!(
            out,
            "\nNOTE: SIMULATED cluster ({}); no real node was contacted.",
            super::one_line(sim)
        );
    } else if let Some(r) = &run.replayed {
        let _ = writeln!(
            out,
            "\nNOTE: REPLAYED run: every answer came from {}; no node was contacted.",
            super::one_line(r)
        );
    }
    if run.interrupted {
        let _ = writeln!(out, "\nInterrupted: partial results.");
    }
    if !run.not_cleaned_up.is_empty() {
        let _ = writeln!(out);
    }
    for l in &run.not_cleaned_up {
        let _ = writeln!(out, "NOT CLEANED UP {}", super::one_line(&l.line()));
    }
}

/// The counts line and where the reports are.
fn totals_text(out: &mut String, run: &RunResult, reports: &[String]) {
    use std::fmt::Write as _;
    let c = run.counts();
    let passed = if c.flaky > 0 {
        format!("{} passed ({} flaky)", c.pass, c.flaky)
    } else {
        format!("{} passed", c.pass)
    };
    let _ = writeln!(
        out,
        "\n{} tests: {passed}, {} failed, {} errors, {} skipped ({:.1}s)",
        c.total(),
        c.failure,
        c.error,
        c.skipped,
        run.duration_ms as f64 / 1000.0
    );
    for r in reports {
        let _ = writeln!(out, "{}", super::one_line(r));
    }
}

/// Whether an errored testcase says only that one of the run's unreachable nodes was not
/// reached (its short message, or the whole connection error and nothing else).
fn only_unreached(run: &RunResult, t: &TestResult) -> bool {
    if t.status != Status::Error {
        return false;
    }
    let Some(msg) = t.message.as_deref() else {
        return false;
    };
    let Some((node, reason)) = crate::transport::not_reached(msg) else {
        return false;
    };
    run.unreachable.iter().any(|u| u.node == node)
        && (msg == crate::run::finish::short_not_reached(&node, &reason)
            || msg.trim() == format!("{node}: {reason}"))
}

/// Which platform profile each node got and why, and where the expectations came from (the
/// source's first words: `profile dgx-spark`, `--set gdr`, `inventory var …`, `hardware`).
fn profiles_text(out: &mut String, run: &RunResult) {
    use std::fmt::Write as _;
    if run.profiles.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nPlatform profiles:");
    for p in &run.profiles {
        let _ = writeln!(
            out,
            "  {}: {}{} ({})",
            p.node,
            p.profile.name,
            if p.profile.known {
                ""
            } else {
                ", platform unknown"
            },
            super::one_line(&p.profile.reason)
        );
        if !p.expectations.is_empty() {
            let e: Vec<String> = p
                .expectations
                .iter()
                .map(|e| {
                    let from = e.from.split(':').next().unwrap_or(&e.from);
                    format!("{}={} ({})", e.key, e.value, from)
                })
                .collect();
            let _ = writeln!(out, "    expected: {}", super::one_line(&e.join(", ")));
        }
    }
}

/// A few metrics for a test's console line (the reports have all of them): the verdict
/// metrics first, with their threshold; a per-size series (NCCL busbw) as its best point; then
/// the others. Values rounded as in every report ([`super::fmt_metric`]).
pub(crate) fn metrics_inline(t: &TestResult) -> String {
    use crate::util::fmt::human_bytes;
    let named = |m: &Metric| {
        format!(
            "{}={} {}",
            super::one_line(&m.name),
            super::fmt_metric(m),
            super::one_line(&m.unit)
        )
    };
    let mut items: Vec<String> = Vec::new();
    for m in t.metrics.iter().filter(|m| m.size_bytes.is_none()) {
        if let Some(th) = m.threshold {
            let side = match (m.meets(th), m.higher_is_better) {
                (true, _) => "threshold",
                (false, true) => "below threshold",
                (false, false) => "above threshold",
            };
            items.push(format!(
                "{} ({side} {})",
                named(m),
                super::fmt_in(th, &m.unit)
            ));
        }
    }
    // One entry per unit of the per-size series: its best point.
    let sized: Vec<&Metric> = t
        .metrics
        .iter()
        .filter(|m| m.size_bytes.is_some())
        .collect();
    let mut units: Vec<&str> = Vec::new();
    for m in &sized {
        if !units.contains(&m.unit.as_str()) {
            units.push(&m.unit);
        }
    }
    for u in units {
        let series: Vec<&&Metric> = sized.iter().filter(|m| m.unit == u).collect();
        let best = series
            .iter()
            .copied()
            .fold(None::<&Metric>, |b, m| match b {
                Some(b) if b.meets(m.value) => Some(b),
                _ => Some(*m),
            });
        if let Some(b) = best {
            items.push(format!(
                "best of {} sizes={} {} at {}",
                series.len(),
                super::fmt_metric(b),
                super::one_line(u),
                human_bytes(b.size_bytes.unwrap_or(0) as f64)
            ));
        }
    }
    items.extend(
        t.metrics
            .iter()
            .filter(|m| m.size_bytes.is_none() && m.threshold.is_none())
            .map(|m| match m.reference {
                Some(r) => format!("{} (reference {})", named(m), super::fmt_in(r, &m.unit)),
                None => named(m),
            }),
    );
    let total = items.len();
    items.truncate(4);
    if total > 4 {
        items.push(format!("+{} more", total - 4));
    }
    if items.is_empty() {
        String::new()
    } else {
        format!("  [{}]", items.join(", "))
    }
}

impl Observer for Console {
    fn event(&self, e: &Event) {
        match *e {
            Event::SuiteStarted { name, tests } => self.suite_started(name, tests),
            Event::TestStarted { name } => self.test_started(name),
            Event::TestFinished(t) => self.test_finished(t),
            Event::Printed { test, line } => self.printed(test, line),
            Event::Listed { line } => eprintln!("[dry-run] {}", super::one_line(line)),
            // Shown with -v, as the runner's log lines were.
            Event::Scheduled { line } if self.echo >= 2 => eprintln!("{}", super::one_line(line)),
            Event::Scheduled { .. } => {}
            Event::Warning { line } => eprintln!("warning: {}", super::one_line(line)),
            Event::Notice { line, first: true } => eprintln!(
                "warning: {} (-v names every such node)",
                super::one_line(line)
            ),
            Event::Notice { line, .. } if self.echo >= 2 => {
                eprintln!("{}", super::one_line(line))
            }
            Event::Notice { .. } => {}
        }
    }
}

impl Console {
    fn suite_started(&self, name: &str, tests: usize) {
        self.progress.suite(tests);
        if !self.quiet {
            let clear = if self.live { "\r\x1b[K" } else { "" };
            let name = super::one_line(name);
            let _ = writeln!(std::io::stdout().lock(), "{clear}== {name}: {tests} tests");
        }
    }

    fn test_started(&self, name: &str) {
        self.progress.started(name);
        if !self.live && self.echo >= 1 {
            self.progress.tick_on_stderr(super::progress::interval());
        }
        let mut r = self.running.lock().unwrap_or_else(|p| p.into_inner());
        r.push(name.to_string());
        self.redraw(&r);
    }

    fn test_finished(&self, t: &TestResult) {
        self.progress.finished(&t.name);
        let mut r = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = r.iter().position(|n| n == &t.name) {
            r.remove(i);
        }
        let show = !self.quiet || matches!(t.status, Status::Failure | Status::Error);
        if show {
            let mut out = std::io::stdout().lock();
            if self.live {
                let _ = write!(out, "\r\x1b[K");
            }
            let msg = match (&t.status, &t.message) {
                (Status::Pass, _) | (_, None) => String::new(),
                // a node never reached: said in full once, in the summary
                (Status::Error, Some(m)) if crate::run::finish::shortened(m).is_some() => {
                    let short = crate::run::finish::shortened(m).unwrap_or_default();
                    format!("\n        {short}")
                }
                (_, Some(m)) => format!("\n        {}", super::one_line(m)),
            };
            let metrics = metrics_inline(t);
            let _ = writeln!(
                out,
                "{} {} ({:.1}s){metrics}{msg}",
                self.paint(t),
                super::one_line(&t.name),
                t.duration_ms as f64 / 1000.0
            );
            for n in &t.notes {
                let _ = writeln!(out, "        {}", super::one_line(n));
            }
            for w in &t.warnings {
                let _ = writeln!(out, "        warning: {}", super::one_line(w));
            }
        }
        self.redraw(&r);
    }

    fn printed(&self, test: &str, line: &str) {
        use crate::util::fmt::clean_text;
        let shown = match test {
            crate::run::context::TOP_LEVEL if self.echo >= 1 => clean_text(line),
            _ if self.echo >= 2 => format!("  [{}] {}", clean_text(test), clean_text(line)),
            _ => return,
        };
        let _ = writeln!(std::io::stdout().lock(), "{shown}");
    }
}

#[cfg(test)]
mod tests {
    use crate::run::model::{RunResult, Status, SuiteResult, TestResult};

    fn t(name: &str, status: Status, message: Option<&str>) -> TestResult {
        TestResult {
            file: "s.rhai".into(),
            line: Some(3),
            status,
            message: message.map(str::to_string),
            duration_ms: 10,
            ..TestResult::new(name, "five_step_acceptance")
        }
    }

    #[test]
    fn summary_exact_text() {
        let run = RunResult {
            fabcheck_version: "0.1.0".into(),
            started: "2026-12-03T12:00:00Z".into(),
            duration_ms: 2345,
            inventory: None,
            simulation: Some("two sparks".into()),
            replayed: None,
            interrupted: false,
            params: Default::default(),
            suites: vec![SuiteResult {
                name: "five_step_acceptance".into(),
                file: "s.rhai".into(),
                timestamp: String::new(),
                duration_ms: 2000,
                tests: vec![
                    t("step 1: ping mesh [a -> b]", Status::Pass, None),
                    t(
                        "step 2: ssh [a -> b]",
                        Status::Failure,
                        Some("a -> b: ssh said \x1b[31mno\x1b[0m\nPermission denied\u{0}"),
                    ),
                    t(
                        "step 3: rdma",
                        Status::Error,
                        Some("a: `ib_write_bw` is not installed"),
                    ),
                    t(
                        "step 5: netplan",
                        Status::Skipped,
                        Some("needs --allow-changes"),
                    ),
                ],
            }],
            tool_versions: vec![],
            diagnosis: vec![],
            unreachable: vec![],
            profiles: vec![],
            not_cleaned_up: vec![],
        };
        assert_eq!(
            super::summary_text(&run, &["JUnit: r.xml".to_string()]),
            "\nProblems:\n  FAIL step 2: ssh [a -> b] (five_step_acceptance): a -> b: ssh said no | Permission denied\n  ERROR step 3: rdma (five_step_acceptance): a: `ib_write_bw` is not installed\n\nNOTE: SIMULATED cluster (two sparks); no real node was contacted.\n\n4 tests: 1 passed, 1 failed, 1 errors, 1 skipped (2.3s)\nJUnit: r.xml\n"
        );
    }

    #[test]
    fn console_lines_are_capped() {
        let long = "x".repeat(5000);
        let l = super::super::one_line(&long);
        assert!(l.len() <= 1003 && l.ends_with('…'), "{}", l.len());
    }
}

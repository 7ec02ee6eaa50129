//! `--baseline FILE`: compare this run's metrics with an earlier `--json` result.
//!
//! Metrics are matched by (suite name, test name, metric name). A metric is a regression when it
//! moved in its worse direction (`higher_is_better`, default true) by more than its tolerance
//! (`tolerance_pct` of this run's metric, else the baseline's, else 10 %). The verdict is one
//! extra testcase `baseline` (classname `baseline`) in its own suite `baseline`:
//! failure when something regressed (the worst ones in the message, the table in `detail`),
//! error when none of the baseline's metrics are in this run, pass otherwise (the table in
//! `output`). Metrics missing from this run are listed; new metrics are listed too.

use crate::run::model::{Metric, RunResult, Status, SuiteResult, TestResult};
use crate::util::fmt::{clean_text, fmt_num};

pub const DEFAULT_TOLERANCE_PCT: f64 = 10.0;

/// One matched metric.
#[derive(Debug, Clone)]
pub struct Row {
    pub suite: String,
    pub test: String,
    pub metric: String,
    pub unit: String,
    pub old: f64,
    pub new: f64,
    /// (new - old) / |old| in percent; `None` when old is 0.
    pub change_pct: Option<f64>,
    /// How much worse, in percent (negative: better).
    pub worse_pct: Option<f64>,
    pub tolerance_pct: f64,
    pub higher_is_better: bool,
    pub regressed: bool,
}

type Key = (String, String, String);

fn metrics(run: &RunResult) -> Vec<(Key, &Metric)> {
    run.suites
        .iter()
        .flat_map(|s| {
            s.tests.iter().flat_map(move |t| {
                t.metrics
                    .iter()
                    .map(move |m| ((s.name.clone(), t.name.clone(), m.name.clone()), m))
            })
        })
        .collect()
}

pub struct Comparison {
    pub rows: Vec<Row>,
    pub missing: Vec<Key>,
    pub new: Vec<Key>,
    pub baseline_count: usize,
}

pub fn compare(baseline: &RunResult, run: &RunResult) -> Comparison {
    let old = metrics(baseline);
    let cur = metrics(run);
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for (k, o) in &old {
        let Some((_, n)) = cur.iter().find(|(ck, _)| ck == k) else {
            missing.push(k.clone());
            continue;
        };
        let tol = n
            .tolerance_pct
            .or(o.tolerance_pct)
            .unwrap_or(DEFAULT_TOLERANCE_PCT);
        let change = if o.value != 0.0 && o.value.is_finite() {
            Some((n.value - o.value) / o.value.abs() * 100.0)
        } else {
            None
        };
        let worse = change.map(|c| if n.higher_is_better { -c } else { c });
        let regressed = match worse {
            Some(w) => w > tol + 1e-9,
            // From 0 (or a non-number) there is no percentage; only a non-finite value is worse.
            None => !n.value.is_finite(),
        };
        rows.push(Row {
            suite: k.0.clone(),
            test: k.1.clone(),
            metric: k.2.clone(),
            unit: n.unit.clone(),
            old: o.value,
            new: n.value,
            change_pct: change,
            worse_pct: worse,
            tolerance_pct: tol,
            higher_is_better: n.higher_is_better,
            regressed,
        });
    }
    let new = cur
        .iter()
        .filter(|(k, _)| !old.iter().any(|(ok, _)| ok == k))
        .map(|(k, _)| k.clone())
        .collect();
    Comparison {
        rows,
        missing,
        new,
        baseline_count: old.len(),
    }
}

fn pct(p: Option<f64>) -> String {
    match p {
        Some(p) => format!("{p:+.1}%"),
        None => "n/a".into(),
    }
}

fn label(k: &Key) -> String {
    format!("{} / {} / {}", k.0, k.1, k.2)
}

/// The comparison as a plain-text table (for JUnit system-out and the HTML report).
pub fn table(c: &Comparison, baseline_path: &str) -> String {
    let mut s = format!("baseline: {baseline_path}\n");
    let header = [
        "verdict",
        "suite / test / metric",
        "baseline",
        "this run",
        "change",
        "tolerance",
    ];
    let mut lines: Vec<[String; 6]> = vec![header.map(String::from)];
    for r in &c.rows {
        lines.push([
            if r.regressed { "REGRESSED" } else { "ok" }.into(),
            format!("{} / {} / {}", r.suite, r.test, r.metric),
            format!("{} {}", fmt_num(r.old), r.unit),
            format!("{} {}", fmt_num(r.new), r.unit),
            pct(r.change_pct),
            format!(
                "{}{}",
                fmt_num(r.tolerance_pct),
                if r.higher_is_better {
                    "% (higher is better)"
                } else {
                    "% (lower is better)"
                }
            ),
        ]);
    }
    let mut w = [0usize; 6];
    for l in &lines {
        for (i, c) in l.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    for l in &lines {
        let cells: Vec<String> = l
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c}{}", " ".repeat(w[i] - c.chars().count())))
            .collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    if !c.missing.is_empty() {
        s.push_str(&format!(
            "missing in this run ({} of {} baseline metrics):\n",
            c.missing.len(),
            c.baseline_count
        ));
        for k in &c.missing {
            s.push_str(&format!("  {}\n", label(k)));
        }
    }
    if !c.new.is_empty() {
        s.push_str(&format!("new in this run ({}):\n", c.new.len()));
        for k in &c.new {
            s.push_str(&format!("  {}\n", label(k)));
        }
    }
    s
}

/// The `baseline` testcase for this comparison.
pub fn testcase(c: &Comparison, baseline_path: &str) -> TestResult {
    let text = clean_text(&table(c, baseline_path));
    let mut regressions: Vec<&Row> = c.rows.iter().filter(|r| r.regressed).collect();
    regressions.sort_by(|a, b| {
        b.worse_pct
            .unwrap_or(f64::INFINITY)
            .total_cmp(&a.worse_pct.unwrap_or(f64::INFINITY))
    });
    let (status, message, detail, output) = if !regressions.is_empty() {
        let worst: Vec<String> = regressions
            .iter()
            .take(3)
            .map(|r| {
                format!(
                    "{} / {}: {} → {} {} ({})",
                    r.test,
                    r.metric,
                    fmt_num(r.old),
                    fmt_num(r.new),
                    r.unit,
                    pct(r.change_pct)
                )
            })
            .collect();
        let more = if regressions.len() > 3 {
            format!(" and {} more", regressions.len() - 3)
        } else {
            String::new()
        };
        (
            Status::Failure,
            Some(format!(
                "{} of {} metrics regressed beyond tolerance against {baseline_path}: {}{more}",
                regressions.len(),
                c.rows.len(),
                worst.join("; ")
            )),
            Some(text),
            String::new(),
        )
    } else if c.baseline_count == 0 {
        (
            Status::Error,
            Some(format!(
                "the baseline {baseline_path} has no metrics to compare with"
            )),
            None,
            text,
        )
    } else if c.rows.is_empty() {
        (
            Status::Error,
            Some(format!(
                "none of the {} baseline metrics were recorded in this run (different scripts, filters or test names?)",
                c.baseline_count
            )),
            Some(text),
            String::new(),
        )
    } else {
        (Status::Pass, None, None, text)
    };
    let mut warnings = Vec::new();
    if !c.missing.is_empty() && status == Status::Pass {
        warnings.push(format!(
            "{} baseline metric(s) missing in this run",
            c.missing.len()
        ));
    }
    TestResult {
        file: baseline_path.to_string(),
        status,
        message,
        detail,
        warnings,
        output,
        ..TestResult::new("baseline", "baseline")
    }
}

/// Add the `baseline` suite (one testcase, named apart from the run's own tests) to the run;
/// returns the testcase.
pub fn apply<'a>(
    run: &'a mut RunResult,
    baseline: &RunResult,
    baseline_path: &str,
) -> &'a TestResult {
    let c = compare(baseline, run);
    let mut t = testcase(&c, baseline_path);
    t.name = run.unused_name(&t.classname, &t.name);
    run.suites.push(SuiteResult {
        name: "baseline".into(),
        file: baseline_path.to_string(),
        timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        duration_ms: 0,
        tests: vec![t],
    });
    &run.suites[run.suites.len() - 1].tests[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_with(metrics: Vec<Metric>) -> RunResult {
        let t = TestResult {
            file: "s.rhai".into(),
            metrics,
            ..TestResult::new("t", "s")
        };
        RunResult::of_tests("s", vec![t])
    }

    fn m(name: &str, v: f64, hib: bool) -> Metric {
        Metric {
            higher_is_better: hib,
            ..Metric::new(name, v, "u")
        }
    }

    #[test]
    fn directions_and_tolerance() {
        let old = run_with(vec![m("bw", 100.0, true), m("lat", 10.0, false)]);
        let new = run_with(vec![m("bw", 91.0, true), m("lat", 12.0, false)]);
        let c = compare(&old, &new);
        assert!(!c.rows[0].regressed, "9 % drop is within 10 %");
        assert!(c.rows[1].regressed, "latency up 20 %");
        let t = testcase(&c, "b.json");
        assert_eq!(t.status, Status::Failure);
        assert!(t.message.unwrap().contains("10 → 12"));
    }

    #[test]
    fn all_missing_is_an_error_some_missing_is_not() {
        let old = run_with(vec![m("bw", 100.0, true), m("x", 1.0, true)]);
        let some = run_with(vec![m("bw", 100.0, true)]);
        let t = testcase(&compare(&old, &some), "b.json");
        assert_eq!(t.status, Status::Pass);
        assert!(t.output.contains("missing in this run"));
        let none = run_with(vec![m("other", 1.0, true)]);
        let t = testcase(&compare(&old, &none), "b.json");
        assert_eq!(t.status, Status::Error);
    }
}

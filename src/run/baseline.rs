//! `--baseline FILE`: compare this run's metrics with an earlier `--json` result.
//!
//! Metrics are matched by (suite name, test name, metric name). A metric is a regression when it
//! moved in its worse direction (`higher_is_better`, default true) by more than its tolerance
//! (`tolerance_pct` of this run's metric, else the baseline's, else 10 %). The verdict is one
//! extra testcase `baseline` (classname `baseline`) in its own suite `baseline`:
//! failure when something regressed (the worst ones in the message, the table in `detail`),
//! error when none of the baseline's metrics are in this run, pass otherwise (the table in
//! `output`). Metrics missing from this run are listed; new metrics are listed too.
//!
//! What is noise is no regression: a value whose print step (the unit's decimals in reports)
//! is already more than the tolerance of it (`busbw@128: 0.01 → 0`), or a change smaller than
//! half a print step. The message ranks what matters first: judged metrics (with a threshold),
//! then values that carry the series (a per-size point at ≥ 10 % of the series' peak, or no
//! series), then the rest; within each, the worst change first.

use crate::run::model::{Metric, RunResult, Status, SuiteResult, TestResult};
use crate::util::fmt::{clean_text, fmt_num};

pub(crate) const DEFAULT_TOLERANCE_PCT: f64 = 10.0;

/// One matched metric.
#[derive(Debug, Clone)]
pub(crate) struct Row {
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
    /// This run judged the metric against a threshold.
    pub judged: bool,
    /// Not a per-size point, or one at ≥ 10 % of its series' peak in the baseline.
    pub carries: bool,
}

/// The smallest step a report prints of `unit` (`0.01` for Gbit/s, GB/s, us).
fn print_step(unit: &str) -> f64 {
    let d = crate::util::fmt::unit_decimals(unit).unwrap_or(3);
    10f64.powi(-(d as i32))
}

/// A change that printing cannot show or that the print step alone exceeds the tolerance of.
fn noise(old: f64, new: f64, unit: &str, tol: f64) -> bool {
    let step = print_step(unit);
    (new - old).abs() < step / 2.0 || step / old.abs() * 100.0 > tol
}

/// The baseline's peak of each per-size series: (suite, test, unit, name before `@`).
fn series_peaks(old: &[(Key, &Metric)]) -> Vec<((String, String, String, String), f64)> {
    let mut peaks: Vec<((String, String, String, String), f64)> = Vec::new();
    for (k, m) in old.iter().filter(|(_, m)| m.size_bytes.is_some()) {
        let series = series_of(k, m);
        match peaks.iter_mut().find(|(s, _)| *s == series) {
            Some((_, p)) => *p = p.max(m.value.abs()),
            None => peaks.push((series, m.value.abs())),
        }
    }
    peaks
}

fn series_of(k: &Key, m: &Metric) -> (String, String, String, String) {
    let base = k.2.split('@').next().unwrap_or(&k.2).to_string();
    (k.0.clone(), k.1.clone(), m.unit.clone(), base)
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

pub(crate) struct Comparison {
    pub rows: Vec<Row>,
    pub missing: Vec<Key>,
    pub new: Vec<Key>,
    pub baseline_count: usize,
}

pub(crate) fn compare(baseline: &RunResult, run: &RunResult) -> Comparison {
    let old = metrics(baseline);
    let cur = metrics(run);
    let peaks = series_peaks(&old);
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
            Some(w) => w > tol + 1e-9 && !noise(o.value, n.value, &n.unit, tol),
            // From 0 (or a non-number) there is no percentage; only a non-finite value is worse.
            None => !n.value.is_finite(),
        };
        let carries = o.size_bytes.is_none()
            || peaks
                .iter()
                .find(|(s, _)| *s == series_of(k, o))
                .is_none_or(|(_, peak)| o.value.abs() >= 0.1 * peak);
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
            judged: n.threshold.is_some(),
            carries,
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
pub(crate) fn table(c: &Comparison, baseline_path: &str) -> String {
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
pub(crate) fn testcase(c: &Comparison, baseline_path: &str) -> TestResult {
    let text = clean_text(&table(c, baseline_path));
    let mut regressions: Vec<&Row> = c.rows.iter().filter(|r| r.regressed).collect();
    // what matters first: judged metrics, then values that carry their series, then the worst
    regressions.sort_by(|a, b| {
        (b.judged, b.carries)
            .cmp(&(a.judged, a.carries))
            .then_with(|| {
                b.worse_pct
                    .unwrap_or(f64::INFINITY)
                    .total_cmp(&a.worse_pct.unwrap_or(f64::INFINITY))
            })
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
pub(crate) fn apply<'a>(
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
    fn headline_ranks_what_matters_and_ignores_print_noise() {
        let sized = |size: u64, v: f64| Metric {
            size_bytes: Some(size),
            ..Metric::new(&format!("busbw@{size}"), v, "GB/s")
        };
        let judged = |v: f64| Metric {
            threshold: Some(90.0),
            ..Metric::new("rdma_bw", v, "Gbit/s")
        };
        let old = run_with(vec![
            sized(128, 0.01),
            sized(1024, 1.0),
            sized(1 << 30, 20.0),
            judged(95.0),
            m("other", 100.0, true),
        ]);
        let new = run_with(vec![
            sized(128, 0.0),
            sized(1024, 0.4),
            sized(1 << 30, 12.0),
            judged(47.5),
            m("other", 10.0, true),
        ]);
        let c = compare(&old, &new);
        let row = |name: &str| c.rows.iter().find(|r| r.metric == name).unwrap();
        assert!(
            !row("busbw@128").regressed,
            "0.01 → 0 GB/s is below the print precision"
        );
        assert!(row("busbw@1024").regressed && !row("busbw@1024").carries);
        assert!(row("busbw@1073741824").carries);
        let t = testcase(&c, "old.json");
        let msg = t.message.unwrap();
        assert!(msg.starts_with("4 of 5 metrics regressed"), "{msg}");
        let order: Vec<usize> = ["rdma_bw", "other", "busbw@1073741824", "busbw@1024"]
            .iter()
            .map(|n| msg.find(&format!("t / {n}:")).unwrap_or(usize::MAX))
            .collect();
        assert!(order[0] < order[1] && order[1] < order[2], "{msg}");
        assert!(msg.contains("and 1 more"), "{msg}");
        assert!(!msg.contains("busbw@128"), "{msg}");
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

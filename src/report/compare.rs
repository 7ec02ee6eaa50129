//! `fabcheck compare A.json B.json …`: the scenario table (100G vs 200G, 2 vs 6 nodes).
//!
//! One column per run, named after it (header: the file's stem; where files share a stem, as
//! every run's `result.json` in its results folder does, the folders that tell them apart, e.g.
//! the results folder `20260101-120000-mtu`, else the run's start time; with `(simulated)` for a
//! simulated run, `(replayed)` for a replayed one), one row per metric (`suite / test / metric [unit]`, in order of first
//! appearance), and for every run after the first a change column against the first run; a
//! change of more than
//! [`MARK_PCT`] % gets a marker (`▲ +23.1%` / `▼ −23.1%`). A missing value is `—`. The
//! markdown table rounds values to their unit's precision (as every report); the CSV keeps
//! up to three decimals for spreadsheets.

use super::fmt_num;
use crate::run::model::RunResult;
use std::path::{Path, PathBuf};

/// Changes larger than this (in percent, either direction) are marked.
pub(crate) const MARK_PCT: f64 = 10.0;

pub(crate) struct Input {
    pub label: String,
    pub simulation: Option<String>,
    pub run: RunResult,
}

pub(crate) struct Table {
    /// Run labels: file stem, plus ` (simulated)` / ` (replayed)`.
    pub columns: Vec<String>,
    /// Short labels (file stems, made unique) for the change columns.
    pub stems: Vec<String>,
    /// (suite, test, metric, unit)
    pub rows: Vec<(String, String, String, String)>,
    /// values[row][run]
    pub values: Vec<Vec<Option<f64>>>,
}

/// Load every file; the error names the file that could not be read.
pub(crate) fn load_all(paths: &[PathBuf]) -> Result<Vec<Input>, super::json::LoadError> {
    let mut runs = Vec::new();
    for p in paths {
        runs.push(super::json::load(p)?);
    }
    let started: Vec<&str> = runs.iter().map(|r| r.started.as_str()).collect();
    let labels = labels(paths, &started);
    Ok(runs
        .into_iter()
        .zip(labels)
        .map(|(run, label)| Input {
            label,
            simulation: run.simulation.clone(),
            run,
        })
        .collect())
}

/// Each run's column name: its file's stem; where stems are shared (`fabcheck-results/*/
/// result.json`), the fewest folders above the file that tell it from the others with that
/// stem (its results folder, named by start time and script); where nothing in the paths does
/// (the same file twice), the stem and the run's start time (issue 50: not "result" and
/// "result #2").
fn labels(paths: &[PathBuf], started: &[&str]) -> Vec<String> {
    let stems: Vec<String> = paths.iter().map(|p| stem(p)).collect();
    // The folders above each file, nearest last (absolute where the file can be found, so
    // `result.json` and `../b/result.json` are told apart).
    let folders: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            let full = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            full.parent()
                .map(|d| {
                    d.components()
                        .filter_map(|c| match c {
                            std::path::Component::Normal(s) => {
                                Some(s.to_string_lossy().into_owned())
                            }
                            _ => None,
                        })
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let tail = |i: usize, k: usize| {
        let f = &folders[i];
        f[f.len().saturating_sub(k)..].join("/")
    };
    (0..paths.len())
        .map(|i| {
            let same: Vec<usize> = (0..paths.len())
                .filter(|&j| j != i && stems[j] == stems[i])
                .collect();
            if same.is_empty() {
                return stems[i].clone();
            }
            (1..=folders[i].len())
                .find(|&k| same.iter().all(|&j| tail(j, k) != tail(i, k)))
                .map(|k| tail(i, k))
                .unwrap_or_else(|| format!("{} ({})", stems[i], started[i]))
        })
        .collect()
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

pub(crate) fn build(inputs: &[Input]) -> Table {
    let mut rows: Vec<(String, String, String, String)> = Vec::new();
    let mut values: Vec<Vec<Option<f64>>> = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        for s in &input.run.suites {
            for t in &s.tests {
                for m in &t.metrics {
                    let idx = match rows
                        .iter()
                        .position(|r| r.0 == s.name && r.1 == t.name && r.2 == m.name)
                    {
                        Some(idx) => idx,
                        None => {
                            rows.push((
                                s.name.clone(),
                                t.name.clone(),
                                m.name.clone(),
                                m.unit.clone(),
                            ));
                            values.push(vec![None; inputs.len()]);
                            rows.len() - 1
                        }
                    };
                    values[idx][i] = Some(m.value);
                }
            }
        }
    }
    // Labels must tell the runs apart even when two files share a stem.
    let mut columns: Vec<String> = inputs.iter().map(|x| x.label.clone()).collect();
    for i in 0..columns.len() {
        if columns[..i].contains(&columns[i]) {
            columns[i] = format!("{} #{}", columns[i], i + 1);
        }
    }
    let stems = columns.clone();
    for (c, x) in columns.iter_mut().zip(inputs) {
        if x.simulation.is_some() {
            c.push_str(" (simulated)");
        } else if x.run.replayed.is_some() {
            c.push_str(" (replayed)");
        }
    }
    Table {
        columns,
        stems,
        rows,
        values,
    }
}

/// Change of `new` against `first` in percent.
pub(crate) fn change_pct(first: Option<f64>, new: Option<f64>) -> Option<f64> {
    match (first, new) {
        (Some(a), Some(b)) if a != 0.0 && a.is_finite() && b.is_finite() => {
            Some((b - a) / a.abs() * 100.0)
        }
        _ => None,
    }
}

/// `▲ +23.1%`, `▼ −23.1%` beyond [`MARK_PCT`], else `+2.0%`; `—` without a value.
pub(crate) fn change_cell(p: Option<f64>) -> String {
    match p {
        None => "—".into(),
        Some(p) => {
            let num = if p < 0.0 {
                format!("−{:.1}%", -p)
            } else {
                format!("+{p:.1}%")
            };
            if p > MARK_PCT {
                format!("▲ {num}")
            } else if p < -MARK_PCT {
                format!("▼ {num}")
            } else {
                num
            }
        }
    }
}

/// A value as the markdown table shows it: rounded to its unit's precision.
fn value_cell(v: Option<f64>, unit: &str) -> String {
    v.map(|v| super::fmt_in(v, unit))
        .unwrap_or_else(|| "—".into())
}

fn row_label(r: &(String, String, String, String)) -> String {
    if r.3.is_empty() {
        format!("{} / {} / {}", r.0, r.1, r.2)
    } else {
        format!("{} / {} / {} [{}]", r.0, r.1, r.2, r.3)
    }
}

fn md_escape(s: &str) -> String {
    super::clean_text(s).replace('\n', " ").replace('|', "\\|")
}

pub(crate) fn markdown(t: &Table) -> String {
    let mut head = vec!["metric".to_string()];
    for (i, c) in t.columns.iter().enumerate() {
        head.push(md_escape(c));
        if i > 0 {
            head.push(format!(
                "{} vs {}",
                md_escape(&t.stems[i]),
                md_escape(&t.stems[0])
            ));
        }
    }
    let mut s = format!("| {} |\n", head.join(" | "));
    let align: Vec<&str> = head
        .iter()
        .enumerate()
        .map(|(i, _)| if i == 0 { "---" } else { "---:" })
        .collect();
    s.push_str(&format!("| {} |\n", align.join(" | ")));
    for (r, vals) in t.rows.iter().zip(&t.values) {
        let mut cells = vec![md_escape(&row_label(r))];
        for (i, v) in vals.iter().enumerate() {
            cells.push(value_cell(*v, &r.3));
            if i > 0 {
                cells.push(change_cell(change_pct(vals[0], *v)));
            }
        }
        s.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    if t.rows.is_empty() {
        s.push_str("\n(no metrics in these results)\n");
    }
    s
}

/// Pair matrices (node × peer) of every run, for runs with `test_pairs` measurements.
pub(crate) fn matrices_markdown(inputs: &[Input]) -> String {
    let mut s = String::new();
    for i in inputs {
        for m in super::matrix::matrices(&i.run) {
            s.push_str(&format!(
                "\n### {} — {} (row → column)\n\n",
                md_escape(&i.label),
                md_escape(&m.metric)
            ));
            s.push_str(&super::matrix::markdown(&m));
            let worst: Vec<String> = m
                .worst(5)
                .iter()
                .map(|((a, b), v)| format!("{a} -> {b} {} {}", super::fmt_in(*v, &m.unit), m.unit))
                .collect();
            s.push_str(&format!("\nslowest pairs: {}\n", worst.join(", ")));
        }
    }
    s
}

fn csv_field(s: &str) -> String {
    let s = super::clean_text(s);
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// CSV: suite, test, metric, unit, one value column per run, then for each later run a
/// numeric `change %` column and a `flag` column (`▲`/`▼` beyond ±10 %). Missing values are empty.
pub(crate) fn csv(t: &Table) -> String {
    let mut head: Vec<String> = ["suite", "test", "metric", "unit"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    head.extend(t.columns.iter().cloned());
    for c in t.stems.iter().skip(1) {
        head.push(format!("{c} vs {} %", t.stems[0]));
        head.push(format!("{c} vs {} flag", t.stems[0]));
    }
    let mut s = head
        .iter()
        .map(|h| csv_field(h))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    for (r, vals) in t.rows.iter().zip(&t.values) {
        let mut cells = vec![
            csv_field(&r.0),
            csv_field(&r.1),
            csv_field(&r.2),
            csv_field(&r.3),
        ];
        cells.extend(vals.iter().map(|v| v.map(fmt_num).unwrap_or_default()));
        for v in vals.iter().skip(1) {
            let p = change_pct(vals[0], *v);
            cells.push(p.map(|p| format!("{p:.1}")).unwrap_or_default());
            cells.push(
                match p {
                    Some(p) if p > MARK_PCT => "▲",
                    Some(p) if p < -MARK_PCT => "▼",
                    _ => "",
                }
                .into(),
            );
        }
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_sharing_a_file_name_are_named_by_their_folders_or_start() {
        let p = |s: &str| std::path::PathBuf::from(s);
        let got = super::labels(
            &[
                p("/nonexistent/res/20260101-120000-mtu/result.json"),
                p("/nonexistent/res/20260102-120000-mtu/result.json"),
                p("/nonexistent/a/x/run.json"),
                p("/nonexistent/b/x/run.json"),
                p("/nonexistent/old.json"),
                p("/nonexistent/c/same.json"),
                p("/nonexistent/c/same.json"),
            ],
            &["t1", "t2", "t3", "t4", "t5", "t6", "t7"],
        );
        assert_eq!(
            got,
            [
                "20260101-120000-mtu",
                "20260102-120000-mtu",
                "a/x",
                "b/x",
                "old",
                "same (t6)",
                "same (t7)"
            ]
        );
    }

    #[test]
    fn change_cells() {
        assert_eq!(super::change_cell(Some(23.06)), "▲ +23.1%");
        assert_eq!(super::change_cell(Some(-23.06)), "▼ −23.1%");
        assert_eq!(super::change_cell(Some(2.0)), "+2.0%");
        assert_eq!(super::change_cell(None), "—");
    }

    #[test]
    fn markdown_rounds_to_the_units_precision_csv_keeps_more() {
        let row = |u: &str| {
            (
                "s".to_string(),
                "t".to_string(),
                "m".to_string(),
                u.to_string(),
            )
        };
        let t = super::Table {
            columns: vec!["a".into(), "b".into()],
            stems: vec!["a".into(), "b".into()],
            rows: vec![row("Gbit/s"), row("ms")],
            values: vec![
                vec![Some(94.97123456), Some(94.5)],
                vec![Some(0.1714999), None],
            ],
        };
        let md = super::markdown(&t);
        assert!(md.contains("| s / t / m [Gbit/s] | 94.97 | 94.5 |"), "{md}");
        assert!(md.contains("| s / t / m [ms] | 0.171 | — |"), "{md}");
        assert!(super::csv(&t).contains(",94.971,"), "{}", super::csv(&t));
    }
}

//! Pair measurements as a node × node matrix (rows: `node`, columns: `peer`), for metrics with a
//! `peer` field — what a `test_pairs` mesh records. Read by the HTML report and `compare`.

use crate::run::model::{Metric, RunResult, Status, TestResult};
use std::collections::BTreeMap;

/// A pair's verdict as a matrix cell shows it: never by rank, always by what was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The value meets its threshold and the pair's test passed.
    Pass,
    /// The value misses its threshold; a value without one, when the pair's test failed.
    Fail,
    /// The pair's test could not be made (an error): the value proves nothing.
    Error,
    /// No threshold, and the test did not fail: a number, not a verdict.
    Neutral,
}

impl Verdict {
    /// The pair's verdict for the value `m` recorded by test `t`.
    pub(crate) fn of(t: &TestResult, m: &Metric) -> Verdict {
        let missed = m.threshold.is_some_and(|th| !m.meets(th));
        match t.status {
            Status::Error => Verdict::Error,
            // a value that meets its own line is not red because another rail of the same
            // pair test failed (one slow HCA must not paint every rail's matrix)
            Status::Failure if m.threshold.is_some() && !missed => Verdict::Pass,
            Status::Failure => Verdict::Fail,
            _ if missed => Verdict::Fail,
            Status::Pass if m.threshold.is_some() => Verdict::Pass,
            _ => Verdict::Neutral,
        }
    }

    /// The CSS class of the HTML cell (`v-pass`, `v-fail`, `v-error`, `v-none`).
    pub(crate) fn class(self) -> &'static str {
        match self {
            Verdict::Pass => "v-pass",
            Verdict::Fail => "v-fail",
            Verdict::Error => "v-error",
            Verdict::Neutral => "v-none",
        }
    }
}

/// One pair's measurement.
#[derive(Debug, Clone)]
pub(crate) struct Cell {
    pub value: f64,
    pub verdict: Verdict,
    pub threshold: Option<f64>,
    /// The pair's test status and message, for the cell's tooltip.
    pub status: Status,
    pub message: Option<String>,
    /// The odd-one-out note about this value (far from its peers, passing its own line).
    pub odd: Option<String>,
}

pub(crate) struct Matrix {
    /// `rdma_write_gbps · rail mlx5_0` for a per-rail measurement, else the metric's name.
    pub metric: String,
    /// The metric's base name (`rdma_write_gbps`) and rail, for a per-rail measurement: the
    /// HTML draws these under the node × rail heat map of that base.
    pub base: String,
    pub rail: Option<String>,
    pub unit: String,
    pub higher_is_better: bool,
    /// Row and column labels: every node seen, in order of first appearance.
    pub nodes: Vec<String>,
    /// (node, peer) → the pair's measurement
    pub cells: BTreeMap<(String, String), Cell>,
}

impl Matrix {
    /// The `n` worst pairs (lowest, or highest when lower is better).
    pub(crate) fn worst(&self, n: usize) -> Vec<(&(String, String), f64)> {
        let mut v: Vec<(&(String, String), f64)> =
            self.cells.iter().map(|(k, c)| (k, c.value)).collect();
        v.sort_by(|a, b| {
            if self.higher_is_better {
                a.1.total_cmp(&b.1)
            } else {
                b.1.total_cmp(&a.1)
            }
        });
        v.truncate(n);
        v
    }
}

/// One matrix per measurement (metric name, or rail) with at least two pair values.
pub(crate) fn matrices(run: &RunResult) -> Vec<Matrix> {
    let mut out: Vec<Matrix> = Vec::new();
    for (t, m) in run
        .suites
        .iter()
        .flat_map(|s| &s.tests)
        .flat_map(|t| t.metrics.iter().map(move |m| (t, m)))
    {
        let (Some(node), Some(peer)) = (&m.node, &m.peer) else {
            continue;
        };
        if !m.value.is_finite() {
            continue;
        }
        // The same measurement across pairs: by its base name and `rail` field when it has
        // one (a port's metric is named per pair, `…[client:port]`), else by its name.
        let base = match m.name.split_once('[') {
            Some((b, k)) if k.ends_with(']') && m.rail.is_some() => b.to_string(),
            _ => m.name.clone(),
        };
        let label = match &m.rail {
            Some(r) => format!("{base} · rail {r}"),
            None => m.name.clone(),
        };
        let mx = match out
            .iter_mut()
            .position(|x| x.metric == label && x.unit == m.unit)
        {
            Some(i) => &mut out[i],
            None => {
                out.push(Matrix {
                    metric: label,
                    base,
                    rail: m.rail.clone(),
                    unit: m.unit.clone(),
                    higher_is_better: m.higher_is_better,
                    nodes: vec![],
                    cells: BTreeMap::new(),
                });
                out.last_mut().expect("just pushed")
            }
        };
        for n in [node, peer] {
            if !mx.nodes.contains(n) {
                mx.nodes.push(n.clone());
            }
        }
        mx.cells.insert(
            (node.clone(), peer.clone()),
            Cell {
                value: m.value,
                verdict: Verdict::of(t, m),
                threshold: m.threshold,
                status: t.status,
                message: t.message.clone(),
                odd: run
                    .diagnosis
                    .iter()
                    .find(|d| {
                        d.is_warning()
                            && d.metric.as_deref() == Some(m.name.as_str())
                            && d.evidence.contains(&t.name)
                    })
                    .map(|d| d.cause.clone()),
            },
        );
    }
    out.retain(|m| m.cells.len() >= 2);
    for m in &mut out {
        m.nodes.sort();
    }
    out
}

/// A matrix as a markdown table (for `compare`).
pub(crate) fn markdown(m: &Matrix) -> String {
    let mut s = format!("| {} [{}] | {} |\n", m.metric, m.unit, m.nodes.join(" | "));
    s.push_str(&format!("|---|{}\n", "---:|".repeat(m.nodes.len())));
    for a in &m.nodes {
        let cells: Vec<String> = m
            .nodes
            .iter()
            .map(|b| {
                m.cells
                    .get(&(a.clone(), b.clone()))
                    .map(|c| {
                        let v = super::fmt_in(c.value, &m.unit);
                        match c.verdict {
                            Verdict::Fail => format!("{v} ✗"),
                            Verdict::Error => format!("{v} (error)"),
                            _ if c.odd.is_some() => format!("{v} (odd one out)"),
                            _ => v,
                        }
                    })
                    .unwrap_or_else(|| if a == b { "·".into() } else { "—".into() })
            })
            .collect();
        s.push_str(&format!("| {a} | {} |\n", cells.join(" | ")));
    }
    s
}

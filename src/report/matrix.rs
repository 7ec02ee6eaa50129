//! Pair measurements as a node × node matrix (rows: `node`, columns: `peer`), for metrics with a
//! `peer` field — what a `test_pairs` mesh records. Read by the HTML report and `compare`.

use crate::run::model::RunResult;
use std::collections::BTreeMap;

pub struct Matrix {
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Row and column labels: every node seen, in order of first appearance.
    pub nodes: Vec<String>,
    /// (node, peer) → value
    pub cells: BTreeMap<(String, String), f64>,
}

impl Matrix {
    /// The `n` worst pairs (lowest, or highest when lower is better).
    pub fn worst(&self, n: usize) -> Vec<(&(String, String), f64)> {
        let mut v: Vec<(&(String, String), f64)> =
            self.cells.iter().map(|(k, v)| (k, *v)).collect();
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

    /// (min, max) of the values.
    pub fn range(&self) -> (f64, f64) {
        self.cells
            .values()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            })
    }
}

/// One matrix per measurement (metric name, or rail) with at least two pair values.
pub fn matrices(run: &RunResult) -> Vec<Matrix> {
    let mut out: Vec<Matrix> = Vec::new();
    for m in run
        .suites
        .iter()
        .flat_map(|s| &s.tests)
        .flat_map(|t| &t.metrics)
    {
        let (Some(node), Some(peer)) = (&m.node, &m.peer) else {
            continue;
        };
        if !m.value.is_finite() {
            continue;
        }
        // The same measurement across pairs: by its `rail` field when it has one (a port's
        // metric is named per pair, `…[client:port]`), else by its name. Names are not parsed.
        let label = match &m.rail {
            Some(r) => format!("rail {r}"),
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
        mx.cells.insert((node.clone(), peer.clone()), m.value);
    }
    out.retain(|m| m.cells.len() >= 2);
    for m in &mut out {
        m.nodes.sort();
    }
    out
}

/// A matrix as a markdown table (for `compare`).
pub fn markdown(m: &Matrix) -> String {
    let mut s = format!("| {} [{}] | {} |\n", m.metric, m.unit, m.nodes.join(" | "));
    s.push_str(&format!("|---|{}\n", "---:|".repeat(m.nodes.len())));
    for a in &m.nodes {
        let cells: Vec<String> = m
            .nodes
            .iter()
            .map(|b| {
                m.cells
                    .get(&(a.clone(), b.clone()))
                    .map(|v| super::fmt_num(*v))
                    .unwrap_or_else(|| if a == b { "·".into() } else { "—".into() })
            })
            .collect();
        s.push_str(&format!("| {a} | {} |\n", cells.join(" | ")));
    }
    s
}

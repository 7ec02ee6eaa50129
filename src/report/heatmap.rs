//! The rack on one screen (issue 46 item 8): every per-rail measurement (a metric with a `rail`
//! and a node — what RDMA per rail, per port and latency per rail record) as a node × rail heat
//! map. Rows are nodes, columns rail indexes (the node's k-th rail, in the order its results
//! name them, which is the inventory's `rdma_devices` order), each cell the median of the
//! node's results on that rail: for a pair measurement, every pair the node is in, as either end
//! (rail k meets rail k), the way the fleet rule counts them. A per-node summary (median over
//! its rails) and a per-rail summary (median over the nodes) come with it.
//!
//! A cell is judged against the measurement's median (its colour, in the HTML) and its line (a
//! cell whose median is past the threshold is red); the parts the diagnosis singles out — a
//! node or one rail of a node in every slow pair (`slow_node`, `slow_rail`, notes `odd_node`,
//! `odd_rail`) and one result far from its peers (`odd_one_out`) — mark their row or cell.
//!
//! At more than [`FULL_ROWS`] nodes a map shows the rows that need looking at (marked, red,
//! the worst) and says how close the others are to the median ([`HeatMap::view`]).
//! Pure: no I/O, no HTML (that is `html::charts::heat`).

use crate::run::fleet::{self, FleetPolicy};
use crate::run::model::{Diagnosis, Metric, RunResult};
use std::collections::BTreeMap;

/// Up to this many nodes a heat map shows every node's row.
pub(crate) const FULL_ROWS: usize = 16;
/// Above [`FULL_ROWS`], at least this many rows are shown (the worst first).
pub(crate) const WORST_ROWS: usize = 8;
/// Above [`FULL_ROWS`], at most this many rows are shown (marked and red rows first).
pub(crate) const MAX_ROWS: usize = 24;

/// Why a row or cell is marked: the diagnosis entry that names it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    /// `slow_node`, `slow_rail`, `odd_node`, `odd_rail`, `odd_one_out`.
    pub rule: String,
    /// The diagnosis's cause (the tooltip).
    pub cause: String,
}

impl Mark {
    /// A red (the cause of failures), not a WARN-level note.
    pub(crate) fn red(&self) -> bool {
        self.rule.starts_with("slow_")
    }
}

/// One node's results on one rail.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HeatCell {
    /// Median of the results.
    pub value: f64,
    /// How many results, and how many of them are past their own line.
    pub count: usize,
    pub failed: usize,
    /// The median of the node's own results (it measured: `node`), and of those towards it
    /// (`peer`), when a pair measurement has both.
    pub sent: Option<f64>,
    pub received: Option<f64>,
    /// The rail names the node has at this index (from its results).
    pub rail: String,
    pub mark: Option<Mark>,
}

/// One node's row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub node: String,
    /// One per rail index; `None` where the node has no result on that rail.
    pub cells: Vec<Option<HeatCell>>,
    /// Median of the row's cells.
    pub summary: f64,
    /// The node as a whole singled out (`slow_node`, `odd_node`).
    pub mark: Option<Mark>,
}

/// One measurement (metric base name, unit, message size) as node × rail.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HeatMap {
    /// `rdma_write_gbps` of `rdma_write_gbps[h100-01:mlx5_0]` (a name without `[…]` whole).
    pub base: String,
    pub unit: String,
    pub size_bytes: Option<u64>,
    pub higher_is_better: bool,
    /// The line of its results (the first met), and an informational reference.
    pub threshold: Option<f64>,
    pub reference: Option<f64>,
    /// Whether any result is a pair result (`peer`).
    pub pairs: bool,
    /// Per rail index, the names the nodes have there (usually one).
    pub rails: Vec<Vec<String>>,
    /// The median of the cells (each node's median on each rail): what a cell is compared
    /// with. Not the median of the pair results: among 3–4 nodes a slow node is in half of
    /// them, and their median falls between the slow and the good.
    pub median: f64,
    /// How many results the map is made of.
    pub results: usize,
    /// Every node's row, by name.
    pub rows: Vec<Row>,
    /// Per rail index, the median of the nodes' cells.
    pub rail_summary: Vec<Option<f64>>,
    /// Other measurements with exactly these cells (on InfiniBand a port is one HCA: the per
    /// port and per rail writes are the same numbers), drawn once.
    pub same: Vec<String>,
}

/// What a heat map shows at its size: the rows, and a line for the rows left out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct View<'a> {
    pub rows: Vec<&'a Row>,
    /// Rows not shown, and the largest distance of any of their cells from the median (a
    /// fraction: 0.012 is 1.2 %).
    pub hidden: usize,
    pub hidden_within: f64,
}

impl HeatMap {
    /// How much worse than the measurement's median `v` is, as a fraction of it (negative:
    /// better). Latency: higher is worse.
    pub(crate) fn worse_by(&self, v: f64) -> f64 {
        if self.median == 0.0 || !self.median.is_finite() {
            return 0.0;
        }
        let d = (self.median - v) / self.median.abs();
        if self.higher_is_better {
            d
        } else {
            -d
        }
    }

    /// Whether `v` is past the measurement's line.
    pub(crate) fn past_line(&self, v: f64) -> bool {
        match self.threshold {
            Some(t) if self.higher_is_better => v < t,
            Some(t) => v > t,
            None => false,
        }
    }

    /// A cell is odd when it is marked by the diagnosis, red, or 5 % or more worse than the
    /// measurement's median.
    pub(crate) fn odd(&self, c: &HeatCell) -> bool {
        c.mark.is_some() || self.past_line(c.value) || self.worse_by(c.value) >= ODD_FRACTION
    }

    /// The rows to show: all up to [`FULL_ROWS`] nodes (by name); above, the marked rows and
    /// those with a red or odd cell, worst first, at least [`WORST_ROWS`] and at most
    /// [`MAX_ROWS`], and how close the rest are.
    pub(crate) fn view(&self) -> View<'_> {
        if self.rows.len() <= FULL_ROWS {
            return View {
                rows: self.rows.iter().collect(),
                hidden: 0,
                hidden_within: 0.0,
            };
        }
        let worst = |r: &Row| {
            r.cells
                .iter()
                .flatten()
                .map(|c| self.worse_by(c.value))
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let needs_look =
            |r: &Row| r.mark.is_some() || r.cells.iter().flatten().any(|c| self.odd(c));
        let mut order: Vec<&Row> = self.rows.iter().collect();
        order.sort_by(|a, b| {
            needs_look(b)
                .cmp(&needs_look(a))
                .then(worst(b).total_cmp(&worst(a)))
                .then(a.node.cmp(&b.node))
        });
        let look = order.iter().filter(|r| needs_look(r)).count();
        let n = look.clamp(WORST_ROWS, MAX_ROWS).min(order.len());
        let (shown, rest) = order.split_at(n);
        let hidden_within = rest
            .iter()
            .flat_map(|r| r.cells.iter().flatten())
            .map(|c| self.worse_by(c.value).abs())
            .fold(0.0, f64::max);
        View {
            rows: shown.to_vec(),
            hidden: rest.len(),
            hidden_within,
        }
    }
}

/// A cell this much worse than the measurement's median is odd (as the fleet rule's least drop).
pub(crate) const ODD_FRACTION: f64 = 0.05;

/// `rdma_write_gbps[h100-01:mlx5_0]` → `rdma_write_gbps`; a name without a `[key]` is whole.
fn base_of(name: &str) -> &str {
    match name.split_once('[') {
        Some((b, k)) if k.ends_with(']') => b,
        _ => name,
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// One result as the heat map counts it.
struct Sample<'a> {
    node: &'a str,
    peer: Option<&'a str>,
    rail: &'a str,
    m: &'a Metric,
    test: &'a str,
}

/// The key of a measurement.
type Key = (String, String, Option<u64>);

/// Every per-rail measurement of `run` as a heat map, in the order first met.
pub(crate) fn heatmaps(run: &RunResult) -> Vec<HeatMap> {
    let mut groups: Vec<(Key, Vec<Sample>)> = vec![];
    for t in run.suites.iter().flat_map(|s| &s.tests) {
        for m in &t.metrics {
            // the metric's node, else its test's, else (a test of no node) the test's name
            let Some(rail) = m.rail.as_deref() else {
                continue;
            };
            let node = m
                .node
                .as_deref()
                .or(t.node.as_deref())
                .unwrap_or(t.name.as_str());
            if !m.value.is_finite() {
                continue;
            }
            let peer = m.peer.as_deref().filter(|p| *p != node);
            let key = (base_of(&m.name).to_string(), m.unit.clone(), m.size_bytes);
            let s = Sample {
                node,
                peer,
                rail,
                m,
                test: &t.name,
            };
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(s),
                None => groups.push((key, vec![s])),
            }
        }
    }
    // Each node's rail names in the order its results name them, per measurement: the index.
    let order: Vec<BTreeMap<&str, Vec<&str>>> = groups
        .iter()
        .map(|(_, v)| {
            let mut o: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for s in v {
                let l = o.entry(s.node).or_default();
                if !l.contains(&s.rail) {
                    l.push(s.rail);
                }
            }
            o
        })
        .collect();
    let index = |node: &str, rail: &str| {
        order
            .iter()
            .find_map(|o| o.get(node)?.iter().position(|r| *r == rail))
    };
    let policy = FleetPolicy::from_params(&run.params);
    let fleet_groups = match policy {
        Some(_) => fleet::measurements(run, &index),
        None => vec![],
    };
    let mut out: Vec<HeatMap> = groups
        .iter()
        .zip(&order)
        .map(|((key, samples), order)| {
            let fleet_marks = fleet_groups
                .iter()
                .filter(|g| g.base == key.0 && g.unit == key.1 && g.size_bytes == key.2)
                .flat_map(|g| fleet::attribute_measurement(g, &policy.unwrap_or_default()))
                .filter_map(|a| {
                    let d = named(run, &a)?;
                    Some(((a.node.clone(), a.rail), mark_of(d)))
                })
                .collect::<Vec<_>>();
            build(run, key, samples, order, &fleet_marks)
        })
        .collect();
    fold_same(&mut out);
    out
}

fn mark_of(d: &Diagnosis) -> Mark {
    Mark {
        rule: d.rule.clone(),
        cause: d.cause.clone(),
    }
}

/// The diagnosis entry that names the part `a` (its rule, its node, one of its tests).
fn named<'r>(run: &'r RunResult, a: &fleet::Attribution) -> Option<&'r Diagnosis> {
    let rule = match (a.below_line, a.rail.is_some()) {
        (true, false) => "slow_node",
        (true, true) => "slow_rail",
        (false, false) => "odd_node",
        (false, true) => "odd_rail",
    };
    run.diagnosis.iter().find(|d| {
        d.rule == rule
            && d.cause.starts_with(&format!("{} ", a.node))
            && d.evidence.iter().any(|e| a.tests.contains(e))
    })
}

fn build(
    run: &RunResult,
    key: &Key,
    samples: &[Sample],
    order: &BTreeMap<&str, Vec<&str>>,
    fleet_marks: &[((String, Option<usize>), Mark)],
) -> HeatMap {
    let idx = |node: &str, rail: &str| order.get(node)?.iter().position(|r| *r == rail);
    let ncols = order.values().map(Vec::len).max().unwrap_or(0);
    let mut rails: Vec<Vec<String>> = vec![vec![]; ncols];
    for l in order.values() {
        for (k, r) in l.iter().enumerate() {
            if !rails[k].iter().any(|x| x == r) {
                rails[k].push(r.to_string());
            }
        }
    }
    // (node, rail index) → every result it is in: (value, measured by it, past its line).
    type Results = Vec<(f64, bool, bool)>;
    let mut cells: BTreeMap<(&str, usize), Results> = BTreeMap::new();
    let mut nodes: Vec<&str> = vec![];
    for s in samples {
        let Some(k) = idx(s.node, s.rail) else {
            continue;
        };
        let failed = s.m.threshold.is_some_and(|t| !s.m.meets(t));
        cells
            .entry((s.node, k))
            .or_default()
            .push((s.m.value, true, failed));
        nodes.push(s.node);
        if let Some(p) = s.peer {
            cells
                .entry((p, k))
                .or_default()
                .push((s.m.value, false, failed));
            nodes.push(p);
        }
    }
    nodes.sort_unstable();
    nodes.dedup();
    let odd_ones: Vec<(&str, usize, Mark)> = run
        .diagnosis
        .iter()
        .filter(|d| d.rule == "odd_one_out")
        .filter_map(|d| {
            let name = d.metric.as_deref()?;
            let s = samples
                .iter()
                .find(|s| s.m.name == name && d.evidence.iter().any(|e| e == s.test))?;
            Some((s.node, idx(s.node, s.rail)?, mark_of(d)))
        })
        .collect();
    let mark_at = |node: &str, k: Option<usize>| {
        fleet_marks
            .iter()
            .find(|((n, r), _)| n == node && *r == k)
            .map(|(_, m)| m.clone())
            .or_else(|| {
                let k = k?;
                odd_ones
                    .iter()
                    .find(|(n, r, _)| *n == node && *r == k)
                    .map(|(_, _, m)| m.clone())
            })
    };
    let pairs = samples.iter().any(|s| s.peer.is_some());
    let rows: Vec<Row> = nodes
        .iter()
        .map(|n| {
            let cells: Vec<Option<HeatCell>> = (0..ncols)
                .map(|k| {
                    let v = cells.get(&(*n, k))?;
                    let of = |sent: bool| {
                        median(v.iter().filter(|x| x.1 == sent).map(|x| x.0).collect())
                    };
                    Some(HeatCell {
                        value: median(v.iter().map(|x| x.0).collect())?,
                        count: v.len(),
                        failed: v.iter().filter(|x| x.2).count(),
                        sent: of(true).filter(|_| pairs),
                        received: of(false).filter(|_| pairs),
                        rail: order
                            .get(n)
                            .and_then(|l| l.get(k))
                            .map(|r| r.to_string())
                            .unwrap_or_default(),
                        mark: mark_at(n, Some(k)),
                    })
                })
                .collect();
            Row {
                node: n.to_string(),
                summary: median(cells.iter().flatten().map(|c| c.value).collect())
                    .unwrap_or(f64::NAN),
                cells,
                mark: mark_at(n, None),
            }
        })
        .collect();
    let rail_summary = (0..ncols)
        .map(|k| {
            median(
                rows.iter()
                    .filter_map(|r| r.cells[k].as_ref())
                    .map(|c| c.value)
                    .collect(),
            )
        })
        .collect();
    let first = samples[0].m;
    HeatMap {
        base: key.0.clone(),
        unit: key.1.clone(),
        size_bytes: key.2,
        higher_is_better: first.higher_is_better,
        threshold: samples.iter().find_map(|s| s.m.threshold),
        reference: samples.iter().find_map(|s| s.m.reference),
        pairs,
        rails,
        median: median(
            rows.iter()
                .flat_map(|r| r.cells.iter().flatten())
                .map(|c| c.value)
                .collect(),
        )
        .unwrap_or(f64::NAN),
        results: samples.len(),
        rows,
        rail_summary,
        same: vec![],
    }
}

/// Maps with the very same cells as an earlier one (unit, nodes, rails, values) are folded
/// into it: their names go to its `same`.
fn fold_same(maps: &mut Vec<HeatMap>) {
    let mut i = 0;
    while i < maps.len() {
        let dup = (0..i).find(|&j| {
            let (a, b) = (&maps[j], &maps[i]);
            a.unit == b.unit
                && a.size_bytes == b.size_bytes
                && a.rows.len() == b.rows.len()
                && a.rows.iter().zip(&b.rows).all(|(x, y)| {
                    x.node == y.node
                        && x.cells.len() == y.cells.len()
                        && x.cells.iter().zip(&y.cells).all(|(c, d)| match (c, d) {
                            (Some(c), Some(d)) => c.value == d.value && c.count == d.count,
                            (None, None) => true,
                            _ => false,
                        })
                })
        });
        match dup {
            Some(j) => {
                let b = maps.remove(i);
                let a = &mut maps[j];
                a.same.push(b.base);
                // a mark of the folded map is a mark of the one drawn
                for (ra, rb) in a.rows.iter_mut().zip(b.rows) {
                    if ra.mark.is_none() {
                        ra.mark = rb.mark;
                    }
                    for (ca, cb) in ra.cells.iter_mut().zip(rb.cells) {
                        if let (Some(ca), Some(cb)) = (ca, cb) {
                            if ca.mark.is_none() {
                                ca.mark = cb.mark;
                            }
                        }
                    }
                }
            }
            None => i += 1,
        }
    }
}

#[cfg(test)]
mod tests;

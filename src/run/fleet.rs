//! The fleet view (issue 46 item 2): like parts compared across nodes, and the anomaly put on
//! the one part the evidence shares.
//!
//! Pure policy, no I/O. Every pair measurement (RDMA per rail, iperf3, latency: a metric with a
//! node, a peer and a unit that says which way is better) is grouped by measurement (script,
//! metric base name, unit, message size), then by node and by rail index. A node X is named when
//! the results it is in are mostly worse than the results it is not in, and the results it is not
//! in are not: X is in every slow pair. The reference is the median of the results without X, so
//! the rule works for 3–4 nodes (where a slow node is in half of all pairs and the median of all
//! pairs cannot see it) and for 1000 (where it is the median of nearly everything). A node slow
//! on every rail is one node; one rail index of a node is one HCA (or rail).
//!
//! An attribution whose slow results are past their fixed line explains those reds (a failure's
//! diagnosis); one whose results all pass their line is a WARN-level note with the numbers.

use super::model::{Metric, RunResult};
use super::peers::{better, knob, median, sorted, turned_off, Better};

/// Knobs of the fleet comparison (documented in docs/diagnosis.md; `--set fleet_min_drop`,
/// `fleet_mad_factor`, `fleet=false`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FleetPolicy {
    /// Least drop of a result below the reference (the median of the results without the
    /// part), as a fraction of it, for the result to be slow (default 0.05 = 5 %: a node's or
    /// an HCA's many results together are steadier than one result).
    pub min_drop: f64,
    /// Least drop in median absolute deviations of the reference results (default 4).
    pub mad_factor: f64,
}

impl Default for FleetPolicy {
    fn default() -> Self {
        FleetPolicy {
            min_drop: 0.05,
            mad_factor: 4.0,
        }
    }
}

impl FleetPolicy {
    /// The defaults with the run's `--set` knobs; `fleet=false` turns the comparison off.
    pub(crate) fn from_params(params: &serde_json::Map<String, serde_json::Value>) -> Option<Self> {
        let num = |k: &str| knob(params, k);
        if turned_off(params, "fleet") {
            return None;
        }
        let d = FleetPolicy::default();
        Some(FleetPolicy {
            min_drop: num("fleet_min_drop").map_or(d.min_drop, |v| v.clamp(0.0, 1.0)),
            mad_factor: num("fleet_mad_factor").map_or(d.mad_factor, |v| v.max(0.0)),
        })
    }
}

/// One pair result: who measured it towards whom, on which rail index.
#[derive(Debug, Clone)]
pub(crate) struct Sample<'a> {
    pub node: &'a str,
    pub peer: &'a str,
    pub rail: Option<usize>,
    pub metric: &'a Metric,
    pub test: &'a str,
}

impl Sample<'_> {
    fn involves(&self, x: &str) -> bool {
        self.node == x || self.peer == x
    }
}

/// One measurement across the fleet.
#[derive(Debug, Clone)]
pub(crate) struct Measurement<'a> {
    pub base: &'a str,
    pub unit: &'a str,
    pub size_bytes: Option<u64>,
    pub better: Better,
    pub samples: Vec<Sample<'a>>,
}

/// The way a part's slow results go: the part measuring (a write's sender) or measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Direction {
    Send,
    Receive,
}

/// The direction of `slow` among `with` (the results of node `x`): `Send` when every slow
/// result is x measuring and none of x being measured is slow, `Receive` the other way.
fn direction(x: &str, with: &[&Sample], slow: &[&&Sample]) -> Option<Direction> {
    let sending = |s: &Sample| s.node == x;
    let all_send = slow.iter().all(|s| sending(s));
    let all_receive = slow.iter().all(|s| !sending(s));
    let both_ways = with.iter().any(|s| sending(s)) && with.iter().any(|s| !sending(s));
    match (both_ways, all_send, all_receive) {
        (true, true, false) => Some(Direction::Send),
        (true, false, true) => Some(Direction::Receive),
        _ => None,
    }
}

/// The part the evidence shares.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Attribution {
    pub node: String,
    /// The rail index, for one HCA (rail) of the node; `None`: the node as a whole.
    pub rail: Option<usize>,
    /// A rail name of the node at that index (from its results), for the words.
    pub rail_name: Option<String>,
    pub base: String,
    pub unit: String,
    pub better: Better,
    /// Median of the part's slow results; how many results it is in, how many are slow.
    pub median: f64,
    pub count: usize,
    pub slow: usize,
    /// Median of the results without the part (the reference), how many.
    pub reference: f64,
    pub reference_count: usize,
    /// One direction only: every slow result is the part measuring towards its peers
    /// (`Send`: its writes) or its peers towards it (`Receive`), and none of the other way.
    pub direction: Option<Direction>,
    /// The fixed line of its results, when they have one.
    pub line: Option<f64>,
    /// Whether any of its slow results is past its fixed line (its test is red).
    pub below_line: bool,
    /// The testcases of its slow results, in the order met.
    pub tests: Vec<String>,
    /// The metric names of its slow results.
    pub metrics: Vec<String>,
}

fn base(name: &str) -> Option<&str> {
    let (base, key) = name.split_once('[')?;
    key.ends_with(']').then_some(base)
}

/// The pair measurements of `run` (metrics with a node and a peer, from the metric or its
/// test), grouped; `index` gives a rail name's index on a node.
pub(crate) fn measurements<'a>(
    run: &'a RunResult,
    index: &dyn Fn(&str, &str) -> Option<usize>,
) -> Vec<Measurement<'a>> {
    let mut out: Vec<Measurement> = vec![];
    for s in &run.suites {
        for t in &s.tests {
            for m in &t.metrics {
                let (Some(b), Some(better)) = (base(&m.name), better(&m.unit)) else {
                    continue;
                };
                let node = m.node.as_deref().or(t.node.as_deref());
                let peer = m.peer.as_deref().or(t.peer.as_deref());
                let (Some(node), Some(peer)) = (node, peer) else {
                    continue;
                };
                if node == peer || !m.value.is_finite() {
                    continue;
                }
                let rail = m.rail.as_deref().and_then(|r| index(node, r));
                let sample = Sample {
                    node,
                    peer,
                    rail,
                    metric: m,
                    test: &t.name,
                };
                match out
                    .iter_mut()
                    .find(|g| g.base == b && g.unit == m.unit && g.size_bytes == m.size_bytes)
                {
                    Some(g) => g.samples.push(sample),
                    None => out.push(Measurement {
                        base: b,
                        unit: &m.unit,
                        size_bytes: m.size_bytes,
                        better,
                        samples: vec![sample],
                    }),
                }
            }
        }
    }
    out
}

/// The reference of a set of results: their median and the band a result must fall below it
/// by to be slow.
#[derive(Debug, Clone, Copy)]
struct Reference {
    median: f64,
    band: f64,
    count: usize,
}

impl Reference {
    fn of(values: &[f64], policy: &FleetPolicy) -> Option<Reference> {
        if values.is_empty() {
            return None;
        }
        let v = sorted(values.iter().copied());
        let med = median(&v);
        if med <= 0.0 {
            return None;
        }
        let mad = median(&sorted(v.iter().map(|x| (x - med).abs())));
        Some(Reference {
            median: med,
            band: (policy.min_drop * med).max(policy.mad_factor * mad),
            count: v.len(),
        })
    }

    fn slow(&self, better: Better, v: f64) -> bool {
        match better {
            Better::Higher => self.median - v > self.band,
            Better::Lower => v - self.median > self.band,
        }
    }
}

/// Above this many nodes the reference of every part is the median of all results (removing
/// one node's few results from thousands changes nothing), so a 1000-node fleet costs one
/// sort per measurement, not one per node.
const SHARED_REFERENCE_NODES: usize = 16;

/// The attribution of `x` (on rail `rail`, or every rail) within `g`, when at least half the
/// results it is in are slow against the results without it, and those are slow at most a
/// quarter as often.
fn attribute(
    g: &Measurement,
    x: &str,
    rail: Option<usize>,
    shared: Option<Reference>,
    policy: &FleetPolicy,
) -> Option<Attribution> {
    let on_rail = |s: &&Sample| rail.is_none() || s.rail == rail;
    let with: Vec<&Sample> = g
        .samples
        .iter()
        .filter(on_rail)
        .filter(|s| s.involves(x))
        .collect();
    let without: Vec<f64> = g
        .samples
        .iter()
        .filter(on_rail)
        .filter(|s| !s.involves(x))
        .map(|s| s.metric.value)
        .collect();
    if with.is_empty() || without.is_empty() {
        return None;
    }
    let r = match (shared, rail) {
        (Some(r), None) => r,
        _ => Reference::of(&without, policy)?,
    };
    let slow: Vec<&&Sample> = with
        .iter()
        .filter(|s| r.slow(g.better, s.metric.value))
        .collect();
    // X is in every slow pair: the results without X are slow at most a quarter as often as
    // X's (another part's fault elsewhere in a large fleet does not hide X's).
    let slow_without = without.iter().filter(|v| r.slow(g.better, **v)).count();
    let share = |n: usize, of: usize| n as f64 / of as f64;
    if slow.is_empty()
        || slow.len() * 2 < with.len()
        || share(slow_without, without.len()) * 4.0 > share(slow.len(), with.len())
        || (rail.is_none() && !slow_on_every_rail(&with, &slow))
    {
        return None;
    }
    let mine = sorted(slow.iter().map(|s| s.metric.value));
    let mut tests: Vec<String> = vec![];
    let mut metrics: Vec<String> = vec![];
    for s in &slow {
        if !tests.iter().any(|t| t == s.test) {
            tests.push(s.test.to_string());
        }
        if !metrics.contains(&s.metric.name) {
            metrics.push(s.metric.name.clone());
        }
    }
    let rail_name = rail.and_then(|_| {
        with.iter()
            .find(|s| s.node == x)
            .and_then(|s| s.metric.rail.clone())
    });
    Some(Attribution {
        node: x.to_string(),
        rail,
        rail_name,
        base: g.base.to_string(),
        unit: g.unit.to_string(),
        better: g.better,
        median: median(&mine),
        count: with.len(),
        slow: slow.len(),
        reference: r.median,
        reference_count: r.count,
        direction: direction(x, &with, &slow),
        line: with.iter().find_map(|s| s.metric.threshold),
        below_line: slow
            .iter()
            .any(|s| s.metric.threshold.is_some_and(|t| !s.metric.meets(t))),
        tests,
        metrics,
    })
}

/// Whether `slow` (of the results `with` a node) touches every rail index the node was measured
/// on. One slow rail of a two-rail node (a DGX Spark's port) is half its results, as many as a
/// node slow on every rail in one direction: it is that rail, not the node.
fn slow_on_every_rail(with: &[&Sample], slow: &[&&Sample]) -> bool {
    with.iter()
        .filter_map(|s| s.rail)
        .all(|k| slow.iter().any(|s| s.rail == Some(k)))
}

/// The parts of one measurement the evidence shares: nodes slow on every rail first, then the
/// rails (HCAs) of the other nodes. Fewer than three nodes: nothing (no result without a node
/// of a pair is left to compare with).
pub(crate) fn attribute_measurement(g: &Measurement, policy: &FleetPolicy) -> Vec<Attribution> {
    let mut nodes: Vec<&str> = g.samples.iter().flat_map(|s| [s.node, s.peer]).collect();
    nodes.sort_unstable();
    nodes.dedup();
    if nodes.len() < 3 {
        return vec![];
    }
    let shared = (nodes.len() > SHARED_REFERENCE_NODES)
        .then(|| {
            let all: Vec<f64> = g.samples.iter().map(|s| s.metric.value).collect();
            Reference::of(&all, policy)
        })
        .flatten();
    let mut rails: Vec<usize> = g.samples.iter().filter_map(|s| s.rail).collect();
    rails.sort_unstable();
    rails.dedup();
    let mut out = vec![];
    for x in &nodes {
        if let Some(a) = attribute(g, x, None, shared, policy) {
            out.push(a);
            continue;
        }
        for k in &rails {
            out.extend(attribute(g, x, Some(*k), None, policy));
        }
    }
    out
}

/// Every part the fleet's pair results single out, one per (node, rail), the first
/// measurement's numbers kept and the others' tests and metrics added.
pub(crate) fn attributions(
    run: &RunResult,
    policy: &FleetPolicy,
    index: &dyn Fn(&str, &str) -> Option<usize>,
) -> Vec<Attribution> {
    let mut out: Vec<Attribution> = vec![];
    for g in measurements(run, index) {
        for a in attribute_measurement(&g, policy) {
            match out
                .iter_mut()
                .find(|o| o.node == a.node && o.rail == a.rail)
            {
                Some(o) => {
                    o.below_line |= a.below_line;
                    for t in a.tests {
                        if !o.tests.contains(&t) {
                            o.tests.push(t);
                        }
                    }
                    o.metrics.extend(a.metrics);
                }
                None => out.push(a),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::model::TestResult;

    /// A full mesh of `nodes` on `rails` rails, both directions, `value(node, peer, rail)`.
    fn mesh(nodes: &[&str], rails: usize, value: impl Fn(&str, &str, usize) -> f64) -> RunResult {
        let mut tests = vec![];
        for a in nodes {
            for b in nodes {
                if a == b {
                    continue;
                }
                let metrics = (0..rails)
                    .map(|k| Metric {
                        node: Some(a.to_string()),
                        peer: Some(b.to_string()),
                        rail: Some(format!("mlx5_{k}")),
                        threshold: Some(360.0),
                        ..Metric::new(
                            &format!("rdma_write_gbps[{a}:mlx5_{k}]"),
                            value(a, b, k),
                            "Gbit/s",
                        )
                    })
                    .collect();
                tests.push(TestResult {
                    node: Some(a.to_string()),
                    peer: Some(b.to_string()),
                    metrics,
                    ..TestResult::new(&format!("rdma: write [{a} -> {b}]"), "s")
                });
            }
        }
        RunResult::of_tests("s", tests)
    }

    fn index(_: &str, r: &str) -> Option<usize> {
        r.strip_prefix("mlx5_")?.parse().ok()
    }

    fn parts(run: &RunResult) -> Vec<(String, Option<usize>, bool)> {
        attributions(run, &FleetPolicy::default(), &index)
            .into_iter()
            .map(|a| (a.node, a.rail, a.below_line))
            .collect()
    }

    fn slow_node(x: &'static str, v: f64) -> impl Fn(&str, &str, usize) -> f64 {
        move |a, b, k| {
            if a == x || b == x {
                v
            } else {
                392.0 + k as f64 * 0.1
            }
        }
    }

    #[test]
    fn a_node_slow_on_every_rail_is_named_among_three_four_and_forty_nodes() {
        for n in [3usize, 4, 40] {
            let names: Vec<String> = (1..=n).map(|i| format!("n{i:02}")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            // above the line (370 > 360): a note; below (330): a red
            for (v, red) in [(370.0, false), (330.0, true)] {
                let run = mesh(&refs, 4, slow_node("n03", v));
                assert_eq!(
                    parts(&run),
                    [("n03".to_string(), None, red)],
                    "{n} nodes at {v}"
                );
            }
        }
    }

    #[test]
    fn two_faults_in_a_large_fleet_are_each_named_as_their_own_part() {
        // 64 nodes: n17 slow on every rail, n40's rail 2 at 250 (found by the HTML's 64-node
        // model): the node is a node and the HCA an HCA, neither hides the other
        let names: Vec<String> = (1..=64).map(|i| format!("n{i:02}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let run = mesh(&refs, 4, |a, b, k| {
            if a == "n17" || b == "n17" {
                330.0
            } else if (a == "n40" || b == "n40") && k == 2 {
                250.0
            } else {
                392.0
            }
        });
        assert_eq!(
            parts(&run),
            [
                ("n17".to_string(), None, true),
                ("n40".to_string(), Some(2), true)
            ]
        );
    }

    #[test]
    fn one_slow_hca_is_named_as_that_rail_not_the_node() {
        let run = mesh(&["a", "b", "c", "d"], 8, |x, y, k| {
            if (x == "c" || y == "c") && k == 5 {
                251.3
            } else {
                392.18
            }
        });
        assert_eq!(parts(&run), [("c".to_string(), Some(5), true)]);
        let a = &attributions(&run, &FleetPolicy::default(), &index)[0];
        assert_eq!(a.rail_name.as_deref(), Some("mlx5_5"));
        assert_eq!(
            (a.median, a.reference, a.count, a.slow),
            (251.3, 392.18, 6, 6)
        );
    }

    #[test]
    fn a_slow_transmitter_alone_is_half_the_node_s_results_and_still_named() {
        // c's writes are slow on rail 2, writes towards c are fine: half of c's results
        let run = mesh(&["a", "b", "c", "d"], 4, |x, _, k| {
            if x == "c" && k == 2 {
                251.3
            } else {
                392.18
            }
        });
        assert_eq!(parts(&run), [("c".to_string(), Some(2), true)]);
    }

    #[test]
    fn one_slow_rail_of_a_two_rail_node_is_that_rail_not_the_node() {
        // a DGX Spark's two rails through a switch: c's rail 1 slow both ways is half of c's
        // results, as many as a node slow in one direction, and still the rail
        let run = mesh(&["a", "b", "c", "d"], 2, |x, y, k| {
            if (x == "c" || y == "c") && k == 1 {
                61.2
            } else {
                94.97
            }
        });
        assert_eq!(parts(&run), [("c".to_string(), Some(1), true)]);
        // c slow on both rails is still the node
        let run = mesh(&["a", "b", "c", "d"], 2, slow_node("c", 330.0));
        assert_eq!(parts(&run), [("c".to_string(), None, true)]);
    }

    #[test]
    fn a_node_slow_in_one_direction_says_which() {
        // c's writes slow on both rails, writes towards c fine: c, sending
        let run = mesh(&["a", "b", "c", "d"], 2, |x, _, _| {
            if x == "c" {
                52.3
            } else {
                94.97
            }
        });
        let a = attributions(&run, &FleetPolicy::default(), &index);
        assert_eq!(
            a.iter()
                .map(|a| (a.node.as_str(), a.rail, a.direction))
                .collect::<Vec<_>>(),
            [("c", None, Some(Direction::Send))]
        );
        // writes towards c slow: receiving; both ways: no direction
        let run = mesh(&["a", "b", "c", "d"], 2, |_, y, _| {
            if y == "c" {
                52.3
            } else {
                94.97
            }
        });
        assert_eq!(
            attributions(&run, &FleetPolicy::default(), &index)[0].direction,
            Some(Direction::Receive)
        );
        let run = mesh(&["a", "b", "c", "d"], 2, slow_node("c", 52.3));
        assert_eq!(
            attributions(&run, &FleetPolicy::default(), &index)[0].direction,
            None
        );
    }

    #[test]
    fn a_healthy_fleet_with_noise_and_one_bad_pair_names_no_part() {
        // ±1 % noise everywhere, one pair on one rail at half: no part shares the evidence
        let run = mesh(&["a", "b", "c", "d", "e"], 8, |x, y, k| {
            if x == "b" && y == "d" && k == 1 {
                196.0
            } else {
                392.0 * (1.0 + ((x.len() * 7 + y.as_bytes()[0] as usize + k) % 5) as f64 * 0.005)
            }
        });
        assert!(parts(&run).is_empty(), "{:?}", parts(&run));
    }

    #[test]
    fn two_nodes_have_no_reference_and_the_comparison_can_be_turned_off() {
        let run = mesh(&["a", "b"], 2, slow_node("a", 200.0));
        assert!(parts(&run).is_empty());
        let run = mesh(&["a", "b", "c"], 2, slow_node("a", 200.0));
        let mut p = serde_json::Map::new();
        p.insert("fleet".into(), serde_json::json!("false"));
        assert!(FleetPolicy::from_params(&p).is_none());
        assert_eq!(parts(&run).len(), 1);
    }

    #[test]
    fn latency_higher_is_worse() {
        let mut run = mesh(&["a", "b", "c", "d"], 2, slow_node("b", 4.9));
        for t in &mut run.suites[0].tests {
            for m in &mut t.metrics {
                m.unit = "us".into();
                m.higher_is_better = false;
                m.threshold = None;
                if m.value > 100.0 {
                    m.value = 1.47;
                }
            }
        }
        assert_eq!(parts(&run), [("b".to_string(), None, false)]);
    }
}

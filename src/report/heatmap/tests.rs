//! The heat-map model on runs built here: a full mesh of pair tests per rail, diagnosed as a
//! real run is (`run::diagnosis::diagnose`), then drawn as node × rail.

use super::*;
use crate::run::diagnosis::{NodeTopo, Topology};
use crate::run::model::{Status, TestResult};

fn names(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("n{i:02}")).collect()
}

fn topo(nodes: &[String], rails: usize) -> Topology {
    Topology {
        nodes: nodes
            .iter()
            .map(|n| NodeTopo {
                name: n.clone(),
                rails: (0..rails).map(|k| format!("mlx5_{k}")).collect(),
                ..Default::default()
            })
            .collect(),
    }
}

/// A full mesh of `nodes` on `rails` rails, both directions, `metric` with `value(node, peer,
/// rail)` and `threshold`; a test with a value past its line fails. Diagnosed.
fn mesh(
    nodes: &[String],
    rails: usize,
    (base, unit, threshold): (&str, &str, Option<f64>),
    value: impl Fn(&str, &str, usize) -> f64,
) -> RunResult {
    let mut tests = vec![];
    for a in nodes {
        for b in nodes {
            if a == b {
                continue;
            }
            let metrics: Vec<Metric> = (0..rails)
                .map(|k| Metric {
                    node: Some(a.clone()),
                    peer: Some(b.clone()),
                    rail: Some(format!("mlx5_{k}")),
                    threshold,
                    higher_is_better: unit != "us",
                    ..Metric::new(&format!("{base}[{a}:mlx5_{k}]"), value(a, b, k), unit)
                })
                .collect();
            let failed = metrics
                .iter()
                .any(|m| m.threshold.is_some_and(|t| !m.meets(t)));
            tests.push(TestResult {
                node: Some(a.clone()),
                peer: Some(b.clone()),
                status: if failed {
                    Status::Failure
                } else {
                    Status::Pass
                },
                message: failed.then(|| "below its line".to_string()),
                metrics,
                ..TestResult::new(&format!("rdma: write [{a} -> {b}]"), "s")
            });
        }
    }
    let mut run = RunResult::of_tests("s", tests);
    run.diagnosis = crate::run::diagnosis::diagnose(&run, &topo(nodes, rails));
    run
}

const WRITE: (&str, &str, Option<f64>) = ("rdma_write_gbps", "Gbit/s", Some(360.0));
const LAT: (&str, &str, Option<f64>) = ("rdma_lat_usec", "us", None);

/// A little noise (±0.5 %) so that no two cells are alike.
fn noise(a: &str, b: &str, k: usize) -> f64 {
    let h = a.bytes().chain(b.bytes()).map(usize::from).sum::<usize>() + 7 * k;
    1.0 + ((h % 11) as f64 - 5.0) * 0.001
}

fn one(run: &RunResult, base: &str) -> HeatMap {
    heatmaps(run)
        .into_iter()
        .find(|m| m.base == base)
        .unwrap_or_else(|| panic!("no heat map of {base}"))
}

/// (node, rail index) of every marked cell, and the marked rows.
type Marks = (Vec<(String, usize, String)>, Vec<(String, String)>);

fn marks(m: &HeatMap) -> Marks {
    let mut cells = vec![];
    let mut rows = vec![];
    for r in &m.rows {
        if let Some(k) = &r.mark {
            rows.push((r.node.clone(), k.rule.clone()));
        }
        for (i, c) in r.cells.iter().enumerate() {
            if let Some(k) = c.as_ref().and_then(|c| c.mark.as_ref()) {
                cells.push((r.node.clone(), i, k.rule.clone()));
            }
        }
    }
    (cells, rows)
}

#[test]
fn a_node_slow_on_every_rail_marks_its_row_and_its_cells_are_red() {
    let nodes = names(4);
    let run = mesh(&nodes, 8, WRITE, |a, b, k| {
        if a == "n03" || b == "n03" {
            331.6
        } else {
            392.18 * noise(a, b, k)
        }
    });
    assert!(
        run.diagnosis.iter().any(|d| d.rule == "slow_node"),
        "{:#?}",
        run.diagnosis
    );
    let m = one(&run, "rdma_write_gbps");
    assert_eq!(m.rows.len(), 4);
    assert_eq!(m.rails.len(), 8);
    assert_eq!(m.rails[5], ["mlx5_5"]);
    let (cells, rows) = marks(&m);
    assert_eq!(rows, [("n03".to_string(), "slow_node".to_string())]);
    assert!(cells.is_empty(), "{cells:?}");
    let slow = m.rows.iter().find(|r| r.node == "n03").unwrap();
    // every result of n03 (6 per rail: 3 sent, 3 received) is 331.6, past the 360 line
    for c in slow.cells.iter().flatten() {
        assert_eq!((c.value, c.count, c.failed), (331.6, 6, 6));
        assert!(m.past_line(c.value) && m.odd(c));
    }
    assert_eq!(slow.summary, 331.6);
    // the others are within their noise of the median: two of their six results are n03's
    for r in m.rows.iter().filter(|r| r.node != "n03") {
        for c in r.cells.iter().flatten() {
            assert_eq!((c.count, c.failed), (6, 2), "{}", r.node);
            assert!(!m.odd(c), "{} {c:?}", r.node);
            assert!(m.worse_by(c.value).abs() < 0.01);
        }
    }
    // the per-rail summary is the median of the four nodes' cells
    assert!(m.rail_summary.iter().all(|s| s.is_some_and(|v| v > 385.0)));
    // at 4 nodes, every row is shown, by name
    let v = m.view();
    assert_eq!(v.hidden, 0);
    let shown: Vec<&str> = v.rows.iter().map(|r| r.node.as_str()).collect();
    assert_eq!(shown, ["n01", "n02", "n03", "n04"]);
}

#[test]
fn one_slow_hca_marks_that_cell_only() {
    let nodes = names(4);
    let run = mesh(&nodes, 8, WRITE, |a, b, k| {
        if (a == "n02" || b == "n02") && k == 5 {
            251.3
        } else {
            392.18
        }
    });
    let m = one(&run, "rdma_write_gbps");
    let (cells, rows) = marks(&m);
    assert!(rows.is_empty(), "{rows:?}");
    assert_eq!(cells, [("n02".to_string(), 5, "slow_rail".to_string())]);
    let r = m.rows.iter().find(|r| r.node == "n02").unwrap();
    let odd: Vec<usize> = (0..8)
        .filter(|&k| r.cells[k].as_ref().is_some_and(|c| m.odd(c)))
        .collect();
    assert_eq!(odd, [5], "only the slow HCA's cell is odd");
    // its row summary is the median over its rails: the one slow rail does not move it
    assert_eq!(r.summary, 392.18);
}

#[test]
fn a_slow_node_above_its_line_is_a_warn_mark_not_red() {
    let nodes = names(5);
    let run = mesh(&nodes, 4, WRITE, |a, b, _| {
        if a == "n04" || b == "n04" {
            370.0
        } else {
            392.0
        }
    });
    let m = one(&run, "rdma_write_gbps");
    let (_, rows) = marks(&m);
    assert_eq!(rows, [("n04".to_string(), "odd_node".to_string())]);
    let r = m.rows.iter().find(|r| r.node == "n04").unwrap();
    assert!(!r.mark.as_ref().unwrap().red());
    // odd (5.6 % below the median), not past its line
    let c = r.cells[0].as_ref().unwrap();
    assert!(m.odd(c) && !m.past_line(c.value), "{c:?}");
}

#[test]
fn latency_is_worse_when_higher_and_the_odd_one_out_marks_its_cell() {
    let nodes = names(4);
    let run = mesh(&nodes, 8, LAT, |a, b, k| {
        if a == "n02" && b == "n04" && k == 4 {
            6.2
        } else {
            1.47
        }
    });
    assert!(
        run.diagnosis.iter().any(|d| d.rule == "odd_one_out"),
        "{:#?}",
        run.diagnosis
    );
    let m = one(&run, "rdma_lat_usec");
    assert!(!m.higher_is_better);
    assert_eq!(m.unit, "us");
    assert!(m.worse_by(6.2) > 1.0 && m.worse_by(1.0) < 0.0);
    let (cells, rows) = marks(&m);
    assert!(rows.is_empty());
    assert_eq!(cells, [("n02".to_string(), 4, "odd_one_out".to_string())]);
    // n02's cell on rail 4: one result of six is 6.2, its median still 1.47; sent and
    // received apart
    let c = m.rows[1].cells[4].as_ref().unwrap();
    assert_eq!(
        (c.value, c.sent, c.received),
        (1.47, Some(1.47), Some(1.47))
    );
}

#[test]
fn sixty_four_nodes_show_the_marked_and_worst_rows_and_say_how_close_the_rest_are() {
    let nodes = names(64);
    let run = mesh(&nodes, 8, WRITE, |a, b, k| {
        if a == "n17" || b == "n17" {
            300.0
        } else if (a == "n40" || b == "n40") && k == 2 {
            380.0
        } else {
            392.0 * noise(a, b, k)
        }
    });
    let m = one(&run, "rdma_write_gbps");
    assert_eq!(m.rows.len(), 64);
    let (cells, rows) = marks(&m);
    assert_eq!(rows, [("n17".to_string(), "slow_node".to_string())]);
    // n40's rail 2 is 3 % below: neither a part of the diagnosis nor odd, but the next worst
    assert!(cells.is_empty(), "{cells:?}");
    let v = m.view();
    assert_eq!(v.rows.len(), WORST_ROWS);
    assert_eq!(v.hidden, 64 - WORST_ROWS);
    // the marked node first, then the worst
    let shown: Vec<&str> = v.rows.iter().map(|r| r.node.as_str()).collect();
    assert_eq!(&shown[..2], ["n17", "n40"], "{shown:?}");
    // the rest are within their noise (±0.5 %, plus the two of 126 results that are n17's)
    assert!(v.hidden_within < 0.01, "{}", v.hidden_within);
    assert!(v.hidden_within > 0.0);
}

#[test]
fn the_same_numbers_under_two_names_are_drawn_once() {
    let nodes = names(3);
    let mut run = mesh(&nodes, 2, WRITE, |_, _, _| 392.18);
    // on InfiniBand a port is one HCA: the port's sum is the rail's value
    for t in &mut run.suites[0].tests {
        let port: Vec<Metric> = t
            .metrics
            .iter()
            .map(|m| Metric {
                name: m.name.replace("rdma_write_gbps", "rdma_write_port_gbps"),
                ..m.clone()
            })
            .collect();
        t.metrics.extend(port);
    }
    let maps = heatmaps(&run);
    assert_eq!(maps.len(), 1, "{maps:#?}");
    assert_eq!(maps[0].same, ["rdma_write_port_gbps"]);
}

#[test]
fn a_rail_metric_of_one_node_without_a_peer_is_a_cell_of_its_own() {
    let t = TestResult {
        metrics: vec![
            Metric {
                rail: Some("rocep1s0f1".into()),
                node: Some("spark-01".into()),
                reference: Some(90.0),
                ..Metric::new("rail_bw", 40.0, "Gbit/s")
            },
            Metric {
                rail: Some("roceP2p1s0f1".into()),
                node: Some("spark-01".into()),
                reference: Some(90.0),
                ..Metric::new("rail_bw", 95.0, "Gbit/s")
            },
        ],
        ..TestResult::new("rails", "s")
    };
    let m = one(&RunResult::of_tests("s", vec![t]), "rail_bw");
    assert!(!m.pairs);
    assert_eq!(m.rows.len(), 1);
    let c: Vec<f64> = m.rows[0].cells.iter().flatten().map(|c| c.value).collect();
    assert_eq!(c, [40.0, 95.0]);
    // a reference is no line: nothing is past it
    assert!(!m.past_line(40.0));
    assert_eq!(m.reference, Some(90.0));
}

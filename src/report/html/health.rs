//! The fabric health table: one table per node of what the health checks recorded (counter
//! deltas, PCIe link, RoCE active MTU, the GID's RoCE version, optics RX power), read from metrics named
//! `counter_delta[node:port:counter]`, `pcie_gts[node:iface]`, `pcie_width[node:iface]`,
//! `roce_active_mtu[node:device]`, `roce_gid_version[node:device:gidN]`,
//! `optics_rx_dbm[node:iface:lane]`. A value on the wrong side
//! of its threshold, and a counter the test's failure names, is highlighted.

use super::super::fmt_in;
use super::styles::esc;
use crate::run::model::{Metric, RunResult, Status, TestResult};
use std::collections::BTreeMap;
use std::fmt::Write;

const KINDS: &[(&str, &str)] = &[
    ("counter_delta", "counter growth"),
    ("pcie_gts", "PCIe speed"),
    ("pcie_width", "PCIe width"),
    ("roce_active_mtu", "RoCE active MTU"),
    ("roce_gid_version", "RoCE GID version"),
    ("optics_rx_dbm", "optics RX power"),
];

/// (what, item) of a health metric: `counter_delta[spark-01:rocep1s0f1/1:np_cnp_sent]` is
/// ("counter growth", "rocep1s0f1/1 np_cnp_sent").
fn split(m: &Metric) -> Option<(&'static str, String)> {
    let (kind, rest) = m.name.split_once('[')?;
    let label = KINDS.iter().find(|(k, _)| *k == kind)?.1;
    let inner = rest.strip_suffix(']')?;
    let item = inner.split_once(':').map_or(inner, |(_, i)| i);
    Some((label, item.replace(':', " ")))
}

/// Is this row a difference: beyond its threshold, or a counter the failed test names?
fn bad(t: &TestResult, m: &Metric, item: &str) -> bool {
    let beyond = m.threshold.is_some_and(|th| !m.meets(th));
    let counter = item.rsplit(' ').next().unwrap_or("");
    let named = t.status == Status::Failure
        && m.name.starts_with("counter_delta[")
        && t.message
            .as_deref()
            .is_some_and(|msg| msg.contains(counter));
    beyond || named
}

/// One row: check, port/item, value, expected, highlighted.
type Row = (&'static str, String, String, String, bool);

pub(super) fn section(h: &mut String, run: &RunResult) {
    let mut by_node: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for t in run.suites.iter().flat_map(|s| &s.tests) {
        for m in &t.metrics {
            let Some((what, item)) = split(m) else {
                continue;
            };
            let node = m
                .node
                .clone()
                .or_else(|| t.node.clone())
                .unwrap_or_default();
            let th = m.threshold.map(|x| fmt_in(x, &m.unit)).unwrap_or_default();
            let value = format!("{} {}", fmt_in(m.value, &m.unit), m.unit);
            let b = bad(t, m, &item);
            by_node
                .entry(node)
                .or_default()
                .push((what, item, value, th, b));
        }
    }
    if by_node.is_empty() {
        return;
    }
    h.push_str("<section id=\"health\"><h2>Fabric health per node</h2>");
    for (node, rows) in by_node {
        let _ = write!(*h, "<h3>{}</h3><table><tr><th>check</th><th>port / item</th><th class=\"num\">value</th><th class=\"num\">expected</th></tr>", esc(&node));
        for (what, item, value, th, b) in rows {
            let cls = if b { "num bad" } else { "num" };
            let _ = write!(
                *h,
                "<tr><td>{}</td><td class=\"mono\">{}</td><td class=\"{cls}\">{}</td><td class=\"num\">{}</td></tr>",
                esc(what),
                esc(&item),
                esc(&value),
                esc(&th)
            );
        }
        h.push_str("</table>");
    }
    h.push_str("</section>\n");
}

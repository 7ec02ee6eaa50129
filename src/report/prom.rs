//! `fabcheck health --prom DIR`: the node's gauges in the Prometheus text exposition format,
//! for node_exporter's textfile collector (docs/continuous.md). HELP and TYPE once per family,
//! base units (seconds, bytes per second), one series per node / interface / counter: never per
//! run or per message size. Families without a sample are left out.

use crate::run::health::{check_name, Outcome};
use crate::run::model::{Metric, RunResult, Status};
use std::collections::BTreeMap;
use std::fmt::Write as _;

type Labels = Vec<(&'static str, String)>;

/// The families in the order they are written: (name, help).
const FAMILIES: &[(&str, &str)] = &[
    ("fabcheck_health_status", "Verdict of the last fabcheck health run on the node: 0 healthy, 1 unhealthy, 4 unknown (nothing judged); the exit code of the run."),
    ("fabcheck_health_last_run_timestamp_seconds", "When the last fabcheck health run on the node started, seconds since the Unix epoch."),
    ("fabcheck_health_duration_seconds", "How long the last fabcheck health run on the node took."),
    ("fabcheck_health_checks", "Checks of the last run by outcome (pass, failure, error: could not run, skipped)."),
    ("fabcheck_health_check_unknown", "1 for a check that could not run in the last run (a tool missing, a timeout): not judged."),
    ("fabcheck_health_check_failed", "1 for a check that failed in the last run."),
    ("fabcheck_link_speed_bytes_per_second", "Negotiated speed of a fabric interface."),
    ("fabcheck_link_expected_speed_bytes_per_second", "Speed a fabric interface is expected to negotiate (inventory, profile, or what both ends advertise)."),
    ("fabcheck_ib_port_ok", "1 when an InfiniBand HCA port is Active, LinkUp, at the expected rate, with a LID and a subnet manager."),
    ("fabcheck_pcie_link_width", "Negotiated PCIe link width (lanes) of a fabric interface's NIC."),
    ("fabcheck_pcie_link_expected_width", "PCIe link width (lanes) a fabric interface's NIC is expected to run."),
    ("fabcheck_link_flaps", "Times a fabric interface (InfiniBand: HCA port) went down since the last run (since boot on a first run or after a reboot): the kernel log's link-down lines (InfiniBand: LinkDownedCounter growth); healthcheck context only."),
    ("fabcheck_rdma_loopback_bandwidth_bytes_per_second", "Last measured loopback RDMA write bandwidth of an RDMA device (ib_write_bw with server and client on the device; epilog context only): the HCA and its PCIe path, not the cable."),
    ("fabcheck_rdma_loopback_threshold_bytes_per_second", "The loopback bandwidth the epilog required of that RDMA device (rdma_pct of its share of the port's expected speed)."),
    ("fabcheck_port_stat_growth", "Growth of a judged statistic of a fabric port (error counters; congestion ones such as PortXmitWait too) between two readings: since last_run (the last run's reading and this one's) or window (the healthcheck window)."),
];

/// The text of DIR/fabcheck.prom for one run.
pub(crate) fn render(o: &Outcome) -> String {
    let mut samples: Samples = BTreeMap::new();
    let base = || -> Labels {
        vec![
            ("node", o.node.to_string()),
            ("context", o.context.to_string()),
        ]
    };
    let mut add = |family: &'static str, labels: Labels, v: f64| {
        samples.entry(family).or_default().push((labels, v));
    };
    add("fabcheck_health_status", base(), o.verdict.code() as f64);
    add(
        "fabcheck_health_last_run_timestamp_seconds",
        base(),
        o.started_s,
    );
    add("fabcheck_health_duration_seconds", base(), o.duration_s);
    for st in [
        Status::Pass,
        Status::Failure,
        Status::Error,
        Status::Skipped,
    ] {
        let n = o.tests.iter().filter(|t| t.status == st).count();
        let mut l = base();
        l.push(("status", status_word(st).to_string()));
        add("fabcheck_health_checks", l, n as f64);
    }
    for t in o.tests {
        let family = match t.status {
            Status::Error => "fabcheck_health_check_unknown",
            Status::Failure => "fabcheck_health_check_failed",
            _ => continue,
        };
        let mut l = base();
        l.push(("check", check_name(t)));
        add(family, l, 1.0);
    }
    for t in o.tests {
        // the two readings a growth is between: the last run's and this one, or the window's
        let since = if t.name.contains("window") {
            "window"
        } else {
            "last_run"
        };
        for m in &t.metrics {
            for (family, mut labels, v) in gauges_of(o.node, m) {
                if family == "fabcheck_port_stat_growth" {
                    labels.push(("since", since.to_string()));
                }
                add(family, labels, v);
            }
        }
    }
    exposition(FAMILIES, samples)
}

type Samples = BTreeMap<&'static str, Vec<(Labels, f64)>>;

/// The exposition text of `samples`, family by family in the order of `families` (HELP and
/// TYPE once each; families without a sample left out).
fn exposition(families: &[(&'static str, &str)], mut samples: Samples) -> String {
    let mut out = String::new();
    for (family, help) in families {
        let Some(list) = samples.get_mut(family) else {
            continue;
        };
        list.sort_by(|a, b| a.0.cmp(&b.0));
        list.dedup_by(|a, b| a.0 == b.0);
        let _ = writeln!(out, "# HELP {family} {help}");
        let _ = writeln!(out, "# TYPE {family} gauge");
        for (labels, v) in list.iter() {
            if labels.is_empty() {
                let _ = writeln!(out, "{family} {}", number(*v));
            } else {
                let _ = writeln!(out, "{family}{{{}}} {}", label_text(labels), number(*v));
            }
        }
    }
    out
}

/// The families of `fabcheck run --prom DIR` (DIR/fabcheck-run.prom), in the order written.
const RUN_FAMILIES: &[(&str, &str)] = &[
    ("fabcheck_run_status", "Exit code of the last fabcheck run: 0 passed, 1 a test failed or could not run, 3 interrupted."),
    ("fabcheck_run_last_run_timestamp_seconds", "When the last fabcheck run started, seconds since the Unix epoch."),
    ("fabcheck_run_duration_seconds", "How long the last fabcheck run took."),
    ("fabcheck_run_tests", "Testcases of the last fabcheck run by outcome (pass, failure, error: could not run, skipped)."),
    ("fabcheck_rdma_write_bandwidth_bytes_per_second", "Last measured RDMA write bandwidth (ib_write_bw average) from node to peer on a rail (RDMA device), a port (its rails together) or all ports of the node."),
    ("fabcheck_rdma_write_threshold_bytes_per_second", "The RDMA write bandwidth the last run required on that rail, port or node (below it the test failed)."),
    ("fabcheck_nccl_busbw_bytes_per_second", "Last measured NCCL bus bandwidth of a test: the best over its message sizes (max) and their average (avg)."),
];

/// The gauges of a finished `fabcheck run`: its verdict, and the last measured RDMA and NCCL
/// bandwidth with the threshold where the script gave one. No series per message size or run.
pub(crate) fn render_run(run: &RunResult, code: i32, started_s: f64) -> String {
    let mut samples: Samples = BTreeMap::new();
    let mut add = |family: &'static str, labels: Labels, v: f64| {
        samples.entry(family).or_default().push((labels, v));
    };
    add("fabcheck_run_status", vec![], code as f64);
    add("fabcheck_run_last_run_timestamp_seconds", vec![], started_s);
    add(
        "fabcheck_run_duration_seconds",
        vec![],
        run.duration_ms as f64 / 1000.0,
    );
    let c = run.counts();
    for (st, n) in [
        ("pass", c.pass),
        ("failure", c.failure),
        ("error", c.error),
        ("skipped", c.skipped),
    ] {
        add(
            "fabcheck_run_tests",
            vec![("status", st.to_string())],
            n as f64,
        );
    }
    for t in run.suites.iter().flat_map(|s| &s.tests) {
        for m in &t.metrics {
            for (family, labels, v) in run_gauges_of(&t.name, m) {
                add(family, labels, v);
            }
        }
    }
    exposition(RUN_FAMILIES, samples)
}

/// The bandwidth gauges of one metric of a run: the stdlib's `rdma_write_gbps[node:rail]`,
/// `rdma_write_port_gbps[node:port]`, `rdma_write_node_gbps[node]` (Gbit/s) and NCCL's
/// `nccl_busbw_max_gbs` / `nccl_busbw_avg_gbs` (GB/s); per-size numbers are left out.
fn run_gauges_of(test: &str, m: &Metric) -> Vec<(&'static str, Labels, f64)> {
    let gbit = |v: f64| (v * 1e9 / 8.0).round();
    let (name, key) = m.name.split_once('[').unwrap_or((m.name.as_str(), ""));
    let parts: Vec<&str> = key.trim_end_matches(']').split(':').collect();
    let rdma = match (name, parts.as_slice()) {
        ("rdma_write_gbps" | "rdma_write_port_gbps", [node, rail]) => Some((*node, *rail)),
        ("rdma_write_node_gbps", [node]) => Some((*node, "all ports")),
        _ => None,
    };
    if let Some((node, rail)) = rdma {
        let l = vec![
            ("node", node.to_string()),
            ("peer", m.peer.clone().unwrap_or_default()),
            ("rail", rail.to_string()),
        ];
        let mut out = vec![(
            "fabcheck_rdma_write_bandwidth_bytes_per_second",
            l.clone(),
            gbit(m.value),
        )];
        if let Some(t) = m.threshold {
            out.push(("fabcheck_rdma_write_threshold_bytes_per_second", l, gbit(t)));
        }
        return out;
    }
    let stat = match name {
        "nccl_busbw_max_gbs" => "max",
        "nccl_busbw_avg_gbs" => "avg",
        _ => return vec![],
    };
    vec![(
        "fabcheck_nccl_busbw_bytes_per_second",
        vec![("test", test.to_string()), ("stat", stat.to_string())],
        (m.value * 1e9).round(),
    )]
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Failure => "failure",
        Status::Error => "error",
        Status::Skipped => "skipped",
    }
}

/// The gauges one recorded metric gives (the stdlib's `name[node:a:b]` metrics).
fn gauges_of(node: &str, m: &Metric) -> Vec<(&'static str, Labels, f64)> {
    let Some((name, key)) = m.name.split_once('[') else {
        return vec![];
    };
    let parts: Vec<&str> = key.trim_end_matches(']').split(':').collect();
    let n = || ("node", node.to_string());
    let mbps = |v: f64| v * 1e6 / 8.0;
    match (name, parts.as_slice()) {
        ("link_speed_mbps", [_, iface]) => {
            let l = vec![n(), ("interface", iface.to_string())];
            let mut out = vec![(
                "fabcheck_link_speed_bytes_per_second",
                l.clone(),
                mbps(m.value),
            )];
            if let Some(t) = m.threshold {
                out.push(("fabcheck_link_expected_speed_bytes_per_second", l, mbps(t)));
            }
            out
        }
        ("ib_port_ok", [_, port]) => {
            vec![(
                "fabcheck_ib_port_ok",
                vec![n(), ("port", port.to_string())],
                m.value,
            )]
        }
        ("pcie_width", [_, iface]) => {
            let l = vec![n(), ("interface", iface.to_string())];
            let mut out = vec![("fabcheck_pcie_link_width", l.clone(), m.value)];
            if let Some(t) = m.threshold {
                out.push(("fabcheck_pcie_link_expected_width", l, t));
            }
            out
        }
        ("link_flaps", [_, iface]) => vec![(
            "fabcheck_link_flaps",
            vec![n(), ("interface", iface.to_string())],
            m.value,
        )],
        ("rdma_write_gbps", [_, dev]) => {
            let l = vec![n(), ("rail", dev.to_string())];
            let gbit = |v: f64| (v * 1e9 / 8.0).round();
            let mut out = vec![(
                "fabcheck_rdma_loopback_bandwidth_bytes_per_second",
                l.clone(),
                gbit(m.value),
            )];
            if let Some(t) = m.threshold {
                out.push((
                    "fabcheck_rdma_loopback_threshold_bytes_per_second",
                    l,
                    gbit(t),
                ));
            }
            out
        }
        ("counter_delta", [_, port, counter]) => vec![(
            "fabcheck_port_stat_growth",
            vec![
                n(),
                ("port", port.to_string()),
                ("counter", counter.to_string()),
            ],
            m.value,
        )],
        _ => vec![],
    }
}

fn label_text(labels: &Labels) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// A label value as the exposition format writes it: backslash, quote and newline escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::health::Verdict;
    use crate::run::model::TestResult;

    #[test]
    fn help_and_type_once_per_family_label_values_escaped() {
        let mut t = TestResult::new("node: link [n\"1]", "c");
        t.status = Status::Pass;
        for iface in ["a", "b"] {
            let mut m = Metric::new(&format!("link_speed_mbps[n\"1:{iface}]"), 100000.0, "Mb/s");
            m.threshold = Some(200000.0);
            t.metrics.push(m);
        }
        let v = Verdict::Healthy;
        let text = render(&Outcome {
            node: "n\"1",
            context: "prolog",
            verdict: &v,
            started_s: 1.5,
            duration_s: 0.25,
            tests: &[t],
        });
        assert_eq!(
            text.matches("# TYPE fabcheck_link_speed_bytes_per_second gauge")
                .count(),
            1
        );
        assert!(text.contains(
            "fabcheck_link_speed_bytes_per_second{node=\"n\\\"1\",interface=\"b\"} 12500000000\n"
        ));
        assert!(text.contains("fabcheck_link_expected_speed_bytes_per_second{node=\"n\\\"1\",interface=\"a\"} 25000000000\n"));
        assert!(!text.contains("fabcheck_health_check_unknown"));
    }
}

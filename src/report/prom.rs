//! `fabcheck health --prom DIR`: the node's gauges in the Prometheus text exposition format,
//! for node_exporter's textfile collector (docs/continuous.md). HELP and TYPE once per family,
//! base units (seconds, bytes per second), one series per node / interface / counter: never per
//! run or per message size. Families without a sample are left out.

use crate::run::health::{check_name, Outcome};
use crate::run::model::{Metric, Status};
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
    ("fabcheck_port_stat_growth", "Growth of a judged statistic of a fabric port (error counters; congestion ones such as PortXmitWait too) between two readings: since last_run (the last run's reading and this one's) or window (the healthcheck window)."),
];

/// The text of DIR/fabcheck.prom for one run.
pub(crate) fn render(o: &Outcome) -> String {
    let mut samples: BTreeMap<&str, Vec<(Labels, f64)>> = BTreeMap::new();
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
    let mut out = String::new();
    for (family, help) in FAMILIES {
        let Some(list) = samples.get_mut(family) else {
            continue;
        };
        list.sort_by(|a, b| a.0.cmp(&b.0));
        list.dedup_by(|a, b| a.0 == b.0);
        let _ = writeln!(out, "# HELP {family} {help}");
        let _ = writeln!(out, "# TYPE {family} gauge");
        for (labels, v) in list.iter() {
            let _ = writeln!(out, "{family}{{{}}} {}", label_text(labels), number(*v));
        }
    }
    out
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

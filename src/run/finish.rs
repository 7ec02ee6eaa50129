//! The results of a run, complete before any report renders them: the tool versions the tests
//! recorded, one unique name per testcase, and the `--baseline` verdict.

use super::model::{RunResult, TestResult};

/// Finish `run`: tool versions gathered (one per node and tool, in the order met, drift
/// marked), testcase
/// names made unique, when a baseline is given and the run was not interrupted, its
/// comparison added as the `baseline` suite, and last the diagnosis of the reds
/// ([`super::diagnosis`], over `topo`). Returns the baseline testcase, if added.
pub(crate) fn finish(
    run: &mut RunResult,
    baseline: Option<(&str, &RunResult)>,
    topo: &super::diagnosis::Topology,
) -> Option<TestResult> {
    let seen = run
        .suites
        .iter()
        .flat_map(|s| &s.tests)
        .flat_map(|t| t.tool_versions.iter().cloned());
    run.tool_versions = super::versions::unique(seen);
    super::versions::mark_drift(&mut run.tool_versions);
    let profiles = run
        .suites
        .iter()
        .flat_map(|s| &s.tests)
        .flat_map(|t| t.profiles.iter().cloned());
    run.profiles = super::profile::merge(profiles);
    run.make_unique();
    gather_unreachable(run);
    let added = baseline
        .filter(|_| !run.interrupted)
        .map(|(path, b)| super::baseline::apply(run, b, path).clone());
    // An interrupted run is diagnosed too: its reds are what it has (reports say "partial").
    run.diagnosis = super::diagnosis::diagnose(run, topo);
    added
}

/// The short message of a testcase whose node was never reached: `NODE: cannot connect to
/// HOST (Connection refused)` (the whole reason is at the top of the reports).
pub(crate) fn short_not_reached(node: &str, reason: &str) -> String {
    let head = reason.split(": ").next().unwrap_or(reason);
    let gist = crate::transport::reason_gist(reason);
    if head == gist {
        format!("{node}: {head} (node not reached)")
    } else {
        format!("{node}: {head} ({gist})")
    }
}

/// The short message of an errored testcase that says only that a node was not reached.
pub(crate) fn shortened(message: &str) -> Option<String> {
    let (node, reason) = crate::transport::not_reached(message)?;
    let short = short_not_reached(&node, &reason);
    (short.len() < message.len()).then_some(short)
}

/// The nodes never reached, once each with the first reason met (reports put them first); an
/// errored testcase that says only that keeps a short message (`NODE: cannot connect to HOST
/// (Connection refused)`), its whole text going to the detail.
fn gather_unreachable(run: &mut RunResult) {
    use crate::transport::not_reached;
    let mut seen: Vec<super::model::Unreached> = Vec::new();
    for t in run.suites.iter_mut().flat_map(|s| &mut s.tests) {
        if t.status != super::model::Status::Error {
            continue;
        }
        let Some(msg) = t.message.clone() else {
            continue;
        };
        let Some((node, reason)) = not_reached(&msg) else {
            continue;
        };
        let short = short_not_reached(&node, &reason);
        if short.len() < msg.len() {
            t.detail = Some(match t.detail.take() {
                Some(d) if !d.contains(&msg) => format!("{msg}\n{d}"),
                Some(d) => d,
                None => msg.clone(),
            });
            t.message = Some(short);
        }
        if !seen.iter().any(|u| u.node == node) {
            seen.push(super::model::Unreached { node, reason });
        }
    }
    seen.sort_by(|a, b| a.node.cmp(&b.node));
    run.unreachable = seen;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::model::{Metric, ToolVersion};

    fn version(node: &str, tool: &str, v: &str) -> ToolVersion {
        ToolVersion {
            node: node.into(),
            tool: tool.into(),
            version: v.into(),
            ..Default::default()
        }
    }

    #[test]
    fn names_unique_and_baseline_named_apart() {
        // A script named `baseline` with a test named `baseline`, twice: every testcase keeps
        // a (classname, name) of its own, the baseline verdict included.
        let t = || TestResult {
            metrics: vec![Metric::new("bw", 1.0, "Gbit/s")],
            ..TestResult::new("baseline", "baseline")
        };
        let mut r = RunResult::of_tests("baseline", vec![t(), t()]);
        let old = r.clone();
        let added = finish(&mut r, Some(("old.json", &old)), &Default::default())
            .expect("baseline testcase");
        let names: Vec<&str> = r
            .suites
            .iter()
            .flat_map(|s| &s.tests)
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(names, ["baseline", "baseline (2)", "baseline (3)"]);
        assert_eq!(added.name, "baseline (3)");
        assert_eq!(r.suites.last().map(|s| s.name.as_str()), Some("baseline"));
    }

    #[test]
    fn unreachable_nodes_gathered_once_and_their_testcases_kept_short() {
        use crate::run::model::Status;
        let err = |name: &str, msg: &str| TestResult {
            status: Status::Error,
            message: Some(msg.into()),
            ..TestResult::new(name, "s")
        };
        let refused = "dead-04: cannot connect to 127.0.0.1: failed to connect to the remote host: connect to host 127.0.0.1 port 2: Connection refused";
        let mut r = RunResult::of_tests(
            "s",
            vec![
                err("a [dead-04]", refused),
                err("b [spark-01 -> dead-04]", refused),
                err("c [x]", "x: `ib_write_bw` is not installed"),
                err(
                    "d [dead-03]",
                    "dead-03: authentication failed for u@h: Permission denied (publickey)",
                ),
            ],
        );
        finish(&mut r, None, &Default::default());
        let nodes: Vec<&str> = r.unreachable.iter().map(|u| u.node.as_str()).collect();
        assert_eq!(nodes, ["dead-03", "dead-04"]);
        assert!(r.unreachable[1]
            .reason
            .ends_with("port 2: Connection refused"));
        let t = &r.suites[0].tests;
        assert_eq!(
            t[0].message.as_deref(),
            Some("dead-04: cannot connect to 127.0.0.1 (Connection refused)")
        );
        assert_eq!(t[0].detail.as_deref(), Some(refused));
        assert_eq!(
            t[2].message.as_deref(),
            Some("x: `ib_write_bw` is not installed")
        );
        // already short: kept as it is
        assert_eq!(
            t[3].message.as_deref(),
            Some("dead-03: authentication failed for u@h: Permission denied (publickey)")
        );
    }

    #[test]
    fn interrupted_run_gets_no_baseline_verdict() {
        let mut r = RunResult::of_tests("s", vec![TestResult::new("t", "s")]);
        r.interrupted = true;
        let old = r.clone();
        assert!(finish(&mut r, Some(("old.json", &old)), &Default::default()).is_none());
        assert_eq!(r.suites.len(), 1);
    }

    #[test]
    fn tool_versions_gathered_once_per_node_and_tool() {
        let with = |v: Vec<ToolVersion>| TestResult {
            tool_versions: v,
            ..TestResult::new("t", "s")
        };
        let mut r = RunResult::of_tests(
            "s",
            vec![
                with(vec![
                    version("a", "nccl", "2.28"),
                    version("b", "nccl", "2.27"),
                ]),
                with(vec![
                    version("a", "nccl", "2.28"),
                    version("a", "iperf3", "3.16"),
                ]),
            ],
        );
        finish(&mut r, None, &Default::default());
        let got: Vec<(&str, &str)> = r
            .tool_versions
            .iter()
            .map(|v| (v.node.as_str(), v.tool.as_str()))
            .collect();
        assert_eq!(got, [("a", "nccl"), ("b", "nccl"), ("a", "iperf3")]);
    }
}

//! The results of a run, complete before any report renders them: the tool versions the tests
//! recorded, one unique name per testcase, and the `--baseline` verdict.

use super::model::{RunResult, TestResult};

/// Finish `run`: tool versions gathered (one per node and tool, in the order met, drift
/// marked), testcase
/// names made unique, and, when a baseline is given and the run was not interrupted, its
/// comparison added as the `baseline` suite. Returns the baseline testcase, if added.
pub fn finish(run: &mut RunResult, baseline: Option<(&str, &RunResult)>) -> Option<TestResult> {
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
    let (path, b) = baseline.filter(|_| !run.interrupted)?;
    Some(super::baseline::apply(run, b, path).clone())
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
        let added = finish(&mut r, Some(("old.json", &old))).expect("baseline testcase");
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
    fn interrupted_run_gets_no_baseline_verdict() {
        let mut r = RunResult::of_tests("s", vec![TestResult::new("t", "s")]);
        r.interrupted = true;
        let old = r.clone();
        assert!(finish(&mut r, Some(("old.json", &old))).is_none());
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
        finish(&mut r, None);
        let got: Vec<(&str, &str)> = r
            .tool_versions
            .iter()
            .map(|v| (v.node.as_str(), v.tool.as_str()))
            .collect();
        assert_eq!(got, [("a", "nccl"), ("b", "nccl"), ("a", "iperf3")]);
    }
}

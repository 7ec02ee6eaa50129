//! Tool versions, recorded while the run works: every logged command is read once as it is
//! logged (`X --version`, `ofed_info -s`, `uname -r`, a driver and its firmware from
//! `ethtool -i`, a package from `dpkg-query`, the NCCL and nccl-tests banners, iperf3's JSON);
//! no primitive records anything on the side. Each test
//! keeps its own; [`super::finish`] gathers them into the run's results, one entry per
//! (node, tool), in the order the run met them.

use super::model::{CommandLog, ToolVersion};

/// The versions a logged command shows (read by [`crate::parse::versions`]).
pub(crate) fn seen_in(c: &CommandLog) -> Vec<ToolVersion> {
    crate::parse::versions::seen(&c.command, c.exit_code, &c.stdout, &c.stderr)
        .into_iter()
        .map(|(tool, version)| ToolVersion {
            node: c.node.clone(),
            tool,
            version,
            ..Default::default()
        })
        .collect()
}

/// One entry per (node, tool): the first met.
pub(crate) fn unique(all: impl IntoIterator<Item = ToolVersion>) -> Vec<ToolVersion> {
    let mut seen = std::collections::BTreeSet::new();
    all.into_iter()
        .filter(|v| seen.insert((v.node.clone(), v.tool.clone())))
        .collect()
}

/// Mark each version that differs from the one most nodes have of the same tool; with no
/// such version (a tie), every version of that tool is marked.
pub(crate) fn mark_drift(all: &mut [ToolVersion]) {
    let mut count: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for v in all.iter() {
        *count
            .entry((v.tool.clone(), v.version.clone()))
            .or_default() += 1;
    }
    for v in all.iter_mut() {
        let mine = count[&(v.tool.clone(), v.version.clone())];
        let most_other = count
            .iter()
            .filter(|((t, ver), _)| *t == v.tool && *ver != v.version)
            .map(|(_, n)| *n)
            .max();
        v.differs = most_other.is_some_and(|n| n >= mine);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(cmd: &str, exit: i64, stdout: &str) -> CommandLog {
        CommandLog {
            node: "n1".into(),
            command: cmd.into(),
            exit_code: Some(exit),
            duration_ms: 1,
            stdout: stdout.into(),
            stderr: String::new(),
            error: None,
            dry_run: false,
        }
    }

    fn pairs(v: &[ToolVersion]) -> Vec<(String, String)> {
        v.iter()
            .map(|x| (x.tool.clone(), x.version.clone()))
            .collect()
    }

    #[test]
    fn driver_firmware_and_packages_are_read_from_their_logged_commands() {
        // A real capture (tests/fixtures/SOURCES.tsv): inbox mlx5_core on a ConnectX-6 Dx.
        let ethtool_i = include_str!(
            "../../tests/fixtures/ethtool/ethtool-i-cx6dx-inbox-kernel-driver-version-5.0-0.txt"
        );
        let got = seen_in(&log("ethtool -i net3", 0, ethtool_i));
        assert_eq!(
            pairs(&got),
            [(
                "driver/firmware net3".to_string(),
                "mlx5_core 5.0-0, firmware 22.28.1002 (MT_0000000430)".to_string()
            )]
        );
        assert!(seen_in(&log("ethtool -i enp1s0f1np1", 71, ethtool_i)).is_empty());
        let dpkg = "dpkg-query -W -f='${Version}' nvidia-dgx-release";
        assert_eq!(
            pairs(&seen_in(&log(dpkg, 0, "7.2.3\n"))),
            [("nvidia-dgx-release".to_string(), "7.2.3".to_string())]
        );
        assert!(seen_in(&log(dpkg, 1, "")).is_empty());
    }

    #[test]
    fn versions_from_commands() {
        let v = seen_in(&log(
            "/usr/bin/ib_write_bw --version",
            0,
            "\n Version: 6.10\n",
        ));
        assert_eq!(
            pairs(&v),
            [("ib_write_bw".to_string(), "Version: 6.10".to_string())]
        );
        // A failed --version says nothing about a version.
        assert!(seen_in(&log("ib_write_bw --version", 127, "not found")).is_empty());
        let v = seen_in(&log(
            "mpirun all_reduce_perf",
            0,
            "# nccl-tests version 2.17.6 nccl-headers=22809\nNCCL version 2.28.9+cuda13.0\n",
        ));
        assert_eq!(
            pairs(&v),
            [
                ("nccl".to_string(), "2.28.9+cuda13.0".to_string()),
                ("nccl-tests".to_string(), "2.17.6".to_string())
            ]
        );
        let v = seen_in(&log("uname -r", 0, "6.11.0-1016-nvidia\n"));
        assert_eq!(
            pairs(&v),
            [("kernel".to_string(), "6.11.0-1016-nvidia".to_string())]
        );
        let v = seen_in(&log(
            "iperf3 -c x -J",
            0,
            r#"{"start": {"version": "iperf 3.16"}}"#,
        ));
        assert_eq!(
            pairs(&v),
            [("iperf3".to_string(), "iperf 3.16".to_string())]
        );
    }

    #[test]
    fn first_per_node_and_tool() {
        let v = |node: &str, tool: &str, version: &str| ToolVersion {
            node: node.into(),
            tool: tool.into(),
            version: version.into(),
            ..Default::default()
        };
        let u = unique([
            v("a", "nccl", "1"),
            v("b", "nccl", "2"),
            v("a", "nccl", "3"),
        ]);
        assert_eq!(u.len(), 2);
        assert_eq!(u[0].version, "1");
    }

    #[test]
    fn the_node_off_the_majority_version_is_marked() {
        let v = |node: &str, tool: &str, version: &str| ToolVersion {
            node: node.into(),
            tool: tool.into(),
            version: version.into(),
            ..Default::default()
        };
        let mut all = [
            v("a", "libnccl2", "2.28.3"),
            v("b", "libnccl2", "2.28.3"),
            v("c", "libnccl2", "2.27.7"),
            v("a", "kernel", "6.11"),
            v("b", "kernel", "6.11"),
        ];
        mark_drift(&mut all);
        let marks: Vec<bool> = all.iter().map(|v| v.differs).collect();
        assert_eq!(marks, [false, false, true, false, false]);
        // Two nodes that differ: neither is the majority, both are marked.
        let mut all = [v("a", "fw", "1"), v("b", "fw", "2")];
        mark_drift(&mut all);
        assert!(all.iter().all(|v| v.differs));
    }
}

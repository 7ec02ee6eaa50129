//! The rules on small runs shaped as the simulation's two DGX Sparks (one QSFP port `qsfp1`,
//! two rails sharing its cable).

use super::*;
use crate::run::model::{Cable, Metric, Status, Subject, TestResult};

fn spark(name: &str) -> NodeTopo {
    let ifs = vec!["enp1s0f1np1".to_string(), "enP2p1s0f1np1".to_string()];
    let rails = vec!["rocep1s0f1".to_string(), "roceP2p1s0f1".to_string()];
    NodeTopo {
        name: name.into(),
        host: format!("{name}.mgmt"),
        interfaces: ifs.clone(),
        rails: rails.clone(),
        ports: vec![PortTopo {
            name: "qsfp1".into(),
            interfaces: ifs,
            rails,
        }],
        platform: None,
        login: Some(format!("{name}.mgmt")),
    }
}

fn topo() -> Topology {
    Topology {
        nodes: vec![spark("spark-01"), spark("spark-02")],
    }
}

fn red(name: &str, node: Option<&str>, peer: Option<&str>) -> TestResult {
    TestResult {
        node: node.map(str::to_string),
        peer: peer.map(str::to_string),
        status: Status::Failure,
        message: Some(format!("{name} failed")),
        ..TestResult::new(name, "s")
    }
}

fn with_subject(mut t: TestResult, kind: Finding, node: &str, netdev: &str) -> TestResult {
    t.subjects.push(Subject {
        netdev: Some(netdev.into()),
        ..Subject::new(kind, node)
    });
    t
}

fn rail_metric(node: &str, peer: &str, rail: &str, v: f64, share: f64) -> Metric {
    Metric {
        node: Some(node.into()),
        peer: Some(peer.into()),
        rail: Some(rail.into()),
        reference: Some(share),
        ..Metric::new(&format!("rdma_write_gbps[{node}:{rail}]"), v, "Gbit/s")
    }
}

fn run(tests: Vec<TestResult>) -> Vec<Diagnosis> {
    run_on(tests, crate::run::profile::SPARK)
}

/// The run with both nodes detected as `platform`.
fn run_on(tests: Vec<TestResult>, platform: &str) -> Vec<Diagnosis> {
    let mut r = RunResult::of_tests("s", tests);
    r.profiles = ["spark-01", "spark-02"]
        .iter()
        .map(|n| crate::run::profile::NodeProfile {
            node: n.to_string(),
            profile: crate::run::profile::Detected {
                name: platform.into(),
                known: true,
                reason: "test".into(),
                ..Default::default()
            },
            expectations: vec![],
        })
        .collect();
    diagnose(&r, &topo())
}

fn passing(mut t: TestResult) -> TestResult {
    t.status = Status::Pass;
    t.message = None;
    t
}

#[test]
fn nothing_red_nothing_said() {
    assert!(run(vec![passing(red("a", Some("spark-01"), None))]).is_empty());
}

#[test]
fn one_rail_down_with_its_sibling_up_explains_what_crosses_it_and_points_at_the_host_side() {
    let d = run(vec![
        red(
            "ping [spark-01 -> spark-02]",
            Some("spark-01"),
            Some("spark-02"),
        ),
        with_subject(
            red("link speed [spark-02]", Some("spark-02"), None),
            Finding::LinkDown,
            "spark-02",
            "enP2p1s0f1np1",
        ),
        red("nccl all_reduce", None, None),
        // Another node's own red, on no link of spark-02: not explained by it.
        with_subject(
            red("gid [spark-01]", Some("spark-01"), None),
            Finding::Config,
            "spark-01",
            "enp1s0f1np1",
        ),
    ]);
    assert_eq!(d.len(), 2, "{d:#?}");
    assert_eq!(d[0].rule, "host_side");
    assert!(d[0]
        .part
        .contains("spark-02 port qsfp1 enP2p1s0f1np1 (roceP2p1s0f1)"));
    assert!(
        d[0].part.contains("PCIe path")
            && d[0].cause.contains("enp1s0f1np1 on the same cable is up")
    );
    assert_eq!(
        d[0].evidence,
        [
            "ping [spark-01 -> spark-02]",
            "link speed [spark-02]",
            "nccl all_reduce"
        ]
    );
    // its check named the part (a `config` subject): rule `setting`, not unexplained
    assert_eq!(d[1].rule, "setting");
    assert!(
        d[1].part.starts_with("spark-01 port qsfp1 enp1s0f1np1"),
        "{}",
        d[1].part
    );
}

#[test]
fn a_port_slow_at_both_ends_is_one_link_the_cable_with_its_facts() {
    let mut a = red("speed [spark-01]", Some("spark-01"), None);
    let mut b = red("speed [spark-02]", Some("spark-02"), None);
    for (t, n) in [(&mut a, "spark-01"), (&mut b, "spark-02")] {
        for i in ["enp1s0f1np1", "enP2p1s0f1np1"] {
            t.subjects.push(Subject {
                netdev: Some(i.into()),
                cable: Some(Cable {
                    vendor: Some("NVIDIA".into()),
                    part_number: Some("MCP1650-V001E30".into()),
                    serial_number: Some("MT2412VS01234".into()),
                }),
                ..Subject::new(Finding::LinkSlow, n)
            });
        }
    }
    let d = run(vec![
        a,
        b,
        red(
            "rdma [spark-01 -> spark-02]",
            Some("spark-01"),
            Some("spark-02"),
        ),
    ]);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].rule, "link_down");
    assert!(
        d[0].part.contains("spark-01 port qsfp1") && d[0].part.contains("both ends"),
        "{}",
        d[0].part
    );
    assert!(
        d[0].part
            .contains("NVIDIA PN MCP1650-V001E30 SN MT2412VS01234"),
        "{}",
        d[0].part
    );
    assert_eq!(d[0].evidence.len(), 3);
    assert!(d[0].next.iter().any(|n| n.contains("swap the cable")));
}

#[test]
fn an_unreachable_node_explains_all_its_tests_and_only_those() {
    let mut hop = red(
        "ssh [spark-01 -> spark-02]",
        Some("spark-01"),
        Some("spark-02"),
    );
    hop.status = Status::Error;
    hop.subjects
        .push(Subject::new(Finding::Unreachable, "spark-02"));
    let d = run(vec![
        hop,
        red("speed [spark-02]", Some("spark-02"), None),
        red("speed [spark-01]", Some("spark-01"), None),
    ]);
    assert_eq!(d[0].rule, "unreachable");
    assert_eq!(
        d[0].evidence,
        ["ssh [spark-01 -> spark-02]", "speed [spark-02]"]
    );
    assert!(d[0].part.contains("spark-02 (spark-02.mgmt)"));
    assert_eq!(d[1].rule, "unexplained");
    assert_eq!(d[1].evidence, ["speed [spark-01]"]);
}

#[test]
fn a_weak_rail_beside_a_good_sibling_is_the_host_side() {
    let mut t = red(
        "rdma [spark-01 -> spark-02]",
        Some("spark-01"),
        Some("spark-02"),
    );
    t.metrics = vec![
        rail_metric("spark-01", "spark-02", "rocep1s0f1", 94.9, 85.0),
        rail_metric("spark-01", "spark-02", "roceP2p1s0f1", 52.3, 85.0),
    ];
    let d = run(vec![t]);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].rule, "host_side");
    assert!(d[0]
        .part
        .starts_with("spark-01 port qsfp1 enP2p1s0f1np1 (roceP2p1s0f1): its PCIe path"));
    assert!(d[0].cause.contains("rocep1s0f1 on the same cable is fine"));
}

#[test]
fn every_rail_weak_in_one_direction_only_is_that_transmitter() {
    let mut t = red(
        "rdma [spark-02 -> spark-01]",
        Some("spark-02"),
        Some("spark-01"),
    );
    t.metrics = vec![
        rail_metric("spark-02", "spark-01", "rocep1s0f1", 47.6, 85.0),
        rail_metric("spark-02", "spark-01", "roceP2p1s0f1", 47.3, 85.0),
    ];
    let back = passing(red(
        "rdma [spark-01 -> spark-02]",
        Some("spark-01"),
        Some("spark-02"),
    ));
    let d = run(vec![t.clone(), back]);
    assert_eq!(d[0].rule, "one_direction", "{d:#?}");
    assert!(d[0].part.contains("spark-02's transmitter") && d[0].part.contains("towards spark-01"));
    // Both directions weak: not this rule's to say.
    let mut other = red(
        "rdma [spark-01 -> spark-02]",
        Some("spark-01"),
        Some("spark-02"),
    );
    other.metrics = vec![
        rail_metric("spark-01", "spark-02", "rocep1s0f1", 47.6, 85.0),
        rail_metric("spark-01", "spark-02", "roceP2p1s0f1", 47.3, 85.0),
    ];
    let d = run(vec![t, other]);
    assert!(d.iter().all(|x| x.rule == "unexplained"), "{d:#?}");
}

#[test]
fn a_downtrained_pcie_path_explains_its_rails_bandwidth_not_the_others() {
    let pcie = with_subject(
        red("pcie [spark-01]", Some("spark-01"), None),
        Finding::PcieDowntrained,
        "spark-01",
        "enP2p1s0f1np1",
    );
    let mut bw = red(
        "rdma [spark-01 -> spark-02]",
        Some("spark-01"),
        Some("spark-02"),
    );
    bw.metrics = vec![Metric {
        threshold: Some(85.0),
        ..rail_metric("spark-01", "spark-02", "roceP2p1s0f1", 20.0, 85.0)
    }];
    let mut other = red(
        "rdma [spark-02 -> spark-01]",
        Some("spark-02"),
        Some("spark-01"),
    );
    other.metrics = vec![Metric {
        threshold: Some(85.0),
        ..rail_metric("spark-02", "spark-01", "rocep1s0f1", 20.0, 85.0)
    }];
    let tests = vec![pcie, bw, other];
    let d = run(tests.clone());
    assert_eq!(d[0].rule, "pcie_downtrained");
    assert_eq!(
        d[0].evidence,
        ["pcie [spark-01]", "rdma [spark-01 -> spark-02]"]
    );
    assert!(d[0].part.contains("no riser"), "{}", d[0].part);
    assert_ne!(d[1].rule, "pcie_downtrained");
    // the same fault on a DGX H100-class host (or an unknown one): its slot and riser are
    // where to look, and a Spark is not mentioned
    for platform in [crate::run::profile::DGX, crate::run::profile::GENERIC] {
        let d = run_on(tests.clone(), platform);
        assert_eq!(d[0].rule, "pcie_downtrained");
        assert!(
            d[0].part.contains("riser") && !d[0].part.contains("Spark"),
            "{platform}: {}",
            d[0].part
        );
    }
}

#[test]
fn receiver_errors_name_the_far_transmitter_the_cable_and_the_receiver() {
    let t = with_subject(
        red("counters [spark-02]", Some("spark-02"), None),
        Finding::RxErrors,
        "spark-02",
        "enp1s0f1np1",
    );
    let d = run(vec![t]);
    assert_eq!(d[0].rule, "receiver_errors");
    assert!(
        d[0].part
            .contains("the transmitter at spark-01 enp1s0f1np1 (rocep1s0f1)")
            && d[0].part.contains("the cable")
            && d[0].part.contains("spark-02 port qsfp1 enp1s0f1np1"),
        "{}",
        d[0].part
    );
    assert!(
        d[0].next
            .iter()
            .any(|n| n.starts_with("ssh spark-02.mgmt 'mlxlink -d rocep1s0f1 -c -e'")),
        "{:?}",
        d[0].next
    );
}

/// First day (issue 50): a next step is pasteable: run on the node it concerns (ssh with the
/// inventory's user and port), `ethtool` given the netdev even when the check named the RDMA
/// device, `ssh -v` of an unreachable node with its user and port.
#[test]
fn next_steps_are_pasteable_on_the_node_with_a_netdev_and_the_inventorys_login() {
    let inv = crate::inventory::Inventory::parse(
        "[defaults]\nuser = \"ops\"\nport = 2222\n[[node]]\nname = \"spark-01\"\nhost = \"10.0.0.11\"\n\
         interfaces = [\"enp1s0f1np1\", \"enP2p1s0f1np1\"]\nrdma_devices = [\"rocep1s0f1\", \"roceP2p1s0f1\"]\n\
         [[node]]\nname = \"spark-02\"\nhost = \"10.0.0.12\"\n",
        std::path::Path::new("inv.toml"),
    )
    .unwrap();
    let topo = Topology::of(&inv);
    let mut t = red("link speed [spark-01]", Some("spark-01"), None);
    t.subjects.push(Subject {
        rail: Some("roceP2p1s0f1".into()),
        ..Subject::new(Finding::LinkDown, "spark-01")
    });
    let unreachable = Subject::new(Finding::Unreachable, "spark-02");
    let mut u = red("ping [spark-02]", Some("spark-02"), None);
    u.status = Status::Error;
    u.subjects.push(unreachable);
    let d = diagnose(&RunResult::of_tests("s", vec![t, u]), &topo);
    let next: Vec<&String> = d.iter().flat_map(|d| d.next.iter()).collect();
    let has = |want: &str| next.iter().any(|n| n.starts_with(want));
    assert!(
        has("ssh -p 2222 ops@10.0.0.11 'ethtool enP2p1s0f1np1'"),
        "{next:#?}"
    );
    assert!(
        has("ssh -p 2222 ops@10.0.0.11 'ethtool -m enP2p1s0f1np1'"),
        "{next:#?}"
    );
    assert!(has("ssh -v -p 2222 ops@10.0.0.12 true"), "{next:#?}");
    assert!(
        !next
            .iter()
            .any(|n| n.contains("ethtool roce") || n.contains("ethtool -m roce")),
        "ethtool given an RDMA device: {next:#?}"
    );
}

#[test]
fn a_red_no_rule_explains_is_said_so_with_its_node() {
    let d = run(vec![red("drift", None, None)]);
    assert_eq!(d[0].rule, "unexplained");
    assert!(d[0].cause.starts_with("no rule explains this red"));
    assert!(d[0].part.contains("fabric as a whole"));
}

#[test]
fn a_check_that_names_its_part_is_the_diagnosis_once_for_every_red_naming_it() {
    let mut a = red("nccl: all_reduce 2 nodes", None, None);
    let mut b = red("nccl: all_reduce 4 nodes", None, None);
    for t in [&mut a, &mut b] {
        for n in ["spark-01", "spark-02"] {
            t.subjects.push(Subject {
                part: Some("GPUDirect RDMA on spark-01, spark-02: nvidia-peermem".into()),
                ..Subject::new(Finding::Config, n)
            });
        }
    }
    let c = red("tools [spark-02]", Some("spark-02"), None);
    let d = run(vec![a, b, c]);
    assert_eq!(d.len(), 2, "{d:#?}");
    assert_eq!(d[0].rule, "setting");
    assert_eq!(
        d[0].part,
        "GPUDirect RDMA on spark-01, spark-02: nvidia-peermem"
    );
    assert_eq!(
        d[0].evidence,
        ["nccl: all_reduce 2 nodes", "nccl: all_reduce 4 nodes"]
    );
    // no subject: unexplained, said once per part
    assert_eq!(d[1].rule, "unexplained");
    assert_eq!(d[1].part, "spark-02");
}

#[test]
fn unexplained_reds_on_one_part_are_one_diagnosis() {
    let d = run(vec![
        red("x [spark-02]", Some("spark-02"), None),
        red("y [spark-02]", Some("spark-02"), None),
        red("z", None, None),
    ]);
    assert_eq!(d.len(), 2, "{d:#?}");
    assert_eq!(d[0].evidence, ["x [spark-02]", "y [spark-02]"]);
    assert!(
        d[0].cause.ends_with("(and 1 more red(s) on the same part)"),
        "{}",
        d[0].cause
    );
    assert_eq!(d[1].part, "the fabric as a whole (the test names no node)");
}

#[test]
fn a_script_error_is_no_fabric_cause_and_comes_after_them() {
    let mut s = red("typo [spark-02]", Some("spark-02"), None);
    s.subjects.push(Subject::new(Finding::Script, "spark-02"));
    s.file = "checks/mtu.rhai".into();
    s.line = Some(7);
    let link = with_subject(
        red("link speed [spark-01]", Some("spark-01"), None),
        Finding::LinkDown,
        "spark-01",
        "enp1s0f1np1",
    );
    let d = run(vec![s, link]);
    assert_eq!(d.len(), 2, "{d:#?}");
    assert_ne!(d[0].rule, "script_error");
    assert_eq!(d[1].rule, "script_error");
    assert_eq!(
        d[1].part,
        "the script at checks/mtu.rhai:7 (no fabric part)"
    );
    assert_eq!(d[1].evidence, ["typo [spark-02]"]);
}

/// A step-2 hop red as acceptance::step2_ssh writes it, ssh's own words at the end.
fn hop_red(from: &str, to: &str, addr: &str, refused: &str) -> TestResult {
    let mut t = red(
        &format!("step 2: passwordless ssh: {from} -> {to}"),
        Some(from),
        Some(to),
    );
    t.message = Some(format!("{from} -> {to} {addr}: passwordless SSH failed"));
    t.subjects.push(Subject {
        peer: Some(to.into()),
        found: Some(format!("{refused} at {addr}")),
        ..Subject::new(Finding::SshTrust, from)
    });
    t
}

#[test]
fn host_keys_one_node_does_not_trust_are_that_nodes_known_hosts_once() {
    let unknown = "host_key_unknown";
    let d = run(vec![
        hop_red("spark-01", "spark-02", "192.168.100.11", unknown),
        hop_red("spark-01", "spark-03", "192.168.100.12", unknown),
        passing(hop_red("spark-02", "spark-01", "192.168.100.10", "")),
        red("rdma: bandwidth", Some("spark-02"), None),
    ]);
    assert_eq!(d[0].rule, "ssh_trust", "{d:#?}");
    assert!(
        d[0].part.starts_with("spark-01's known_hosts"),
        "{}",
        d[0].part
    );
    assert!(d[0].cause.contains("spark-02, spark-03"), "{}", d[0].cause);
    assert_eq!(d[0].evidence.len(), 2);
    assert!(
        d[0].next[0].contains("ssh-keyscan -t ed25519 192.168.100.11"),
        "{:?}",
        d[0].next
    );
    assert!(
        d[0].next[0].starts_with("ssh spark-01.mgmt "),
        "{:?}",
        d[0].next
    );
    assert_eq!(d.iter().filter(|x| x.rule == "ssh_trust").count(), 1);
    assert_eq!(
        d[1].rule, "unexplained",
        "an unrelated red stays its own: {d:#?}"
    );
}

#[test]
fn a_changed_host_key_every_peer_refuses_is_that_peer_and_a_refused_login_is_apart() {
    let (changed, denied) = ("host_key_changed", "login_refused");
    let d = run(vec![
        hop_red("spark-01", "spark-03", "192.168.100.12", changed),
        hop_red("spark-02", "spark-03", "192.168.100.12", changed),
        hop_red("spark-03", "spark-01", "192.168.100.10", denied),
    ]);
    let trust: Vec<&Diagnosis> = d.iter().filter(|x| x.rule == "ssh_trust").collect();
    assert_eq!(trust.len(), 2, "{d:#?}");
    assert!(
        trust[0].part.starts_with("spark-03's host key"),
        "{}",
        trust[0].part
    );
    assert!(
        trust[0].cause.contains("spark-01, spark-02"),
        "{}",
        trust[0].cause
    );
    assert!(trust[0]
        .next
        .iter()
        .any(|n| n.contains("ssh-keygen -R 192.168.100.12")));
    assert!(
        trust[1]
            .part
            .starts_with("spark-01's ~/.ssh/authorized_keys"),
        "{}",
        trust[1].part
    );
    assert!(!d.iter().any(|x| x.rule == "unexplained"), "{d:#?}");
}

#[test]
fn one_hop_alone_names_both_ends_not_a_whole_node() {
    let d = run(vec![hop_red(
        "spark-01",
        "spark-02",
        "192.168.100.11",
        "host_key_unknown",
    )]);
    assert_eq!(d[0].rule, "ssh_trust", "{d:#?}");
    assert_eq!(d[0].part, "spark-01's known_hosts entry for spark-02");
    assert!(
        d[0].next[1].starts_with("ssh spark-02.mgmt "),
        "{:?}",
        d[0].next
    );
}

/// A slow flow across the spine from `node`'s `hca` to `peer`, its path leaving switches by
/// `links`.
fn flow(t: &mut TestResult, node: &str, hca: &str, peer: &str, links: &[&str]) {
    t.subjects.push(Subject {
        rail: Some(hca.into()),
        peer: Some(peer.into()),
        found: Some(format!("180 Gbit/s to {peer} mlx5_5")),
        part: Some(format!("the path of {node} {hca} -> {peer}")),
        links: links.iter().map(|l| l.to_string()).collect(),
        ..Subject::new(Finding::SpinePath, node)
    });
}

fn spine_red(node: &str, peer: &str, flows: &[(&str, &[&str])]) -> TestResult {
    let mut t = red(
        &format!("rdma: across the spine [{node} -> {peer}]"),
        Some(node),
        Some(peer),
    );
    for (hca, links) in flows {
        flow(&mut t, node, hca, peer, links);
    }
    t
}

const UP: &str = "switch LID 202 (0x02) port 34";
const DOWN: &str = "switch LID 301 (0x31) port 7";

#[test]
fn slow_flows_sharing_a_link_are_put_on_it_once() {
    let d = run(vec![
        spine_red("a", "c", &[("mlx5_4", &[UP, DOWN])]),
        spine_red(
            "b",
            "d",
            &[("mlx5_4", &[UP, "switch LID 301 (0x31) port 9"])],
        ),
    ]);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].rule, "spine_link");
    assert!(
        d[0].part.starts_with(&format!("the link {UP}:")),
        "{}",
        d[0].part
    );
    assert_eq!(d[0].evidence.len(), 2);
    assert!(
        d[0].cause
            .contains("a mlx5_4: 180 Gbit/s to c mlx5_5; b mlx5_4"),
        "{}",
        d[0].cause
    );
}

#[test]
fn slow_flows_on_separate_paths_are_each_their_own_path() {
    let d = run(vec![
        spine_red("a", "c", &[("mlx5_4", &[UP, DOWN])]),
        spine_red(
            "b",
            "d",
            &[(
                "mlx5_0",
                &[
                    "switch LID 200 (0x00) port 33",
                    "switch LID 300 (0x30) port 1",
                ],
            )],
        ),
    ]);
    assert!(d.iter().all(|x| x.rule != "spine_link"), "{d:#?}");
    assert_eq!(d.len(), 2, "{d:#?}");
    assert!(
        d.iter().any(|x| x.part.contains("the path of a mlx5_4")),
        "{d:#?}"
    );
}

#[test]
fn a_red_with_a_slow_flow_outside_the_shared_link_keeps_that_flow_named() {
    let d = run(vec![
        spine_red(
            "a",
            "c",
            &[
                ("mlx5_4", &[UP, DOWN]),
                ("mlx5_0", &["switch LID 200 (0x00) port 33"]),
            ],
        ),
        spine_red("b", "d", &[("mlx5_4", &[UP, DOWN])]),
    ]);
    let shared = d
        .iter()
        .find(|x| x.rule == "spine_link")
        .expect("a shared-link diagnosis");
    assert!(
        shared.part.starts_with("one of the links"),
        "{}",
        shared.part
    );
    // a -> c has a slow flow the shared links do not explain: it is not claimed by them
    assert_eq!(
        shared.evidence,
        vec!["rdma: across the spine [b -> d]".to_string()]
    );
    assert!(
        d.iter().any(|x| x
            .evidence
            .contains(&"rdma: across the spine [a -> c]".to_string())
            && x.rule != "spine_link"),
        "{d:#?}"
    );
}

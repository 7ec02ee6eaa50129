//! Cluster primitives on 4 namespace-lab nodes: real ethtool/ip/ping/iperf3/ssh/stat, and
//! perftest/nccl-tests through shim programs that print real fixtures (this kernel has no RDMA).

use crate::common;
use common::lab::Lab;
use common::Fab;

const SCRIPT: &str = r#"
let ns = nodes("lab[01-04]");
test_each(ns, "node methods", |n| {
    let e = n.ethtool("fab0");
    assert_eq(e.speed_mbps, 10000, "veth speed");
    assert_eq(e.link_detected, true, "link detected");
    assert_eq(n.ethtool_driver("fab0").driver, "veth", "driver");
    assert(n.ethtool_stats("fab0").counters.len() > 0, "ethtool -S counters");
    assert_eq(n.eee("fab0").active, false, "EEE");
    let mine = [];
    for a in n.addresses() { if a.ifname == "fab0" { for x in a.addresses { mine.push(x.local); } } }
    assert(mine.contains(n.fabric_ips[0]), `fab0 has ${n.fabric_ips[0]}`);
    let peer = if n.name == "lab01" { node("lab02") } else { node("lab01") };
    let p = n.ping(peer.fabric_ips[0], #{ count: 2, size: 8972, dont_fragment: true, iface: "fab0", interval: 0.2 });
    assert_eq(p.loss_pct, 0.0, "MTU 9000 end to end");
    let big = n.ping(peer.fabric_ips[0], #{ count: 1, size: 8973, dont_fragment: true });
    assert_eq(big.received, 0, "8973 bytes do not fit MTU 9000");
    let absent = n.ping("10.214.200.200", #{ count: 1, wait: 1 });
    assert_eq(absent.loss_pct, 100.0, "absent address");
    let f = n.file_info("/etc/netplan/40-cx7.yaml");
    assert_eq(f.owner, "root", "netplan owner");
    assert_eq(f.mode, "0600", "netplan mode");
    assert_eq(f.sha256.len(), 64, "sha256");
    metric("netplan_size", f.size, "bytes");
    let h = ssh_hop(n, peer.fabric_ips[1]);
    assert(h.ok, `hop to ${peer.fabric_ips[1]}: ${h.error}`);
    assert_eq(h.hostname, peer.name, "hop lands on the peer");
    assert_eq(h.user, "fclab", "same user");
});
test("iperf3 lab01 -> lab02", || {
    let r = iperf3(node("lab01"), node("lab02"), #{ parallel: 2, duration: 1 });
    metric("iperf3_gbps", r.received_bps / 1e9, "Gbit/s");
    assert_eq(r.streams, 2, "streams");
    assert_ge(r.received_bps, 1e8, "throughput over veth");
});
test("injected interface name is refused", || {
    node("lab01").ethtool("fab0; touch /tmp/fabcheck-injected");
});
test("missing interface names interface and node", || {
    node("lab02").ethtool("nosuch0");
});
test("ib_write_bw server/client (shim printing real perftest fixtures)", || {
    let r = ib_write_bw(node("lab03"), node("lab04"), #{ device: "mlx5_3", gid_index: 3 });
    metric("client_bw_avg_gbps", r.bw_avg_gbps, "Gbit/s");
    metric("server_bw_avg_gbps", r.server.bw_avg_gbps, "Gbit/s");
    assert_eq(r.server.side, "server", "server side parsed");
    assert_eq(r.server_ip, "10.214.0.3", "client ran against the server's fabric address");
});
test("all_reduce_perf via mpirun (recording stand-in printing a real nccl-tests fixture)", || {
    let r = all_reduce_perf(nodes("lab[01-02]"), #{ env: #{ NCCL_IB_HCA: "mlx5_0" } });
    metric("avg_busbw_gbs", r.avg_busbw_gbs, "GB/s");
    assert_eq(r.transport, "Socket", "the fallback to sockets is visible");
});
"#;

/// A real nccl-tests capture whose NCCL INFO lines show the fallback to sockets.
const NCCL_FIXTURE: &str =
    "nccl-tests/all_reduce-1node-2xA100-g2-nccl2.20-debug-info-netib-nodevice-socket-indented.txt";

/// The shims on the nodes run as the lab user: they read the capture from a folder it can
/// enter (the checkout may be in a home only root enters).
fn fixture(p: &str) -> String {
    common::reachable_fixture(p)
}

/// A fresh log file for a recording stand-in. The lab user (not root) writes it: a
/// world-writable spot outside DIR/shims.
fn shim_log(name: &str) -> std::path::PathBuf {
    let logdir = std::env::temp_dir().join("fabcheck-shim-log");
    std::fs::create_dir_all(&logdir).unwrap();
    std::fs::set_permissions(&logdir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let log = logdir.join(name);
    let _ = std::fs::remove_file(&log);
    log
}

#[test]
fn primitives_on_four_lab_nodes() {
    let Some(lab) = Lab::ensure(16, "primitives_on_four_lab_nodes") else {
        return;
    };
    let server_fx =
        fixture("perftest/ib_write_bw-server-roce-duration-header-MBsec-but-value-Gbps.txt");
    let client_fx =
        fixture("perftest/ib_write_bw-bidir-all-sizes-gbits-roce-rocm-doc-indented.txt");
    let nccl_fx = fixture(NCCL_FIXTURE);
    let log = shim_log("mpirun.args");
    let perl = std::fs::read_to_string(common::repo().join("tests/shims/ib_write_bw.pl")).unwrap();
    lab.shim(
        "ib_write_bw",
        &perl
            .replace("@SERVER@", &server_fx)
            .replace("@CLIENT@", &client_fx),
    );
    let mpirun = std::fs::read_to_string(common::repo().join("tests/shims/mpirun.sh")).unwrap();
    lab.shim(
        "mpirun",
        &mpirun
            .replace("@LOG@", &log.display().to_string())
            .replace("@FIXTURE@", &nccl_fx),
    );

    let o = Fab::new()
        .file("p.rhai", SCRIPT)
        .args(["run", "p.rhai", "-i", &lab.inventory()])
        .reports()
        .run();
    for i in 1..=4 {
        let t = format!("node methods [lab0{i}]");
        assert_eq!(o.status(&t), "pass", "{t}: {}", o.message(&t));
    }
    assert_eq!(
        o.status("iperf3 lab01 -> lab02"),
        "pass",
        "{}",
        o.message("iperf3 lab01 -> lab02")
    );
    assert_eq!(o.status("injected interface name is refused"), "error");
    assert!(
        o.message("injected interface name is refused")
            .contains("refused interface"),
        "{}",
        o.message("injected interface name is refused")
    );
    assert!(
        !std::path::Path::new("/tmp/fabcheck-injected").exists(),
        "the injected command ran"
    );
    let m = o.message("missing interface names interface and node");
    assert!(m.contains("lab02") && m.contains("nosuch0"), "{m}");

    // perftest: both sides parsed, values as the parser reads the real fixtures.
    let t = "ib_write_bw server/client (shim printing real perftest fixtures)";
    assert_eq!(o.status(t), "pass", "{}", o.message(t));
    let expect = |f: &str| {
        fabcheck::parse::parse("perftest", &std::fs::read_to_string(f).unwrap()).unwrap()
            ["bw_avg_gbps"]
            .as_f64()
            .unwrap()
    };
    let metrics = o.test(t)["metrics"].clone();
    assert_eq!(metrics[0]["value"].as_f64().unwrap(), expect(&client_fx));
    assert_eq!(metrics[1]["value"].as_f64().unwrap(), expect(&server_fx));

    // nccl: the launch line as mpirun received it.
    let t = "all_reduce_perf via mpirun (recording stand-in printing a real nccl-tests fixture)";
    assert_eq!(o.status(t), "pass", "{}", o.message(t));
    let args = std::fs::read_to_string(&log).unwrap();
    assert!(
        args.contains("-np 2 -H 10.214.0.1:1,10.214.0.2:1 --bind-to none"),
        "{args}"
    );
    // Variables are exported by name (`-x NAME`); their values travel in mpirun's environment,
    // never on the command line that reports and transcripts keep.
    assert!(
        args.contains("-x NCCL_IB_HCA -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS all_reduce_perf -b 8 -e 1G -f 2 -g 1 | NCCL_IB_HCA=mlx5_0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET"),
        "{args}"
    );
    assert!(
        !o.junit
            .as_deref()
            .unwrap_or_default()
            .contains("NCCL_IB_HCA=mlx5_0"),
        "a variable's value reached the JUnit report"
    );

    // Tool versions found on the nodes are in the JSON result.
    let versions = o.json.as_ref().unwrap()["tool_versions"]
        .as_array()
        .unwrap()
        .clone();
    let has = |node: &str, tool: &str, v: &str| {
        versions.iter().any(|x| {
            x["node"] == node
                && x["tool"] == tool
                && x["version"].as_str().unwrap_or("").contains(v)
        })
    };
    assert!(has("lab01", "driver/firmware fab0", "veth"), "{versions:?}");
    assert!(has("lab02", "iperf3", "iperf 3."), "{versions:?}");
    assert!(has("lab01", "nccl", "2."), "{versions:?}");

    // Nothing left running on any node.
    for i in 1..=4 {
        let left = lab.pids(&lab.node(i));
        assert!(left.is_empty(), "left on {}: {left}", lab.node(i));
    }
    o.junit_is_valid();
}

const RDMA_SCRIPT: &str = r#"
test("RDMA/OFED node methods (shims printing real ibdev2netdev, rdma link, ofed_info captures)", || {
    let n = node("lab01");
    let up = [];
    for m in n.ibdev2netdev() { if m.state == "Up" { up.push(`${m.rdma_device}=${m.netdev}`); } }
    metric("ibdev2netdev_up", up.len(), "ports");
    assert_eq(up, ["rocep1s0f1=enp1s0f1np1", "roceP2p1s0f1=enP2p1s0f1np1"], "Up ports");
    let l = n.rdma_links();
    assert_eq(l.len(), 1, "one rdma link");
    assert_eq(l[0].state, "ACTIVE", "rdma link state");
    assert_eq(l[0].netdev, "enp0s8", "rdma link netdev");
    assert_eq(n.ofed_version().version, "23.07-0.5.0", "OFED version");
});
test("all_reduce_perf via srun (recording stand-in printing a real nccl-tests fixture)", || {
    let r = all_reduce_perf(nodes("lab[01-02]"), #{ launcher: "srun", env: #{ NCCL_IB_HCA: "mlx5_0" } });
    assert_eq(r.transport, "Socket", "transport read from the output");
});
test("bond without bonding names node and bond", || {
    node("lab02").bond("bond0");
});
"#;

#[test]
fn rdma_and_bond_methods_on_lab_nodes() {
    let Some(lab) = Lab::ensure(16, "rdma_and_bond_methods_on_lab_nodes") else {
        return;
    };
    let shim =
        std::fs::read_to_string(common::repo().join("tests/shims/print-fixture.sh")).unwrap();
    for (tool, fx) in [
        (
            "ibdev2netdev",
            "rdma/ibdev2netdev-dgx-spark-rocep-roceP2-capital-P-domain.txt",
        ),
        (
            "rdma",
            "rdma/rdma-link-softroce-rxe-renamed-rocep-trailing-space.txt",
        ),
        (
            "ofed_info",
            "rdma/ofed_info-s-doca-ofed-internal-23.07-indented.txt",
        ),
    ] {
        lab.shim(tool, &shim.replace("@FIXTURE@", &fixture(fx)));
    }
    let log = shim_log("srun.args");
    let srun = std::fs::read_to_string(common::repo().join("tests/shims/srun.sh")).unwrap();
    lab.shim(
        "srun",
        &srun
            .replace("@LOG@", &log.display().to_string())
            .replace("@FIXTURE@", &fixture(NCCL_FIXTURE)),
    );
    let o = Fab::new()
        .file("r.rhai", RDMA_SCRIPT)
        .args(["run", "r.rhai", "-i", &lab.inventory()])
        .reports()
        .run();
    let t =
        "RDMA/OFED node methods (shims printing real ibdev2netdev, rdma link, ofed_info captures)";
    assert_eq!(o.status(t), "pass", "{}", o.message(t));
    let t = "all_reduce_perf via srun (recording stand-in printing a real nccl-tests fixture)";
    assert_eq!(o.status(t), "pass", "{}", o.message(t));
    // srun got the node names and the NCCL variables intact (commas included).
    let args = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        args.trim_end(),
        "-v -N 2 -n 2 -w lab01,lab02 --export=ALL all_reduce_perf -b 8 -e 1G -f 2 -g 1 \
         | NCCL_IB_HCA=mlx5_0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET"
    );
    // The kernel here has no bonding driver: the error says which node and which bond.
    let t = "bond without bonding names node and bond";
    assert_eq!(o.status(t), "error", "{}", o.message(t));
    let m = o.message(t);
    assert!(
        m.contains("lab02") && m.contains("bond0") && m.contains("/proc/net/bonding"),
        "{m}"
    );
    o.junit_is_valid();
}

/// A perftest stand-in whose client hangs after connecting (a stuck RDMA run): the server
/// listens on -p PORT like the real tool; the client connects, then sleeps.
const HANGING_IB_WRITE_BW: &str = r#"#!/usr/bin/perl
# fabcheck TEST SHIM — not perftest: a client that hangs after connecting.
use strict; use warnings; use IO::Socket::INET;
my ($port, $host) = (18515, undef);
for (my $i = 0; $i < @ARGV; $i++) {
    my $a = $ARGV[$i];
    if ($a eq '-p') { $port = $ARGV[++$i]; next; }
    if ($a =~ /^-(d|x|s|D|q|m|n)$/) { $i++; next; }
    next if $a =~ /^-/;
    $host = $a;
}
if (!defined $host) {
    my $s = IO::Socket::INET->new(LocalPort => $port, Listen => 1, ReuseAddr => 1) or die "bind: $!\n";
    my $c = $s->accept; sleep 3600; exit 0;
}
my $c = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port) or die "connect: $!\n";
sleep 3600;
"#;

#[test]
fn timeout_flag_caps_an_ib_write_bw_pair_run() {
    let Some(lab) = Lab::ensure(16, "timeout_flag_caps_an_ib_write_bw_pair_run") else {
        return;
    };
    lab.shim("ib_write_bw", HANGING_IB_WRITE_BW);
    // The test itself may take 2 hours and the hung client an hour (duration + 60 s): only
    // --timeout can make the pair run end within the bound.
    let s = "test(\"hung pair\", #{ timeout: \"2h\" }, || { ib_write_bw(node(\"lab05\"), node(\"lab06\"), #{ device: \"mlx5_0\", duration: 3540 }); });\n";
    let f = Fab::new()
        .file("h.rhai", s)
        .args(["run", "h.rhai", "-i", &lab.inventory(), "--timeout", "4s"])
        .reports();
    let o = f.run_within(crate::common::HANG, "the pair run under --timeout 4s");
    assert_eq!(o.status("hung pair"), "error", "{}", o.message("hung pair"));
    let m = o.message("hung pair");
    assert!(m.contains("lab05") && m.contains("lab06"), "{m}");
    for n in ["lab05", "lab06"] {
        crate::common::eventually(
            crate::common::HANG,
            &format!("{n} runs no ib_write_bw"),
            || !lab.pids(n).contains("ib_write_bw"),
        );
    }
}

#[test]
fn test_pairs_mesh_runs_in_rounds_with_no_node_in_two_pairs_at_once() {
    let Some(lab) = Lab::ensure(16, "test_pairs_mesh_runs_in_rounds") else {
        return;
    };
    let s = "test_pairs(nodes(\"lab[01-08]\"), \"iperf3\", |a, b| {\n    let r = iperf3(a, b, #{ duration: 1 });\n    metric(\"gbps\", r.received_bps / 1e9, \"Gbit/s\");\n}, #{ pattern: \"mesh\", both_directions: false, timeout: \"2m\" });\n";
    // `fabcheck list` shows the rounds: 8 nodes, 28 pairs, 7 rounds of 4.
    let l = Fab::new()
        .file("m.rhai", s)
        .args(["list", "m.rhai", "-i", &lab.inventory()])
        .run();
    assert_eq!(l.code, 0, "{}", l.stderr);
    assert_eq!(l.stdout.lines().count(), 28, "{}", l.stdout);
    assert!(
        l.stdout.contains("\tround 7/7") && !l.stdout.contains("round 8"),
        "{}",
        l.stdout
    );
    let o = Fab::new()
        .file("m.rhai", s)
        .args([
            "run",
            "m.rhai",
            "-i",
            &lab.inventory(),
            "--html",
            "{dir}/r.html",
        ])
        .reports()
        .run();
    o.code(0);
    let tests = o.tests();
    assert_eq!(tests.len(), 28);
    // Every unordered pair exactly once; no node twice in a round.
    let mut pairs = std::collections::BTreeSet::new();
    let mut per_round: std::collections::BTreeMap<u64, Vec<String>> = Default::default();
    let mut busy: Vec<(String, f64, f64)> = Vec::new();
    for t in &tests {
        let (a, b) = (
            t["node"].as_str().unwrap().to_string(),
            t["peer"].as_str().unwrap().to_string(),
        );
        let key = if a < b {
            (a.clone(), b.clone())
        } else {
            (b.clone(), a.clone())
        };
        assert!(pairs.insert(key), "pair twice: {a} {b}");
        let r = t["round"].as_u64().unwrap();
        let nodes = per_round.entry(r).or_default();
        assert!(
            !nodes.contains(&a) && !nodes.contains(&b),
            "round {r}: {a} or {b} twice in {nodes:?}"
        );
        nodes.push(a.clone());
        nodes.push(b.clone());
        // When each node was busy (from the recorded start and duration).
        let start = chrono::DateTime::parse_from_rfc3339(t["started"].as_str().unwrap()).unwrap();
        let s0 = start.timestamp_millis() as f64;
        let s1 = s0 + t["time_ms"].as_f64().or(t["duration_ms"].as_f64()).unwrap();
        busy.push((a, s0, s1));
        busy.push((b, s0, s1));
    }
    assert_eq!(per_round.len(), 7);
    for (i, x) in busy.iter().enumerate() {
        for y in &busy[i + 1..] {
            if x.0 == y.0 {
                assert!(
                    x.2 <= y.1 + 1.0 || y.2 <= x.1 + 1.0,
                    "{} in two pairs at once: {x:?} {y:?}",
                    x.0
                );
            }
        }
    }
    // The HTML report has the node x node matrix.
    let html = std::fs::read_to_string(o.dir.join("r.html")).unwrap();
    assert!(
        html.contains("Pair matrices") && html.contains("Slowest pairs"),
        "no matrix"
    );
}

/// A perftest stand-in whose rail `bad0` fails at once on the client side; the other rails
/// behave like the real tool and print real captures.
fn one_bad_rail_shim() -> String {
    let perl = std::fs::read_to_string(common::repo().join("tests/shims/ib_write_bw.pl")).unwrap();
    perl.replace(
        "my $c;\nfor (1 .. 50)",
        "if (grep { $_ eq 'bad0' } @ARGV) { print STDERR \" Couldn't open device bad0 (shim: a failing rail)\\n\"; exit 1; }\nmy $c;\nfor (1 .. 50)",
    )
    .replace("@SERVER@", &fixture("perftest/ib_write_bw-server-roce-duration-header-MBsec-but-value-Gbps.txt"))
    .replace("@CLIENT@", &fixture("perftest/ib_write_bw-bidir-all-sizes-gbits-roce-rocm-doc-indented.txt"))
}

#[test]
fn concurrent_rails_are_cleaned_up_after_one_rail_fails() {
    let Some(lab) = Lab::ensure(16, "concurrent_rails_are_cleaned_up_after_one_rail_fails") else {
        return;
    };
    let shim = one_bad_rail_shim();
    assert!(shim.contains("bad0"), "the shim was not patched");
    lab.shim("ib_write_bw", &shim);
    // Two nodes whose port has two rails; the second rail fails.
    let head = std::fs::read_to_string(lab.inventory()).unwrap();
    let head = head.split("[[node]]").next().unwrap().to_string();
    let inv = format!(
        "{head}[[node]]\nname = \"lab07\"\nhost = \"10.213.0.7\"\ninterfaces = [\"fab0\", \"fab1\"]\nfabric_ips = [\"10.214.0.7\", \"10.215.0.7\"]\nrdma_devices = [\"good0\", \"bad0\"]\nports = [{{ name = \"p0\", interfaces = [\"fab0\", \"fab1\"], rdma_devices = [\"good0\", \"bad0\"] }}]\n\n[[node]]\nname = \"lab08\"\nhost = \"10.213.0.8\"\ninterfaces = [\"fab0\", \"fab1\"]\nfabric_ips = [\"10.214.0.8\", \"10.215.0.8\"]\nrdma_devices = [\"good0\", \"bad0\"]\nports = [{{ name = \"p0\", interfaces = [\"fab0\", \"fab1\"], rdma_devices = [\"good0\", \"bad0\"] }}]\n"
    );
    let s = "test(\"both rails at once\", || { ib_write_bw_port(node(\"lab07\"), node(\"lab08\"), #{ duration: 2 }); });\n";
    let o = Fab::new()
        .file("inv.toml", &inv)
        .file("r.rhai", s)
        .args(["run", "r.rhai", "-i", "inv.toml"])
        .reports()
        .run();
    assert_eq!(
        o.status("both rails at once"),
        "error",
        "{}",
        o.message("both rails at once")
    );
    let m = o.message("both rails at once");
    assert!(m.contains("bad0"), "{m}");
    // Both rails' servers were started on distinct TCP ports…
    let cmds = o.test("both rails at once")["commands"].to_string();
    assert!(
        cmds.contains("-p 18515") && cmds.contains("-p 18516"),
        "{cmds}"
    );
    // …and nothing is left running on either node.
    for n in ["lab07", "lab08"] {
        crate::common::eventually(
            crate::common::HANG,
            &format!("{n} runs no ib_write_bw"),
            || !lab.pids(n).contains("ib_write_bw"),
        );
    }
}

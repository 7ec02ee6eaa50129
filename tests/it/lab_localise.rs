//! Issue 32 part 4, issue 49: scripts/localise.rhai on 16 lab nodes finds the one bad node (or
//! link) with at most 3·N pair tests, its rounds' pairs at once and no node in two pair tests
//! at a time. Real iperf3 everywhere; the fault is real shaping (`tc`): every node's fabric
//! egress is capped well below what the lab's veths reach under load (so that a busy 2-core
//! machine does not make the healthy rates noisy), and the bad node (or only lab03's traffic
//! towards lab04, a bad link) much lower.

use crate::common;
use common::lab::Lab;
use common::Fab;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Every node's cap, and the bad node's (or link's) rate: 4x apart, far beyond the script's
/// 0.7 of the median.
const CAP: &str = "200mbit";
const SLOW: &str = "50mbit";

/// The lab's fabric devices (both carry a node's fabric addresses).
const DEVS: [&str; 2] = ["fab0", "fab1"];

/// Shapes the lab's fabric egress while alive; every node's qdiscs removed when dropped.
struct Shaped<'a>(&'a Lab);

impl<'a> Shaped<'a> {
    /// Every node capped at CAP (tbf); `slow_node` at SLOW; `slow_link` (node, peer): that
    /// node's traffic to the peer's fabric addresses at SLOW (htb with a u32 filter), the rest
    /// of its traffic at CAP.
    fn new(lab: &'a Lab, slow_node: Option<&str>, slow_link: Option<(&str, &str)>) -> Shaped<'a> {
        let s = Shaped(lab);
        for i in 1..=lab.n {
            let n = lab.node(i);
            let cmd = match slow_link {
                Some((from, to)) if from == n => htb_towards(&fabric_ips(lab, to)),
                _ => {
                    let rate = if slow_node == Some(n.as_str()) {
                        SLOW
                    } else {
                        CAP
                    };
                    DEVS.iter()
                        .map(|d| format!("tc qdisc replace dev {d} root tbf rate {rate} burst 64kb latency 100ms"))
                        .collect::<Vec<_>>()
                        .join(" && ")
                }
            };
            let (c, out) = lab.exec(&n, &cmd);
            assert_eq!(c, 0, "{n}: {cmd}: {out}");
        }
        s
    }
}

impl Drop for Shaped<'_> {
    fn drop(&mut self) {
        for i in 1..=self.0.n {
            let n = self.0.node(i);
            for d in DEVS {
                let _ = self
                    .0
                    .exec(&n, &format!("tc qdisc del dev {d} root 2>/dev/null; true"));
            }
        }
    }
}

/// htb on each fabric device: CAP by default, SLOW to `ips`.
fn htb_towards(ips: &[String]) -> String {
    let mut cmds = Vec::new();
    for d in DEVS {
        cmds.push(format!(
            "tc qdisc replace dev {d} root handle 1: htb default 10"
        ));
        cmds.push(format!(
            "tc class add dev {d} parent 1: classid 1:10 htb rate {CAP} ceil {CAP}"
        ));
        cmds.push(format!(
            "tc class add dev {d} parent 1: classid 1:20 htb rate {SLOW} ceil {SLOW}"
        ));
        for ip in ips {
            cmds.push(format!(
                "tc filter add dev {d} parent 1: protocol ip u32 match ip dst {ip}/32 flowid 1:20"
            ));
        }
    }
    cmds.join(" && ")
}

/// A node's fabric addresses, from the lab's inventory.
fn fabric_ips(lab: &Lab, node: &str) -> Vec<String> {
    inventory_ips(lab)
        .into_iter()
        .filter(|(_, n)| n == node)
        .map(|(ip, _)| ip)
        .collect()
}

/// Fabric address -> node name, from the lab's inventory.
fn inventory_ips(lab: &Lab) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(lab.inventory()).unwrap();
    let mut out = BTreeMap::new();
    let mut name = String::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("name = ") {
            name = v.trim_matches('"').to_string();
        } else if let Some(v) = line.strip_prefix("fabric_ips = ") {
            for ip in v.trim_matches(|c| c == '[' || c == ']').split(',') {
                out.insert(ip.trim().trim_matches('"').to_string(), name.clone());
            }
        }
    }
    out
}

/// The iperf3 clients' log on the nodes: a transparent wrapper (the real iperf3, its output and
/// exit status untouched) that appends `START END ARGS` per client run to a file per node.
/// Removed (with the shims) when dropped.
struct ClientLog<'a> {
    lab: &'a Lab,
    dir: PathBuf,
}

impl<'a> ClientLog<'a> {
    fn new(lab: &'a Lab) -> ClientLog<'a> {
        let dir = lab.dir.join(format!("iperf3-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        use std::os::unix::fs::PermissionsExt;
        // the lab's user writes it; the directory is this test's, removed at its end
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        lab.shim(
            "iperf3",
            &format!(
                r#"#!/bin/sh
real=/usr/bin/iperf3
case " $* " in *" -c "*) ;; *) exec $real "$@" ;; esac
t0=$(date +%s.%N)
$real "$@"
rc=$?
echo "$t0 $(date +%s.%N) $*" >> {}/$(hostname)
exit $rc
"#,
                dir.display()
            ),
        );
        ClientLog { lab, dir }
    }

    /// Each client run: (start, end, client node, server node).
    fn runs(&self) -> Vec<(f64, f64, String, String)> {
        let ips = inventory_ips(self.lab);
        let mut out = Vec::new();
        for e in std::fs::read_dir(&self.dir).unwrap().flatten() {
            let client = e.file_name().to_string_lossy().to_string();
            for line in std::fs::read_to_string(e.path()).unwrap().lines() {
                let w: Vec<&str> = line.split_whitespace().collect();
                let ip = w.iter().skip_while(|x| **x != "-c").nth(1).expect(line);
                let server = ips.get(*ip).unwrap_or_else(|| panic!("{ip}: {line}"));
                out.push((
                    w[0].parse::<f64>().unwrap(),
                    w[1].parse::<f64>().unwrap(),
                    client.clone(),
                    server.clone(),
                ));
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }
}

impl Drop for ClientLog<'_> {
    fn drop(&mut self) {
        self.lab.remove_shims();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs localise.rhai on all 16 nodes; the testcase's status and message, and the pair tests
/// it used (its metric `localise_tests`).
fn localise(lab: &Lab) -> (String, String, usize) {
    let script = common::repo()
        .join("scripts/localise.rhai")
        .display()
        .to_string();
    let o = Fab::new()
        .args(["run", &script, "-i", &lab.inventory()])
        .reports()
        .run();
    let name = "localise: bad node or link";
    let msg = o.message(name);
    let metrics = o.test(name)["metrics"].clone();
    let tests = metrics
        .as_array()
        .and_then(|m| m.iter().find(|x| x["name"] == "localise_tests"))
        .and_then(|x| x["value"].as_f64())
        .unwrap_or_else(|| panic!("no localise_tests metric in {metrics}: {msg}"));
    if o.status(name) == "failure" {
        assert!(
            msg.contains(&format!("({tests} pair tests for 16 nodes")),
            "{msg}"
        );
    }
    (o.status(name), msg, tests as usize)
}

#[test]
fn localise_names_the_shaped_node_among_16_in_parallel_rounds() {
    let Some(lab) = Lab::ensure(16, "localise_names_the_shaped_node") else {
        return;
    };
    lab.remove_shims();
    let _shaped = Shaped::new(&lab, Some("lab07"), None);
    let log = ClientLog::new(&lab);
    let (status, msg, tests) = localise(&lab);
    assert_eq!(status, "failure", "{msg}");
    assert!(msg.contains("exclude lab07 "), "{msg}");
    assert!(!msg.contains("bad link"), "{msg}");
    assert!(
        msg.contains("lab07: failed against 3 nodes proven good"),
        "{msg}"
    );
    assert!((16..=48).contains(&tests), "{tests} pair tests: {msg}");
    // From the nodes' own log of the client runs: each pair test is two client runs (one
    // each way); no node is in two client runs at once, and the rounds' pairs did run at once.
    let runs = log.runs();
    assert_eq!(
        runs.len(),
        2 * tests,
        "two client runs per pair test: {runs:?}"
    );
    let mut by_node: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for (t0, t1, c, s) in &runs {
        by_node.entry(c).or_default().push((*t0, *t1));
        by_node.entry(s).or_default().push((*t0, *t1));
    }
    for (n, iv) in &mut by_node {
        iv.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in iv.windows(2) {
            assert!(w[1].0 >= w[0].1, "{n} in two iperf3 runs at once: {w:?}");
        }
    }
    let most = runs
        .iter()
        .map(|(t0, _, _, _)| runs.iter().filter(|r| r.0 <= *t0 && *t0 < r.1).count())
        .max()
        .unwrap_or(0);
    assert!(
        most >= 4,
        "at most {most} client runs at once: the rounds did not run in parallel"
    );
}

#[test]
fn localise_tells_a_shaped_link_from_a_bad_node() {
    let Some(lab) = Lab::ensure(16, "localise_tells_a_shaped_link") else {
        return;
    };
    lab.remove_shims();
    let _shaped = Shaped::new(&lab, None, Some(("lab03", "lab04")));
    let (status, msg, tests) = localise(&lab);
    assert_eq!(status, "failure", "{msg}");
    assert!(msg.contains("bad link lab03 - lab04"), "{msg}");
    assert!(!msg.contains("exclude lab"), "no node excluded: {msg}");
    assert!((16..=48).contains(&tests), "{tests} pair tests: {msg}");
}

#[test]
fn localise_passes_a_healthy_lab_of_16() {
    let Some(lab) = Lab::ensure(16, "localise_passes_a_healthy_lab") else {
        return;
    };
    lab.remove_shims();
    let _shaped = Shaped::new(&lab, None, None);
    let (status, msg, tests) = localise(&lab);
    assert_eq!(status, "pass", "{msg}");
    assert_eq!(tests, 16, "{msg}");
}

//! `--dry-run`'s read-only preflight. While the selected tests are listed (nothing is sent),
//! the primitives record what they would need on each node (`run::dry::Needs`): programs, `sudo`, the
//! node's RDMA devices. The preflight then checks exactly that on the nodes, reading only:
//! SSH reachable (`true`), `sudo -n true`, `command -v TOOL` (PATH plus /usr/sbin and /sbin, as
//! every command gets), and `ls -1 /sys/class/infiniband` against the inventory's RDMA devices.
//! Whatever is missing is an error testcase naming the node, what is missing and what to do.

use super::dry::NodeNeeds;
use super::env::{command_log, RunEnv};
use super::model::{CommandLog, Status, SuiteResult, TestResult};
use crate::inventory::Node;
use crate::transport::{CmdOutput, CmdRequest, TransportError};
use crate::util::names::quote;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Suite (classname) of the preflight's testcases.
pub(crate) const SUITE: &str = "preflight";

/// What to do about a missing program.
fn install_hint(tool: &str) -> &'static str {
    let name = tool.rsplit('/').next().unwrap_or(tool);
    match name {
        n if n.starts_with("ib_") && (n.ends_with("_bw") || n.ends_with("_lat")) => {
            "install perftest"
        }
        n if n.ends_with("_perf") => {
            "build nccl-tests at that path on every node of the launch (or give the script the path it has)"
        }
        "mpirun" => "install Open MPI (or launch with srun)",
        "srun" => "run from a Slurm allocation host (or launch with mpirun)",
        "ibdev2netdev" | "ofed_info" => "install MLNX OFED / DOCA-OFED",
        "rdma" | "ip" | "ss" => "install iproute2",
        "timeout" | "env" | "stat" | "cat" | "sha256sum" => "install coreutils",
        "ethtool" => "install ethtool",
        "iperf3" => "install iperf3 (3.16 or later for parallel streams on several cores)",
        "ping" => "install iputils-ping",
        "ssh" => "install openssh-client",
        "sudo" => "install sudo",
        "pkill" => "install procps",
        _ => "install it or put it on the login user's PATH",
    }
}

fn case(
    node: &Node,
    name: &str,
    status: Status,
    message: Option<String>,
    took: Duration,
) -> TestResult {
    TestResult {
        node: Some(node.name.clone()),
        status,
        message,
        duration_ms: took.as_millis() as u64,
        ..TestResult::new(&format!("{name} [{}]", node.name), SUITE)
    }
}

/// Ask a node one read-only question; the command and its answer go into `log` (the
/// testcase's commands in the reports).
fn ask(
    env: &RunEnv,
    node: &Node,
    command: String,
    sudo: bool,
    log: &mut Vec<CommandLog>,
) -> Result<CmdOutput, TransportError> {
    let req = CmdRequest {
        command,
        timeout: env.command_timeout(node, None, None, None),
        env: vec![],
        sudo,
    };
    let res = env.transports.for_node(node).run(node, &req);
    log.push(command_log(node, &req, &res));
    res
}

fn tests_of(tests: &BTreeSet<String>) -> String {
    match tests.len() {
        0 => String::new(),
        1 => format!(
            " (needed by {})",
            tests.iter().next().unwrap_or(&String::new())
        ),
        n => format!(
            " (needed by {} and {} more)",
            tests.iter().next().unwrap_or(&String::new()),
            n - 1
        ),
    }
}

/// `command -v TOOL` for every program the node's tests need.
fn tools_case(env: &RunEnv, node: &Node, needs: &NodeNeeds) -> TestResult {
    let t0 = Instant::now();
    let mut log = Vec::new();
    let mut missing = Vec::new();
    let mut unknown = Vec::new();
    for (tool, tests) in &needs.tools {
        let cmd = format!("command -v {} >/dev/null", quote(tool));
        match ask(env, node, cmd, false, &mut log) {
            Ok(o) if o.exit_code == Some(0) => {}
            Ok(_) => missing.push(format!(
                "`{tool}`{}: {}",
                tests_of(tests),
                install_hint(tool)
            )),
            Err(e) => unknown.push(format!("`{tool}`: {e}")),
        }
    }
    let found: Vec<&str> = needs.tools.keys().map(String::as_str).collect();
    let (status, message) = if !missing.is_empty() {
        (
            Status::Error,
            Some(format!(
                "{}: missing {} (`command -v`, on PATH plus /usr/sbin and /sbin as fabcheck's commands run)",
                node.name,
                missing.join("; ")
            )),
        )
    } else if !unknown.is_empty() {
        (
            Status::Error,
            Some(format!(
                "{}: could not check {}",
                node.name,
                unknown.join("; ")
            )),
        )
    } else {
        (Status::Pass, Some(format!("found: {}", found.join(", "))))
    };
    let mut t = case(node, "tools", status, message, t0.elapsed());
    if !missing.is_empty() {
        let tools: Vec<&str> = missing.iter().filter_map(|m| m.split('`').nth(1)).collect();
        t.subjects.push(named(
            node,
            format!(
                "{}: {} not installed (or not on the login user's PATH)",
                node.name,
                tools.join(", ")
            ),
        ));
    }
    with_log(t, log)
}

/// A subject naming the part in words (`spark-02: ib_write_bw not installed`).
fn named(node: &Node, part: String) -> super::model::Subject {
    super::model::Subject {
        part: Some(part),
        ..super::model::Subject::new(super::model::Finding::Other, &node.name)
    }
}

/// `sudo -n true`, for a node where a selected test runs a command with sudo.
fn sudo_case(env: &RunEnv, node: &Node, needs: &NodeNeeds) -> TestResult {
    let t0 = Instant::now();
    let mut log = Vec::new();
    let (status, message) = match ask(env, node, "true".into(), true, &mut log) {
        Ok(o) if o.exit_code == Some(0) => (Status::Pass, None),
        Ok(o) => (
            Status::Error,
            Some(format!(
                "{}: `sudo -n true` exited {}{}: {}; give the login user a NOPASSWD sudoers rule, or leave those tests out",
                node.name,
                o.exit_code.unwrap_or(-1),
                tests_of(&needs.sudo),
                crate::util::fmt::clean_text(o.stderr.trim())
            )),
        ),
        Err(e) => (
            Status::Error,
            Some(format!(
                "{e}{}; give the login user a NOPASSWD sudoers rule, or leave those tests out",
                tests_of(&needs.sudo)
            )),
        ),
    };
    with_log(case(node, "sudo -n", status, message, t0.elapsed()), log)
}

/// Every RDMA device the inventory names for the node (`rdma_devices`, `ports`).
pub(crate) fn inventory_devices(node: &Node) -> Vec<String> {
    let mut v: Vec<String> = node.rdma_devices.clone();
    for p in &node.ports {
        v.extend(p.rdma_devices.iter().cloned());
    }
    let mut seen = BTreeSet::new();
    v.retain(|d| seen.insert(d.clone()));
    v
}

/// The inventory's RDMA devices are in `/sys/class/infiniband` on the node.
fn devices_case(env: &RunEnv, node: &Node, needs: &NodeNeeds) -> TestResult {
    let t0 = Instant::now();
    let wanted = inventory_devices(node);
    let mut log = Vec::new();
    let res = ask(
        env,
        node,
        "ls -1 /sys/class/infiniband".into(),
        false,
        &mut log,
    );
    let what_to_do = "fix the inventory's rdma_devices/ports, or load the RDMA driver (mlx5_ib) and check the cable";
    let mut lost: Vec<String> = vec![];
    let (status, message) = match res {
        Ok(o) if o.exit_code == Some(0) => {
            let present: BTreeSet<&str> = o.stdout.split_whitespace().collect();
            let absent: Vec<&String> = wanted.iter().filter(|d| !present.contains(d.as_str())).collect();
            lost = absent.iter().map(|d| d.to_string()).collect();
            if absent.is_empty() {
                (Status::Pass, Some(format!("present: {}", wanted.join(", "))))
            } else {
                let have: Vec<&str> = present.into_iter().collect();
                (
                    Status::Error,
                    Some(format!(
                        "{}: RDMA device {} named in the inventory is not on the node{} (/sys/class/infiniband has {}): {what_to_do}",
                        node.name,
                        absent.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(", "),
                        tests_of(&needs.rdma),
                        if have.is_empty() { "nothing".to_string() } else { have.join(", ") }
                    )),
                )
            }
        }
        Ok(_) => (
            Status::Error,
            Some(format!(
                "{}: no RDMA device at all (/sys/class/infiniband does not exist), the inventory names {}{}: {what_to_do}",
                node.name,
                wanted.join(", "),
                tests_of(&needs.rdma)
            )),
        ),
        Err(e) => (Status::Error, Some(format!("could not check RDMA devices: {e}"))),
    };
    let mut t = case(node, "rdma devices", status, message, t0.elapsed());
    if !lost.is_empty() {
        t.subjects.push(named(
            node,
            format!("{} {}: the RDMA device(s) missing (the RDMA driver not bound, the NIC's PCIe path lost, or the inventory's names)", node.name, lost.join(", ")),
        ));
    }
    with_log(t, log)
}

fn with_log(mut t: TestResult, log: Vec<CommandLog>) -> TestResult {
    t.commands = log;
    t
}

/// The preflight of one node: reachable, then (only if it is) what its tests need.
fn node_cases(env: &RunEnv, node: &Node, needs: Option<NodeNeeds>) -> Vec<TestResult> {
    let t0 = Instant::now();
    let reach = match env.transports.for_node(node).probe(node) {
        Ok(()) => case(node, "reachable", Status::Pass, None, t0.elapsed()),
        Err(e) => case(
            node,
            "reachable",
            Status::Error,
            Some(e.to_string()),
            t0.elapsed(),
        ),
    };
    let reachable = reach.status == Status::Pass;
    let mut out = vec![reach];
    let Some(needs) = needs.filter(|_| reachable) else {
        return out;
    };
    if !needs.sudo.is_empty() {
        out.push(sudo_case(env, node, &needs));
    }
    if !needs.tools.is_empty() {
        out.push(tools_case(env, node, &needs));
    }
    if !needs.rdma.is_empty() && !inventory_devices(node).is_empty() {
        out.push(devices_case(env, node, &needs));
    }
    out
}

/// The preflight over every inventory node, concurrently up to the fan-out.
pub(crate) fn suite(env: &RunEnv) -> SuiteResult {
    let started = Instant::now();
    let stamp = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let needs = env.needs.all();
    let nodes: Vec<&Node> = env.inventory.nodes.iter().collect();
    let results = crate::util::pool::map(
        &nodes,
        env.fanout,
        |_, n| node_cases(env, n, needs.get(&n.name).cloned()),
        |_, n| {
            vec![case(
                n,
                "reachable",
                Status::Error,
                Some("internal error: the preflight's thread panicked".into()),
                Duration::ZERO,
            )]
        },
    );
    SuiteResult {
        name: SUITE.into(),
        file: String::new(),
        timestamp: stamp,
        duration_ms: started.elapsed().as_millis() as u64,
        tests: results.into_iter().flatten().collect(),
    }
}

//! Server/client primitives: `ib_write_bw` / `ib_read_bw` / `ib_send_bw` (and per physical
//! port, all rails at once, summed: [`perftest`]), `iperf3` ([`iperf3`]). This file is the
//! exchange they share: the server is started, fabcheck waits until its
//! TCP port really listens (polling `ss`, no fixed sleeps), runs the client against the
//! server's fabric address, collects and parses both sides, and always stops the server.
//!
//! The whole exchange (server start, readiness, client) is bounded by one command timeout from
//! the run's timeout policy (`RunEnv::command_timeout`).

use super::{arg_words, check_addr, check_name, check_program, last_lines, parsed, program_name};
use super::{NodeRef, PResult, PrimError};
use crate::inventory::{Node, PortSpec};
use crate::parse;
use crate::run::context::TestLog;
use crate::run::env::{log_command, RunEnv};
use crate::transport::{CmdOutput, CmdRequest, TransportError};
use crate::util::names::quote;
use serde::Serialize;
use std::time::{Duration, Instant};

mod iperf3;
mod perftest;
pub(crate) use iperf3::*;
pub(crate) use perftest::*;

type Log = Vec<(Node, CmdRequest, Result<CmdOutput, TransportError>)>;

/// How long a server may take to start listening (at most; the pair's timeout caps it too).
const READY_TIMEOUT: Duration = Duration::from_secs(20);

pub(crate) struct PairRun {
    pub server: Result<CmdOutput, TransportError>,
    pub client: Result<CmdOutput, TransportError>,
    pub log: Log,
}

/// One server/client exchange, planned.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PairPlan {
    pub server_cmd: String,
    pub client_cmd: String,
    /// TCP port the server listens on (readiness is checked there).
    pub port: u16,
    /// Bounds the whole exchange: set from the run's timeout policy by [`PairPlan::bounded`].
    pub timeout: Duration,
    /// What the work asked needs (duration plus start-up), the policy's lower bound.
    pub work: Duration,
    pub server_ip: String,
    pub device: Option<String>,
    /// Rides along in the server's command line so that exactly this server can be stopped.
    pub tag: String,
    /// The program asked for (`binary:` or the tool's name): named when it is missing.
    pub program: String,
}

impl PairPlan {
    /// The plan with its timeout from the run's policy (explicit option, `--timeout`, the
    /// node's `command_timeout` raised to the work's need, the time left in the test).
    pub(crate) fn bounded(
        mut self,
        env: &RunEnv,
        server: &Node,
        explicit: Option<Duration>,
        rec: Option<&TestLog>,
    ) -> PairPlan {
        self.timeout = env.command_timeout(server, explicit, Some(self.work), rec);
        self
    }
}

fn req(cmd: String, timeout: Duration) -> CmdRequest {
    CmdRequest {
        command: cmd,
        timeout,
        env: vec![],
        sudo: false,
    }
}

/// Start the server, wait for its TCP port to listen, run the client, then collect the server
/// (killing it by its tag if it does not end by itself). Thread-agnostic: the caller logs.
pub(crate) fn run_pair(
    env: &RunEnv,
    rec: Option<&TestLog>,
    server: &Node,
    client: &Node,
    plan: &PairPlan,
) -> PairRun {
    if env.dry_run {
        return list_pair(env, rec, server, client, plan);
    }
    let started = Instant::now();
    let mut log: Log = Vec::new();
    let port = plan.port;
    let server_req = req(
        format!("{} ; : {}", plan.server_cmd, plan.tag),
        plan.timeout,
    );
    let kill = |log: &mut Log| {
        let r = kill_request(plan);
        let res = env.run_raw(server, &r, rec);
        log.push((server.clone(), r, res));
    };
    let ready_limit = READY_TIMEOUT.min(plan.timeout);
    std::thread::scope(|s| {
        let srv = s.spawn(|| env.run_raw(server, &server_req, rec));
        let probe = probe_request(plan);
        let mut ready = false;
        let mut last_probe = None;
        // Probe at least once even when the server call already returned: a replayed
        // transcript answers the server command at once, and a real server that died is
        // simply not listening (the error below says so).
        while !ready && started.elapsed() < ready_limit && !crate::run::cancel::interrupted() {
            let finished = srv.is_finished();
            let r = env.run_raw(server, &probe, rec);
            ready = matches!(&r, Ok(o) if o.stdout.contains(&format!(":{port}")));
            let failed = r.is_err();
            last_probe = Some(r);
            if failed || ready || finished {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if let Some(r) = last_probe {
            log.push((server.clone(), probe.clone(), r));
        }
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<CmdOutput, TransportError>>| {
            h.join().unwrap_or_else(|_| {
                Err(TransportError::Other {
                    node: server.name.clone(),
                    message: "server thread panicked".into(),
                })
            })
        };
        if !ready {
            if !srv.is_finished() {
                kill(&mut log);
            }
            let server_res = join(srv);
            log.push((server.clone(), server_req.clone(), server_res.clone()));
            let timed_out = started.elapsed() >= ready_limit;
            let why = not_listening(server, plan, &server_res, timed_out.then_some(ready_limit));
            return PairRun {
                server: server_res,
                client: Err(TransportError::Other {
                    node: server.name.clone(),
                    message: why,
                }),
                log,
            };
        }
        let left = plan
            .timeout
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(100));
        let client_req = req(plan.client_cmd.clone(), left);
        let client_res = env.run_raw(client, &client_req, rec);
        // A server ends by itself after its client; give it a moment, then stop it.
        let waited = Instant::now();
        while !srv.is_finished()
            && waited.elapsed() < Duration::from_secs(if client_res.is_ok() { 10 } else { 1 })
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !srv.is_finished() {
            kill(&mut log);
        }
        let server_res = join(srv);
        log.push((server.clone(), server_req.clone(), server_res.clone()));
        log.push((client.clone(), client_req, client_res.clone()));
        PairRun {
            server: server_res,
            client: client_res,
            log,
        }
    })
}

/// Why a server never listened: the time it had ran out, its program is missing, it exited,
/// or its node could not run it.
fn not_listening(
    server: &Node,
    plan: &PairPlan,
    server_res: &Result<CmdOutput, TransportError>,
    timed_out_after: Option<Duration>,
) -> String {
    let port = plan.port;
    if let Some(limit) = timed_out_after {
        return format!(
            "the server did not listen on TCP port {port} within {}",
            crate::util::duration::human(limit)
        );
    }
    match server_res {
        Ok(o) if o.exit_code == Some(127) => {
            format!("`{}` is not installed on {}", plan.program, server.name)
        }
        Ok(o) => format!(
            "the server on {} exited ({}) before listening on TCP port {port}: {}",
            server.name,
            o.exit_code.unwrap_or(-1),
            last_lines(&format!("{}{}", o.stdout, o.stderr), 3)
        ),
        // The error already names a node; do not name it twice.
        Err(e) => {
            let t = e.to_string();
            t.strip_prefix(&format!("{}: ", server.name))
                .map(str::to_string)
                .unwrap_or(t)
        }
    }
}

/// Stops exactly this exchange's server (its tag rides in the server's command line); the
/// bracket pattern does not match the pkill (or its shell) itself.
fn kill_request(plan: &PairPlan) -> CmdRequest {
    let tag = &plan.tag;
    let pattern = format!("{}[{}]", &tag[..tag.len() - 1], &tag[tag.len() - 1..]);
    req(
        format!("pkill -TERM -f -- {}; true", quote(&pattern)),
        Duration::from_secs(10),
    )
}

/// Is the server's TCP port listening yet?
fn probe_request(plan: &PairPlan) -> CmdRequest {
    req(
        format!("ss -Hltn 'sport = :{}'", plan.port),
        Duration::from_secs(10).min(plan.timeout),
    )
}

/// Exchanges between the same two nodes at once (a port's rails), results in plan order; a
/// dry run lists them one after the other, in order.
pub(crate) fn run_pairs(
    env: &RunEnv,
    rec: Option<&TestLog>,
    server: &Node,
    client: &Node,
    plans: &[PairPlan],
) -> Vec<PairRun> {
    if env.dry_run {
        return plans
            .iter()
            .map(|p| list_pair(env, rec, server, client, p))
            .collect();
    }
    let panicked = |n: &Node| {
        Err(TransportError::Other {
            node: n.name.clone(),
            message: "internal error: the rail's thread panicked".into(),
        })
    };
    crate::util::pool::map(
        plans,
        plans.len(),
        |_, p| run_pair(env, rec, server, client, p),
        |_, _| PairRun {
            server: panicked(server),
            client: panicked(client),
            log: vec![],
        },
    )
}

/// `--dry-run`: the exchange's whole plan, in the order a run sends it, each command listed
/// (none sent): server, readiness probe, client, the server's stop.
fn list_pair(
    env: &RunEnv,
    rec: Option<&TestLog>,
    server: &Node,
    client: &Node,
    plan: &PairPlan,
) -> PairRun {
    let with_note = |mut r: CmdRequest, note: &str| {
        r.command = format!("{}   # {note}", r.command);
        r
    };
    let steps = [
        (
            server,
            with_note(
                req(
                    format!("{} ; : {}", plan.server_cmd, plan.tag),
                    plan.timeout,
                ),
                "server, in the background",
            ),
        ),
        (
            server,
            with_note(
                probe_request(plan),
                &format!(
                    "every 0.1 s until the server listens (at most {})",
                    crate::util::duration::human(READY_TIMEOUT.min(plan.timeout))
                ),
            ),
        ),
        (
            client,
            with_note(req(plan.client_cmd.clone(), plan.timeout), "client"),
        ),
        (
            server,
            with_note(
                kill_request(plan),
                "only if the server has not ended by itself",
            ),
        ),
    ];
    let mut log: Log = Vec::new();
    for (n, r) in steps {
        let res = env.run_raw(n, &r, rec);
        log.push((n.clone(), r, res));
    }
    let not_run = |n: &Node, cmd: &str| {
        Err(TransportError::NotRun {
            node: n.name.clone(),
            command: cmd.to_string(),
        })
    };
    PairRun {
        server: not_run(server, &plan.server_cmd),
        client: not_run(client, &plan.client_cmd),
        log,
    }
}

/// What an exchange ran, into the test `rec` records.
fn flush(rec: Option<&TestLog>, log: &Log) {
    for (n, r, res) in log {
        log_command(rec, n, r, res);
    }
}

/// `--dry-run`: what an exchange needs on its two nodes (the program on both; `ss` and
/// `pkill` on the server).
fn need_tools(env: &RunEnv, rec: Option<&TestLog>, server: &Node, client: &Node, bin: &str) {
    env.need_tool(server, bin, rec);
    env.need_tool(client, bin, rec);
    env.need_tool(server, "ss", rec);
    env.need_tool(server, "pkill", rec);
}

/// The fabric address of `n` for an RDMA device (same index in rdma_devices/fabric_ips), or
/// its first fabric address, or its management host.
pub(crate) fn fabric_ip_for(n: &Node, device: Option<&str>) -> String {
    if let Some(d) = device {
        if let Some(i) = n.rdma_devices.iter().position(|x| x == d) {
            if let Some(ip) = n.fabric_ips.get(i) {
                return ip.clone();
            }
        }
        for p in &n.ports {
            if let Some(i) = p.rdma_devices.iter().position(|x| x == d) {
                if let Some(iface) = p.interfaces.get(i) {
                    if let Some(j) = n.interfaces.iter().position(|x| x == iface) {
                        if let Some(ip) = n.fabric_ips.get(j) {
                            return ip.clone();
                        }
                    }
                }
            }
        }
    }
    n.fabric_ips
        .first()
        .cloned()
        .unwrap_or_else(|| n.host.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::PortSpec;

    fn spark(name: &str, ips: [&str; 2]) -> Node {
        let mut n = Node::bare(name);
        n.interfaces = vec!["enp1s0f1np1".into(), "enP2p1s0f1np1".into()];
        n.fabric_ips = ips.iter().map(|s| s.to_string()).collect();
        n.rdma_devices = vec!["rocep1s0f1".into(), "roceP2p1s0f1".into()];
        n.ports = vec![PortSpec {
            name: "qsfp0".into(),
            interfaces: n.interfaces.clone(),
            rdma_devices: n.rdma_devices.clone(),
            ..Default::default()
        }];
        n
    }

    #[test]
    fn perftest_plan_builds_both_sides() {
        let s = spark("spark-01", ["192.168.100.10", "192.168.200.10"]);
        let o = PerftestOpts {
            device: Some("roceP2p1s0f1".into()),
            gid_index: Some(3),
            duration: Some(10),
            qps: Some(4),
            ..Default::default()
        };
        let p = perftest_plan("ib_write_bw", &s, &o, None).unwrap();
        assert_eq!(
            p.server_cmd,
            "ib_write_bw -d roceP2p1s0f1 -x 3 -p 18515 -D 10 -q 4 --report_gbits"
        );
        assert_eq!(
            p.client_cmd,
            "ib_write_bw -d roceP2p1s0f1 -x 3 -p 18515 -D 10 -q 4 --report_gbits 192.168.200.10"
        );
        assert_eq!(
            p.server_ip, "192.168.200.10",
            "the address of the device's interface"
        );
        assert_eq!(p.work, Duration::from_secs(70));
        assert_eq!(p.tag, "fcsrv-ib_write_bw-18515");
        let bad = PerftestOpts {
            extra_args: Some("--foo;reboot".into()),
            ..Default::default()
        };
        assert!(perftest_plan("ib_write_bw", &s, &bad, None).is_err());
    }

    #[test]
    fn port_plans_one_rail_each_on_its_own_tcp_port() {
        let s = spark("spark-01", ["192.168.100.10", "192.168.200.10"]);
        let c = spark("spark-02", ["192.168.100.11", "192.168.200.11"]);
        let (port, _, plans) = port_plans("ib_write_bw", &s, &c, &PerftestOpts::default()).unwrap();
        assert_eq!(port, "qsfp0");
        assert_eq!(plans.len(), 2);
        assert_eq!((plans[0].port, plans[1].port), (18515, 18516));
        assert_eq!(plans[1].server_ip, "192.168.200.10");
        assert!(plans[1]
            .client_cmd
            .starts_with("ib_write_bw -d roceP2p1s0f1 -p 18516"));
        // all_ports: every port's rails at once, each on its own TCP port.
        let mut two = spark("spark-01", ["192.168.100.10", "192.168.200.10"]);
        two.ports.push(PortSpec {
            name: "qsfp1".into(),
            interfaces: vec!["enp1s0f0np0".into()],
            rdma_devices: vec!["rocep1s0f0".into()],
            ..Default::default()
        });
        let mut peer = two.clone();
        peer.name = "spark-02".into();
        let all = PerftestOpts {
            all_ports: true,
            ..Default::default()
        };
        let (label, names, plans) = port_plans("ib_write_bw", &two, &peer, &all).unwrap();
        assert_eq!(label, "all");
        assert_eq!(names, vec!["qsfp0", "qsfp0", "qsfp1"]);
        let tcp: Vec<u16> = plans.iter().map(|p| p.port).collect();
        assert_eq!(tcp, vec![18515, 18516, 18517]);
        // rail_shift 1: the client's rail k writes to the server's rail k+1 (cross-rail), the
        // server's address that of the rail it listens on
        let cross = PerftestOpts {
            all_ports: true,
            rail_shift: 1,
            ..Default::default()
        };
        let (_, names, plans) = port_plans("ib_write_bw", &two, &peer, &cross).unwrap();
        assert_eq!(names, vec!["qsfp0", "qsfp1", "qsfp0"]);
        assert!(
            plans[0]
                .client_cmd
                .starts_with("ib_write_bw -d rocep1s0f1 "),
            "{}",
            plans[0].client_cmd
        );
        assert!(
            plans[0]
                .server_cmd
                .starts_with("ib_write_bw -d roceP2p1s0f1 "),
            "{}",
            plans[0].server_cmd
        );
        assert!(
            plans[1]
                .server_cmd
                .starts_with("ib_write_bw -d rocep1s0f0 "),
            "{}",
            plans[1].server_cmd
        );
        assert!(
            plans[2]
                .client_cmd
                .starts_with("ib_write_bw -d rocep1s0f0 "),
            "{}",
            plans[2].client_cmd
        );
        assert!(
            plans[2]
                .server_cmd
                .starts_with("ib_write_bw -d rocep1s0f1 "),
            "{}",
            plans[2].server_cmd
        );
        assert_eq!(plans[0].server_ip, "192.168.200.10");
        let none = Node::bare("x");
        assert!(
            port_plans("ib_write_bw", &none, &c, &PerftestOpts::default())
                .unwrap_err()
                .message
                .contains("rdma_devices")
        );
    }

    #[test]
    fn iperf3_plan_json_mode_against_fabric_address() {
        let s = spark("a", ["10.1.0.1", "10.2.0.1"]);
        let o = Iperf3Opts {
            parallel: Some(16),
            duration: Some(2),
            ..Default::default()
        };
        let p = iperf3_plan(&s, &o).unwrap();
        assert_eq!(p.server_cmd, "iperf3 -s -1 -p 5201");
        assert_eq!(p.client_cmd, "iperf3 -c 10.1.0.1 -p 5201 -J -P 16 -t 2");
        assert_eq!(p.work, Duration::from_secs(32));
    }
}

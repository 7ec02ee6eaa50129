//! Server/client primitives: `ib_write_bw` / `ib_read_bw` / `ib_send_bw` (and per physical
//! port, all rails at once, summed), `iperf3`. The server is started, fabcheck waits until its
//! TCP port really listens (polling `ss`, no fixed sleeps), runs the client against the
//! server's fabric address, collects and parses both sides, and always stops the server.
//!
//! The whole exchange (server start, readiness, client) is bounded by one command timeout from
//! the run's timeout policy (`RunEnv::command_timeout`).

use super::{arg_words, check_addr, check_name, check_program, last_lines, parsed, program_name};
use super::{NodeRef, PResult, PrimError};
use crate::inventory::{Node, PortSpec};
use crate::parse;
use crate::run::env::{log_command, RunEnv};
use crate::transport::{CmdOutput, CmdRequest, TransportError};
use crate::util::names::quote;
use serde::Serialize;
use std::time::{Duration, Instant};

type Log = Vec<(Node, CmdRequest, Result<CmdOutput, TransportError>)>;

/// How long a server may take to start listening (at most; the pair's timeout caps it too).
const READY_TIMEOUT: Duration = Duration::from_secs(20);

pub struct PairRun {
    pub server: Result<CmdOutput, TransportError>,
    pub client: Result<CmdOutput, TransportError>,
    pub log: Log,
}

/// One server/client exchange, planned.
#[derive(Debug, Clone, PartialEq)]
pub struct PairPlan {
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
    pub fn bounded(mut self, env: &RunEnv, server: &Node, explicit: Option<Duration>) -> PairPlan {
        self.timeout = env.command_timeout(server, explicit, Some(self.work));
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
pub fn run_pair(env: &RunEnv, server: &Node, client: &Node, plan: &PairPlan) -> PairRun {
    if env.dry_run {
        return list_pair(env, server, client, plan);
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
        let res = env.run_raw(server, &r);
        log.push((server.clone(), r, res));
    };
    let ready_limit = READY_TIMEOUT.min(plan.timeout);
    std::thread::scope(|s| {
        let srv = s.spawn(|| env.run_raw(server, &server_req));
        let probe = probe_request(plan);
        let mut ready = false;
        let mut last_probe = None;
        // Probe at least once even when the server call already returned: a replayed
        // transcript answers the server command at once, and a real server that died is
        // simply not listening (the error below says so).
        while !ready && started.elapsed() < ready_limit && !crate::run::cancel::interrupted() {
            let finished = srv.is_finished();
            let r = env.run_raw(server, &probe);
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
        let client_res = env.run_raw(client, &client_req);
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
            crate::transport::human(limit)
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

/// `--dry-run`: the exchange's whole plan, in the order a run sends it, each command listed
/// (none sent): server, readiness probe, client, the server's stop.
fn list_pair(env: &RunEnv, server: &Node, client: &Node, plan: &PairPlan) -> PairRun {
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
                    crate::transport::human(READY_TIMEOUT.min(plan.timeout))
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
        let res = env.run_raw(n, &r);
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

fn flush(log: &Log) {
    for (n, r, res) in log {
        log_command(n, r, res);
    }
}

/// The fabric address of `n` for an RDMA device (same index in rdma_devices/fabric_ips), or
/// its first fabric address, or its management host.
pub fn fabric_ip_for(n: &Node, device: Option<&str>) -> String {
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

/// Options of `ib_write_bw` / `ib_read_bw` / `ib_send_bw` (and their `_port` forms).
#[derive(Debug, Clone, Default)]
pub struct PerftestOpts {
    pub device: Option<String>,
    pub server_device: Option<String>,
    pub client_device: Option<String>,
    pub gid_index: Option<i64>,
    /// TCP port of the exchange (default 18515; a port run uses PORT, PORT+1, … per rail).
    pub port: Option<i64>,
    pub size: Option<i64>,
    pub duration: Option<i64>,
    pub qps: Option<i64>,
    pub bidirectional: bool,
    pub all_sizes: bool,
    pub extra_args: Option<String>,
    pub binary: Option<String>,
    pub server_ip: Option<String>,
    pub timeout: Option<Duration>,
    /// `_port` forms: which inventory port (default the first).
    pub port_name: Option<String>,
    /// `_port` forms: every port of the node (all its NICs) at the same time.
    pub all_ports: bool,
}

/// The command lines of one perftest exchange. `tool` is `ib_write_bw` etc.
pub fn perftest_plan(
    tool: &str,
    server: &Node,
    o: &PerftestOpts,
    tcp_port: Option<u16>,
) -> PResult<PairPlan> {
    let bin = o.binary.clone().unwrap_or_else(|| tool.to_string());
    check_program(&bin)?;
    let sdev = o.server_device.clone().or_else(|| o.device.clone());
    let cdev = o.client_device.clone().or_else(|| o.device.clone());
    for d in [&sdev, &cdev].into_iter().flatten() {
        check_name("RDMA device", d)?;
    }
    let mut common: Vec<String> = Vec::new();
    if let Some(g) = o.gid_index {
        common.push(format!("-x {}", g.clamp(0, 255)));
    }
    let port = tcp_port.unwrap_or(o.port.unwrap_or(18515).clamp(1, 65535) as u16);
    common.push(format!("-p {port}"));
    if let Some(s) = o.size {
        common.push(format!("-s {}", s.clamp(1, 1 << 40)));
    }
    if let Some(d) = o.duration {
        common.push(format!("-D {}", d.clamp(1, 86_400)));
    }
    if let Some(q) = o.qps {
        common.push(format!("-q {}", q.clamp(1, 65_536)));
    }
    if o.bidirectional {
        common.push("-b".into());
    }
    if o.all_sizes {
        common.push("-a".into());
    }
    common.push("--report_gbits".into());
    if let Some(x) = &o.extra_args {
        common.extend(arg_words("extra_args", x)?);
    }
    let server_ip = match &o.server_ip {
        Some(ip) => ip.clone(),
        None => fabric_ip_for(server, sdev.as_deref()),
    };
    check_addr(&server_ip)?;
    let side = |d: &Option<String>| {
        d.as_ref()
            .map(|d| format!(" -d {}", quote(d)))
            .unwrap_or_default()
    };
    let args = common.join(" ");
    let work = Duration::from_secs(
        o.duration.unwrap_or(5).clamp(1, 86_400) as u64 * if o.all_sizes { 30 } else { 1 } + 60,
    );
    Ok(PairPlan {
        server_cmd: format!("{bin}{} {args}", side(&sdev)),
        client_cmd: format!("{bin}{} {args} {}", side(&cdev), quote(&server_ip)),
        port,
        timeout: work,
        work,
        server_ip,
        device: sdev,
        tag: format!("fcsrv-{}-{port}", program_name(tool)),
        program: bin,
    })
}

/// A perftest result: the client's parse plus the server's.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PerftestResult {
    #[serde(flatten)]
    pub client: parse::perftest::Perftest,
    pub server: Option<parse::perftest::Perftest>,
    pub server_ip: String,
    pub exit_code: Option<i64>,
}

fn perftest_result(
    env: &RunEnv,
    server: &Node,
    client: &Node,
    tool: &str,
    run: PairRun,
    plan: &PairPlan,
) -> PResult<PerftestResult> {
    flush(&run.log);
    if env.dry_run {
        return Err(PrimError::dry_run(&client.name, &plan.client_cmd));
    }
    let c = run
        .client
        .map_err(|e| PrimError::error(format!("{tool} {} -> {}: {e}", client.name, server.name)))?;
    super::tools::installed(&c, &client.name, &plan.program)?;
    let client_text = format!("{}\n{}", c.stdout, c.stderr);
    let parsed_client = parsed(&client.name, &client_text, parse::perftest::parse)?;
    let server_parse = match &run.server {
        Ok(o) => parse::perftest::parse(&format!("{}\n{}", o.stdout, o.stderr)).ok(),
        Err(_) => None,
    };
    if !parsed_client.errors.is_empty() || parsed_client.rows.is_empty() || c.exit_code != Some(0) {
        let why = if parsed_client.errors.is_empty() {
            format!("no result rows (exit {})", c.exit_code.unwrap_or(-1))
        } else {
            parsed_client.errors.join(" | ")
        };
        return Err(PrimError::error_with(
            format!(
                "{tool} {} -> {} ({}): {why}",
                client.name,
                server.name,
                plan.device
                    .clone()
                    .unwrap_or_else(|| "default device".into())
            ),
            last_lines(&client_text, 20),
        ));
    }
    Ok(PerftestResult {
        client: parsed_client,
        server: server_parse,
        server_ip: plan.server_ip.clone(),
        exit_code: c.exit_code,
    })
}

/// `--dry-run`: what an exchange needs on its two nodes (the program on both; `ss` and
/// `pkill` on the server).
fn need_tools(env: &RunEnv, server: &Node, client: &Node, bin: &str) {
    env.need_tool(server, bin);
    env.need_tool(client, bin);
    env.need_tool(server, "ss");
    env.need_tool(server, "pkill");
}

/// `ib_write_bw(server, client, opts)` and friends.
pub fn perftest(
    tool: &str,
    server: &NodeRef,
    client: &NodeRef,
    o: &PerftestOpts,
) -> PResult<PerftestResult> {
    let env = &server.env;
    let plan = perftest_plan(tool, &server.spec, o, None)?.bounded(env, &server.spec, o.timeout);
    need_tools(env, &server.spec, &client.spec, &plan.program);
    let run = run_pair(env, &server.spec, &client.spec, &plan);
    perftest_result(env, &server.spec, &client.spec, tool, run, &plan)
}

/// One rail of a port run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Rail {
    /// The physical port the rail belongs to.
    pub port: String,
    pub device: String,
    pub server_ip: String,
    pub bw_avg_gbps: f64,
    pub bw_peak_gbps: Option<f64>,
    pub result: PerftestResult,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PortResult {
    pub port: String,
    pub total_gbps: f64,
    pub rails: Vec<Rail>,
}

/// The inventory port of a node to test: by name, else the first; without `ports`, every RDMA
/// device counts as its own port.
pub fn pick_port(n: &Node, name: Option<&str>) -> PResult<PortSpec> {
    let p = match name {
        Some(name) => n.ports.iter().find(|p| p.name == name).cloned(),
        None => n.ports.first().cloned(),
    };
    p.or_else(|| {
        n.rdma_devices.first().map(|d| PortSpec {
            name: d.clone(),
            interfaces: n.interfaces.iter().take(1).cloned().collect(),
            rdma_devices: vec![d.clone()],
            ..Default::default()
        })
    })
    .ok_or_else(|| {
        PrimError::error(match name {
            Some(p) => format!("{}: no port `{p}` in the inventory (field `ports`)", n.name),
            None => format!(
                "{}: no RDMA device in the inventory (fields `rdma_devices` / `ports`) to test",
                n.name
            ),
        })
    })
}

/// The plans of a port run: one exchange per rail, on TCP ports PORT, PORT+1, … (with
/// `all_ports`, every rail of every port of the node, all at once). Returns (port label,
/// per-plan port names, plans).
pub fn port_plans(
    tool: &str,
    server: &Node,
    client: &Node,
    o: &PerftestOpts,
) -> PResult<(String, Vec<String>, Vec<PairPlan>)> {
    let pairs: Vec<(PortSpec, PortSpec)> = if o.all_ports {
        let sp = all_port_specs(server);
        let cp = all_port_specs(client);
        if sp.is_empty() || cp.is_empty() {
            pick_port(if sp.is_empty() { server } else { client }, None)?;
        }
        sp.into_iter().zip(cp).collect()
    } else {
        vec![(
            pick_port(server, o.port_name.as_deref())?,
            pick_port(client, o.port_name.as_deref())?,
        )]
    };
    let base_port = o.port.unwrap_or(18515).clamp(1, 65000) as u16;
    let mut plans = Vec::new();
    let mut names = Vec::new();
    for (sp, cp) in &pairs {
        for (i, sdev) in sp.rdma_devices.iter().enumerate() {
            let ro = PerftestOpts {
                device: None,
                server_device: Some(sdev.clone()),
                client_device: Some(
                    cp.rdma_devices
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| sdev.clone()),
                ),
                ..o.clone()
            };
            let tcp = base_port.saturating_add(plans.len() as u16);
            plans.push(perftest_plan(tool, server, &ro, Some(tcp))?);
            names.push(sp.name.clone());
        }
    }
    let label = if o.all_ports {
        "all".to_string()
    } else {
        pairs[0].0.name.clone()
    };
    Ok((label, names, plans))
}

/// Every port of a node: its inventory `ports`, else each RDMA device as its own port.
pub fn all_port_specs(n: &Node) -> Vec<PortSpec> {
    if !n.ports.is_empty() {
        return n.ports.clone();
    }
    n.rdma_devices
        .iter()
        .enumerate()
        .map(|(i, d)| PortSpec {
            name: d.clone(),
            interfaces: n.interfaces.get(i).cloned().into_iter().collect(),
            rdma_devices: vec![d.clone()],
            ..Default::default()
        })
        .collect()
}

/// All logical rails of one physical port at once (`ports` in the inventory), summed. A DGX
/// Spark port's two rails share its 200 Gbit/s: each alone is ~95, both together ~190.
pub fn perftest_port(
    tool: &str,
    server: &NodeRef,
    client: &NodeRef,
    o: &PerftestOpts,
) -> PResult<PortResult> {
    let env = &server.env;
    let (label, port_names, plans) = port_plans(tool, &server.spec, &client.spec, o)?;
    let plans: Vec<PairPlan> = plans
        .into_iter()
        .map(|p| p.bounded(env, &server.spec, o.timeout))
        .collect();
    need_tools(
        env,
        &server.spec,
        &client.spec,
        o.binary.as_deref().unwrap_or(tool),
    );
    if env.dry_run {
        return Err(list_port(
            env,
            &server.spec,
            &client.spec,
            &label,
            &port_names,
            &plans,
        ));
    }
    let runs = crate::util::pool::map(
        &plans,
        plans.len(),
        |_, p| run_pair(env, &server.spec, &client.spec, p),
        |_, _| PairRun {
            server: Err(TransportError::Other {
                node: server.spec.name.clone(),
                message: "internal error: the rail's thread panicked".into(),
            }),
            client: Err(TransportError::Other {
                node: client.spec.name.clone(),
                message: "internal error: the rail's thread panicked".into(),
            }),
            log: vec![],
        },
    );
    let mut rails = Vec::new();
    let mut first_err = None;
    for ((run, plan), port) in runs.into_iter().zip(&plans).zip(port_names) {
        match perftest_result(env, &server.spec, &client.spec, tool, run, plan) {
            Ok(r) => rails.push(Rail {
                port,
                device: plan.device.clone().unwrap_or_default(),
                server_ip: plan.server_ip.clone(),
                bw_avg_gbps: r.client.bw_avg_gbps.unwrap_or(0.0),
                bw_peak_gbps: r.client.bw_peak_gbps,
                result: r,
            }),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    Ok(PortResult {
        port: label,
        total_gbps: rails.iter().map(|r| r.bw_avg_gbps).sum(),
        rails,
    })
}

/// `--dry-run` of a port run: every rail's exchange listed, one after the other (a run starts
/// them at once); the stand-in result knows the port and its rails, not their bandwidth.
fn list_port(
    env: &RunEnv,
    server: &Node,
    client: &Node,
    label: &str,
    port_names: &[String],
    plans: &[PairPlan],
) -> PrimError {
    for p in plans {
        flush(&list_pair(env, server, client, p).log);
    }
    let rails: Vec<serde_json::Value> = plans
        .iter()
        .zip(port_names)
        .map(|(p, port)| {
            serde_json::json!({
                "port": port, "device": p.device.clone().unwrap_or_default(),
                "server_ip": p.server_ip, "bw_avg_gbps": null, "bw_peak_gbps": null, "result": null,
            })
        })
        .collect();
    let mut e = PrimError::dry_run(
        &client.name,
        &format!(
            "ib_write_bw_port {} -> {} ({label})",
            client.name, server.name
        ),
    );
    e.known = Some(serde_json::json!({ "port": label, "total_gbps": null, "rails": rails }));
    e
}

/// Options of `iperf3(server, client, opts)`.
#[derive(Debug, Clone, Default)]
pub struct Iperf3Opts {
    pub port: Option<i64>,
    pub parallel: Option<i64>,
    pub duration: Option<i64>,
    pub window: Option<String>,
    pub bind: Option<String>,
    pub extra_args: Option<String>,
    pub server_ip: Option<String>,
    pub binary: Option<String>,
    pub timeout: Option<Duration>,
}

pub fn iperf3_plan(server: &Node, o: &Iperf3Opts) -> PResult<PairPlan> {
    let port = o.port.unwrap_or(5201).clamp(1, 65535) as u16;
    let bin = o.binary.clone().unwrap_or_else(|| "iperf3".into());
    check_program(&bin)?;
    let mut args = vec![format!("-p {port}"), "-J".to_string()];
    if let Some(p) = o.parallel {
        args.push(format!("-P {}", p.clamp(1, 128)));
    }
    let duration = o.duration.unwrap_or(5).clamp(1, 3600);
    args.push(format!("-t {duration}"));
    if let Some(w) = &o.window {
        check_name("window", w)?;
        args.push(format!("-w {w}"));
    }
    if let Some(b) = &o.bind {
        check_addr(b)?;
        args.push(format!("-B {}", quote(b)));
    }
    if let Some(x) = &o.extra_args {
        args.extend(arg_words("extra_args", x)?);
    }
    let server_ip = o
        .server_ip
        .clone()
        .unwrap_or_else(|| fabric_ip_for(server, None));
    check_addr(&server_ip)?;
    Ok(PairPlan {
        server_cmd: format!("{bin} -s -1 -p {port}"),
        client_cmd: format!("{bin} -c {} {}", quote(&server_ip), args.join(" ")),
        port,
        timeout: Duration::from_secs(duration as u64 + 30),
        work: Duration::from_secs(duration as u64 + 30),
        server_ip,
        device: None,
        tag: format!("fcsrv-iperf3-{port}"),
        program: bin,
    })
}

/// `iperf3(server, client, opts)` in JSON mode.
pub fn iperf3(
    server: &NodeRef,
    client: &NodeRef,
    o: &Iperf3Opts,
) -> PResult<parse::iperf3::Iperf3> {
    let env = &server.env;
    let plan = iperf3_plan(&server.spec, o)?.bounded(env, &server.spec, o.timeout);
    need_tools(env, &server.spec, &client.spec, &plan.program);
    let run = run_pair(env, &server.spec, &client.spec, &plan);
    flush(&run.log);
    if env.dry_run {
        return Err(PrimError::dry_run(client.name(), &plan.client_cmd));
    }
    let c = run.client.map_err(|e| {
        PrimError::error(format!(
            "iperf3 {} -> {}: {e}",
            client.name(),
            server.name()
        ))
    })?;
    super::tools::installed(&c, client.name(), &plan.program)?;
    let r = parsed(client.name(), &c.stdout, parse::iperf3::parse)?;
    if let Some(err) = &r.error {
        return Err(PrimError::error(format!(
            "iperf3 {} -> {}: {err}",
            client.name(),
            plan.server_ip
        )));
    }
    Ok(r)
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

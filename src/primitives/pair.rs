//! Server/client primitives: `ib_write_bw` / `ib_read_bw` / `ib_send_bw` (and per physical
//! port, all rails at once, summed), `iperf3`. The server is started, fabcheck waits until its
//! TCP port really listens (polling `ss`, no fixed sleeps), runs the client against the
//! server's fabric address, collects and parses both sides, and always stops the server.

use super::node_methods::{check_addr, check_name, errors_and_rows, parsed};
use super::{log_command, NodeRef, RunEnv};
use crate::engine::signal::{self, RhaiErr};
use crate::inventory::Node;
use crate::transport::{quote, CmdOutput, CmdRequest, TransportError};
use rhai::{Array, Dynamic, Engine, Map, NativeCallContext, Position};
use std::time::{Duration, Instant};

type Log = Vec<(Node, CmdRequest, Result<CmdOutput, TransportError>)>;

/// How long a server may take to start listening.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

pub struct PairRun {
    pub server: Result<CmdOutput, TransportError>,
    pub client: Result<CmdOutput, TransportError>,
    pub log: Log,
}

fn req(cmd: String, timeout: Duration) -> CmdRequest {
    CmdRequest {
        command: cmd,
        timeout,
        env: vec![],
        sudo: false,
    }
}

/// Start `server_cmd` on `server`, wait for TCP `port` to listen there, run `client_cmd` on
/// `client`, then collect the server (killing it by `tag` if it does not end by itself).
/// Thread-agnostic: the caller logs `log` into its test.
#[allow(clippy::too_many_arguments)] // each argument is one part of the exchange; a struct would only rename them
pub fn run_pair(
    env: &RunEnv,
    server: &Node,
    client: &Node,
    server_cmd: String,
    client_cmd: String,
    port: u16,
    tag: &str,
    timeout: Duration,
) -> PairRun {
    let mut log: Log = Vec::new();
    // The tag rides along in the server's command line so that exactly this server can be
    // stopped (`pkill -f` with a bracket pattern that does not match the pkill itself).
    let server_req = req(
        format!("{server_cmd} ; : {tag}"),
        timeout + Duration::from_secs(10),
    );
    let kill_pattern = format!("{}[{}]", &tag[..tag.len() - 1], &tag[tag.len() - 1..]);
    let kill = |log: &mut Log| {
        let r = req(
            format!("pkill -TERM -f -- {}; true", quote(&kill_pattern)),
            Duration::from_secs(10),
        );
        let res = env.run_raw(server, &r);
        log.push((server.clone(), r, res));
    };
    std::thread::scope(|s| {
        let srv = s.spawn(|| env.run_raw(server, &server_req));
        // Wait until the server listens (or dies).
        let probe = req(
            format!("ss -Hltn 'sport = :{port}'"),
            Duration::from_secs(10),
        );
        let started = Instant::now();
        let mut ready = env.dry_run;
        let mut last_probe = None;
        // Probe at least once even when the server call already returned: a replayed
        // transcript answers the server command at once, and a real server that died is
        // simply not listening (the error below says so).
        while !ready
            && started.elapsed() < READY_TIMEOUT
            && !crate::transport::cancel::interrupted()
        {
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
        if !ready {
            if !srv.is_finished() {
                kill(&mut log);
            }
            let server_res = srv.join().unwrap_or_else(|_| {
                Err(TransportError::Other {
                    node: server.name.clone(),
                    message: "server thread panicked".into(),
                })
            });
            log.push((server.clone(), server_req.clone(), server_res.clone()));
            let why = match &server_res {
                Ok(o) if o.exit_code == Some(127) => {
                    format!("the server program is not installed on {}", server.name)
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
            };
            let err = Err(TransportError::Other {
                node: server.name.clone(),
                message: if started.elapsed() >= READY_TIMEOUT {
                    format!(
                        "the server did not listen on TCP port {port} within {}s",
                        READY_TIMEOUT.as_secs()
                    )
                } else {
                    why
                },
            });
            return PairRun {
                server: server_res,
                client: err,
                log: std::mem::take(&mut log),
            };
        }
        let client_req = req(client_cmd.clone(), timeout);
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
        let server_res = srv.join().unwrap_or_else(|_| {
            Err(TransportError::Other {
                node: server.name.clone(),
                message: "server thread panicked".into(),
            })
        });
        log.push((server.clone(), server_req.clone(), server_res.clone()));
        log.push((client.clone(), client_req, client_res.clone()));
        PairRun {
            server: server_res,
            client: client_res,
            log: std::mem::take(&mut log),
        }
    })
}

fn last_lines(s: &str, n: usize) -> String {
    let v: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    v[v.len().saturating_sub(n)..].join(" | ")
}

fn flush(log: Log) {
    for (n, r, res) in &log {
        log_command(n, r, res);
    }
}

fn opt_str(o: &Map, k: &str) -> Option<String> {
    o.get(k).filter(|v| !v.is_unit()).map(|v| v.to_string())
}

fn opt_int(o: &Map, k: &str, pos: Position) -> Result<Option<i64>, RhaiErr> {
    match o.get(k) {
        None => Ok(None),
        Some(v) if v.is_unit() => Ok(None),
        Some(v) => v.as_int().map(Some).map_err(|_| {
            signal::error(format!("option `{k}` must be a whole number, got {v}"), pos)
        }),
    }
}

fn opt_bool(o: &Map, k: &str) -> bool {
    o.get(k).and_then(|v| v.as_bool().ok()).unwrap_or(false)
}

/// Extra arguments: shell words, each limited to a safe character set.
fn extra_args(o: &Map, pos: Position) -> Result<Vec<String>, RhaiErr> {
    let Some(s) = opt_str(o, "extra_args") else {
        return Ok(vec![]);
    };
    let words = shlex::split(&s).ok_or_else(|| {
        signal::error(
            format!("extra_args {s:?} is not a valid argument list"),
            pos,
        )
    })?;
    for w in &words {
        if !w
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=.:,/+".contains(c))
        {
            return Err(signal::error(format!("refused extra argument {w:?}: only letters, digits and - _ = . : , / + are allowed"), pos));
        }
    }
    Ok(words)
}

fn binary(o: &Map, default: &str, pos: Position) -> Result<String, RhaiErr> {
    let b = opt_str(o, "binary").unwrap_or_else(|| default.to_string());
    if b.is_empty()
        || !b
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./+".contains(c))
    {
        return Err(signal::error(format!("refused binary path {b:?}"), pos));
    }
    Ok(b)
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

struct PerftestPlan {
    server_cmd: String,
    client_cmd: String,
    port: u16,
    timeout: Duration,
    server_ip: String,
    device: Option<String>,
}

fn perftest_plan(
    tool: &str,
    server: &NodeRef,
    _client: &NodeRef,
    o: &Map,
    tcp_port: Option<u16>,
    pos: Position,
) -> Result<PerftestPlan, RhaiErr> {
    let bin = binary(o, tool, pos)?;
    let mut common: Vec<String> = Vec::new();
    let dev = opt_str(o, "device");
    let sdev = opt_str(o, "server_device").or_else(|| dev.clone());
    let cdev = opt_str(o, "client_device").or_else(|| dev.clone());
    for d in [&sdev, &cdev].into_iter().flatten() {
        check_name("RDMA device", d, pos)?;
    }
    if let Some(g) = opt_int(o, "gid_index", pos)? {
        common.push(format!("-x {g}"));
    }
    let port = tcp_port.unwrap_or(opt_int(o, "port", pos)?.unwrap_or(18515).clamp(1, 65535) as u16);
    common.push(format!("-p {port}"));
    if let Some(s) = opt_int(o, "size", pos)? {
        common.push(format!("-s {s}"));
    }
    let duration = opt_int(o, "duration", pos)?;
    if let Some(d) = duration {
        common.push(format!("-D {d}"));
    }
    if let Some(q) = opt_int(o, "qps", pos)? {
        common.push(format!("-q {q}"));
    }
    if opt_bool(o, "bidirectional") {
        common.push("-b".into());
    }
    if opt_bool(o, "all_sizes") {
        common.push("-a".into());
    }
    common.push("--report_gbits".into());
    common.extend(extra_args(o, pos)?);
    let server_ip = match opt_str(o, "server_ip") {
        Some(ip) => ip,
        None => fabric_ip_for(&server.spec, sdev.as_deref()),
    };
    check_addr(&server_ip, pos)?;
    let side = |d: &Option<String>| {
        d.as_ref()
            .map(|d| format!(" -d {}", quote(d)))
            .unwrap_or_default()
    };
    let args = common.join(" ");
    let timeout = match opt_str(o, "timeout") {
        Some(t) => crate::inventory::parse_duration(&t).map_err(|e| signal::error(e, pos))?,
        None => Duration::from_secs(
            duration.unwrap_or(5).max(1) as u64 * (if opt_bool(o, "all_sizes") { 30 } else { 1 })
                + 60,
        ),
    };
    let timeout = timeout.min(crate::engine::context::remaining());
    Ok(PerftestPlan {
        server_cmd: format!("{bin}{} {args}", side(&sdev)),
        client_cmd: format!("{bin}{} {args} {}", side(&cdev), quote(&server_ip)),
        port,
        timeout,
        server_ip,
        device: sdev,
    })
}

fn perftest_result(
    server: &NodeRef,
    client: &NodeRef,
    tool: &str,
    run: PairRun,
    plan: &PerftestPlan,
    pos: Position,
) -> Result<Dynamic, RhaiErr> {
    let PairRun {
        server: s,
        client: c,
        log,
    } = run;
    flush(log);
    let c = c.map_err(|e| {
        signal::error(
            format!("{tool} {} -> {}: {e}", server.name(), client.name()),
            pos,
        )
    })?;
    if server.env.dry_run {
        return Ok(Dynamic::UNIT);
    }
    if c.exit_code == Some(127) {
        return Err(signal::error(
            format!("{}: `{tool}` is not installed", client.name()),
            pos,
        ));
    }
    let client_text = format!("{}\n{}", c.stdout, c.stderr);
    let parsed_client = parsed("perftest", client, &client_text, pos)?;
    let mut m = parsed_client.try_cast::<Map>().unwrap_or_default();
    let server_map = match &s {
        Ok(o) => parsed(
            "perftest",
            server,
            &format!("{}\n{}", o.stdout, o.stderr),
            pos,
        )
        .unwrap_or(Dynamic::UNIT),
        Err(_) => Dynamic::UNIT,
    };
    m.insert("server".into(), server_map);
    m.insert("server_ip".into(), Dynamic::from(plan.server_ip.clone()));
    m.insert(
        "exit_code".into(),
        c.exit_code.map(Dynamic::from).unwrap_or(Dynamic::UNIT),
    );
    let (errors, rows) = errors_and_rows(&m);
    if !errors.is_empty() || rows == 0 || c.exit_code != Some(0) {
        let why = if errors.is_empty() {
            format!("no result rows (exit {})", c.exit_code.unwrap_or(-1))
        } else {
            errors.join(" | ")
        };
        return Err(signal::error_with(
            format!(
                "{tool} {} -> {} ({}): {why}",
                server.name(),
                client.name(),
                plan.device
                    .clone()
                    .unwrap_or_else(|| "default device".into())
            ),
            last_lines(&client_text, 20),
            pos,
        ));
    }
    Ok(Dynamic::from(m))
}

fn perftest(
    tool: &'static str,
    ctx: &NativeCallContext,
    server: NodeRef,
    client: NodeRef,
    o: Map,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let plan = perftest_plan(tool, &server, &client, &o, None, pos)?;
    let bin = binary(&o, tool, pos)?;
    server.env.dry_check_tool(&server.spec, &bin, pos)?;
    client.env.dry_check_tool(&client.spec, &bin, pos)?;
    let tag = format!("fcsrv-{tool}-{}", plan.port);
    let run = run_pair(
        &server.env,
        &server.spec,
        &client.spec,
        plan.server_cmd.clone(),
        plan.client_cmd.clone(),
        plan.port,
        &tag,
        plan.timeout,
    );
    perftest_result(&server, &client, tool, run, &plan, pos)
}

/// All logical rails of one physical port at once (`ports` in the inventory), summed. A DGX
/// Spark port's two rails share its 200 Gbit/s: each alone is ~95, both together ~190.
fn perftest_port(
    tool: &'static str,
    ctx: &NativeCallContext,
    server: NodeRef,
    client: NodeRef,
    o: Map,
) -> Result<Map, RhaiErr> {
    let pos = ctx.call_position();
    let port_name = opt_str(&o, "port_name");
    let pick = |n: &NodeRef| -> Result<crate::inventory::PortSpec, RhaiErr> {
        let p = match &port_name {
            Some(name) => n.spec.ports.iter().find(|p| &p.name == name).cloned(),
            None => n.spec.ports.first().cloned(),
        };
        p.or_else(|| {
            // Without `ports`, every RDMA device counts as its own port: use the first.
            n.spec
                .rdma_devices
                .first()
                .map(|d| crate::inventory::PortSpec {
                    name: d.clone(),
                    interfaces: n.spec.interfaces.iter().take(1).cloned().collect(),
                    rdma_devices: vec![d.clone()],
                })
        })
        .ok_or_else(|| {
            signal::error(
                format!(
                    "{}: no RDMA device in the inventory (rdma_devices / ports) to test",
                    n.name()
                ),
                pos,
            )
        })
    };
    let sp = pick(&server)?;
    let cp = pick(&client)?;
    let base_port = opt_int(&o, "port", pos)?.unwrap_or(18515).clamp(1, 65000) as u16;
    let mut plans = Vec::new();
    for (i, sdev) in sp.rdma_devices.iter().enumerate() {
        let mut ro = o.clone();
        ro.insert("server_device".into(), Dynamic::from(sdev.clone()));
        ro.insert(
            "client_device".into(),
            Dynamic::from(
                cp.rdma_devices
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| sdev.clone()),
            ),
        );
        ro.remove("device");
        plans.push(perftest_plan(
            tool,
            &server,
            &client,
            &ro,
            Some(base_port + i as u16),
            pos,
        )?);
    }
    let runs: Vec<PairRun> = std::thread::scope(|s| {
        let hs: Vec<_> = plans
            .iter()
            .map(|p| {
                let (env, ss, cs) = (&server.env, &server.spec, &client.spec);
                s.spawn(move || {
                    run_pair(
                        env,
                        ss,
                        cs,
                        p.server_cmd.clone(),
                        p.client_cmd.clone(),
                        p.port,
                        &format!("fcsrv-{tool}-{}", p.port),
                        p.timeout,
                    )
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("rail thread"))
            .collect()
    });
    let mut rails = Array::new();
    let mut total = 0.0;
    let mut first_err = None;
    for (run, plan) in runs.into_iter().zip(&plans) {
        match perftest_result(&server, &client, tool, run, plan, pos) {
            Ok(r) => {
                let m = r.clone().try_cast::<Map>().unwrap_or_default();
                let bw = m
                    .get("bw_avg_gbps")
                    .and_then(|v| v.as_float().ok())
                    .unwrap_or(0.0);
                total += bw;
                let mut rail = Map::new();
                rail.insert(
                    "device".into(),
                    Dynamic::from(plan.device.clone().unwrap_or_default()),
                );
                rail.insert("server_ip".into(), Dynamic::from(plan.server_ip.clone()));
                rail.insert("bw_avg_gbps".into(), Dynamic::from(bw));
                rail.insert(
                    "bw_peak_gbps".into(),
                    m.get("bw_peak_gbps").cloned().unwrap_or(Dynamic::UNIT),
                );
                rail.insert("result".into(), r);
                rails.push(Dynamic::from(rail));
            }
            Err(e) => {
                if first_err.is_none() {
                    first_err = Some(e);
                }
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    let mut out = Map::new();
    out.insert("port".into(), Dynamic::from(sp.name.clone()));
    out.insert("total_gbps".into(), Dynamic::from(total));
    out.insert("rails".into(), Dynamic::from(rails));
    Ok(out)
}

fn iperf3(
    ctx: &NativeCallContext,
    server: NodeRef,
    client: NodeRef,
    o: Map,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let port = opt_int(&o, "port", pos)?.unwrap_or(5201).clamp(1, 65535) as u16;
    let mut args = vec![format!("-p {port}"), "-J".to_string()];
    let parallel = opt_int(&o, "parallel", pos)?;
    if let Some(p) = parallel {
        args.push(format!("-P {}", p.clamp(1, 128)));
    }
    let duration = opt_int(&o, "duration", pos)?.unwrap_or(5).clamp(1, 3600);
    args.push(format!("-t {duration}"));
    if let Some(w) = opt_str(&o, "window") {
        check_name("window", &w, pos)?;
        args.push(format!("-w {w}"));
    }
    if let Some(b) = opt_str(&o, "bind") {
        check_addr(&b, pos)?;
        args.push(format!("-B {}", quote(&b)));
    }
    args.extend(extra_args(&o, pos)?);
    let server_ip = opt_str(&o, "server_ip").unwrap_or_else(|| fabric_ip_for(&server.spec, None));
    check_addr(&server_ip, pos)?;
    let bin = binary(&o, "iperf3", pos)?;
    server.env.dry_check_tool(&server.spec, &bin, pos)?;
    client.env.dry_check_tool(&client.spec, &bin, pos)?;
    let server_cmd = format!("{bin} -s -1 -p {port}");
    let client_cmd = format!("{bin} -c {} {}", quote(&server_ip), args.join(" "));
    let timeout =
        Duration::from_secs(duration as u64 + 30).min(crate::engine::context::remaining());
    let run = run_pair(
        &server.env,
        &server.spec,
        &client.spec,
        server_cmd,
        client_cmd,
        port,
        &format!("fcsrv-iperf3-{port}"),
        timeout,
    );
    let PairRun { client: c, log, .. } = run;
    flush(log);
    let c = c.map_err(|e| {
        signal::error(
            format!("iperf3 {} -> {}: {e}", server.name(), client.name()),
            pos,
        )
    })?;
    if server.env.dry_run {
        return Ok(Dynamic::UNIT);
    }
    if c.exit_code == Some(127) {
        return Err(signal::error(
            format!("{}: `iperf3` is not installed", client.name()),
            pos,
        ));
    }
    let r = parsed("iperf3", &client, &c.stdout, pos)?;
    if let Some(m) = r.clone().try_cast::<Map>() {
        if let Some(err) = m.get("error").filter(|e| !e.is_unit()) {
            return Err(signal::error(
                format!("iperf3 {} -> {server_ip}: {err}", client.name()),
                pos,
            ));
        }
    }
    Ok(r)
}

pub fn register(engine: &mut Engine) {
    for tool in ["ib_write_bw", "ib_read_bw", "ib_send_bw"] {
        engine.register_fn(
            tool,
            move |ctx: NativeCallContext, s: NodeRef, c: NodeRef| {
                perftest(tool, &ctx, s, c, Map::new())
            },
        );
        engine.register_fn(
            tool,
            move |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Map| {
                perftest(tool, &ctx, s, c, o)
            },
        );
        let port_fn = format!("{tool}_port");
        engine.register_fn(
            &port_fn,
            move |ctx: NativeCallContext, s: NodeRef, c: NodeRef| {
                perftest_port(tool, &ctx, s, c, Map::new())
            },
        );
        engine.register_fn(
            &port_fn,
            move |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Map| {
                perftest_port(tool, &ctx, s, c, o)
            },
        );
    }
    engine.register_fn(
        "iperf3",
        |ctx: NativeCallContext, s: NodeRef, c: NodeRef| iperf3(&ctx, s, c, Map::new()),
    );
    engine.register_fn(
        "iperf3",
        |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Map| iperf3(&ctx, s, c, o),
    );
}

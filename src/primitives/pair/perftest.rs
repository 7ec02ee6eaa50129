//! `ib_write_bw` / `ib_read_bw` / `ib_send_bw` between two nodes, and per physical port (every
//! rail at once, summed): the plans, the exchange through [`super::run_pair`], the results.

use super::*;

/// Options of `ib_write_bw` / `ib_read_bw` / `ib_send_bw` and the latency tools: the script's
/// option keys are these fields (the `_port` forms read theirs, `bindings/perftest.rs`
/// `PortArgs`, into the same struct).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct PerftestOpts {
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
    #[serde(deserialize_with = "crate::util::duration::optional")]
    pub timeout: Option<Duration>,
    /// `_port` forms: which inventory port (default the first).
    #[serde(skip)]
    pub port_name: Option<String>,
    /// `_port` forms: every port of the node (all its NICs) at the same time.
    #[serde(skip)]
    pub all_ports: bool,
    /// `_port` forms with `all_ports`: the client's k-th rail writes to the server's
    /// (k + rail_shift)-th (mod the rails): cross-rail pairs, whose traffic leaves the rail's
    /// leaf for the spine in a rail-optimised fabric. 0 (default): rail k to rail k.
    #[serde(skip)]
    pub rail_shift: i64,
}

/// The command lines of one perftest exchange. `tool` is `ib_write_bw` etc.
pub(crate) fn perftest_plan(
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
    if !tool.ends_with("_lat") {
        common.push("--report_gbits".into());
    }
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
pub(crate) struct PerftestResult {
    #[serde(flatten)]
    pub client: parse::perftest::Perftest,
    pub server: Option<parse::perftest::Perftest>,
    pub server_ip: String,
    pub exit_code: Option<i64>,
}

fn perftest_result(
    rec: Option<&crate::run::context::TestLog>,
    server: &Node,
    client: &Node,
    tool: &str,
    run: PairRun,
    plan: &PairPlan,
) -> PResult<PerftestResult> {
    flush(rec, &run.log);
    let c = run.client.map_err(|e| {
        PrimError::doing(|| format!("{tool} {} -> {}", client.name, server.name), e)
    })?;
    super::super::tools::installed(&c, &client.name, &plan.program)?;
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

/// `ib_write_bw(server, client, opts)` and friends.
pub(crate) fn perftest(
    tool: &str,
    server: &NodeRef,
    client: &NodeRef,
    o: &PerftestOpts,
) -> PResult<PerftestResult> {
    let env = &server.env;
    let rec = server.log.as_ref();
    let plan =
        perftest_plan(tool, &server.spec, o, None)?.bounded(env, &server.spec, o.timeout, rec);
    need_tools(env, rec, &server.spec, &client.spec, &plan.program);
    let run = run_pair(env, rec, &server.spec, &client.spec, &plan);
    perftest_result(rec, &server.spec, &client.spec, tool, run, &plan)
}

/// One rail of a port run.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Rail {
    /// The physical port the rail belongs to.
    pub port: String,
    pub device: String,
    pub server_ip: String,
    pub bw_avg_gbps: f64,
    pub bw_peak_gbps: Option<f64>,
    pub result: PerftestResult,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct PortResult {
    pub port: String,
    pub total_gbps: f64,
    pub rails: Vec<Rail>,
}

/// The inventory port of a node to test: by name, else the first; without `ports`, every RDMA
/// device counts as its own port.
pub(crate) fn pick_port(n: &Node, name: Option<&str>) -> PResult<PortSpec> {
    // The same ports as `n.fabric_ports`: the inventory's, else one per RDMA device (by name:
    // an inventory without `ports` must measure the rail it names, not the first one).
    let specs = all_port_specs(n);
    match name {
        Some(name) => specs.into_iter().find(|p| p.name == name),
        None => specs.into_iter().next(),
    }
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
pub(crate) fn port_plans(
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
    let mut rails: Vec<(String, String, String)> = Vec::new();
    for (sp, cp) in &pairs {
        for (i, sdev) in sp.rdma_devices.iter().enumerate() {
            let cdev = cp.rdma_devices.get(i).cloned();
            rails.push((
                sp.name.clone(),
                sdev.clone(),
                cdev.unwrap_or_else(|| sdev.clone()),
            ));
        }
    }
    let shifted = shift_servers(&rails, o.rail_shift);
    let mut plans = Vec::new();
    let mut names = Vec::new();
    for (port, sdev, cdev) in shifted {
        let ro = PerftestOpts {
            device: None,
            server_device: Some(sdev),
            client_device: Some(cdev),
            ..o.clone()
        };
        let tcp = base_port.saturating_add(plans.len() as u16);
        plans.push(perftest_plan(tool, server, &ro, Some(tcp))?);
        names.push(port);
    }
    let label = if o.all_ports {
        "all".to_string()
    } else {
        pairs[0].0.name.clone()
    };
    Ok((label, names, plans))
}

/// (port, server device, client device) per rail with the client's rail k paired with the
/// server's rail (k + shift) mod the rails (the port named is the server's).
fn shift_servers(rails: &[(String, String, String)], shift: i64) -> Vec<(String, String, String)> {
    let n = rails.len() as i64;
    if n == 0 || shift.rem_euclid(n) == 0 {
        return rails.to_vec();
    }
    (0..rails.len())
        .map(|k| {
            let s = &rails[(k as i64 + shift).rem_euclid(n) as usize];
            (s.0.clone(), s.1.clone(), rails[k].2.clone())
        })
        .collect()
}

/// Every port of a node: its inventory `ports`, else each RDMA device as its own port.
pub(crate) fn all_port_specs(n: &Node) -> Vec<PortSpec> {
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
pub(crate) fn perftest_port(
    tool: &str,
    server: &NodeRef,
    client: &NodeRef,
    o: &PerftestOpts,
) -> PResult<PortResult> {
    let env = &server.env;
    let rec = server.log.as_ref();
    let (label, port_names, plans) = port_plans(tool, &server.spec, &client.spec, o)?;
    let plans: Vec<PairPlan> = plans
        .into_iter()
        .map(|p| p.bounded(env, &server.spec, o.timeout, rec))
        .collect();
    need_tools(
        env,
        rec,
        &server.spec,
        &client.spec,
        o.binary.as_deref().unwrap_or(tool),
    );
    let runs = run_pairs(env, rec, &server.spec, &client.spec, &plans);
    let mut rails = Vec::new();
    let mut first_err = None;
    for ((run, plan), port) in runs.into_iter().zip(&plans).zip(&port_names) {
        match perftest_result(rec, &server.spec, &client.spec, tool, run, plan) {
            Ok(r) => rails.push(Rail {
                port: port.clone(),
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
        return Err(
            e.standing_for(|| stand_in(&server.spec, &client.spec, &label, &port_names, &plans))
        );
    }
    Ok(PortResult {
        port: label,
        total_gbps: rails.iter().map(|r| r.bw_avg_gbps).sum(),
        rails,
    })
}

/// `--dry-run` of a port run (its rails' exchanges listed): the stand-in result knows the
/// port and its rails, not their bandwidth.
fn stand_in(
    server: &Node,
    client: &Node,
    label: &str,
    port_names: &[String],
    plans: &[PairPlan],
) -> PrimError {
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

crate::impl_shape!(
    PerftestResult,
    serialised("ib_write_bw result")
        .flat::<crate::parse::perftest::Perftest>()
        .one::<crate::parse::perftest::Perftest>("server")
);
crate::impl_shape!(Rail, serialised("rail").one::<PerftestResult>("result"));
crate::impl_shape!(
    PortResult,
    serialised("ib_write_bw_port result").many::<Rail>("rails")
);

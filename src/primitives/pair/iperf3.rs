//! `iperf3` between two nodes: the plan (JSON mode, against the server's fabric address) and
//! the exchange through [`super::run_pair`].

use super::*;
/// What `iperf3(server, client)` returns.
pub(crate) use crate::parse::iperf3::Iperf3;

/// Options of `iperf3(server, client, opts)`: the script's option keys are these fields.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct Iperf3Opts {
    pub port: Option<i64>,
    pub parallel: Option<i64>,
    pub duration: Option<i64>,
    pub window: Option<String>,
    pub bind: Option<String>,
    pub extra_args: Option<String>,
    pub server_ip: Option<String>,
    pub binary: Option<String>,
    #[serde(deserialize_with = "crate::util::duration::optional")]
    pub timeout: Option<Duration>,
}

pub(crate) fn iperf3_plan(server: &Node, o: &Iperf3Opts) -> PResult<PairPlan> {
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
pub(crate) fn iperf3(
    server: &NodeRef,
    client: &NodeRef,
    o: &Iperf3Opts,
) -> PResult<parse::iperf3::Iperf3> {
    let env = &server.env;
    let rec = server.log.as_ref();
    let plan = iperf3_plan(&server.spec, o)?.bounded(env, &server.spec, o.timeout, rec);
    need_tools(env, rec, &server.spec, &client.spec, &plan.program);
    let run = run_pair(env, rec, &server.spec, &client.spec, &plan);
    flush(rec, &run.log);
    let c = run.client.map_err(|e| {
        PrimError::doing(
            || format!("iperf3 {} -> {}", client.name(), server.name()),
            e,
        )
    })?;
    super::super::tools::installed(&c, client.name(), &plan.program)?;
    if c.exit_code != Some(0) && c.stdout.trim().is_empty() {
        // No report at all: what iperf3 said on stderr is the reason (a refused option:
        // `iperf3: unrecognized option '--bogus'`, then its usage text).
        let said: Vec<&str> = c
            .stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(2)
            .collect();
        return Err(PrimError::error_with(
            format!(
                "iperf3 {} -> {} exited {} without a report: {}",
                client.name(),
                plan.server_ip,
                c.exit_code.map_or("by a signal".into(), |x| x.to_string()),
                if said.is_empty() {
                    "it printed nothing".to_string()
                } else {
                    said.join(" / ")
                }
            ),
            crate::run::model::cap(&c.stderr, 2000),
        ));
    }
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

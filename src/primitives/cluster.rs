//! Cluster-wide primitives: nccl-tests through a launcher (`all_reduce_perf`, `nccl_test`) and
//! `ssh_hop` between nodes.

use super::node_methods::{check_addr, check_name, errors_and_rows, parsed};
use super::pair::fabric_ip_for;
use super::NodeRef;
use crate::engine::signal::{self, RhaiErr};
use crate::transport::{quote, CmdRequest};
use rhai::{Array, Dynamic, Engine, Map, NativeCallContext, Position};
use std::time::Duration;

const DEFAULT_ARGS: &str = "-b 8 -e 1G -f 2 -g 1";

fn nodes_of(arr: Array, pos: Position) -> Result<Vec<NodeRef>, RhaiErr> {
    let v: Vec<NodeRef> = arr
        .into_iter()
        .filter_map(|d| d.try_cast::<NodeRef>())
        .collect();
    if v.is_empty() {
        return Err(signal::error(
            "nccl tests need at least one node (an array from nodes())",
            pos,
        ));
    }
    Ok(v)
}

fn safe_word(w: &str) -> bool {
    !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=.:,/+@".contains(c))
}

/// (command line, environment for a local launch, launcher name)
pub type Launch = (String, Vec<(String, String)>, String);

/// The launch command line and environment for an nccl-tests binary.
pub fn nccl_command(
    name: &str,
    nodes: &[NodeRef],
    o: &Map,
    pos: Position,
) -> Result<Launch, RhaiErr> {
    let bin = o
        .get("binary")
        .map(|v| v.to_string())
        .unwrap_or_else(|| name.to_string());
    if !safe_word(&bin) {
        return Err(signal::error(format!("refused binary {bin:?}"), pos));
    }
    let args = o
        .get("args")
        .map(|v| v.to_string())
        .unwrap_or_else(|| DEFAULT_ARGS.to_string());
    let words = shlex::split(&args)
        .ok_or_else(|| signal::error(format!("args {args:?} is not a valid argument list"), pos))?;
    if let Some(bad) = words.iter().find(|w| !safe_word(w)) {
        return Err(signal::error(format!("refused argument {bad:?}"), pos));
    }
    let mut env: Vec<(String, String)> = Vec::new();
    if let Some(e) = o.get("env").and_then(|e| e.clone().try_cast::<Map>()) {
        for (k, v) in e {
            if !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(signal::error(
                    format!("environment variable name `{k}` is not valid"),
                    pos,
                ));
            }
            env.push((k.to_string(), v.to_string()));
        }
    }
    // So that the transport NCCL really used is known.
    for (k, v) in [("NCCL_DEBUG", "INFO"), ("NCCL_DEBUG_SUBSYS", "INIT,NET")] {
        if !env.iter().any(|(x, _)| x == k) {
            env.push((k.into(), v.into()));
        }
    }
    let launcher = o.get("launcher").map(|v| v.to_string()).unwrap_or_else(|| {
        if nodes.len() > 1 {
            "mpirun".into()
        } else {
            "local".into()
        }
    });
    let np = match o.get("np") {
        Some(v) => v
            .as_int()
            .map_err(|_| signal::error("np must be a whole number", pos))?,
        None => nodes.len() as i64,
    };
    let hosts: Vec<String> = match o.get("hosts").and_then(|h| h.clone().try_cast::<Array>()) {
        Some(h) => h.into_iter().map(|x| x.to_string()).collect(),
        None => nodes.iter().map(|n| fabric_ip_for(&n.spec, None)).collect(),
    };
    for h in &hosts {
        check_addr(h, pos)?;
    }
    let tail = format!("{bin} {}", words.join(" "));
    let cmd = match launcher.as_str() {
        "mpirun" => {
            let slots = (np as usize).div_ceil(hosts.len().max(1)).max(1);
            let h: Vec<String> = hosts.iter().map(|h| format!("{h}:{slots}")).collect();
            let x: Vec<String> = env
                .iter()
                .map(|(k, v)| format!("-x {}", quote(&format!("{k}={v}"))))
                .collect();
            format!(
                "mpirun -np {np} -H {} --bind-to none {} {tail}",
                h.join(","),
                x.join(" ")
            )
        }
        "srun" => {
            let names: Vec<String> = nodes.iter().map(|n| n.name().to_string()).collect();
            for n in &names {
                check_name("node", n, pos)?;
            }
            // srun's --export splits at commas (NCCL_DEBUG_SUBSYS=INIT,NET would break), so
            // the variables are set for srun itself and passed on with --export=ALL.
            let vars: Vec<String> = env
                .iter()
                .map(|(k, v)| quote(&format!("{k}={v}")))
                .collect();
            format!(
                "env {} srun -N {} -n {np} -w {} --export=ALL {tail}",
                vars.join(" "),
                nodes.len(),
                names.join(","),
            )
        }
        "local" => tail.clone(),
        other => {
            return Err(signal::error(
                format!("unknown launcher `{other}`; use mpirun, srun or local"),
                pos,
            ))
        }
    };
    Ok((
        cmd,
        if launcher == "local" { env } else { vec![] },
        launcher,
    ))
}

fn nccl_test(
    name: &str,
    ctx: &NativeCallContext,
    nodes: Array,
    o: Map,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    if !safe_word(name) {
        return Err(signal::error(
            format!("refused nccl-tests program name {name:?}"),
            pos,
        ));
    }
    let nodes = nodes_of(nodes, pos)?;
    let first = &nodes[0];
    let (cmd, env, launcher) = nccl_command(name, &nodes, &o, pos)?;
    if launcher != "local" {
        first.env.dry_check_tool(&first.spec, &launcher, pos)?;
    }
    let explicit = match o.get("timeout") {
        Some(t) => Some(
            crate::inventory::parse_duration(&t.to_string()).map_err(|e| signal::error(e, pos))?,
        ),
        None => Some(Duration::from_secs(900)),
    };
    let req = CmdRequest {
        command: cmd.clone(),
        timeout: first.env.command_timeout(&first.spec, explicit),
        env,
        sudo: false,
    };
    let out = first.env.exec(&first.spec, &req, pos)?;
    if first.env.dry_run {
        return Ok(Dynamic::UNIT);
    }
    if out.exit_code == Some(127) {
        let missing = if out.stderr.contains(&launcher) && launcher != "local" {
            launcher.clone()
        } else {
            name.to_string()
        };
        return Err(signal::error(
            format!("{}: `{missing}` is not installed", first.name()),
            pos,
        ));
    }
    let text = format!("{}\n{}", out.stdout, out.stderr);
    let r = parsed("nccl", first, &text, pos)?;
    let mut m = r.try_cast::<Map>().unwrap_or_default();
    m.insert("launcher".into(), Dynamic::from(launcher));
    m.insert("command".into(), Dynamic::from(cmd.clone()));
    m.insert(
        "exit_code".into(),
        out.exit_code.map(Dynamic::from).unwrap_or(Dynamic::UNIT),
    );
    let (errors, rows) = errors_and_rows(&m);
    if out.exit_code != Some(0) || rows == 0 {
        let why = if errors.is_empty() {
            format!("exit {}, {rows} result rows", out.exit_code.unwrap_or(-1))
        } else {
            errors.join(" | ")
        };
        return Err(signal::error_with(
            format!("{name} on {}: {why}", first.name()),
            crate::report::model::cap(&text, 4000),
            pos,
        ));
    }
    Ok(Dynamic::from(m))
}

/// `ssh_hop(from, to_address)`: passwordless SSH from one node to another address as the same
/// user, `BatchMode=yes` (no password prompt can hang it).
fn ssh_hop(ctx: &NativeCallContext, from: NodeRef, to: &str) -> Result<Map, RhaiErr> {
    let pos = ctx.call_position();
    check_addr(to, pos)?;
    let cmd = format!(
        "ssh -o BatchMode=yes -o ConnectTimeout=10 -o NumberOfPasswordPrompts=0 -o StrictHostKeyChecking=yes {} 'echo fabcheck-hop $(id -un) $(hostname)'",
        quote(to)
    );
    let req = CmdRequest {
        command: cmd,
        timeout: from
            .env
            .command_timeout(&from.spec, Some(Duration::from_secs(30))),
        env: vec![],
        sudo: false,
    };
    let o = from.env.exec(&from.spec, &req, pos)?;
    let mut m = Map::new();
    let line = o.stdout.lines().find(|l| l.starts_with("fabcheck-hop "));
    let mut f = line
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let ok = o.exit_code == Some(0) && f.len() >= 2;
    m.insert("ok".into(), Dynamic::from(ok));
    m.insert("from".into(), Dynamic::from(from.name().to_string()));
    m.insert("to".into(), Dynamic::from(to.to_string()));
    m.insert(
        "user".into(),
        if f.is_empty() {
            Dynamic::UNIT
        } else {
            Dynamic::from(f.remove(0))
        },
    );
    m.insert(
        "hostname".into(),
        if f.is_empty() {
            Dynamic::UNIT
        } else {
            Dynamic::from(f.remove(0))
        },
    );
    let err = o
        .stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Warning: Permanently added"))
        .collect::<Vec<_>>()
        .join(" | ");
    m.insert(
        "error".into(),
        if ok {
            Dynamic::UNIT
        } else if err.is_empty() {
            Dynamic::from(format!("exit {}", o.exit_code.unwrap_or(-1)))
        } else {
            Dynamic::from(err)
        },
    );
    Ok(m)
}

pub fn register(engine: &mut Engine) {
    engine.register_fn("all_reduce_perf", |ctx: NativeCallContext, nodes: Array| {
        nccl_test("all_reduce_perf", &ctx, nodes, Map::new())
    });
    engine.register_fn(
        "all_reduce_perf",
        |ctx: NativeCallContext, nodes: Array, o: Map| nccl_test("all_reduce_perf", &ctx, nodes, o),
    );
    engine.register_fn(
        "nccl_test",
        |ctx: NativeCallContext, name: &str, nodes: Array, o: Map| nccl_test(name, &ctx, nodes, o),
    );
    engine.register_fn(
        "nccl_test",
        |ctx: NativeCallContext, name: &str, nodes: Array| nccl_test(name, &ctx, nodes, Map::new()),
    );
    engine.register_fn(
        "ssh_hop",
        |ctx: NativeCallContext, from: NodeRef, to: &str| ssh_hop(&ctx, from, to),
    );
}

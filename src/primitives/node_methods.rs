//! Node methods that read state through a tool and a parser: `n.ethtool(iface)`,
//! `n.ethtool_driver`, `n.ethtool_stats`, `n.eee`, `n.bond`, `n.addresses`, `n.ibdev2netdev`,
//! `n.rdma_links`, `n.ofed_version`, `n.ping`, `n.file_info`. Arguments are validated and
//! quoted; a missing tool, interface or device is an error naming it and the node.

use super::{NodeRef, RunEnv};
use crate::engine::signal::{self, RhaiErr};
use crate::inventory::valid_name;
use crate::transport::{quote, CmdOutput, CmdRequest};
use rhai::{Dynamic, Engine, Map, NativeCallContext, Position};

/// Refuse names that could smuggle shell syntax into a remote command.
pub fn check_name(what: &str, v: &str, pos: Position) -> Result<(), RhaiErr> {
    if valid_name(v) {
        Ok(())
    } else {
        Err(signal::error(
            format!("refused {what} {v:?}: only letters, digits and - _ . : @ % are allowed"),
            pos,
        ))
    }
}

pub fn check_addr(v: &str, pos: Position) -> Result<(), RhaiErr> {
    if v.parse::<std::net::IpAddr>().is_ok()
        || (valid_name(v) && !v.contains('%') && !v.contains('@'))
    {
        Ok(())
    } else {
        Err(signal::error(
            format!("refused address {v:?}: not an IP address or host name"),
            pos,
        ))
    }
}

/// Run a read-only tool command on a node; 127 is "tool missing".
pub fn tool(
    n: &NodeRef,
    tool: &str,
    cmd: &str,
    timeout: Option<std::time::Duration>,
    pos: Position,
) -> Result<CmdOutput, RhaiErr> {
    n.env.dry_check_tool(&n.spec, tool, pos)?;
    let req = CmdRequest {
        command: cmd.to_string(),
        timeout: n.env.command_timeout(&n.spec, timeout),
        env: vec![],
        sudo: false,
    };
    let o = n.env.exec(&n.spec, &req, pos)?;
    if o.exit_code == Some(127) {
        return Err(signal::error(
            format!(
                "{}: `{tool}` is not installed (not on PATH, /usr/sbin or /sbin)",
                n.name()
            ),
            pos,
        ));
    }
    Ok(o)
}

pub fn parsed(kind: &str, n: &NodeRef, text: &str, pos: Position) -> Result<Dynamic, RhaiErr> {
    if n.env.dry_run {
        return Ok(Dynamic::UNIT);
    }
    let v = crate::parse::parse(kind, text).map_err(|e| {
        signal::error_with(
            format!("{}: {e}", n.name()),
            crate::report::model::cap(text, 2000),
            pos,
        )
    })?;
    rhai::serde::to_dynamic(v)
}

/// A parsed tool result's `errors` lines and number of result `rows`.
pub fn errors_and_rows(m: &Map) -> (Vec<String>, usize) {
    let arr = |k: &str| {
        m.get(k)
            .and_then(|v| v.clone().try_cast::<rhai::Array>())
            .unwrap_or_default()
    };
    (
        arr("errors").into_iter().map(|e| e.to_string()).collect(),
        arr("rows").len(),
    )
}

fn first_err_line(o: &CmdOutput) -> String {
    o.stderr
        .lines()
        .chain(o.stdout.lines())
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

fn iface_tool(
    n: &NodeRef,
    iface: &str,
    flag: &str,
    kind: &str,
    pos: Position,
) -> Result<Dynamic, RhaiErr> {
    check_name("interface", iface, pos)?;
    let cmd = if flag.is_empty() {
        format!("ethtool {}", quote(iface))
    } else {
        format!("ethtool {flag} {}", quote(iface))
    };
    let o = tool(n, "ethtool", &cmd, None, pos)?;
    if o.exit_code != Some(0) {
        let all = format!("{}\n{}", o.stderr, o.stdout);
        let why = first_err_line(&o);
        let msg = if all.contains("No such device")
            || all.contains("no device matches")
            || all.contains("does not exist")
        {
            format!("{}: interface `{iface}` does not exist ({why})", n.name())
        } else {
            format!(
                "{}: `{cmd}` failed (exit {}): {why}",
                n.name(),
                o.exit_code.unwrap_or(-1)
            )
        };
        return Err(signal::error(msg, pos));
    }
    parsed(kind, n, &o.stdout, pos)
}

fn eee(n: &NodeRef, iface: &str, pos: Position) -> Result<Dynamic, RhaiErr> {
    check_name("interface", iface, pos)?;
    let cmd = format!("ethtool --show-eee {}", quote(iface));
    let o = tool(n, "ethtool", &cmd, None, pos)?;
    if o.exit_code != Some(0) && o.stdout.trim().is_empty() {
        let why = first_err_line(&o);
        if why.contains("Operation not supported") {
            // The device has no EEE at all: it cannot be enabled or active.
            let mut m = Map::new();
            m.insert("interface".into(), Dynamic::from(iface.to_string()));
            m.insert("supported".into(), Dynamic::from(false));
            m.insert("enabled".into(), Dynamic::from(false));
            m.insert("active".into(), Dynamic::from(false));
            m.insert("note".into(), Dynamic::from(why));
            return Ok(Dynamic::from(m));
        }
        return Err(signal::error(
            format!("{}: `{cmd}` failed: {why}", n.name()),
            pos,
        ));
    }
    parsed("eee", n, &o.stdout, pos)
}

fn simple(
    n: &NodeRef,
    tool_name: &str,
    cmd: &str,
    kind: &str,
    pos: Position,
) -> Result<Dynamic, RhaiErr> {
    let o = tool(n, tool_name, cmd, None, pos)?;
    if o.exit_code != Some(0) && o.stdout.trim().is_empty() {
        return Err(signal::error(
            format!(
                "{}: `{cmd}` failed (exit {}): {}",
                n.name(),
                o.exit_code.unwrap_or(-1),
                first_err_line(&o)
            ),
            pos,
        ));
    }
    parsed(kind, n, &o.stdout, pos)
}

/// `n.ping(ip, #{count, iface, size, dont_fragment, interval, timeout})`: 100 % loss is data
/// (the script asserts on it); an unknown host or bad option is an error.
fn ping(n: &NodeRef, ip: &str, opts: Option<&Map>, pos: Position) -> Result<Dynamic, RhaiErr> {
    check_addr(ip, pos)?;
    let get_i = |k: &str, d: i64| {
        opts.and_then(|o| o.get(k))
            .and_then(|v| v.as_int().ok())
            .unwrap_or(d)
    };
    let count = get_i("count", 3).clamp(1, 10_000);
    let mut cmd = format!("ping -n -c {count} -W {}", get_i("wait", 2).clamp(1, 60));
    if let Some(o) = opts {
        for (k, v) in o {
            match k.as_str() {
                "count" | "wait" => {}
                "iface" => {
                    let i = v.to_string();
                    check_name("interface", &i, pos)?;
                    cmd.push_str(&format!(" -I {}", quote(&i)));
                }
                "size" => cmd.push_str(&format!(" -s {}", v.as_int().map_err(|_| signal::error("ping size must be a whole number of bytes", pos))?.clamp(0, 65507))),
                "dont_fragment" => {
                    if v.as_bool().unwrap_or(false) {
                        cmd.push_str(" -M do");
                    }
                }
                "interval" => {
                    let f = v.as_float().ok().or_else(|| v.as_int().ok().map(|i| i as f64)).ok_or_else(|| signal::error("ping interval must be a number of seconds", pos))?;
                    cmd.push_str(&format!(" -i {:.3}", f.clamp(0.002, 60.0)));
                }
                other => return Err(signal::error(format!("unknown ping option `{other}`; options are count, iface, size, dont_fragment, interval, wait"), pos)),
            }
        }
    }
    cmd.push(' ');
    cmd.push_str(&quote(ip));
    let o = tool(n, "ping", &cmd, None, pos)?;
    if o.exit_code != Some(0) && o.exit_code != Some(1) {
        return Err(signal::error(
            format!(
                "{}: `{cmd}` failed (exit {}): {}",
                n.name(),
                o.exit_code.unwrap_or(-1),
                first_err_line(&o)
            ),
            pos,
        ));
    }
    let mut d = parsed("ping", n, &o.stdout, pos)?;
    if let Some(mut m) = d.clone().try_cast::<Map>() {
        // Errors such as "message too long" (MTU) are printed on stderr: keep them visible.
        if !o.stderr.trim().is_empty() {
            m.insert("stderr".into(), Dynamic::from(o.stderr.trim().to_string()));
        }
        d = Dynamic::from(m);
    }
    Ok(d)
}

/// `n.file_info(path)` → `#{ sha256, owner, group, mode, size }`; tries `sudo -n` when the file
/// is not readable by the login user (netplan files are root:root 0600).
fn file_info(n: &NodeRef, path: &str, pos: Position) -> Result<Map, RhaiErr> {
    if path.is_empty() || path.contains('\0') || path.contains('\n') {
        return Err(signal::error(format!("refused path {path:?}"), pos));
    }
    let q = quote(path);
    let cmd = format!("stat -c '%U %G %a %s' -- {q} && sha256sum -- {q}");
    let mut o = tool(n, "stat", &cmd, None, pos)?;
    if o.exit_code != Some(0) && o.stderr.contains("Permission denied") {
        let req = CmdRequest {
            command: cmd.clone(),
            timeout: n.env.command_timeout(&n.spec, None),
            env: vec![],
            sudo: true,
        };
        o = n.env.exec(&n.spec, &req, pos)?;
    }
    if o.exit_code != Some(0) {
        return Err(signal::error(
            format!("{}: cannot read {path}: {}", n.name(), first_err_line(&o)),
            pos,
        ));
    }
    let mut lines = o.stdout.lines();
    let st: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let sha = lines
        .next()
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("");
    if st.len() != 4 || sha.len() != 64 {
        return Err(signal::error_with(
            format!("{}: unexpected stat/sha256sum output for {path}", n.name()),
            o.stdout.clone(),
            pos,
        ));
    }
    let mut m = Map::new();
    m.insert("path".into(), Dynamic::from(path.to_string()));
    m.insert("owner".into(), Dynamic::from(st[0].to_string()));
    m.insert("group".into(), Dynamic::from(st[1].to_string()));
    m.insert("mode".into(), Dynamic::from(format!("{:0>4}", st[2])));
    m.insert(
        "size".into(),
        Dynamic::from(st[3].parse::<i64>().unwrap_or(-1)),
    );
    m.insert("sha256".into(), Dynamic::from(sha.to_string()));
    Ok(m)
}

pub fn register(engine: &mut Engine) {
    engine.register_fn(
        "ethtool",
        |ctx: NativeCallContext, n: &mut NodeRef, i: &str| {
            iface_tool(n, i, "", "ethtool", ctx.call_position())
        },
    );
    engine.register_fn(
        "ethtool_driver",
        |ctx: NativeCallContext, n: &mut NodeRef, i: &str| {
            iface_tool(n, i, "-i", "ethtool-driver", ctx.call_position())
        },
    );
    engine.register_fn(
        "ethtool_stats",
        |ctx: NativeCallContext, n: &mut NodeRef, i: &str| {
            iface_tool(n, i, "-S", "ethtool-stats", ctx.call_position())
        },
    );
    engine.register_fn("eee", |ctx: NativeCallContext, n: &mut NodeRef, i: &str| {
        eee(n, i, ctx.call_position())
    });
    engine.register_fn(
        "bond",
        |ctx: NativeCallContext, n: &mut NodeRef, name: &str| -> Result<Dynamic, RhaiErr> {
            let pos = ctx.call_position();
            check_name("bond", name, pos)?;
            let path = format!("/proc/net/bonding/{name}");
            let o = tool(n, "cat", &format!("cat {}", quote(&path)), None, pos)?;
            if o.exit_code != Some(0) {
                return Err(signal::error(
                    format!(
                        "{}: no bond `{name}` ({path}: {})",
                        n.name(),
                        first_err_line(&o)
                    ),
                    pos,
                ));
            }
            parsed("bonding", n, &o.stdout, pos)
        },
    );
    engine.register_fn("addresses", |ctx: NativeCallContext, n: &mut NodeRef| {
        simple(n, "ip", "ip -j addr", "ip-addr", ctx.call_position())
    });
    engine.register_fn("ibdev2netdev", |ctx: NativeCallContext, n: &mut NodeRef| {
        simple(
            n,
            "ibdev2netdev",
            "ibdev2netdev",
            "ibdev2netdev",
            ctx.call_position(),
        )
    });
    engine.register_fn("rdma_links", |ctx: NativeCallContext, n: &mut NodeRef| {
        simple(n, "rdma", "rdma link", "rdma-link", ctx.call_position())
    });
    engine.register_fn("ofed_version", |ctx: NativeCallContext, n: &mut NodeRef| {
        simple(
            n,
            "ofed_info",
            "ofed_info -s",
            "ofed-info",
            ctx.call_position(),
        )
    });
    engine.register_fn(
        "ping",
        |ctx: NativeCallContext, n: &mut NodeRef, ip: &str| ping(n, ip, None, ctx.call_position()),
    );
    engine.register_fn(
        "ping",
        |ctx: NativeCallContext, n: &mut NodeRef, ip: &str, o: Map| {
            ping(n, ip, Some(&o), ctx.call_position())
        },
    );
    engine.register_fn(
        "file_info",
        |ctx: NativeCallContext, n: &mut NodeRef, p: &str| file_info(n, p, ctx.call_position()),
    );
    let _ = std::marker::PhantomData::<RunEnv>;
}

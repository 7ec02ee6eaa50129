//! Node methods: `n.ethtool(iface)` … `n.file_info(path)`.

use super::results::returns;
use super::{value, Opts};
use crate::engine::signal::RhaiErr;
use crate::primitives::ping::{self, PingOpts};
use crate::primitives::ping_all::{self, Target};
use crate::primitives::NodeRef;
use crate::primitives::{
    bonding, eee, ethtool, ethtool_driver, ethtool_stats, ibdev2netdev, ip_addr, ip_neigh,
    ofed_info, rdma_link, tools,
};
use rhai::{Engine, Map, NativeCallContext};

pub const PING_OPTS: &[&str] = &[
    "count",
    "wait",
    "iface",
    "size",
    "dont_fragment",
    "interval",
    "timeout",
];

fn ping(
    ctx: &NativeCallContext,
    n: &NodeRef,
    ip: &str,
    o: Option<Map>,
) -> Result<rhai::Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let po = ping_opts(o, "ping", pos)?;
    value(ping::ping(n, ip, &po), returns("ping"), pos)
}

fn ping_opts(o: Option<Map>, what: &str, pos: rhai::Position) -> Result<PingOpts, RhaiErr> {
    let o = Opts::new(o, what, PING_OPTS, pos)?;
    Ok(PingOpts {
        count: o.int("count")?,
        wait: o.int("wait")?,
        iface: o.str("iface")?,
        size: o.int("size")?,
        dont_fragment: o.bool("dont_fragment")?,
        interval: o.float("interval")?,
        timeout: o.duration("timeout")?,
    })
}

/// The keys of a `ping_all` target map.
pub const TARGET_KEYS: &[&str] = &["ip", "iface", "size"];

/// A `ping_all` target: an address, or `#{ ip, iface, size }`.
fn target(d: rhai::Dynamic, pos: rhai::Position) -> Result<Target, RhaiErr> {
    if d.is_string() {
        return Ok(Target {
            ip: d.to_string(),
            ..Target::default()
        });
    }
    let t = d.type_name();
    let Some(m) = d.try_cast::<Map>() else {
        return Err(crate::engine::signal::error(
            format!("ping_all: a target is an address or #{{ ip, iface, size }}, found {t}"),
            pos,
        ));
    };
    let o = Opts::new(Some(m), "ping_all target", TARGET_KEYS, pos)?;
    let Some(ip) = o.str("ip")? else {
        return Err(crate::engine::signal::error(
            "ping_all: a target map needs `ip` (#{ ip: \"10.0.0.2\", iface: \"eth1\" })",
            pos,
        ));
    };
    Ok(Target {
        ip,
        iface: o.str("iface")?,
        size: o.int("size")?,
    })
}

fn ping_all(
    ctx: &NativeCallContext,
    n: &NodeRef,
    targets: rhai::Array,
    o: Option<Map>,
) -> Result<rhai::Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let po = ping_opts(o, "ping_all", pos)?;
    let ts = targets
        .into_iter()
        .map(|d| target(d, pos))
        .collect::<Result<Vec<_>, _>>()?;
    value(ping_all::ping_all(n, &ts, &po), returns("ping_all"), pos)
}

/// Register `n.NAME(arg)` for a primitive taking one string.
macro_rules! method1 {
    ($engine:expr, $name:literal, $f:path) => {
        let r = returns($name);
        $engine.register_fn(
            $name,
            move |ctx: NativeCallContext, n: &mut NodeRef, a: &str| {
                value($f(n, a), r, ctx.call_position())
            },
        );
    };
}

/// Register `n.NAME()`.
macro_rules! method0 {
    ($engine:expr, $name:literal, $f:path) => {
        let r = returns($name);
        $engine.register_fn($name, move |ctx: NativeCallContext, n: &mut NodeRef| {
            value($f(n), r, ctx.call_position())
        });
    };
}

pub fn register(engine: &mut Engine) {
    method1!(engine, "ethtool", ethtool::ethtool);
    method1!(engine, "ethtool_driver", ethtool_driver::ethtool_driver);
    method1!(engine, "ethtool_stats", ethtool_stats::ethtool_stats);
    method1!(engine, "eee", eee::eee);
    method1!(engine, "bond", bonding::bond);
    method1!(engine, "file_info", tools::file_info);
    method1!(engine, "read_text", tools::read_text);
    method0!(engine, "addresses", ip_addr::addresses);
    method0!(engine, "ibdev2netdev", ibdev2netdev::ibdev2netdev);
    method0!(engine, "rdma_links", rdma_link::rdma_links);
    method0!(engine, "ofed_version", ofed_info::ofed_version);
    method0!(engine, "mgmt_address", tools::mgmt_address);
    let r = returns("neighbour");
    engine.register_fn(
        "neighbour",
        move |ctx: NativeCallContext, n: &mut NodeRef, ip: &str, iface: &str| {
            value(ip_neigh::neighbour(n, ip, iface), r, ctx.call_position())
        },
    );
    engine.register_fn(
        "needs",
        |ctx: NativeCallContext, n: &mut NodeRef, programs: rhai::Array| {
            let programs: Vec<String> = programs.iter().map(|d| d.to_string()).collect();
            value(
                tools::needs(n, &programs),
                returns("needs"),
                ctx.call_position(),
            )
        },
    );
    engine.register_fn(
        "which",
        |ctx: NativeCallContext, n: &mut NodeRef, p: &str| {
            value(
                tools::which(n, p, &[]),
                returns("which"),
                ctx.call_position(),
            )
        },
    );
    engine.register_fn(
        "which",
        |ctx: NativeCallContext, n: &mut NodeRef, p: &str, dirs: rhai::Array| {
            let dirs: Vec<String> = dirs.iter().map(|d| d.to_string()).collect();
            value(
                tools::which(n, p, &dirs),
                returns("which"),
                ctx.call_position(),
            )
        },
    );
    engine.register_fn(
        "ping",
        |ctx: NativeCallContext, n: &mut NodeRef, ip: &str| ping(&ctx, n, ip, None),
    );
    engine.register_fn(
        "ping",
        |ctx: NativeCallContext, n: &mut NodeRef, ip: &str, o: Map| ping(&ctx, n, ip, Some(o)),
    );
    engine.register_fn(
        "ping_all",
        |ctx: NativeCallContext, n: &mut NodeRef, t: rhai::Array| ping_all(&ctx, n, t, None),
    );
    engine.register_fn(
        "ping_all",
        |ctx: NativeCallContext, n: &mut NodeRef, t: rhai::Array, o: Map| {
            ping_all(&ctx, n, t, Some(o))
        },
    );
}

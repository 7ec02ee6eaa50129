//! `ib_write_bw` / `ib_read_bw` / `ib_send_bw` (and `_port`), `ib_write_lat` / `ib_send_lat`,
//! `iperf3`.

use super::results::returns;
use super::{value, Opts};
use crate::engine::signal::RhaiErr;
use crate::primitives::pair::{self, Iperf3Opts, PerftestOpts};
use crate::primitives::NodeRef;
use rhai::{Dynamic, Engine, Map, NativeCallContext, Position};

pub const PERFTEST_OPTS: &[&str] = &[
    "device",
    "server_device",
    "client_device",
    "gid_index",
    "port",
    "size",
    "duration",
    "qps",
    "bidirectional",
    "all_sizes",
    "extra_args",
    "binary",
    "server_ip",
    "timeout",
];
pub const PORT_OPTS: &[&str] = &[
    "port_name",
    "all_ports",
    "device",
    "gid_index",
    "port",
    "size",
    "duration",
    "qps",
    "bidirectional",
    "all_sizes",
    "extra_args",
    "binary",
    "timeout",
];
pub const IPERF3_OPTS: &[&str] = &[
    "port",
    "parallel",
    "duration",
    "window",
    "bind",
    "extra_args",
    "server_ip",
    "binary",
    "timeout",
];

fn perftest_opts(
    tool: &str,
    o: Option<Map>,
    known: &[&str],
    pos: Position,
) -> Result<PerftestOpts, RhaiErr> {
    let o = Opts::new(o, tool, known, pos)?;
    Ok(PerftestOpts {
        device: o.str("device")?,
        server_device: o.str("server_device")?,
        client_device: o.str("client_device")?,
        gid_index: o.int("gid_index")?,
        port: o.int("port")?,
        size: o.int("size")?,
        duration: o.int("duration")?,
        qps: o.int("qps")?,
        bidirectional: o.bool("bidirectional")?,
        all_sizes: o.bool("all_sizes")?,
        extra_args: o.str("extra_args")?,
        binary: o.str("binary")?,
        server_ip: o.str("server_ip")?,
        timeout: o.duration("timeout")?,
        port_name: o.str("port_name")?,
        all_ports: o.bool("all_ports")?,
    })
}

fn iperf3(
    ctx: &NativeCallContext,
    s: &NodeRef,
    c: &NodeRef,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let o = Opts::new(o, "iperf3", IPERF3_OPTS, pos)?;
    let io = Iperf3Opts {
        port: o.int("port")?,
        parallel: o.int("parallel")?,
        duration: o.int("duration")?,
        window: o.str("window")?,
        bind: o.str("bind")?,
        extra_args: o.str("extra_args")?,
        server_ip: o.str("server_ip")?,
        binary: o.str("binary")?,
        timeout: o.duration("timeout")?,
    };
    value(pair::iperf3(s, c, &io), returns("iperf3"), pos)
}

/// `TOOL(server, client)` and `TOOL(server, client, opts)`.
fn register_pair(engine: &mut Engine, tool: &'static str) {
    let one = move |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Option<Map>| {
        let pos = ctx.call_position();
        let po = perftest_opts(tool, o, PERFTEST_OPTS, pos)?;
        value(pair::perftest(tool, &s, &c, &po), returns(tool), pos)
    };
    engine.register_fn(
        tool,
        move |ctx: NativeCallContext, s: NodeRef, c: NodeRef| one(ctx, s, c, None),
    );
    engine.register_fn(
        tool,
        move |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Map| one(ctx, s, c, Some(o)),
    );
}

pub fn register(engine: &mut Engine) {
    for tool in ["ib_write_lat", "ib_send_lat"] {
        register_pair(engine, tool);
    }
    for tool in ["ib_write_bw", "ib_read_bw", "ib_send_bw"] {
        register_pair(engine, tool);
        let port_fn = format!("{tool}_port");
        let port = move |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Option<Map>| {
            let pos = ctx.call_position();
            let po = perftest_opts(&format!("{tool}_port"), o, PORT_OPTS, pos)?;
            value(
                pair::perftest_port(tool, &s, &c, &po),
                returns("ib_write_bw_port"),
                pos,
            )
        };
        engine.register_fn(
            &port_fn,
            move |ctx: NativeCallContext, s: NodeRef, c: NodeRef| port(ctx, s, c, None),
        );
        engine.register_fn(
            &port_fn,
            move |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Map| port(ctx, s, c, Some(o)),
        );
    }
    engine.register_fn(
        "iperf3",
        |ctx: NativeCallContext, s: NodeRef, c: NodeRef| iperf3(&ctx, &s, &c, None),
    );
    engine.register_fn(
        "iperf3",
        |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Map| iperf3(&ctx, &s, &c, Some(o)),
    );
}

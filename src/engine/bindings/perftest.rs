//! `ib_write_bw` / `ib_read_bw` / `ib_send_bw` (and `_port`), `ib_write_lat` / `ib_send_lat`
//! (`primitives::pair`, perftest over the server/client exchange).

use super::api::{Api, Binder, BINDINGS};
use super::options::Opts;
use super::values::value;
use crate::engine::signal::RhaiErr;
use crate::primitives::pair::{self, PerftestOpts};
use crate::primitives::NodeRef;
use rhai::{Engine, Map, NativeCallContext, Position};

pub(super) const PERFTEST_OPTS: &[&str] = &[
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
pub(super) const PORT_OPTS: &[&str] = &[
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

/// `TOOL(server, client)` and `TOOL(server, client, opts)`.
fn register_pair(engine: &mut Engine, tool: &'static str) {
    let one = move |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Option<Map>| {
        let pos = ctx.call_position();
        let po = perftest_opts(tool, o, PERFTEST_OPTS, pos)?;
        value(pair::perftest(tool, &s, &c, &po), pos)
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

/// `TOOL_port(server, client)` and `TOOL_port(server, client, opts)`.
fn register_port(engine: &mut Engine, port_fn: &'static str) {
    let tool = port_fn.trim_end_matches("_port");
    let port = move |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Option<Map>| {
        let pos = ctx.call_position();
        let po = perftest_opts(port_fn, o, PORT_OPTS, pos)?;
        value(pair::perftest_port(tool, &s, &c, &po), pos)
    };
    engine.register_fn(
        port_fn,
        move |ctx: NativeCallContext, s: NodeRef, c: NodeRef| port(ctx, s, c, None),
    );
    engine.register_fn(
        port_fn,
        move |ctx: NativeCallContext, s: NodeRef, c: NodeRef, o: Map| port(ctx, s, c, Some(o)),
    );
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("ib_write_bw(server, client, opts)")
        .also(&["ib_read_bw", "ib_send_bw"])
        .opts(PERFTEST_OPTS)
        .returns::<pair::PerftestResult>()
        .doc("server started, readiness awaited, client run against the server's fabric address, both sides parsed, server always stopped")
        .register(register_pair);
    api.function("ib_write_lat(server, client, opts)")
        .also(&["ib_send_lat"])
        .opts(PERFTEST_OPTS)
        .returns::<pair::PerftestResult>()
        .doc("latency between two HCAs (ib_write_lat / ib_send_lat, same options as ib_write_bw): t_typical_usec, t_p99_usec, t_max_usec of the largest size; server always stopped")
        .register(register_pair);
    api.function("ib_write_bw_port(server, client, opts)")
        .also(&["ib_read_bw_port", "ib_send_bw_port"])
        .opts(PORT_OPTS)
        .returns::<pair::PortResult>()
        .doc("all logical rails of one physical port at once, summed")
        .register(register_port);
}

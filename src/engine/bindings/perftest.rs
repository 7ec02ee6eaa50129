//! `ib_write_bw` / `ib_read_bw` / `ib_send_bw` (and `_port`), `ib_write_lat` / `ib_send_lat`
//! (`primitives::pair`, perftest over the server/client exchange).

use super::api::{node_pair, Api, Binder, BINDINGS};
use super::options;
use super::values::value;
use crate::primitives::pair::{self, PerftestOpts};
use rhai::Engine;
use std::time::Duration;

/// The options of the `_port` forms (one physical port's rails at once): which port instead
/// of a device each side and a server address.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct PortArgs {
    port_name: Option<String>,
    all_ports: bool,
    rail_shift: i64,
    device: Option<String>,
    gid_index: Option<i64>,
    port: Option<i64>,
    size: Option<i64>,
    duration: Option<i64>,
    qps: Option<i64>,
    bidirectional: bool,
    all_sizes: bool,
    extra_args: Option<String>,
    binary: Option<String>,
    #[serde(deserialize_with = "crate::util::duration::optional")]
    timeout: Option<Duration>,
}

impl From<PortArgs> for PerftestOpts {
    fn from(a: PortArgs) -> PerftestOpts {
        PerftestOpts {
            port_name: a.port_name,
            all_ports: a.all_ports,
            rail_shift: a.rail_shift,
            device: a.device,
            gid_index: a.gid_index,
            port: a.port,
            size: a.size,
            duration: a.duration,
            qps: a.qps,
            bidirectional: a.bidirectional,
            all_sizes: a.all_sizes,
            extra_args: a.extra_args,
            binary: a.binary,
            timeout: a.timeout,
            ..PerftestOpts::default()
        }
    }
}

/// `TOOL(server, client)` and `TOOL(server, client, opts)`.
fn register_pair(engine: &mut Engine, tool: &'static str) {
    node_pair(engine, tool, move |ctx, s, c, o| {
        let pos = ctx.call_position();
        let po: PerftestOpts = options::read(o, tool, pos)?;
        value(pair::perftest(tool, &s, &c, &po), pos)
    });
}

/// `TOOL_port(server, client)` and `TOOL_port(server, client, opts)`.
fn register_port(engine: &mut Engine, port_fn: &'static str) {
    let tool = port_fn.trim_end_matches("_port");
    node_pair(engine, port_fn, move |ctx, s, c, o| {
        let pos = ctx.call_position();
        let po: PerftestOpts = options::read::<PortArgs>(o, port_fn, pos)?.into();
        value(pair::perftest_port(tool, &s, &c, &po), pos)
    });
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("ib_write_bw(server, client, opts)")
        .also(&["ib_read_bw", "ib_send_bw"])
        .options::<PerftestOpts>()
        .returns::<pair::PerftestResult>()
        .doc("server started, readiness awaited, client run against the server's fabric address, both sides parsed, server always stopped")
        .register(register_pair);
    api.function("ib_write_lat(server, client, opts)")
        .also(&["ib_send_lat"])
        .options::<PerftestOpts>()
        .returns::<pair::PerftestResult>()
        .doc("latency between two HCAs (ib_write_lat / ib_send_lat, same options as ib_write_bw): t_typical_usec, t_p99_usec, t_max_usec of the largest size; server always stopped")
        .register(register_pair);
    api.function("ib_write_bw_port(server, client, opts)")
        .also(&["ib_read_bw_port", "ib_send_bw_port"])
        .options::<PortArgs>()
        .returns::<pair::PortResult>()
        .doc("all logical rails of one physical port at once, summed")
        .register(register_port);
}

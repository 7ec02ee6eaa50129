//! `iperf3(server, client, opts)` (`primitives::pair`, iperf3 over the server/client
//! exchange).

use super::api::{node_pair, Api, Binder, BINDINGS};
use super::options;
use super::values::value;
use crate::engine::signal::RhaiErr;
use crate::primitives::pair::{self, Iperf3Opts};
use crate::primitives::NodeRef;
use rhai::{Dynamic, Map, NativeCallContext};

fn iperf3(
    ctx: &NativeCallContext,
    s: &NodeRef,
    c: &NodeRef,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let io: Iperf3Opts = options::read(o, "iperf3", pos)?;
    value(pair::iperf3(s, c, &io), pos)
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("iperf3(server, client, opts)")
        .options::<Iperf3Opts>()
        .returns::<pair::Iperf3>()
        .doc("iperf3 server started on `server`, `iperf3 -J` run on `client` against its fabric address, parsed; the server always stopped")
        .register(|engine, name| {
            node_pair(engine, name, |ctx, s, c, o| iperf3(ctx, &s, &c, o));
        });
}

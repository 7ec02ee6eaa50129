//! `n.net_state()` and `net_state_diff(before, after)` (`primitives::net_state`): the node's
//! running network before and after a change, and what differs.

use super::api::{Api, Binder, BINDINGS};
use super::values::value;
use super::{dry, record};
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::net_state::{self, NetState};
use crate::util::shape::Returned;
use rhai::{Dynamic, NativeCallContext, Position};

/// A snapshot back from the script (a typed result, or its `to_map()` copy).
fn snapshot(v: &Dynamic, what: &str, pos: Position) -> Result<NetState, RhaiErr> {
    let plain = record::as_map(v).unwrap_or_else(|| v.clone());
    rhai::serde::from_dynamic(&plain).map_err(|e| {
        signal::error(
            format!("net_state_diff: {what} is not an n.net_state() result ({e})"),
            pos,
        )
    })
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.net_state()")
        .doc("a snapshot of the node's running network: each interface's operstate, MTU and addresses (`ip -j addr`) and the stable routes of the main table (`ip -j route`, `ip -j -6 route`; RA-learned, redirect and expiring routes counted in churn_routes, not listed); compare two with net_state_diff")
        .node0(net_state::net_state);
    api.function("net_state_diff(before, after)")
        .returns::<net_state::NetDiff>()
        .doc("what changed between two n.net_state() snapshots of a node: `changes` (an interface gone, an address lost or appeared, a link state or MTU changed, a route gone, appeared or changed: dst, type, gateway, device, protocol, metric), each naming the node and the interface or route; `notes` (new interfaces, not compared)")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, before: Dynamic, after: Dynamic| {
                    diff(&ctx, before, after)
                },
            );
        });
}

fn diff(ctx: &NativeCallContext, before: Dynamic, after: Dynamic) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    if dry::is(&before) || dry::is(&after) {
        let e = crate::primitives::PrimError::dry_run("the node", "net_state_diff(before, after)");
        return Ok(dry::stand_in(&e, net_state::NetDiff::returns()));
    }
    let b = snapshot(&before, "before", pos)?;
    let a = snapshot(&after, "after", pos)?;
    value(Ok(net_state::net_state_diff(&b, &a)), pos)
}

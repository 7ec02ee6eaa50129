//! `n.neighbour(ip, iface)`: `primitives::ip_neigh`, over `parse::ip_neigh`.

use super::api::InTest;
use super::api::{Api, Binder, BINDINGS};
use super::values::value;
use crate::primitives::ip_neigh;
use crate::primitives::NodeRef;
use rhai::NativeCallContext;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.neighbour(ip, iface)")
        .returns::<Vec<ip_neigh::Neighbour>>()
        .doc("the node's neighbour entry for an address on an interface (`ip -j neigh show ADDR dev IFACE`): `lladdr` is the MAC it answered from (absent while unresolved); an empty list when there is none (an address behind a router: the neighbour is the gateway)")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, ip: &str, iface: &str| {
                    value(ip_neigh::neighbour(&n.in_test(&ctx), ip, iface), ctx.call_position())
                },
            );
        });
}

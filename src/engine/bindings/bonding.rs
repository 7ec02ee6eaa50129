//! `n.bond(name)`: `primitives::bonding`, over `parse::bonding`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::bonding;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.bond(name)")
        .doc("parsed /proc/net/bonding/NAME")
        .node1(bonding::bond);
}

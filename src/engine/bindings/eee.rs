//! `n.eee(iface)`: `primitives::eee`, over `parse::eee`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::eee;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.eee(iface)")
        .doc("parsed `ethtool --show-eee IFACE` (unsupported: supported/enabled/active false)")
        .node1(eee::eee);
}

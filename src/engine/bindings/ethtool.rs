//! `n.ethtool(iface)`: `primitives::ethtool`, over `parse::ethtool`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::ethtool;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ethtool(iface)")
        .doc("parsed `ethtool IFACE`")
        .node1(ethtool::ethtool);
}

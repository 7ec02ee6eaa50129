//! `n.ethtool_stats(iface)`: `primitives::ethtool_stats`, over `parse::ethtool_stats`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::ethtool_stats;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ethtool_stats(iface)")
        .doc("parsed `ethtool -S IFACE`")
        .node1(ethtool_stats::ethtool_stats);
}

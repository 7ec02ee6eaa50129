//! `n.optics(iface)`: `primitives::ethtool_module`, over `parse::ethtool_module`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::ethtool_module;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.optics(iface)")
        .doc("`ethtool -m IFACE` parsed: module identity, temperature, per-lane TX/RX power and the module's own warning/alarm thresholds")
        .node1(ethtool_module::optics);
}

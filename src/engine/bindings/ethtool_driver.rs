//! `n.ethtool_driver(iface)`: `primitives::ethtool_driver`, over `parse::ethtool_driver`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::ethtool_driver;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ethtool_driver(iface)")
        .doc("parsed `ethtool -i IFACE`")
        .node1(ethtool_driver::ethtool_driver);
}

//! `n.pcie(iface)`: `primitives::lspci`, over `parse::lspci`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::lspci;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.pcie(iface)")
        .doc("the PCIe link of the interface's NIC function (`ethtool -i` bus address, then `lspci -vv -s BDF`): LnkCap and LnkSta speed and width")
        .node1(lspci::pcie);
}

//! `n.pcie(iface)`: the PCIe link of the NIC behind an interface (`ethtool -i`, then
//! `lspci -vv -s BDF` as root).

use super::tools::as_root;
use super::{parsed, NodeRef, PResult, PrimError};
use crate::parse;

/// `n.pcie(iface)`: the PCIe link of the NIC behind `iface`: its bus address from `ethtool -i`,
/// then `lspci -vv -s BDF` (as root: LnkCap is hidden from other users).
pub(crate) fn pcie(n: &NodeRef, iface: &str) -> PResult<parse::lspci::PciDevice> {
    let d = super::ethtool_driver::ethtool_driver(n, iface)?;
    let bdf = d.bus_info.unwrap_or_default();
    if bdf.is_empty()
        || !bdf
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
    {
        return Err(PrimError::error(format!(
            "{}: `ethtool -i {iface}` gives no PCI bus address (bus-info {bdf:?}): not a PCIe NIC?",
            n.name()
        )));
    }
    let o = as_root(n, "lspci", &format!("lspci -vv -s {bdf}"))?;
    let devs = parsed(n.name(), &o.stdout, parse::lspci::parse)?;
    let want = bdf.trim_start_matches("0000:");
    devs.into_iter()
        .find(|p| p.address.trim_start_matches("0000:") == want)
        .ok_or_else(|| {
            PrimError::error(format!(
                "{}: `lspci -vv -s {bdf}` does not list {bdf}",
                n.name()
            ))
        })
}

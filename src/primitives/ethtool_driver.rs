//! `n.ethtool_driver(iface)`: driver, firmware and bus address of an interface (`ethtool -i`).
//! The driver and firmware versions reach the reports' tool versions from the command's log
//! (`run::versions::seen_in`), not from here.

use super::ethtool::ethtool_run;
use super::{parsed, NodeRef, PResult};
use crate::parse;

pub(crate) fn ethtool_driver(
    n: &NodeRef,
    iface: &str,
) -> PResult<parse::ethtool_driver::EthtoolDriver> {
    let o = ethtool_run(n, iface, "-i")?;
    parsed(n.name(), &o.stdout, parse::ethtool_driver::parse)
}

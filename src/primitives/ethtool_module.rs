//! `n.optics(iface)`: the transceiver or cable of an interface (`ethtool -m`, as root).

use super::tools::as_root;
use super::{check_name, parsed, NodeRef, PResult};
use crate::parse;
use crate::util::names::quote;

/// `n.optics(iface)`: the transceiver or cable of `iface` (`ethtool -m`): identity, digital
/// diagnostics and the module's own thresholds.
pub(crate) fn optics(n: &NodeRef, iface: &str) -> PResult<parse::ethtool_module::Module> {
    check_name("interface", iface)?;
    let o = as_root(n, "ethtool", &format!("ethtool -m {}", quote(iface)))?;
    parsed(n.name(), &o.stdout, parse::ethtool_module::parse)
}

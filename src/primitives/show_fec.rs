//! `n.fec(iface)`: FEC encoding and block counters (`ethtool -I --show-fec`).

use super::tools::{tool, tool_reason};
use super::{check_name, parsed, NodeRef, PResult, PrimError};
use crate::parse;
use crate::util::names::quote;

/// `n.fec(iface)`: the FEC of `iface` (`ethtool -I --show-fec IFACE`, ethtool >= 5.13):
/// configured and active encoding and, where the driver counts them, corrected and
/// uncorrectable blocks. A NIC without FEC (`Operation not supported`) or an older ethtool
/// without `-I` is an error naming it.
pub(crate) fn fec(n: &NodeRef, iface: &str) -> PResult<parse::show_fec::ShowFec> {
    check_name("interface", iface)?;
    let cmd = format!("ethtool -I --show-fec {}", quote(iface));
    let o = tool(n, "ethtool", &cmd, None, None)?;
    if o.exit_code != Some(0) {
        return Err(PrimError::error(format!(
            "{}: `{cmd}` failed (exit {}): {} (no FEC on this NIC, or ethtool older than 5.13 without -I)",
            n.name(),
            o.exit_code.unwrap_or(-1),
            tool_reason(&o)
        )));
    }
    parsed(n.name(), &o.stdout, parse::show_fec::parse)
}

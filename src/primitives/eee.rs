//! `n.eee(iface)`: Energy-Efficient Ethernet of an interface (`ethtool --show-eee`).

use super::tools::{tool, tool_reason};
use super::{check_name, parsed, NodeRef, PResult, PrimError};
use crate::parse;
use crate::util::names::quote;

/// `ethtool --show-eee`; a device without EEE support at all is `supported: false` (it cannot
/// be enabled or active), with ethtool's line in `error`.
pub(crate) fn eee(n: &NodeRef, iface: &str) -> PResult<parse::eee::Eee> {
    check_name("interface", iface)?;
    let cmd = format!("ethtool --show-eee {}", quote(iface));
    let o = tool(n, "ethtool", &cmd, None, None)?;
    if o.exit_code != Some(0) && o.stdout.trim().is_empty() {
        let why = tool_reason(&o);
        if why.contains("Operation not supported") {
            return Ok(parse::eee::Eee {
                interface: Some(iface.to_string()),
                error: Some(why),
                ..Default::default()
            });
        }
        return Err(PrimError::error(format!(
            "{}: `{cmd}` failed: {why}",
            n.name()
        )));
    }
    parsed(n.name(), &o.stdout, parse::eee::parse)
}

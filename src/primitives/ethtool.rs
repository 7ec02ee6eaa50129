//! `n.ethtool(iface)`: speed, duplex and link of an interface (`ethtool IFACE`), and the
//! `ethtool [FLAG] IFACE` run that the other ethtool primitives share.

use super::tools::{failed, tool, tool_reason};
use super::{check_name, parsed, NodeRef, PResult, PrimError};
use crate::parse;
use crate::transport::CmdOutput;
use crate::util::names::quote;

/// `ethtool [FLAG] IFACE`, with "interface does not exist" told apart from other failures.
pub(super) fn ethtool_run(n: &NodeRef, iface: &str, flag: &str) -> PResult<CmdOutput> {
    check_name("interface", iface)?;
    let cmd = if flag.is_empty() {
        format!("ethtool {}", quote(iface))
    } else {
        format!("ethtool {flag} {}", quote(iface))
    };
    let o = tool(n, "ethtool", &cmd, None, None)?;
    if o.exit_code != Some(0) {
        let all = format!("{}\n{}", o.stderr, o.stdout);
        if all.contains("No such device")
            || all.contains("no device matches")
            || all.contains("does not exist")
        {
            return Err(PrimError::error(format!(
                "{}: interface `{iface}` does not exist ({})",
                n.name(),
                tool_reason(&o)
            )));
        }
        return Err(failed(n, &cmd, &o));
    }
    Ok(o)
}

pub(crate) fn ethtool(n: &NodeRef, iface: &str) -> PResult<parse::ethtool::Ethtool> {
    let o = ethtool_run(n, iface, "")?;
    parsed(n.name(), &o.stdout, parse::ethtool::parse)
}

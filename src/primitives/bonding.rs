//! `n.bond(name)`: a Linux bond (`/proc/net/bonding/NAME`).

use super::tools::{tool, tool_reason};
use super::{check_name, parsed, NodeRef, PResult, PrimError};
use crate::parse;
use crate::util::names::quote;

pub(crate) fn bond(n: &NodeRef, name: &str) -> PResult<parse::bonding::Bonding> {
    check_name("bond", name)?;
    let path = format!("/proc/net/bonding/{name}");
    let o = tool(n, "cat", &format!("cat {}", quote(&path)), None, None)?;
    if o.exit_code != Some(0) {
        return Err(PrimError::error(format!(
            "{}: no bond `{name}` ({path}: {})",
            n.name(),
            tool_reason(&o)
        )));
    }
    parsed(n.name(), &o.stdout, parse::bonding::parse)
}

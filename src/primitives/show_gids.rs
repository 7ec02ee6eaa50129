//! `n.gids(dev)`: the GID table of an RDMA device (`show_gids`, mlnx-tools).

use super::tools::{tool, tool_reason};
use super::{check_name, parsed, NodeRef, PResult, PrimError};
use crate::parse;
use crate::util::names::quote;

/// `n.gids(dev)`: the GID table of RDMA device `dev` (`show_gids DEV`, mlnx-tools).
pub(crate) fn gids(n: &NodeRef, dev: &str) -> PResult<Vec<parse::show_gids::Gid>> {
    check_name("RDMA device", dev)?;
    let cmd = format!("show_gids {}", quote(dev));
    let o = tool(n, "show_gids", &cmd, None, None)?;
    if o.exit_code != Some(0) && o.stdout.trim().is_empty() {
        return Err(PrimError::error(format!(
            "{}: `{cmd}` failed: {}",
            n.name(),
            tool_reason(&o)
        )));
    }
    parsed(n.name(), &o.stdout, parse::show_gids::parse)
}

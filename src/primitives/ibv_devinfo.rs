//! `n.ibv_devinfo()`: the RDMA devices and their ports (`ibv_devinfo`).

use super::tools::{tool, tool_reason};
use super::{parsed, NodeRef, PResult, PrimError};
use crate::parse;

/// `n.ibv_devinfo()`: the RDMA devices and ports (`ibv_devinfo`: state, active_mtu, ...).
pub(crate) fn ibv_devinfo(n: &NodeRef) -> PResult<Vec<parse::ibv_devinfo::Device>> {
    let o = tool(n, "ibv_devinfo", "ibv_devinfo", None, None)?;
    if o.exit_code != Some(0) && o.stdout.trim().is_empty() {
        return Err(PrimError::error(format!(
            "{}: `ibv_devinfo` found no RDMA device ({})",
            n.name(),
            tool_reason(&o)
        )));
    }
    parsed(n.name(), &o.stdout, parse::ibv_devinfo::parse)
}

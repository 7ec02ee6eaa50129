//! The GPU to HCA topology (`nvidia-smi topo -m`).

use super::tools::{tool, tool_reason};
use super::{NodeRef, PResult, PrimError};
use crate::parse::nvidia_smi_topo;

/// `n.gpu_topology()`: `nvidia-smi topo -m` parsed: per GPU its nearest NICs.
pub(crate) fn gpu_topology(n: &NodeRef) -> PResult<nvidia_smi_topo::Topo> {
    let o = tool(n, "nvidia-smi", "nvidia-smi topo -m", None, None)?;
    if o.exit_code != Some(0) {
        return Err(PrimError::error(format!(
            "{}: `nvidia-smi topo -m` failed (exit {}): {}",
            n.name(),
            o.exit_code.unwrap_or(-1),
            tool_reason(&o)
        )));
    }
    super::parsed(n.name(), &o.stdout, nvidia_smi_topo::parse)
}

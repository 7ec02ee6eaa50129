//! The GPU to HCA topology (`nvidia-smi topo -m`).

use super::tools::{failed, tool};
use super::{NodeRef, PResult};
use crate::parse::nvidia_smi_topo;

/// `n.gpu_topology()`: `nvidia-smi topo -m` parsed: per GPU its nearest NICs.
pub(crate) fn gpu_topology(n: &NodeRef) -> PResult<nvidia_smi_topo::Topo> {
    let o = tool(n, "nvidia-smi", "nvidia-smi topo -m", None, None)?;
    if o.exit_code != Some(0) {
        return Err(failed(n, "nvidia-smi topo -m", &o));
    }
    super::parsed(n.name(), &o.stdout, nvidia_smi_topo::parse)
}

//! `n.gpu_replays()`: every GPU's own PCIe replay counter (`nvidia-smi -q`).

use super::tools::{failed, tool};
use super::{parsed, NodeRef, PResult};
use crate::parse::nvidia_smi_q;

/// `n.gpu_replays()`: `nvidia-smi -q` parsed: per GPU its address, name, `Replays Since Reset`
/// and `Replay Number Rollovers` (and its PCIe link). The whole `-q`: driver 580 refuses
/// `-d PCIE` ("Failed to parse --display/-d flags").
pub(crate) fn gpu_replays(n: &NodeRef) -> PResult<nvidia_smi_q::NvidiaSmiQ> {
    let o = tool(n, "nvidia-smi", "nvidia-smi -q", None, None)?;
    if o.exit_code != Some(0) {
        return Err(failed(n, "nvidia-smi -q", &o));
    }
    parsed(n.name(), &o.stdout, nvidia_smi_q::parse)
}

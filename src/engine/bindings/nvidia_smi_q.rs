//! The GPUs' own PCIe replay counters (`primitives::nvidia_smi_q`): `n.gpu_replays()`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::nvidia_smi_q;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.gpu_replays()")
        .doc("`nvidia-smi -q` parsed: per GPU its address (bdf), name, PCIe replay counter (`Replays Since Reset`), replay rollovers and link")
        .node0(nvidia_smi_q::gpu_replays);
}

//! The GPU to HCA topology (`primitives::nvidia_smi_topo`): `n.gpu_topology()`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::nvidia_smi_topo;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.gpu_topology()")
        .doc("`nvidia-smi topo -m` parsed: the matrix, and per GPU its nearest NIC relation and the NICs at it (by device name from the NIC legend)")
        .node0(nvidia_smi_topo::gpu_topology);
}

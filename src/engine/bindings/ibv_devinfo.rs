//! `n.ibv_devinfo()`: `primitives::ibv_devinfo`, over `parse::ibv_devinfo`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::ibv_devinfo;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ibv_devinfo()")
        .doc("`ibv_devinfo` parsed: every RDMA device and port (state, active_mtu, max_mtu, link layer, firmware)")
        .node0(ibv_devinfo::ibv_devinfo);
}

//! `n.ibdev2netdev()`: `primitives::ibdev2netdev`, over `parse::ibdev2netdev`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::ibdev2netdev;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ibdev2netdev()")
        .doc("parsed `ibdev2netdev`")
        .node0(ibdev2netdev::ibdev2netdev);
}

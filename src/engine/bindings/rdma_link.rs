//! `n.rdma_links()`: `primitives::rdma_link`, over `parse::rdma_link`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::rdma_link;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.rdma_links()")
        .doc("parsed `rdma link`")
        .node0(rdma_link::rdma_links);
}

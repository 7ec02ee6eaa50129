//! InfiniBand error counters (`primitives::perfquery`): `n.ib_counters()`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::perfquery;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ib_counters()")
        .doc("a health_counters snapshot of the node's InfiniBand ports (`perfquery -x -C DEV -P PORT`): error counters must not grow, PortXmitWait recorded; compare two with counter_growth")
        .node0(perfquery::ib_counters);
}

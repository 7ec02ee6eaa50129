//! InfiniBand error counters (`primitives::perfquery`): `n.ib_counters()`, and the switch
//! ends of the node's cables, `n.ib_switch_end_counters(iblinkinfo_text)`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::perfquery;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ib_counters()")
        .doc("a health_counters snapshot of the node's InfiniBand ports (`perfquery -x -C DEV -P PORT`): error counters must not grow, PortXmitWait recorded; compare two with counter_growth")
        .node0(perfquery::ib_counters);
    api.method("n.ib_switch_end_counters(iblinkinfo_text)")
        .doc("a health_counters snapshot of the switch end of each of the node's HCA cables (found in an iblinkinfo sweep by the node description `NODE HCA`; `perfquery -x LID PORT` from the node): compare two with counter_growth")
        .node1(perfquery::ib_switch_end_counters);
}

//! `n.ofed_version()`: `primitives::ofed_info`, over `parse::ofed_info`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::ofed_info;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ofed_version()")
        .doc("parsed `ofed_info -s`")
        .node0(ofed_info::ofed_version);
}

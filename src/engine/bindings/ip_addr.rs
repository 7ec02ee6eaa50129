//! `n.addresses()`: `primitives::ip_addr`, over `parse::ip_addr`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::ip_addr;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.addresses()")
        .doc("parsed `ip -j addr`")
        .node0(ip_addr::addresses);
}

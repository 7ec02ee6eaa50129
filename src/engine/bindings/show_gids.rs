//! `n.gids(device)`: `primitives::show_gids`, over `parse::show_gids`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::show_gids;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.gids(device)")
        .doc("`show_gids DEVICE` parsed: every GID with index, RoCE version (v1/v2), IPv4 and netdev")
        .node1(show_gids::gids);
}

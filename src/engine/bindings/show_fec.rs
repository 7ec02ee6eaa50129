//! `n.fec(iface)`: `primitives::show_fec`, over `parse::show_fec`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::show_fec;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.fec(iface)")
        .doc("`ethtool -I --show-fec IFACE` parsed: configured and active FEC encoding, corrected and uncorrectable blocks where the driver counts them")
        .node1(show_fec::fec);
}

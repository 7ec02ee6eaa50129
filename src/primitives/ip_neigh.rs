//! `n.neighbour(ip, iface)`: the neighbour entry of an address (`ip -j neigh show`).

use super::tools::{failed, tool};
use super::{check_addr, check_name, parsed, NodeRef, PResult};
use crate::parse;
/// What `n.neighbour(ip, iface)` returns a list of.
pub(crate) use crate::parse::ip_neigh::Neighbour;
use crate::util::names::quote;

/// The neighbour entry of `ip` on `iface` (`ip -j neigh show ADDR dev IFACE`): the MAC the
/// address answered from; an empty list when the node has none (never asked, or an address
/// behind a router, whose neighbour is the gateway).
pub(crate) fn neighbour(
    n: &NodeRef,
    ip: &str,
    iface: &str,
) -> PResult<Vec<parse::ip_neigh::Neighbour>> {
    check_addr(ip)?;
    check_name("interface", iface)?;
    let cmd = format!("ip -j neigh show {} dev {}", quote(ip), quote(iface));
    let o = tool(n, "ip", &cmd, None, None)?;
    if o.exit_code != Some(0) {
        return Err(failed(n, &cmd, &o));
    }
    // iproute2 prints `[]` for no entry; an empty answer says the same
    if o.stdout.trim().is_empty() {
        return Ok(vec![]);
    }
    parsed(n.name(), &o.stdout, parse::ip_neigh::parse)
}

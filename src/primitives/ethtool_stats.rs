//! `n.ethtool_stats(iface)`: the NIC's statistics counters (`ethtool -S`).

use super::ethtool::ethtool_run;
use super::{parsed, NodeRef, PResult};
use crate::parse;

pub(crate) fn ethtool_stats(
    n: &NodeRef,
    iface: &str,
) -> PResult<parse::ethtool_stats::EthtoolStats> {
    let o = ethtool_run(n, iface, "-S")?;
    parsed(n.name(), &o.stdout, parse::ethtool_stats::parse)
}

//! `rdma statistic show link DEV/1`: the RDMA port counters (`hw_counters`) that the health
//! counters read.

use super::tools::{tool, tool_reason};
use super::{check_name, parsed, NodeRef, PResult, PrimError};
use crate::parse;
use crate::util::names::quote;
use std::collections::BTreeMap;

/// The RDMA port counters of `dev` port 1 (`rdma statistic show link DEV/1`: the kernel's
/// `hw_counters`). A device without them (not mlx5, no RDMA at all) is an error naming it.
pub(crate) fn hw_counters(n: &NodeRef, dev: &str) -> PResult<BTreeMap<String, u64>> {
    check_name("RDMA device", dev)?;
    let cmd = format!("rdma statistic show link {}", quote(&format!("{dev}/1")));
    let o = tool(n, "rdma", &cmd, None, None)?;
    if o.exit_code != Some(0) || o.stdout.trim().is_empty() {
        return Err(PrimError::error(format!(
            "{}: no RDMA hw_counters for {dev} port 1 (`{cmd}`: {}); is {dev} an RDMA device of this node?",
            n.name(),
            tool_reason(&o)
        )));
    }
    let ports = parsed(n.name(), &o.stdout, parse::rdma_statistic::parse)?;
    ports
        .into_iter()
        .find(|p| p.device == dev && p.port == 1)
        .map(|p| p.counters)
        .ok_or_else(|| {
            PrimError::error(format!(
                "{}: `{cmd}` printed no counters of {dev}/1",
                n.name()
            ))
        })
}

//! InfiniBand ports (`ibstat`): the port state of every HCA port, one row per port. What a
//! port should be is judged in [`super::ib_port_policy`] (pure).

use super::tools::{tool, tool_reason};
use super::{NodeRef, PResult, PrimError};
use crate::parse::ibstat;
use serde::{Deserialize, Serialize};

/// One HCA port as `ibstat` reports it, flat.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct IbPort {
    pub device: String,
    pub port: u32,
    pub ca_type: Option<String>,
    pub fw_ver: Option<String>,
    pub state: Option<String>,
    pub phys_state: Option<String>,
    /// Gbit/s (`400` = 4X NDR).
    pub rate: Option<f64>,
    pub base_lid: Option<u64>,
    pub sm_lid: Option<u64>,
    pub link_layer: Option<String>,
    pub port_guid: Option<String>,
    pub capability_mask: Option<String>,
    /// The capability mask's IsSM bit (0x2, IBA PortInfo): a subnet manager runs on this port
    /// (master, standby or discovering).
    pub is_sm: bool,
}

/// `ibstat` flattened to one row per port.
pub(crate) fn flatten(s: &ibstat::Ibstat) -> Vec<IbPort> {
    s.cas
        .iter()
        .flat_map(|ca| {
            ca.ports.iter().map(move |p| IbPort {
                device: ca.ca.clone(),
                port: p.port,
                ca_type: ca.ca_type.clone(),
                fw_ver: ca.fw_ver.clone(),
                state: p.state.clone(),
                phys_state: p.phys_state.clone(),
                rate: p.rate,
                base_lid: p.base_lid,
                sm_lid: p.sm_lid,
                link_layer: p.link_layer.clone(),
                port_guid: p.port_guid.clone(),
                capability_mask: p.capability_mask.clone(),
                is_sm: p
                    .capability_mask
                    .as_deref()
                    .and_then(|m| u32::from_str_radix(m.trim_start_matches("0x"), 16).ok())
                    .is_some_and(|m| m & 0x2 != 0),
            })
        })
        .collect()
}

/// `n.ib_ports()`: every HCA port of the node (`ibstat`), InfiniBand and Ethernet alike (the
/// link layer says which).
pub(crate) fn ib_ports(n: &NodeRef) -> PResult<Vec<IbPort>> {
    let o = tool(n, "ibstat", "ibstat", None, None)?;
    if o.stdout.trim().is_empty() {
        return Err(PrimError::error(format!(
            "{}: `ibstat` printed nothing (exit {}): {}; are infiniband-diags and an RDMA device there?",
            n.name(),
            o.exit_code.unwrap_or(-1),
            tool_reason(&o)
        )));
    }
    let s = super::parsed(n.name(), &o.stdout, ibstat::parse)?;
    Ok(flatten(&s))
}

crate::impl_shape!(IbPort, parsed("ib port"));

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

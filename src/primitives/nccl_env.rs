//! NCCL's environment read as NCCL reads it, for checks of a workload's settings:
//! `NCCL_IB_HCA` (which RDMA device ports NCCL uses), `NCCL_SOCKET_IFNAME` (which interface
//! its bootstrap picks) and the `NCCL_*` settings a recipe's text gives. No node is asked:
//! the parsing is `parse::nccl_ib_hca` and `parse::nccl_env`.

use crate::parse::nccl_env::Setting;
use crate::parse::nccl_ib_hca::HcaFilter;
use serde::Serialize;

/// Whether NCCL uses a device port or an interface, and why (in words).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Uses {
    pub used: bool,
    pub why: String,
}

/// `nccl_ib_hca(value)`: `NCCL_IB_HCA` as NCCL reads it.
pub(crate) fn ib_hca(value: &str) -> HcaFilter {
    crate::parse::nccl_ib_hca::parse(value)
}

/// `nccl_ib_hca_uses(value, device, port)`.
pub(crate) fn ib_hca_uses(value: &str, device: &str, port: i64) -> Uses {
    let f = ib_hca(value);
    Uses {
        used: f.selects(device, port),
        why: f.explain(device, port),
    }
}

/// `nccl_recipe_env(text)`: the settings that win, each with its line.
pub(crate) fn recipe_env(text: &str) -> Vec<Setting> {
    crate::parse::nccl_env::effective(text)
}

/// `nccl_socket_ifname_uses(value, ifname)`.
pub(crate) fn socket_ifname_uses(value: &str, ifname: &str) -> Uses {
    let (used, why) = crate::parse::nccl_env::socket_ifname_uses(value, ifname);
    Uses { used, why }
}

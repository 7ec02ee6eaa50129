//! `n.qos(iface)`: PFC, trust and traffic classes (`mlnx_qos -i`, as root).

use super::tools::as_root;
use super::{check_name, parsed, NodeRef, PResult};
use crate::parse;
/// What `n.qos(iface)` returns.
pub(crate) use crate::parse::mlnx_qos::MlnxQos;
use crate::util::names::quote;

/// `n.qos(iface)`: PFC, trust and traffic classes of `iface` (`mlnx_qos -i IFACE`).
pub(crate) fn qos(n: &NodeRef, iface: &str) -> PResult<parse::mlnx_qos::MlnxQos> {
    check_name("interface", iface)?;
    let o = as_root(n, "mlnx_qos", &format!("mlnx_qos -i {}", quote(iface)))?;
    parsed(n.name(), &o.stdout, parse::mlnx_qos::parse)
}

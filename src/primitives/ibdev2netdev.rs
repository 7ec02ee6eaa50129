//! `n.ibdev2netdev()`: RDMA devices and their netdevs (`ibdev2netdev`).

use super::tools::simple;
use super::{NodeRef, PResult};
use crate::parse;

pub(crate) fn ibdev2netdev(n: &NodeRef) -> PResult<Vec<parse::ibdev2netdev::Mapping>> {
    simple(
        n,
        "ibdev2netdev",
        "ibdev2netdev",
        parse::ibdev2netdev::parse,
    )
}

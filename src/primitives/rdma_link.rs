//! `n.rdma_links()`: RDMA links and their state (`rdma link`).

use super::tools::simple;
use super::{NodeRef, PResult};
use crate::parse;

pub(crate) fn rdma_links(n: &NodeRef) -> PResult<Vec<parse::rdma_link::Link>> {
    simple(n, "rdma", "rdma link", parse::rdma_link::parse)
}

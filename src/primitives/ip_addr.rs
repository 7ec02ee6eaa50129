//! `n.addresses()`: interfaces and addresses (`ip -j addr`).

use super::tools::simple;
use super::{NodeRef, PResult};
use crate::parse;

pub(crate) fn addresses(n: &NodeRef) -> PResult<Vec<parse::ip_addr::Interface>> {
    simple(n, "ip", "ip -j addr", parse::ip_addr::parse)
}

//! `n.ofed_version()`: the MLNX_OFED / DOCA-OFED version (`ofed_info -s`).

use super::tools::simple;
use super::{NodeRef, PResult};
use crate::parse;

pub(crate) fn ofed_version(n: &NodeRef) -> PResult<parse::ofed_info::OfedInfo> {
    simple(n, "ofed_info", "ofed_info -s", parse::ofed_info::parse)
}

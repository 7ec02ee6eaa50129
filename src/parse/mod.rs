//! Parsers for captured tool output: pure functions from text to typed data.
//!
//! One file per tool. Every parser returns a serde-serialisable struct whose field names are the
//! contract of SPEC §3 "Parsers"; [`parse`] dispatches by KIND (the `fabcheck parse KIND` name)
//! and returns JSON, which the engine turns into Rhai maps.

use crate::util::shape::{Returned, Returns};
use serde::Serialize;
use std::sync::OnceLock;

mod util;

pub mod aer;
pub mod bonding;
pub mod dmesg;
pub mod eee;
pub mod ethtool;
pub mod ethtool_driver;
pub mod ethtool_module;
pub mod ethtool_stats;
pub(crate) mod ib_cabling_plan;
pub mod ib_pkeys;
pub mod ibdev2netdev;
pub mod ibdiagnet;
pub mod iblinkinfo;
pub mod ibnetdiscover;
pub mod ibqueryerrors;
pub mod ibstat;
pub mod ibstatus;
pub mod ibtracert;
pub mod ibv_devinfo;
pub mod iommu;
pub mod ip_addr;
pub mod ip_neigh;
pub mod ip_route;
pub mod iperf3;
pub mod lldpctl;
pub mod lspci;
pub mod mlnx_qos;
pub mod mlxlink;
pub mod nccl;
pub(crate) mod nccl_env;
pub(crate) mod nccl_ib_hca;
pub mod nvidia_smi_q;
pub mod nvidia_smi_topo;
pub mod nvidia_version;
pub mod ofed_info;
pub mod perfquery;
pub mod perftest;
pub mod ping;
pub mod rdma_link;
pub mod rdma_statistic;
pub mod scontrol;
pub mod show_fec;
pub mod show_gids;
pub mod sminfo;
pub mod srun;
pub mod sysfs_net;
pub(crate) mod versions;

/// Unrecognisable input: names the KIND and the first line that did not fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot parse `{kind}` output: {reason} (line {line}: {text:?})")]
pub struct ParseError {
    pub kind: &'static str,
    /// 1-based line number of the first line that did not fit (0 = empty input).
    pub line: usize,
    pub text: String,
    pub reason: String,
}

impl ParseError {
    pub fn new(kind: &'static str, line: usize, text: &str, reason: impl Into<String>) -> Self {
        let mut text = text.to_string();
        if text.len() > 200 {
            let mut cut = 200;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        ParseError {
            kind,
            line,
            text,
            reason: reason.into(),
        }
    }
}

/// One parser, declared in its own file with [`parser!`]: `fabcheck parse KIND`, the script
/// function `parse::NAME(text)` (NAME is KIND with `_` for `-`) and the shape of its result all
/// come from this row.
pub struct Parser {
    /// The KIND of `fabcheck parse KIND`: `ethtool-driver`.
    pub kind: &'static str,
    /// What it reads: `ethtool -i IFACE`.
    pub input: &'static str,
    /// A real capture it reads, under `tests/fixtures` (SOURCES.tsv says where it came from).
    pub sample: &'static str,
    /// The parser, its result as JSON.
    pub parse: fn(&str) -> Result<serde_json::Value, ParseError>,
    /// What its result is to scripts (from the parser's own return type).
    pub returns: fn() -> Returns,
}

impl Parser {
    /// The script function's name in the `parse` module: `ethtool_driver`.
    pub fn name(&self) -> String {
        self.kind.replace('-', "_")
    }
}

/// Every parser (each file adds its own with [`parser!`]).
#[linkme::distributed_slice]
pub static PARSERS: [Parser];

/// Every parser, by KIND.
pub fn parsers() -> &'static [&'static Parser] {
    static SORTED: OnceLock<Vec<&'static Parser>> = OnceLock::new();
    SORTED.get_or_init(|| {
        let mut v: Vec<&'static Parser> = PARSERS.iter().collect();
        v.sort_by_key(|p| p.kind);
        v
    })
}

/// `parser!("ethtool-driver", "ethtool -i IFACE", sample: "lab/ethtool-i-veth.txt")` in
/// `parse/ethtool_driver.rs`: declares that file's `parse` function as a parser.
#[macro_export]
macro_rules! parser {
    ($kind:literal, $input:literal, sample: $sample:literal) => {
        #[linkme::distributed_slice($crate::parse::PARSERS)]
        static PARSER: $crate::parse::Parser = $crate::parse::Parser {
            kind: $kind,
            input: $input,
            sample: $sample,
            parse: |text| $crate::parse::json(parse(text)),
            returns: || $crate::parse::returns_of(parse),
        };
    };
}

/// A parser's result as JSON.
pub fn json<T: Serialize>(r: Result<T, ParseError>) -> Result<serde_json::Value, ParseError> {
    r.map(|v| serde_json::to_value(v).expect("parser output is always serialisable"))
}

/// What a parser's result is to scripts, from its type.
pub fn returns_of<T: Returned>(_: fn(&str) -> Result<T, ParseError>) -> Returns {
    T::returns()
}

/// Parse `text` as tool output of `kind`; unknown kinds are an error listing the known ones.
pub fn parse(kind: &str, text: &str) -> Result<serde_json::Value, ParseError> {
    match parsers().iter().find(|p| p.kind == kind) {
        Some(p) => (p.parse)(text),
        None => Err(ParseError::new(
            "unknown",
            0,
            kind,
            format!(
                "unknown KIND `{kind}`; known kinds: {}",
                parsers()
                    .iter()
                    .map(|p| p.kind)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

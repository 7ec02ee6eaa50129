//! Parsers for captured tool output: pure functions from text to typed data.
//!
//! One file per tool. Every parser returns a serde-serialisable struct whose field names are the
//! contract of SPEC §3 "Parsers"; [`parse`] dispatches by KIND (the `fabcheck parse KIND` name)
//! and returns JSON, which the engine turns into Rhai maps.

use serde::Serialize;

mod util;

pub mod bonding;
pub mod eee;
pub mod ethtool;
pub mod ethtool_driver;
pub mod ethtool_module;
pub mod ethtool_stats;
pub mod ibdev2netdev;
pub mod ibdiagnet;
pub mod iblinkinfo;
pub mod ibstat;
pub mod ibstatus;
pub mod ibv_devinfo;
pub mod ip_addr;
pub mod ip_neigh;
pub mod ip_route;
pub mod iperf3;
pub mod lspci;
pub mod mlnx_qos;
pub mod nccl;
pub mod nvidia_smi_topo;
pub mod ofed_info;
pub mod perfquery;
pub mod perftest;
pub mod ping;
pub mod rdma_link;
pub mod rdma_statistic;
pub mod show_fec;
pub mod show_gids;
pub mod srun;
pub mod sysfs_net;

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

/// (KIND for `fabcheck parse`, Rhai function name in the `parse::` namespace, input description).
pub const KINDS: &[(&str, &str, &str)] = &[
    ("ethtool", "ethtool", "ethtool IFACE"),
    ("ethtool-driver", "ethtool_driver", "ethtool -i IFACE"),
    ("ethtool-stats", "ethtool_stats", "ethtool -S IFACE"),
    ("eee", "eee", "ethtool --show-eee IFACE"),
    ("bonding", "bonding", "/proc/net/bonding/BOND"),
    (
        "perftest",
        "perftest",
        "ib_write_bw / ib_read_bw / ib_send_bw / *_lat, client or server",
    ),
    (
        "nccl",
        "nccl",
        "nccl-tests *_perf text output or its -J JSON",
    ),
    ("iperf3", "iperf3", "iperf3 -J JSON"),
    ("ip-addr", "ip_addr", "ip -j addr"),
    ("ip-neigh", "ip_neigh", "ip -j neigh [show ADDR dev IFACE]"),
    ("ip-route", "ip_route", "ip -j route / ip -j -6 route"),
    ("ibdev2netdev", "ibdev2netdev", "ibdev2netdev"),
    ("rdma-link", "rdma_link", "rdma link"),
    ("ofed-info", "ofed_info", "ofed_info -s"),
    ("ping", "ping", "iputils ping"),
    ("ibv-devinfo", "ibv_devinfo", "ibv_devinfo [-v]"),
    (
        "rdma-statistic",
        "rdma_statistic",
        "rdma statistic show [link DEV/PORT] (the hw_counters)",
    ),
    ("show-gids", "show_gids", "show_gids"),
    ("lspci", "lspci", "lspci -vv [-s BUS]"),
    ("show-fec", "show_fec", "ethtool [-I] --show-fec IFACE"),
    ("mlnx-qos", "mlnx_qos", "mlnx_qos -i IFACE"),
    ("ethtool-module", "ethtool_module", "ethtool -m IFACE"),
    ("ibstat", "ibstat", "ibstat"),
    ("ibstatus", "ibstatus", "ibstatus"),
    (
        "perfquery",
        "perfquery",
        "perfquery [-x] [LID PORT] (classic or extended counters)",
    ),
    ("iblinkinfo", "iblinkinfo", "iblinkinfo"),
    ("ibdiagnet", "ibdiagnet", "ibdiagnet (its closing summary)"),
    (
        "nvidia-smi-topo",
        "nvidia_smi_topo",
        "nvidia-smi topo -m (or -mp)",
    ),
];

fn to_json<T: Serialize>(v: T) -> serde_json::Value {
    serde_json::to_value(v).expect("parser output is always serialisable")
}

/// Parse `text` as tool output of `kind`; unknown kinds are an error listing the known ones.
pub fn parse(kind: &str, text: &str) -> Result<serde_json::Value, ParseError> {
    match kind {
        "ethtool" => ethtool::parse(text).map(to_json),
        "ethtool-driver" => ethtool_driver::parse(text).map(to_json),
        "ethtool-stats" => ethtool_stats::parse(text).map(to_json),
        "eee" => eee::parse(text).map(to_json),
        "bonding" => bonding::parse(text).map(to_json),
        "perftest" => perftest::parse(text).map(to_json),
        "nccl" => nccl::parse(text).map(to_json),
        "iperf3" => iperf3::parse(text).map(to_json),
        "ip-addr" => ip_addr::parse(text).map(to_json),
        "ip-neigh" => ip_neigh::parse(text).map(to_json),
        "ip-route" => ip_route::parse(text).map(to_json),
        "ibdev2netdev" => ibdev2netdev::parse(text).map(to_json),
        "rdma-link" => rdma_link::parse(text).map(to_json),
        "ofed-info" => ofed_info::parse(text).map(to_json),
        "ping" => ping::parse(text).map(to_json),
        "ibv-devinfo" => ibv_devinfo::parse(text).map(to_json),
        "rdma-statistic" => rdma_statistic::parse(text).map(to_json),
        "show-gids" => show_gids::parse(text).map(to_json),
        "lspci" => lspci::parse(text).map(to_json),
        "show-fec" => show_fec::parse(text).map(to_json),
        "mlnx-qos" => mlnx_qos::parse(text).map(to_json),
        "ethtool-module" => ethtool_module::parse(text).map(to_json),
        "ibstat" => ibstat::parse(text).map(to_json),
        "ibstatus" => ibstatus::parse(text).map(to_json),
        "perfquery" => perfquery::parse(text).map(to_json),
        "iblinkinfo" => iblinkinfo::parse(text).map(to_json),
        "ibdiagnet" => ibdiagnet::parse(text).map(to_json),
        "nvidia-smi-topo" => nvidia_smi_topo::parse(text).map(to_json),
        _ => Err(ParseError::new(
            "unknown",
            0,
            kind,
            format!(
                "unknown KIND `{kind}`; known kinds: {}",
                KINDS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

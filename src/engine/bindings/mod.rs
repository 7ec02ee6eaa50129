//! The one place where primitives meet Rhai: script maps become typed option structs (unknown
//! keys refused with "did you mean"), typed results become script values, [`PrimError`]s become
//! test outcomes. Timeouts are not decided here: every option struct carries the call's own
//! `timeout` and the primitives apply the run's one policy (`RunEnv::command_timeout`).

mod aer;
pub(crate) mod api;
pub(crate) mod assertions;
mod at_once;
mod bonding;
pub(crate) mod diagnosis;
pub(crate) mod dry;
mod eee;
mod ethtool;
mod ethtool_driver;
mod ethtool_module;
mod ethtool_stats;
mod health;
mod ib_fabric;
mod ibdev2netdev;
mod ibstat;
mod ibv_devinfo;
mod ip_addr;
mod ip_neigh;
mod iperf3;
mod latency_outliers;
mod link_flaps;
mod localise;
mod lspci;
mod mlnx_qos;
mod nccl;
mod nccl_env;
mod net_state;
pub(crate) mod nodes;
mod nvidia_smi_q;
mod nvidia_smi_topo;
mod ofed_info;
mod options;
mod parse;
mod perfquery;
mod perftest;
mod ping;
mod print;
mod profile;
mod rail_alignment;
mod rdma_link;
pub(crate) mod record;
mod show_fec;
mod show_gids;
mod ssh_hop;
pub(crate) mod stash;
mod test_fns;
mod tools;
mod values;
mod version_drift;

pub(crate) use api::{decl, nested_kinds, reference, register_all as register};

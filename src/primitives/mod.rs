//! What scripts call on nodes, as plain Rust: typed options in, typed results (the parsers'
//! structs) out, [`PrimError`] on failure. No Rhai here: the engine's bindings convert script
//! maps into these option structs and results back into script values.
//!
//! Every command goes through [`RunEnv`](crate::run::env::RunEnv): the one timeout policy,
//! logged into the current test, dry runs printed instead of run.

pub(crate) mod bonding;
pub(crate) mod command;
pub(crate) mod counter_growth;
pub(crate) mod counter_policy;
pub(crate) mod discover;
pub(crate) mod eee;
pub(crate) mod error;
pub(crate) mod ethtool;
pub(crate) mod ethtool_driver;
pub(crate) mod ethtool_module;
pub(crate) mod ethtool_stats;
pub(crate) mod fw_release;
pub(crate) mod health;
pub(crate) mod ib_fabric;
pub(crate) mod ib_port_policy;
pub(crate) mod ibdev2netdev;
pub(crate) mod ibstat;
pub(crate) mod ibv_devinfo;
pub(crate) mod ip_addr;
pub(crate) mod ip_neigh;
pub(crate) mod latency_outliers;
pub(crate) mod localise;
pub(crate) mod lspci;
pub(crate) mod mlnx_qos;
pub(crate) mod nccl;
pub(crate) mod nccl_env;
pub(crate) mod net_state;
pub(crate) mod nvidia_smi_topo;
pub(crate) mod ofed_info;
pub(crate) mod pair;
pub(crate) mod perfquery;
pub(crate) mod ping;
pub(crate) mod ping_all;
pub(crate) mod profile;
pub(crate) mod rail_alignment;
pub(crate) mod rdma_link;
pub(crate) mod rdma_statistic;
pub(crate) mod show_fec;
pub(crate) mod show_gids;
pub(crate) mod ssh_hop;
pub(crate) mod tools;
pub(crate) mod version_drift;

pub(crate) use error::{PResult, PrimError};

use crate::inventory::Node;
use crate::run::env::RunEnv;
use crate::util::names;
use std::sync::Arc;

/// A node as scripts see it: its inventory entry and the run it belongs to.
#[derive(Clone)]
pub struct NodeRef {
    pub spec: Arc<Node>,
    pub env: Arc<RunEnv>,
}

impl NodeRef {
    pub fn new(spec: Node, env: &Arc<RunEnv>) -> NodeRef {
        NodeRef {
            spec: Arc::new(spec),
            env: env.clone(),
        }
    }
    pub fn name(&self) -> &str {
        &self.spec.name
    }
}

/// Refuse names that could smuggle shell syntax into a remote command.
pub(crate) fn check_name(what: &str, v: &str) -> PResult<()> {
    if names::valid_name(v) {
        Ok(())
    } else {
        Err(PrimError::error(format!(
            "refused {what} {v:?}: only letters, digits and - _ . : @ % are allowed (and no leading -)"
        )))
    }
}

pub(crate) fn check_addr(v: &str) -> PResult<()> {
    if names::valid_address(v) {
        Ok(())
    } else {
        Err(PrimError::error(format!(
            "refused address {v:?}: not an IP address or host name"
        )))
    }
}

pub(crate) fn check_program(v: &str) -> PResult<()> {
    if names::valid_program(v) {
        Ok(())
    } else {
        Err(PrimError::error(format!(
            "refused program {v:?}: a path of letters, digits and - _ . / +"
        )))
    }
}

/// Split an argument string into shell words, each from the safe character set.
pub(crate) fn arg_words(what: &str, s: &str) -> PResult<Vec<String>> {
    let words = shlex::split(s)
        .ok_or_else(|| PrimError::error(format!("{what} {s:?} is not a valid argument list")))?;
    if let Some(bad) = words.iter().find(|w| !names::valid_arg_word(w)) {
        return Err(PrimError::error(format!(
            "refused {what} word {bad:?}: only letters, digits and - _ = . : , / + @ are allowed"
        )));
    }
    Ok(words)
}

/// The program's name as a person calls it (`/x/no_such_perf` is `no_such_perf`).
pub(crate) fn program_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// The last `n` non-empty lines, joined by ` | `.
pub(crate) fn last_lines(s: &str, n: usize) -> String {
    let v: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    v[v.len().saturating_sub(n)..].join(" | ")
}

/// The last `n` lines as they are.
pub(crate) fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Parse tool output; a parse failure is an error naming the node, with the text as detail.
pub(crate) fn parsed<T>(
    node: &str,
    text: &str,
    f: impl FnOnce(&str) -> Result<T, crate::parse::ParseError>,
) -> PResult<T> {
    f(text).map_err(|e| {
        PrimError::error_with(format!("{node}: {e}"), crate::run::model::cap(text, 2000))
    })
}

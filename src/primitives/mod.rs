//! What scripts call on nodes, as plain Rust: typed options in, typed results (the parsers'
//! structs) out, [`PrimError`] on failure. No Rhai here: the engine's bindings convert script
//! maps into these option structs and results back into script values.
//!
//! Every command goes through [`RunEnv`](crate::run::env::RunEnv): the one timeout policy,
//! logged into the current test, dry runs printed instead of run.

pub(crate) mod aer;
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
pub(crate) mod link_flaps;
pub(crate) mod localise;
pub(crate) mod lspci;
pub(crate) mod mlnx_qos;
pub(crate) mod nccl;
pub(crate) mod nccl_env;
pub(crate) mod net_state;
pub(crate) mod nvidia_smi_q;
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
use crate::run::context::{Kept, TestLog};
use crate::run::env::RunEnv;
use crate::transport::{CmdOutput, CmdRequest, TransportError};
use crate::util::names;
use std::sync::Arc;
use std::time::Duration;

/// A node as scripts see it: its inventory entry, the run it belongs to, and the record of
/// the test it is used in (none outside a test, `fabcheck exec`): what a primitive records
/// (commands, lines, profiles, subjects) goes into that record, through [`NodeRef::exec`]
/// and [`NodeRef::keep`].
#[derive(Clone)]
pub struct NodeRef {
    pub spec: Arc<Node>,
    pub env: Arc<RunEnv>,
    pub log: Option<TestLog>,
}

impl NodeRef {
    pub fn new(spec: Node, env: &Arc<RunEnv>) -> NodeRef {
        NodeRef {
            spec: Arc::new(spec),
            env: env.clone(),
            log: None,
        }
    }
    pub fn name(&self) -> &str {
        &self.spec.name
    }
    /// The same node, its records going to `log`.
    pub fn recording_to(&self, log: Option<TestLog>) -> NodeRef {
        NodeRef {
            log,
            ..self.clone()
        }
    }
    /// The one timeout policy ([`RunEnv::command_timeout`]) for a command on this node.
    pub fn command_timeout(&self, explicit: Option<Duration>, work: Option<Duration>) -> Duration {
        self.env
            .command_timeout(&self.spec, explicit, work, self.log.as_ref())
    }
    /// Run `req` on this node, logged into the test ([`RunEnv::exec`]).
    pub fn exec(&self, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        self.env.exec(&self.spec, req, self.log.as_ref())
    }
    /// A read-only lookup that runs in a dry run too ([`RunEnv::exec_lookup`]).
    pub fn exec_lookup(&self, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        self.env.exec_lookup(&self.spec, req, self.log.as_ref())
    }
    /// `--dry-run`: note that the test needs `tool` on this node ([`RunEnv::need_tool`]).
    pub fn need_tool(&self, tool: &str) {
        self.env.need_tool(&self.spec, tool, self.log.as_ref());
    }
    /// Keep `k` in the test (nothing outside a test).
    pub(crate) fn keep(&self, k: Kept) {
        if let Some(l) = &self.log {
            l.keep(k);
        }
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
/// An output the transport cut (over 1 MiB: head and tail kept) reaches the parser without
/// the cut marker and the two partial lines at the cut, and a failure says it was cut.
pub(crate) fn parsed<T>(
    node: &str,
    text: &str,
    f: impl FnOnce(&str) -> Result<T, crate::parse::ParseError>,
) -> PResult<T> {
    let cut = crate::transport::capture::without_cut(text);
    let whole = cut.as_ref().map_or(text, |(t, _)| t.as_str());
    f(whole).map_err(|e| {
        let why = cut
            .as_ref()
            .map(|(_, n)| {
                format!(
                    " (the output was cut: the command printed more than fabcheck keeps of one \
                     output, 1 MiB as head and tail, and {} in its middle were left out, so it \
                     could not be read whole; --record DIR keeps all of it)",
                    crate::util::fmt::human_bytes(*n as f64)
                )
            })
            .unwrap_or_default();
        PrimError::error_with(
            format!("{node}: {e}{why}"),
            crate::run::model::cap(text, 2000),
        )
    })
}

#[cfg(test)]
mod cut_tests {
    use super::*;
    use crate::transport::capture::Capped;

    fn capped(text: &str) -> String {
        let mut c = Capped::default();
        c.push(text.as_bytes());
        c.into_string()
    }

    /// Issue 50 (low): the cut marker never reaches a parser as data, and a parser that cannot
    /// read a cut output says it was cut (a cut `ip -j addr` left a reachable node out).
    #[test]
    fn a_cut_output_is_said_cut_and_its_marker_is_never_data() {
        let lines: String = (0..200_000)
            .map(|i| format!("GPU {i}: NVIDIA H100\n"))
            .collect();
        let text = capped(&lines);
        assert!(text.contains("bytes of output cut here"));
        let got: Vec<String> =
            parsed("n1", &text, |t| Ok(t.lines().map(String::from).collect())).unwrap();
        assert!(
            got.iter()
                .all(|l| l.starts_with("GPU ") && l.ends_with("NVIDIA H100")),
            "a partial line or the marker was read"
        );
        // The real `ip -j addr` of a lab host, its interfaces repeated past 1 MiB.
        let real = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/lab/ip-j-addr-netns.json"),
        )
        .unwrap();
        let one = real.trim().trim_start_matches('[').trim_end_matches(']');
        let big = format!("[{}]", vec![one; 3000].join(","));
        assert!(big.len() > 1024 * 1024);
        let e = parsed("n1", &capped(&big), crate::parse::ip_addr::parse).unwrap_err();
        assert!(e.message.contains("the output was cut"), "{}", e.message);
        assert!(parsed("n1", &big, crate::parse::ip_addr::parse).is_ok());
    }
}

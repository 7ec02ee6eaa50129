//! The one place where primitives meet Rhai: script maps become typed option structs (unknown
//! keys refused with "did you mean"), typed results become script values, [`PrimError`]s become
//! test outcomes. Timeouts are not decided here: every option struct carries the call's own
//! `timeout` and the primitives apply the run's one policy (`RunEnv::command_timeout`).

mod cluster;
pub mod dry;
mod nccl_env;
mod nodes;
mod options;
mod pair;
mod tools;

pub use options::Opts;

use super::signal::{self, RhaiErr, SignalKind};
use crate::primitives::{Kind, NodeRef, PResult, PrimError};
use crate::run::env::RunEnv;
use rhai::{Array, Dynamic, Engine, Position};
use serde::Serialize;
use std::sync::Arc;

/// A primitive's error as the test's outcome.
pub fn signal_of(e: PrimError, pos: Position) -> RhaiErr {
    let kind = match e.kind {
        Kind::Failure => SignalKind::Failure,
        Kind::Error | Kind::DryRun => SignalKind::Error,
    };
    signal::throw(kind, e.message, e.detail, pos)
}

/// A primitive's typed result as a script value; a dry run gives its stand-in
/// ([`dry::DryValue`]).
pub fn value<T: Serialize>(r: PResult<T>, pos: Position) -> Result<Dynamic, RhaiErr> {
    value_with(r, pos, |v| rhai::serde::to_dynamic(v))
}

/// [`value`] with the script value made by `f`.
pub fn value_with<T>(
    r: PResult<T>,
    pos: Position,
    f: impl FnOnce(T) -> Result<Dynamic, RhaiErr>,
) -> Result<Dynamic, RhaiErr> {
    match r {
        Ok(v) => f(v),
        Err(e) if e.kind == Kind::DryRun => Ok(dry::stand_in(&e)),
        Err(e) => Err(signal_of(e, pos)),
    }
}

/// An array of nodes from a script (`nodes()`), or an error naming what else was found.
pub fn node_array(arr: Array, pos: Position) -> Result<Vec<NodeRef>, RhaiErr> {
    arr.into_iter()
        .map(|d| {
            let t = d.type_name();
            d.try_cast::<NodeRef>().ok_or_else(|| {
                signal::error(
                    format!(
                        "expected an array of nodes (from nodes()), found an element of type {t}"
                    ),
                    pos,
                )
            })
        })
        .collect()
}

pub fn register(engine: &mut Engine, env: Arc<RunEnv>) {
    dry::register(engine);
    nodes::register(engine, env);
    tools::register(engine);
    pair::register(engine);
    cluster::register(engine);
    nccl_env::register(engine);
}

/// For `fabcheck doc`: each primitive's options and the fields of what it returns (read from
/// the option lists above and the result types themselves).
pub fn reference() -> Vec<(&'static str, &'static [&'static str], Vec<String>)> {
    use crate::parse;
    use crate::primitives::{nccl, pair as ppair, ssh_hop, tools as ptools};
    fn fields<T: Serialize + Default>() -> Vec<String> {
        match serde_json::to_value(T::default()) {
            Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
            _ => vec![],
        }
    }
    fn run_fields() -> Vec<String> {
        ["stdout", "stderr", "exit_code", "duration_ms"]
            .map(String::from)
            .to_vec()
    }
    vec![
        ("n.run(cmd, opts)", nodes::RUN_OPTS, run_fields()),
        (
            "n.sh(cmd, opts)",
            nodes::RUN_OPTS,
            vec!["(stdout as a string)".into()],
        ),
        (
            "run_all(nodes, cmd, opts)",
            nodes::RUN_OPTS,
            vec!["(map: node name -> n.run result)".into()],
        ),
        ("n.ethtool(iface)", &[], fields::<parse::ethtool::Ethtool>()),
        (
            "n.ethtool_driver(iface)",
            &[],
            fields::<parse::ethtool_driver::EthtoolDriver>(),
        ),
        (
            "n.ethtool_stats(iface)",
            &[],
            fields::<parse::ethtool_stats::EthtoolStats>(),
        ),
        ("n.eee(iface)", &[], fields::<parse::eee::Eee>()),
        ("n.bond(name)", &[], fields::<parse::bonding::Bonding>()),
        ("n.addresses()", &[], fields::<parse::ip_addr::Interface>()),
        (
            "n.ibdev2netdev()",
            &[],
            fields::<parse::ibdev2netdev::Mapping>(),
        ),
        ("n.rdma_links()", &[], fields::<parse::rdma_link::Link>()),
        (
            "n.ofed_version()",
            &[],
            fields::<parse::ofed_info::OfedInfo>(),
        ),
        (
            "n.ping(ip, opts)",
            tools::PING_OPTS,
            fields::<ptools::PingResult>(),
        ),
        ("n.file_info(path)", &[], fields::<ptools::FileInfo>()),
        (
            "n.which(program, dirs)",
            &[],
            vec!["(path as a string; \"\" when not found)".into()],
        ),
        (
            "ib_write_bw(server, client, opts)",
            pair::PERFTEST_OPTS,
            fields::<ppair::PerftestResult>(),
        ),
        (
            "ib_write_bw_port(server, client, opts)",
            pair::PORT_OPTS,
            fields::<ppair::PortResult>(),
        ),
        (
            "iperf3(server, client, opts)",
            pair::IPERF3_OPTS,
            fields::<parse::iperf3::Iperf3>(),
        ),
        (
            "all_reduce_perf(nodes, opts)",
            cluster::NCCL_OPTS,
            fields::<nccl::NcclResult>(),
        ),
        (
            "ssh_hop(from, to, opts)",
            cluster::HOP_OPTS,
            fields::<ssh_hop::SshHop>(),
        ),
        (
            "metric(name, value, unit, opts)",
            crate::engine::assertions::METRIC_OPTS,
            vec![],
        ),
    ]
}

//! `all_reduce_perf`, `nccl_test`, `ssh_hop`.

use super::results::returns;
use super::{node_array, value, Opts};
use crate::engine::signal::RhaiErr;
use crate::primitives::nccl::{self, Launcher, NcclOpts};
use crate::primitives::ssh_hop::{self, SshHopOpts};
use crate::primitives::NodeRef;
use rhai::{Array, Dynamic, Engine, Map, NativeCallContext};

pub const NCCL_OPTS: &[&str] = &[
    "binary", "args", "env", "launcher", "np", "per_gpu", "hosts", "timeout",
];
pub const HOP_OPTS: &[&str] = &["strict_host_key", "timeout"];

fn nccl_test(
    ctx: &NativeCallContext,
    name: &str,
    nodes: Array,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let nodes = node_array(nodes, pos)?;
    let o = Opts::new(o, name, NCCL_OPTS, pos)?;
    let launcher = match o.str("launcher")? {
        Some(l) => Some(Launcher::parse(&l).map_err(|e| super::signal_of(e, pos))?),
        None => None,
    };
    let no = NcclOpts {
        binary: o.str("binary")?,
        args: o.str("args")?,
        env: o.env("env")?,
        launcher,
        np: o.int("np")?,
        per_gpu: o.bool("per_gpu")?,
        hosts: o.strings("hosts")?,
        timeout: o.duration("timeout")?,
    };
    value(
        nccl::nccl_test(name, &nodes, &no),
        returns("nccl_test"),
        pos,
    )
}

fn hop(
    ctx: &NativeCallContext,
    from: &NodeRef,
    to: &str,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let o = Opts::new(o, "ssh_hop", HOP_OPTS, pos)?;
    let ho = SshHopOpts {
        strict_host_key: o.bool("strict_host_key")?,
        timeout: o.duration("timeout")?,
    };
    value(ssh_hop::ssh_hop(from, to, &ho), returns("ssh_hop"), pos)
}

pub fn register(engine: &mut Engine) {
    engine.register_fn("all_reduce_perf", |ctx: NativeCallContext, nodes: Array| {
        nccl_test(&ctx, "all_reduce_perf", nodes, None)
    });
    engine.register_fn(
        "all_reduce_perf",
        |ctx: NativeCallContext, nodes: Array, o: Map| {
            nccl_test(&ctx, "all_reduce_perf", nodes, Some(o))
        },
    );
    engine.register_fn(
        "nccl_test",
        |ctx: NativeCallContext, name: &str, nodes: Array, o: Map| {
            nccl_test(&ctx, name, nodes, Some(o))
        },
    );
    engine.register_fn(
        "nccl_test",
        |ctx: NativeCallContext, name: &str, nodes: Array| nccl_test(&ctx, name, nodes, None),
    );
    engine.register_fn(
        "ssh_hop",
        |ctx: NativeCallContext, from: NodeRef, to: &str| hop(&ctx, &from, to, None),
    );
    engine.register_fn(
        "ssh_hop",
        |ctx: NativeCallContext, from: NodeRef, to: &str, o: Map| hop(&ctx, &from, to, Some(o)),
    );
}

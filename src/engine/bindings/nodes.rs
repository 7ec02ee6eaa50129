//! The `Node` type, `nodes()`, `node()`, `n.run`, `n.sh`, `run_all`, `allow_changes()`,
//! `simulated()`.

use super::results::returns;
use super::{node_array, value_with, Opts};
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::command::{self, RunOpts};
use crate::primitives::NodeRef;
use crate::run::env::RunEnv;
use crate::run::CmdOutput;
use rhai::{Array, Dynamic, Engine, Map, NativeCallContext, Position};
use std::sync::Arc;

pub const RUN_OPTS: &[&str] = &["timeout", "sudo", "env"];

fn run_opts(o: Option<Map>, what: &str, pos: Position) -> Result<RunOpts, RhaiErr> {
    let o = Opts::new(o, what, RUN_OPTS, pos)?;
    Ok(RunOpts {
        timeout: o.duration("timeout")?,
        sudo: o.bool("sudo")?,
        env: o.env("env")?,
    })
}

fn strings(v: &[String]) -> Array {
    v.iter().map(|s| Dynamic::from(s.clone())).collect()
}

/// `#{ stdout, stderr, exit_code, duration_ms }`.
pub fn result_map(o: &CmdOutput) -> Map {
    let mut m = Map::new();
    m.insert("stdout".into(), Dynamic::from(o.stdout.clone()));
    m.insert("stderr".into(), Dynamic::from(o.stderr.clone()));
    m.insert(
        "exit_code".into(),
        o.exit_code.map(Dynamic::from).unwrap_or(Dynamic::UNIT),
    );
    m.insert(
        "duration_ms".into(),
        Dynamic::from(o.duration.as_millis() as i64),
    );
    m
}

fn run(
    ctx: &NativeCallContext,
    n: &NodeRef,
    cmd: &str,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let o = run_opts(o, "run", pos)?;
    value_with(command::run(n, cmd, &o), returns("run"), pos, |r| {
        Ok(result_map(&r).into())
    })
}

fn sh(ctx: &NativeCallContext, n: &NodeRef, cmd: &str, o: Option<Map>) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let o = run_opts(o, "sh", pos)?;
    value_with(
        command::sh(n, cmd, &o),
        returns("sh"),
        pos,
        |s| Ok(s.into()),
    )
}

fn run_all(
    ctx: &NativeCallContext,
    nodes: Array,
    cmd: &str,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let nodes = node_array(nodes, pos)?;
    let o = run_opts(o, "run_all", pos)?;
    value_with(
        command::run_all(&nodes, cmd, &o),
        returns("run_all"),
        pos,
        |res| {
            Ok(Dynamic::from_map(
                res.into_iter()
                    .map(|(name, r)| (name.into(), Dynamic::from(result_map(&r))))
                    .collect(),
            ))
        },
    )
}

pub fn register(engine: &mut Engine, env: Arc<RunEnv>) {
    register_node_type(engine);
    register_selection(engine, env);
    register_commands(engine);
}

/// The `Node` type: its properties (`n.name`, `n.interfaces`, ...), printing, comparison.
fn register_node_type(engine: &mut Engine) {
    engine.register_type_with_name::<NodeRef>("Node");
    engine.register_get("name", |n: &mut NodeRef| n.spec.name.clone());
    engine.register_get("host", |n: &mut NodeRef| n.spec.host.clone());
    engine.register_get("user", |n: &mut NodeRef| -> Dynamic {
        n.spec
            .user
            .clone()
            .map(Dynamic::from)
            .unwrap_or(Dynamic::UNIT)
    });
    engine.register_get("interfaces", |n: &mut NodeRef| strings(&n.spec.interfaces));
    engine.register_get("fabric_ips", |n: &mut NodeRef| strings(&n.spec.fabric_ips));
    engine.register_get("rdma_devices", |n: &mut NodeRef| {
        strings(&n.spec.rdma_devices)
    });
    engine.register_get("vars", |n: &mut NodeRef| {
        rhai::serde::to_dynamic(&n.spec.vars).unwrap_or(Dynamic::UNIT)
    });
    engine.register_get("ports", |n: &mut NodeRef| {
        rhai::serde::to_dynamic(&n.spec.ports).unwrap_or(Dynamic::UNIT)
    });
    // The ports the pair primitives measure: the inventory's `ports`, else each RDMA device as
    // its own port (with the interface at the same index). One source for scripts and Rust.
    engine.register_get("fabric_ports", |n: &mut NodeRef| {
        rhai::serde::to_dynamic(crate::primitives::pair::all_port_specs(&n.spec))
            .unwrap_or(Dynamic::UNIT)
    });
    engine.register_fn("to_string", |n: &mut NodeRef| n.spec.name.clone());
    engine.register_fn("to_debug", |n: &mut NodeRef| {
        format!("node({})", n.spec.name)
    });
    engine.register_fn("==", |a: NodeRef, b: NodeRef| a.spec.name == b.spec.name);
    engine.register_fn("!=", |a: NodeRef, b: NodeRef| a.spec.name != b.spec.name);
}

/// `nodes()`, `nodes(sel)`, `inventory_nodes()`, `node(name)`, `allow_changes()`,
/// `simulated()`.
fn register_selection(engine: &mut Engine, env: Arc<RunEnv>) {
    let e = env.clone();
    engine.register_fn("nodes", move || -> Array {
        e.inventory
            .nodes
            .iter()
            .map(|n| Dynamic::from(NodeRef::new(n.clone(), &e)))
            .collect()
    });
    let e = env.clone();
    // Every node of the inventory, whatever -w selected: the ground truth of checks that
    // judge against the whole cluster (step 4's fabric addresses).
    engine.register_fn("inventory_nodes", move || -> Array {
        e.inventory
            .all_nodes()
            .map(|n| Dynamic::from(NodeRef::new(n.clone(), &e)))
            .collect()
    });
    let e = env.clone();
    engine.register_fn(
        "nodes",
        move |ctx: NativeCallContext, sel: &str| -> Result<Array, RhaiErr> {
            let found = e
                .inventory
                .select(sel)
                .map_err(|m| signal::error(m, ctx.call_position()))?;
            Ok(found
                .into_iter()
                .map(|n| Dynamic::from(NodeRef::new(n.clone(), &e)))
                .collect())
        },
    );
    let e = env.clone();
    engine.register_fn(
        "node",
        move |ctx: NativeCallContext, name: &str| -> Result<NodeRef, RhaiErr> {
            let n = e.inventory.node(name).ok_or_else(|| {
                let all: Vec<String> = e.inventory.nodes.iter().map(|n| n.name.clone()).collect();
                signal::error(
                    format!(
                        "node `{name}` is not in the inventory (it has {})",
                        crate::inventory::nodeset::fold(&all)
                    ),
                    ctx.call_position(),
                )
            })?;
            Ok(NodeRef::new(n.clone(), &e))
        },
    );
    let e = env.clone();
    engine.register_fn("allow_changes", move || e.allow_changes);
    let e = env;
    engine.register_fn("simulated", move || e.inventory.simulation.is_some());
}

/// `n.run`, `n.sh`, `run_all`.
fn register_commands(engine: &mut Engine) {
    engine.register_fn(
        "run",
        |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str| run(&ctx, n, cmd, None),
    );
    engine.register_fn(
        "run",
        |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str, o: Map| run(&ctx, n, cmd, Some(o)),
    );
    engine.register_fn(
        "sh",
        |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str| sh(&ctx, n, cmd, None),
    );
    engine.register_fn(
        "sh",
        |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str, o: Map| sh(&ctx, n, cmd, Some(o)),
    );
    engine.register_fn(
        "run_all",
        |ctx: NativeCallContext, nodes: Array, cmd: &str| run_all(&ctx, nodes, cmd, None),
    );
    engine.register_fn(
        "run_all",
        |ctx: NativeCallContext, nodes: Array, cmd: &str, o: Map| {
            run_all(&ctx, nodes, cmd, Some(o))
        },
    );
}

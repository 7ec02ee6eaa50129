//! The `Node` type, `nodes()`, `node()`, `n.run`, `n.sh`, `run_all`, `allow_changes()`,
//! `simulated()`.

use super::api::InTest;
use super::api::{Api, Binder, BINDINGS};
use super::options;
use super::values::{node_array, value_with};
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::command::{self, RunOpts};
use crate::primitives::NodeRef;
use crate::run::env::RunEnv;
use crate::run::CmdOutput;
use rhai::{Array, Dynamic, Engine, Map, NativeCallContext, Position};
use std::collections::BTreeMap;
use std::sync::Arc;

fn run_opts(o: Option<Map>, what: &str, pos: Position) -> Result<RunOpts, RhaiErr> {
    options::read(o, what, pos)
}

fn strings(v: &[String]) -> Array {
    v.iter().map(|s| Dynamic::from(s.clone())).collect()
}

/// `#{ stdout, stderr, exit_code, duration_ms }` (`transport::ScriptOutput`).
pub(super) fn result_map(o: &CmdOutput) -> Map {
    rhai::serde::to_dynamic(o.script_output())
        .ok()
        .and_then(|d| d.try_cast::<Map>())
        .unwrap_or_default()
}

fn run(
    ctx: &NativeCallContext,
    n: &NodeRef,
    cmd: &str,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let o = run_opts(o, "run", pos)?;
    value_with(command::run(n, cmd, &o), pos, |r| Ok(result_map(&r).into()))
}

fn sh(ctx: &NativeCallContext, n: &NodeRef, cmd: &str, o: Option<Map>) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let o = run_opts(o, "sh", pos)?;
    value_with(command::sh(n, cmd, &o), pos, |s| Ok(s.into()))
}

fn run_all(
    ctx: &NativeCallContext,
    nodes: Array,
    cmd: &str,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let nodes = node_array(ctx, nodes)?;
    let o = run_opts(o, "run_all", pos)?;
    let by_node = command::run_all(&nodes, cmd, &o).map(|v| v.into_iter().collect());
    value_with::<BTreeMap<String, CmdOutput>>(by_node, pos, |res| {
        Ok(Dynamic::from_map(
            res.into_iter()
                .map(|(name, r)| (name.into(), Dynamic::from(result_map(&r))))
                .collect(),
        ))
    })
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    register_node_type(api.engine());
    register_selection(api);
    register_commands(api);
}

/// The `Node` type's properties, sorted, as [`register_node_type`] registers them:
/// `fabcheck check` reports any other field written on a node (`n.interface`, with "did you
/// mean"; engine::typos). A property added below is added here.
pub(crate) const NODE_FIELDS: [&str; 9] = [
    "fabric_ips",
    "fabric_ports",
    "host",
    "interfaces",
    "name",
    "ports",
    "rdma_devices",
    "user",
    "vars",
];

/// What `fabcheck check` knows of a node: its fields ([`NODE_FIELDS`]).
pub(crate) fn node_shape() -> &'static crate::util::shape::Shape {
    static SHAPE: std::sync::OnceLock<crate::util::shape::Shape> = std::sync::OnceLock::new();
    SHAPE.get_or_init(|| crate::util::shape::Shape {
        name: "node",
        fields: NODE_FIELDS.iter().map(|f| f.to_string()).collect(),
        nested: vec![],
    })
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
fn register_selection(api: &mut Api) {
    let env = api.env.clone();
    api.function("nodes(selection)")
        .plain("an array of nodes")
        .doc("nodes of the inventory (as -w selected), or of a node set / @group")
        .register(|engine, name| register_nodes(engine, name, &env));
    // Every node of the inventory, whatever -w selected: the ground truth of checks that
    // judge against the whole cluster (step 4's fabric addresses).
    api.function("inventory_nodes()")
        .plain("an array of nodes")
        .doc("every node of the inventory, whatever -w selected: the ground truth of checks that judge against the whole cluster")
        .register(|engine, name| {
            let e = env.clone();
            engine.register_fn(name, move || -> Array {
                e.inventory
                    .all_nodes()
                    .map(|n| Dynamic::from(NodeRef::new(n.clone(), &e)))
                    .collect()
            });
        });
    api.function("node(name)")
        .plain("a node")
        .doc("one node by name")
        .register(|engine, name| register_node(engine, name, &env));
    api.function("allow_changes()")
        .plain("bool")
        .doc("true when --allow-changes was given")
        .register(|engine, name| {
            let e = env.clone();
            engine.register_fn(name, move || e.allow_changes);
        });
    api.function("simulated()")
        .plain("bool")
        .doc("true when the inventory is a simulated cluster")
        .register(|engine, name| {
            let e = env.clone();
            engine.register_fn(name, move || e.inventory.simulation.is_some());
        });
}

fn register_nodes(engine: &mut Engine, name: &str, env: &Arc<RunEnv>) {
    let e = env.clone();
    engine.register_fn(name, move || -> Array {
        e.inventory
            .nodes
            .iter()
            .map(|n| Dynamic::from(NodeRef::new(n.clone(), &e)))
            .collect()
    });
    let e = env.clone();
    engine.register_fn(
        name,
        move |ctx: NativeCallContext, sel: &str| -> Result<Array, RhaiErr> {
            let found = e
                .inventory
                .select(sel)
                .map_err(|m| signal::error(m.to_string(), ctx.call_position()))?;
            Ok(found
                .into_iter()
                .map(|n| Dynamic::from(NodeRef::new(n.clone(), &e)))
                .collect())
        },
    );
}

fn register_node(engine: &mut Engine, fname: &str, env: &Arc<RunEnv>) {
    let e = env.clone();
    engine.register_fn(
        fname,
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
}

/// `n.run`, `n.sh`, `run_all`.
fn register_commands(api: &mut Api) {
    api.method("n.run(cmd, opts)")
        .options::<RunOpts>()
        .returns::<CmdOutput>()
        .doc("run a command; a non-zero exit is data (`exit_code`), not a failure")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str| {
                    run(&ctx, &n.in_test(&ctx), cmd, None)
                },
            );
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str, o: Map| {
                    run(&ctx, &n.in_test(&ctx), cmd, Some(o))
                },
            );
        });
    api.method("n.sh(cmd, opts)")
        .options::<RunOpts>()
        .plain("stdout as a string")
        .doc("run a command and return its stdout; a non-zero exit fails the test (127, command not found: an error)")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str| sh(&ctx, &n.in_test(&ctx), cmd, None),
            );
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str, o: Map| {
                    sh(&ctx, &n.in_test(&ctx), cmd, Some(o))
                },
            );
        });
    api.function("run_all(nodes, cmd, opts)")
        .options::<RunOpts>()
        .returns::<BTreeMap<String, CmdOutput>>()
        .doc("n.run on every node concurrently: a map node name -> run result")
        .register(|engine, name| {
            engine.register_fn(name, |ctx: NativeCallContext, nodes: Array, cmd: &str| {
                run_all(&ctx, nodes, cmd, None)
            });
            engine.register_fn(
                name,
                |ctx: NativeCallContext, nodes: Array, cmd: &str, o: Map| {
                    run_all(&ctx, nodes, cmd, Some(o))
                },
            );
        });
}

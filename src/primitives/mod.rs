//! What scripts call on nodes: `nodes()`, `node()`, `n.run()`, `n.sh()`, `run_all()` and the
//! cluster primitives built on them. Every command goes through [`RunEnv::exec`]: bounded by a
//! timeout, logged into the current test, errors mapped to test errors naming the node.

pub mod cluster;
pub mod node_methods;
pub mod pair;

use crate::engine::context;
use crate::engine::signal::{self, RhaiErr};
use crate::inventory::{Inventory, Node, TransportKind};
use crate::report::model::{cap, CommandLog};
use crate::transport::{CmdOutput, CmdRequest, Transport, TransportError};
use rhai::{Array, Dynamic, Engine, Map, NativeCallContext, Position};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Transports by kind; `force` (from `--replay`) sends every node to one of them.
pub struct Transports {
    pub ssh: Arc<dyn Transport>,
    pub local: Arc<dyn Transport>,
    pub replay: Arc<dyn Transport>,
    pub force: Option<TransportKind>,
}

impl Transports {
    pub fn for_node(&self, n: &Node) -> &Arc<dyn Transport> {
        match self.force.as_ref().unwrap_or(&n.transport) {
            TransportKind::Ssh => &self.ssh,
            TransportKind::Local => &self.local,
            TransportKind::Replay => &self.replay,
        }
    }
    pub fn all(&self) -> [&Arc<dyn Transport>; 3] {
        [&self.ssh, &self.local, &self.replay]
    }
}

/// Everything a run shares: inventory, transports, parameters, safety switches.
pub struct RunEnv {
    pub inventory: Inventory,
    pub transports: Transports,
    pub params: Arc<BTreeMap<String, Dynamic>>,
    pub allow_changes: bool,
    pub dry_run: bool,
    pub fanout: usize,
    pub stdlib_dir: Option<PathBuf>,
    /// `--timeout`: caps every command (and is the default test timeout).
    pub timeout: Option<Duration>,
}

/// Capture kept per command in reports (head + tail).
const LOG_CAP: usize = 8 * 1024;

impl RunEnv {
    /// Run a command on a node (any thread). Dry runs print the command instead.
    pub fn run_raw(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        if self.dry_run {
            eprintln!("[dry-run] {}: {}", node.name, req.command);
            return Ok(CmdOutput {
                exit_code: Some(0),
                ..Default::default()
            });
        }
        self.transports.for_node(node).run(node, req)
    }

    /// The timeout for a command of the current test: the explicit one, else the node's
    /// command_timeout, capped by `--timeout` and by the time left in the test.
    pub fn command_timeout(&self, node: &Node, explicit: Option<Duration>) -> Duration {
        let mut t = explicit.unwrap_or(node.command_timeout);
        if let Some(cap) = self.timeout {
            t = t.min(cap);
        }
        t.min(context::remaining()).max(Duration::from_millis(100))
    }

    /// Run and log into the current test; transport problems become test errors.
    pub fn exec(&self, node: &Node, req: &CmdRequest, pos: Position) -> Result<CmdOutput, RhaiErr> {
        let res = self.run_raw(node, req);
        log_command(node, req, &res);
        res.map_err(|e| transport_error(e, pos))
    }
}

pub fn log_command(node: &Node, req: &CmdRequest, res: &Result<CmdOutput, TransportError>) {
    let entry = match res {
        Ok(o) => CommandLog {
            node: node.name.clone(),
            command: req.command.clone(),
            exit_code: o.exit_code,
            duration_ms: o.duration.as_millis() as u64,
            stdout: cap(&o.stdout, LOG_CAP),
            stderr: cap(&o.stderr, LOG_CAP),
            error: None,
        },
        Err(e) => CommandLog {
            node: node.name.clone(),
            command: req.command.clone(),
            exit_code: None,
            duration_ms: 0,
            stdout: String::new(),
            stderr: String::new(),
            error: Some(e.to_string()),
        },
    };
    if context::with(|c| c.commands.push(entry.clone())).is_none() {
        tracing::debug!(node = %entry.node, command = %entry.command, "command outside a test");
    }
}

pub fn transport_error(e: TransportError, pos: Position) -> RhaiErr {
    signal::error(e.to_string(), pos)
}

/// A node as scripts see it.
#[derive(Clone)]
pub struct NodeRef {
    pub spec: Arc<Node>,
    pub env: Arc<RunEnv>,
}

impl NodeRef {
    pub fn name(&self) -> &str {
        &self.spec.name
    }
}

fn strings(v: &[String]) -> Array {
    v.iter().map(|s| Dynamic::from(s.clone())).collect()
}

/// `n.run(cmd, #{ timeout, sudo, env })` options.
pub fn request_from_opts(
    env: &RunEnv,
    node: &Node,
    cmd: &str,
    opts: Option<&Map>,
    pos: Position,
) -> Result<CmdRequest, RhaiErr> {
    let mut explicit = None;
    let mut sudo = false;
    let mut vars = Vec::new();
    if let Some(o) = opts {
        for (k, v) in o {
            match k.as_str() {
                "timeout" => {
                    explicit = Some(if let Ok(i) = v.as_int() {
                        Duration::from_secs(i.max(0) as u64)
                    } else {
                        crate::inventory::parse_duration(&v.to_string())
                            .map_err(|e| signal::error(format!("run option timeout: {e}"), pos))?
                    })
                }
                "sudo" => {
                    sudo = v
                        .as_bool()
                        .map_err(|_| signal::error("run option sudo must be true or false", pos))?
                }
                "env" => {
                    let m = v.clone().try_cast::<Map>().ok_or_else(|| {
                        signal::error(
                            "run option env must be a map, e.g. env: #{ NCCL_DEBUG: \"INFO\" }",
                            pos,
                        )
                    })?;
                    for (ek, ev) in m {
                        if !ek.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                            || ek.is_empty()
                        {
                            return Err(signal::error(
                                format!("environment variable name `{ek}` is not valid"),
                                pos,
                            ));
                        }
                        vars.push((ek.to_string(), ev.to_string()));
                    }
                }
                other => {
                    return Err(signal::error(
                        format!("unknown run option `{other}`; options are timeout, sudo, env"),
                        pos,
                    ))
                }
            }
        }
    }
    Ok(CmdRequest {
        command: cmd.to_string(),
        timeout: env.command_timeout(node, explicit),
        env: vars,
        sudo,
    })
}

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

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// `n.sh(cmd)`: stdout, or the test fails with exit code and stderr tail (127: an error,
/// the command is missing).
pub fn sh(n: &NodeRef, cmd: &str, opts: Option<&Map>, pos: Position) -> Result<String, RhaiErr> {
    let req = request_from_opts(&n.env, &n.spec, cmd, opts, pos)?;
    let o = n.env.exec(&n.spec, &req, pos)?;
    match o.exit_code {
        Some(0) => Ok(o.stdout),
        Some(127) => Err(signal::error_with(
            format!("{}: `{cmd}`: command not found (exit 127)", n.name()),
            tail(&o.stderr, 10),
            pos,
        )),
        code => Err(signal::throw(
            signal::SignalKind::Failure,
            format!(
                "{}: `{cmd}` exited with {}{}",
                n.name(),
                code.map(|c| c.to_string()).unwrap_or("a signal".into()),
                match tail(&o.stderr, 1).trim() {
                    "" => String::new(),
                    t => format!(": {t}"),
                }
            ),
            Some(tail(&o.stderr, 20)),
            pos,
        )),
    }
}

/// Run on several nodes at once (up to the fan-out), results in node order.
pub fn run_many(
    env: &RunEnv,
    nodes: &[Arc<Node>],
    reqs: Vec<CmdRequest>,
) -> Vec<Result<CmdOutput, TransportError>> {
    let n = nodes.len();
    let slots: Vec<std::sync::Mutex<Option<Result<CmdOutput, TransportError>>>> =
        (0..n).map(|_| std::sync::Mutex::new(None)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..env.fanout.max(1).min(n) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if k >= n {
                    break;
                }
                let r = env.run_raw(&nodes[k], &reqs[k]);
                *slots[k].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|s| {
            s.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or_else(|| {
                    Err(TransportError::Other {
                        node: "?".into(),
                        message: "not run".into(),
                    })
                })
        })
        .collect()
}

fn node_array(ctx: &NativeCallContext, arr: Array) -> Result<Vec<NodeRef>, RhaiErr> {
    arr.into_iter()
        .map(|d| {
            let t = d.type_name();
            d.try_cast::<NodeRef>().ok_or_else(|| {
                signal::error(
                    format!(
                        "expected an array of nodes (from nodes()), found an element of type {t}"
                    ),
                    ctx.call_position(),
                )
            })
        })
        .collect()
}

pub fn register(engine: &mut Engine, env: Arc<RunEnv>) {
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
    engine.register_fn("to_string", |n: &mut NodeRef| n.spec.name.clone());
    engine.register_fn("to_debug", |n: &mut NodeRef| {
        format!("node({})", n.spec.name)
    });
    engine.register_fn("==", |a: NodeRef, b: NodeRef| a.spec.name == b.spec.name);
    engine.register_fn("!=", |a: NodeRef, b: NodeRef| a.spec.name != b.spec.name);

    let e = env.clone();
    engine.register_fn("nodes", move || -> Array {
        e.inventory
            .nodes
            .iter()
            .map(|n| {
                Dynamic::from(NodeRef {
                    spec: Arc::new(n.clone()),
                    env: e.clone(),
                })
            })
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
                .map(|n| {
                    Dynamic::from(NodeRef {
                        spec: Arc::new(n.clone()),
                        env: e.clone(),
                    })
                })
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
            Ok(NodeRef {
                spec: Arc::new(n.clone()),
                env: e.clone(),
            })
        },
    );
    let e = env.clone();
    engine.register_fn("allow_changes", move || e.allow_changes);
    let e = env.clone();
    engine.register_fn("simulated", move || e.inventory.simulation.is_some());

    engine.register_fn(
        "run",
        |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str| -> Result<Map, RhaiErr> {
            let req = request_from_opts(&n.env, &n.spec, cmd, None, ctx.call_position())?;
            Ok(result_map(&n.env.exec(
                &n.spec,
                &req,
                ctx.call_position(),
            )?))
        },
    );
    engine.register_fn(
        "run",
        |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str, opts: Map| -> Result<Map, RhaiErr> {
            let req = request_from_opts(&n.env, &n.spec, cmd, Some(&opts), ctx.call_position())?;
            Ok(result_map(&n.env.exec(
                &n.spec,
                &req,
                ctx.call_position(),
            )?))
        },
    );
    engine.register_fn(
        "sh",
        |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str| sh(n, cmd, None, ctx.call_position()),
    );
    engine.register_fn(
        "sh",
        |ctx: NativeCallContext, n: &mut NodeRef, cmd: &str, opts: Map| {
            sh(n, cmd, Some(&opts), ctx.call_position())
        },
    );
    fn run_all(
        ctx: &NativeCallContext,
        nodes: Array,
        cmd: &str,
        opts: Option<&Map>,
    ) -> Result<Map, RhaiErr> {
        let pos = ctx.call_position();
        let nodes = node_array(ctx, nodes)?;
        let Some(first) = nodes.first() else {
            return Ok(Map::new());
        };
        let env = first.env.clone();
        let specs: Vec<Arc<Node>> = nodes.iter().map(|n| n.spec.clone()).collect();
        let reqs = specs
            .iter()
            .map(|s| request_from_opts(&env, s, cmd, opts, pos))
            .collect::<Result<Vec<_>, _>>()?;
        let results = run_many(&env, &specs, reqs.clone());
        let mut out = Map::new();
        let mut errors = Vec::new();
        for ((spec, req), res) in specs.iter().zip(&reqs).zip(results) {
            log_command(spec, req, &res);
            match res {
                Ok(o) => {
                    out.insert(spec.name.as_str().into(), Dynamic::from(result_map(&o)));
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
        if !errors.is_empty() {
            return Err(signal::error_with(
                format!(
                    "run_all: {} of {} nodes failed: {}",
                    errors.len(),
                    specs.len(),
                    errors[0]
                ),
                errors.join("\n"),
                pos,
            ));
        }
        Ok(out)
    }
    node_methods::register(engine);
    pair::register(engine);
    cluster::register(engine);
    engine.register_fn(
        "run_all",
        |ctx: NativeCallContext, nodes: Array, cmd: &str| run_all(&ctx, nodes, cmd, None),
    );
    engine.register_fn(
        "run_all",
        |ctx: NativeCallContext, nodes: Array, cmd: &str, opts: Map| {
            run_all(&ctx, nodes, cmd, Some(&opts))
        },
    );
}

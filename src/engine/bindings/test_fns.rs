//! `test`, `test_each`, `test_pairs`: the script's top level registers tests (into the
//! [`Registry`] of `engine/testdef.rs`); the runner runs them later.

use super::api::{Api, Binder, BINDINGS};
use super::options;
use crate::engine::pair_plan::{self as pairs, Pattern};
use crate::engine::signal::{self, RhaiErr};
pub(super) use crate::engine::testdef::{SharedRegistry, TestDef};
use crate::primitives::NodeRef;
use crate::run::observer::{Event, Observer};
use rhai::{Array, Dynamic, Engine, FnPtr, Map, NativeCallContext};
use serde::de::IgnoredAny;
use std::sync::Arc;
use std::time::Duration;

/// A closure registered inside `for n in nodes { test(…, || … n …) }` captures `n`, and Rhai
/// shares one slot for the loop variable across iterations: every test would see the LAST
/// node (a verdict about the wrong node). Captured loop variables are copied when the test is
/// registered, so each test sees the value of its own iteration; other captured variables stay
/// shared (tests may pass state along, e.g. counters read before and after).
fn snapshot_loop_captures(
    ctx: &NativeCallContext,
    func: &mut FnPtr,
    call_args: usize,
    loop_vars: &std::collections::HashSet<String>,
) {
    let curried = func.curry().len();
    if curried == 0 || loop_vars.is_empty() {
        return;
    }
    let params: Option<Vec<String>> = ctx.iter_namespaces().find_map(|m| {
        m.get_script_fn(func.fn_name(), curried + call_args)
            .map(|d| d.params.iter().map(|p| p.to_string()).collect())
    });
    let Some(params) = params else { return };
    for (i, v) in func.iter_curry_mut().enumerate() {
        if v.is_shared() && params.get(i).is_some_and(|p| loop_vars.contains(p)) {
            *v = v.flatten_clone();
        }
    }
}

/// The options of `test` and `test_each`: the keys a script may give.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TestArgs {
    #[serde(deserialize_with = "crate::util::duration::optional")]
    timeout: Option<Duration>,
    tags: Vec<String>,
    retries: i64,
    confirm: i64,
    changes: bool,
}

/// The options of `test_pairs`: the test options and how the pairs are made (those are read
/// from the map by [`pairs_of`], with rules of their own: here only their names).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct PairArgs {
    #[serde(deserialize_with = "crate::util::duration::optional")]
    timeout: Option<Duration>,
    tags: Vec<String>,
    retries: i64,
    confirm: i64,
    changes: bool,
    pattern: IgnoredAny,
    both_directions: IgnoredAny,
    split: IgnoredAny,
    pairs: IgnoredAny,
    fanout: IgnoredAny,
    rounds: IgnoredAny,
    per_node: IgnoredAny,
}

impl From<PairArgs> for TestArgs {
    fn from(a: PairArgs) -> TestArgs {
        TestArgs {
            timeout: a.timeout,
            tags: a.tags,
            retries: a.retries,
            confirm: a.confirm,
            changes: a.changes,
        }
    }
}

#[derive(Default, Clone)]
struct TestOpts {
    timeout: Option<Duration>,
    tags: Vec<String>,
    retries: u32,
    confirm: u32,
    changes: bool,
    /// Why the options could not be read (the test ends as this error, alone).
    invalid: Option<String>,
}

fn parse_opts(map: &Map, pos: rhai::Position) -> TestOpts {
    parse_opts_with(map, pos, false)
}

/// Test options (`pairs`: of `test_pairs`, whose pattern options its caller reads itself).
/// An option that cannot be read makes the options `invalid`, not the script's top level
/// stop.
fn parse_opts_with(map: &Map, pos: rhai::Position, pairs: bool) -> TestOpts {
    read_opts(map, pos, pairs).unwrap_or_else(|e| {
        let message = match signal::classify(&e, "") {
            signal::Ending::Signal(s) => s.message,
            _ => e.to_string(),
        };
        let at = pos
            .line()
            .map(|l| format!(" at line {l}"))
            .unwrap_or_default();
        TestOpts {
            invalid: Some(format!("{message}{at} (the test did not run)")),
            ..TestOpts::default()
        }
    })
}

fn read_opts(map: &Map, pos: rhai::Position, pairs: bool) -> Result<TestOpts, RhaiErr> {
    let m = Some(map.clone());
    let a: TestArgs = if pairs {
        options::read::<PairArgs>(m, "test", pos)?.into()
    } else {
        options::read(m, "test", pos)?
    };
    let (lo, hi) = crate::run::settings::whole_range("confirm").unwrap_or((0, 10));
    if !(lo..=hi).contains(&a.confirm) {
        return Err(format!(
            "test option confirm: {}: re-measurements are a whole number from {lo} to {hi}",
            a.confirm
        )
        .into());
    }
    Ok(TestOpts {
        timeout: a.timeout,
        tags: a.tags,
        retries: a.retries.clamp(0, 100) as u32,
        confirm: a.confirm as u32,
        changes: a.changes,
        invalid: None,
    })
}

fn add(
    reg: &SharedRegistry,
    ctx: &NativeCallContext,
    name: &str,
    node: Option<NodeRef>,
    opts: TestOpts,
    mut func: FnPtr,
    group: Option<usize>,
) {
    let mut r = reg.lock().unwrap_or_else(|p| p.into_inner());
    snapshot_loop_captures(ctx, &mut func, usize::from(node.is_some()), &r.loop_vars);
    let unique = r.unique_name(name, node.as_ref().map(|n| n.name()));
    r.tests.push(TestDef {
        name: unique,
        node,
        func,
        timeout: opts.timeout,
        tags: opts.tags,
        retries: opts.retries,
        confirm: opts.confirm,
        changes: opts.changes,
        line: ctx.call_position().line(),
        group,
        peer: None,
        round: None,
        at_once: None,
        error: opts.invalid,
    });
}

fn each(
    reg: &SharedRegistry,
    ctx: &NativeCallContext,
    nodes: Array,
    name: &str,
    opts: TestOpts,
    func: FnPtr,
) -> Result<(), RhaiErr> {
    let group = reg.lock().unwrap_or_else(|p| p.into_inner()).new_group();
    for d in nodes {
        let Some(n) = d.clone().try_cast::<NodeRef>() else {
            return Err(signal::error(
                format!(
                    "test_each needs an array of nodes (from nodes()), got an element of type {}",
                    d.type_name()
                ),
                ctx.call_position(),
            ));
        };
        let label = format!("{name} [{}]", n.name());
        add(
            reg,
            ctx,
            &label,
            Some(n),
            opts.clone(),
            func.clone(),
            Some(group),
        );
    }
    Ok(())
}

/// `test_pairs(nodes, name, #{ pattern, … }, |a, b| …)`: one testcase `name [a -> b]` per pair,
/// registered round by round (each round a group that runs concurrently; rounds in order).
fn pairs_of(
    reg: &SharedRegistry,
    ctx: &NativeCallContext,
    nodes: Array,
    name: &str,
    map: Map,
    func: FnPtr,
) -> Result<(), RhaiErr> {
    let pos = ctx.call_position();
    let opts = parse_opts_with(&map, pos, true);
    let mut nodes: Vec<NodeRef> = super::values::node_array(ctx, nodes)?;
    // A node listed twice (a ring over overlapping sets) is one node: never paired with itself.
    let mut seen = std::collections::HashSet::new();
    nodes.retain(|n| seen.insert(n.name().to_string()));
    if nodes.len() < 2 {
        return too_few_nodes(reg, ctx, name, &nodes, opts);
    }
    let pattern = read_pattern(&map, &nodes, pos)?;
    let get = |k: &str| map.get(k).filter(|v| !v.is_unit());
    let fanout = match get("fanout") {
        Some(v) => v.as_int().ok().filter(|&i| i > 0).ok_or_else(|| {
            signal::error(
                format!("test_pairs option fanout must be a positive whole number, got {v}"),
                pos,
            )
        })? as usize,
        None => usize::MAX,
    };
    // Both directions by default (a bad TX lane shows one way only), except for given pairs.
    let explicit = matches!(pattern, Pattern::Explicit(_));
    let both = match get("both_directions") {
        Some(v) => v.as_bool().map_err(|_| {
            signal::error(
                format!("test_pairs option both_directions must be true or false, got {v}"),
                pos,
            )
        })?,
        None => !explicit,
    };
    let at_once = at_once_opts(&map, pos, fanout)?;
    let ps = pairs::pairs(nodes.len(), &pattern, both)
        .map_err(|e| signal::error(format!("test_pairs: {e}"), pos))?;
    // Together, the pairs still go in round order: each node's pairs spread over the run.
    let rounds = pairs::rounds(
        nodes.len(),
        &ps,
        if at_once.is_some() {
            usize::MAX
        } else {
            fanout
        },
    );
    let total = rounds.len();
    let mut group = 0;
    for (k, round) in rounds.into_iter().enumerate() {
        if k == 0 || at_once.is_none() {
            group = reg.lock().unwrap_or_else(|p| p.into_inner()).new_group();
        }
        for (a, b) in round {
            let (na, nb) = (nodes[a].clone(), nodes[b].clone());
            let label = format!("{name} [{} -> {}]", na.name(), nb.name());
            add(
                reg,
                ctx,
                &label,
                Some(na),
                opts.clone(),
                func.clone(),
                Some(group),
            );
            let mut r = reg.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(t) = r.tests.last_mut() {
                t.peer = Some(nb);
                t.round = at_once.is_none().then_some((k + 1, total));
                t.at_once = at_once;
            }
        }
    }
    Ok(())
}

/// The pairs of `test_pairs`' options: `pairs: [[a, b], …]` (members as nodes or names, among
/// `nodes`), else `pattern` (mesh by default; bisection with its `split`).
fn read_pattern(map: &Map, nodes: &[NodeRef], pos: rhai::Position) -> Result<Pattern, RhaiErr> {
    let index = |d: &Dynamic| -> Result<usize, RhaiErr> {
        let name = match d.clone().try_cast::<NodeRef>() {
            Some(n) => n.name().to_string(),
            None => d.to_string(),
        };
        nodes.iter().position(|n| n.name() == name).ok_or_else(|| {
            signal::error(
                format!("test_pairs: pair member `{name}` is not among the nodes given"),
                pos,
            )
        })
    };
    let get = |k: &str| map.get(k).filter(|v| !v.is_unit());
    Ok(match get("pairs") {
        Some(list) => {
            let list = list.clone().try_cast::<Array>().ok_or_else(|| {
                signal::error(
                    "test_pairs option pairs must be an array of [a, b] pairs",
                    pos,
                )
            })?;
            let mut v = Vec::new();
            for p in list {
                let p = p
                    .try_cast::<Array>()
                    .filter(|p| p.len() == 2)
                    .ok_or_else(|| {
                        signal::error(
                            "test_pairs option pairs must be an array of [a, b] pairs",
                            pos,
                        )
                    })?;
                v.push((index(&p[0])?, index(&p[1])?));
            }
            Pattern::Explicit(v)
        }
        None => {
            let kind = get("pattern")
                .map(|v| v.to_string())
                .unwrap_or_else(|| "mesh".into());
            match kind.as_str() {
                "ring" => Pattern::Ring,
                "mesh" => Pattern::Mesh,
                "bisection" => Pattern::Bisection {
                    split: match get("split") {
                        Some(v) => Some(v.as_int().ok().filter(|&i| i > 0).ok_or_else(|| {
                            signal::error(format!("test_pairs option split must be a positive whole number, got {v}"), pos)
                        })? as usize),
                        None => None,
                    },
                },
                other => {
                    return Err(signal::error(
                        format!(
                            "unknown test_pairs pattern `{other}`{}; patterns are ring, mesh, bisection (or pairs: [[a, b], …])",
                            crate::util::suggest::did_you_mean(other, ["ring", "mesh", "bisection"])
                        ),
                        pos,
                    ))
                }
            }
        }
    })
}

/// `rounds: false` (pairs that do not conflict run together) and its `per_node` limit.
fn at_once_opts(
    map: &Map,
    pos: rhai::Position,
    fanout: usize,
) -> Result<Option<pairs::AtOnce>, RhaiErr> {
    let get = |k: &str| map.get(k).filter(|v| !v.is_unit());
    let rounds = match get("rounds") {
        Some(v) => v.as_bool().map_err(|_| {
            signal::error(
                format!("test_pairs option rounds must be true or false, got {v}"),
                pos,
            )
        })?,
        None => true,
    };
    let per_node = match get("per_node") {
        Some(_) if rounds => return Err(signal::error(
            "test_pairs option per_node applies to pairs run together: add rounds: false (in rounds each node is in one pair at a time)",
            pos,
        )),
        Some(v) => v.as_int().ok().filter(|&i| i > 0).ok_or_else(|| {
            signal::error(
                format!("test_pairs option per_node must be a positive whole number, got {v}"),
                pos,
            )
        })? as usize,
        None => pairs::PER_NODE,
    };
    Ok((!rounds).then_some(pairs::AtOnce {
        per_node,
        max: fanout,
    }))
}

/// A pair check over fewer than two (distinct) nodes checks nothing: one error testcase that
/// says so, never a silent pass.
fn too_few_nodes(
    reg: &SharedRegistry,
    ctx: &NativeCallContext,
    name: &str,
    nodes: &[NodeRef],
    opts: TestOpts,
) -> Result<(), RhaiErr> {
    let names: Vec<&str> = nodes.iter().map(|n| n.name()).collect();
    let got = if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    };
    let func =
        FnPtr::new("test_pairs").map_err(|e| signal::error(e.to_string(), ctx.call_position()))?;
    add(reg, ctx, name, None, opts, func, None);
    let mut r = reg.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(t) = r.tests.last_mut() {
        t.error = Some(format!(
            "{name}: a pair check needs at least two distinct nodes; the selection has {} ({got}): nothing was checked (select two or more nodes)",
            names.len()
        ));
    }
    Ok(())
}

/// The deprecation of `test_pairs(nodes, name, f, opts)`.
const PAIRS_ORDER_DEPRECATED: &str = "test_pairs(nodes, name, f, opts) is deprecated: write test_pairs(nodes, name, opts, f), options before the closure as in test and test_each";

/// `test_pairs(nodes, name, f, opts)`, the order before options came first everywhere: still
/// runs, with a warning printed once per run (where it was first met).
fn deprecated_pairs_order(ctx: &NativeCallContext, observer: &dyn Observer) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let line = format!("{PAIRS_ORDER_DEPRECATED} (first at {})", signal::at(ctx));
        observer.event(&Event::Warning { line: &line });
    });
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    let reg = api.tests.clone();
    let observer = api.env.observer.clone();
    api.function("test_pairs(nodes, name, opts, f)")
        .options::<PairArgs>()
        .doc("one testcase `name [a -> b]` per pair of nodes (pattern mesh, ring or bisection, or the given pairs), both directions unless both_directions: false (given pairs: as given), run in rounds (each node in at most one pair per round), or with rounds: false all at once, at most per_node (8) pairs per node as first and as second (pings, ssh hops: checks that do not conflict); a node listed twice counts once; fewer than two nodes is one error testcase. test_pairs(nodes, name, |a, b| ...) or with opts before the closure, as test and test_each (opts after the closure still works, with a deprecation warning)")
        .register(|engine, name| register_pairs(engine, name, &reg, &observer));
    api.function("test(name, opts, f)")
        .options::<TestArgs>()
        .doc("register a test: test(name, f) or test(name, opts, f)")
        .register(|engine, name| register_test(engine, name, &reg));
    api.function("test_each(nodes, name, opts, f)")
        .options::<TestArgs>()
        .doc("one testcase `name [node]` per node, run concurrently: test_each(nodes, name, |n| ...) or with opts before the closure")
        .register(|engine, name| register_each(engine, name, &reg));
}

fn register_pairs(
    engine: &mut Engine,
    name: &str,
    reg: &SharedRegistry,
    observer: &Arc<dyn Observer>,
) {
    let r = reg.clone();
    engine.register_fn(
        name,
        move |ctx: NativeCallContext, nodes: Array, name: &str, f: FnPtr| {
            pairs_of(&r, &ctx, nodes, name, Map::new(), f)
        },
    );
    let r = reg.clone();
    engine.register_fn(
        name,
        move |ctx: NativeCallContext, nodes: Array, name: &str, opts: Map, f: FnPtr| {
            pairs_of(&r, &ctx, nodes, name, opts, f)
        },
    );
    let r = reg.clone();
    let o = observer.clone();
    engine.register_fn(
        name,
        move |ctx: NativeCallContext, nodes: Array, name: &str, f: FnPtr, opts: Map| {
            deprecated_pairs_order(&ctx, o.as_ref());
            pairs_of(&r, &ctx, nodes, name, opts, f)
        },
    );
}

fn register_test(engine: &mut Engine, name: &str, reg: &SharedRegistry) {
    let r = reg.clone();
    engine.register_fn(name, move |ctx: NativeCallContext, name: &str, f: FnPtr| {
        add(&r, &ctx, name, None, TestOpts::default(), f, None)
    });
    let r = reg.clone();
    engine.register_fn(
        name,
        move |ctx: NativeCallContext, name: &str, opts: Map, f: FnPtr| {
            let o = parse_opts(&opts, ctx.call_position());
            add(&r, &ctx, name, None, o, f, None);
        },
    );
}

fn register_each(engine: &mut Engine, name: &str, reg: &SharedRegistry) {
    let r = reg.clone();
    engine.register_fn(
        name,
        move |ctx: NativeCallContext, nodes: Array, name: &str, f: FnPtr| {
            each(&r, &ctx, nodes, name, TestOpts::default(), f)
        },
    );
    let r = reg.clone();
    engine.register_fn(
        name,
        move |ctx: NativeCallContext,
              nodes: Array,
              name: &str,
              opts: Map,
              f: FnPtr|
              -> Result<(), RhaiErr> {
            let o = parse_opts(&opts, ctx.call_position());
            each(&r, &ctx, nodes, name, o, f)
        },
    );
}

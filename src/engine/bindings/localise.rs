//! `localise_rings(nodes, rounds)`, `localise_rounds(pairs)` and `localise_infer(nodes, trials,
//! confirm)`: the pair plan, its rounds and the inference of `primitives::localise` (find the
//! bad node or link among many).

use super::api::{Api, Binder, BINDINGS};
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::localise::{self, Trial};
use crate::primitives::NodeRef;
use rhai::{Array, Dynamic, Map, NativeCallContext, Position};

/// Node names from an array of nodes or of names.
fn names(arr: Array, what: &str, pos: Position) -> Result<Vec<String>, RhaiErr> {
    arr.into_iter()
        .map(|d| {
            if d.is_string() {
                return Ok(d.to_string());
            }
            let t = d.type_name();
            d.try_cast::<NodeRef>()
                .map(|n| n.name().to_string())
                .ok_or_else(|| {
                    signal::error(
                        format!("{what}: expected an array of nodes or node names, found an element of type {t}"),
                        pos,
                    )
                })
        })
        .collect()
}

/// One `#{ a, b, ok, note }` of a script (a, b: nodes or names).
fn trial(d: Dynamic, pos: Position) -> Result<Trial, RhaiErr> {
    let bad = |why: &str| {
        signal::error(
            format!("localise_infer: each trial is #{{ a, b, ok, note }} (a, b: nodes or names; ok: bool); {why}"),
            pos,
        )
    };
    let t = d.type_name();
    let m = d
        .try_cast::<Map>()
        .ok_or_else(|| bad(&format!("found a {t}")))?;
    let end = |k: &str| -> Result<String, RhaiErr> {
        let v = m.get(k).ok_or_else(|| bad(&format!("`{k}` is missing")))?;
        Ok(names(vec![v.clone()], "localise_infer", pos)?.remove(0))
    };
    let ok = m
        .get("ok")
        .and_then(|v| v.as_bool().ok())
        .ok_or_else(|| bad("`ok` is missing or not a bool"))?;
    let note = m.get("note").map(|v| v.to_string()).unwrap_or_default();
    if let Some(k) = m
        .keys()
        .find(|k| !["a", "b", "ok", "note"].contains(&k.as_str()))
    {
        return Err(bad(&format!("unknown key `{k}`")));
    }
    Ok(Trial {
        a: end("a")?,
        b: end("b")?,
        ok,
        note: if note == "()" { String::new() } else { note },
    })
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("localise_rings(nodes, rounds)")
        .plain("array of [a, b] node names")
        .doc("the pairs of `rounds` shifted rings over the nodes (each node with the one 1, 2, ... places after it; each pair once): one ring covers every node twice in N tests")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, nodes: Array, rounds: i64| -> Result<Array, RhaiErr> {
                    let ns = names(nodes, "localise_rings", ctx.call_position())?;
                    Ok(localise::rings(&ns, rounds.max(1) as usize)
                        .into_iter()
                        .map(|(a, b)| Dynamic::from_array(vec![a.into(), b.into()]))
                        .collect())
                },
            );
        });
    api.function("localise_rounds(pairs)")
        .plain("array of rounds, each an array of indices into pairs")
        .doc("the pairs `[[a, b], ...]` in rounds in which no node is twice (each pair in the first round free of both its nodes, in order): a ring takes two rounds (three for an odd count); run a round's pairs at once with at_once")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, pairs: Array| -> Result<Array, RhaiErr> {
                    let pos = ctx.call_position();
                    let ps = pairs
                        .into_iter()
                        .map(|p| {
                            let t = p.type_name();
                            let two = p
                                .try_cast::<Array>()
                                .filter(|a| a.len() == 2)
                                .ok_or_else(|| {
                                    signal::error(
                                        format!("localise_rounds: each pair is [a, b] (nodes or names), found a {t}"),
                                        pos,
                                    )
                                })?;
                            let mut ns = names(two, "localise_rounds", pos)?;
                            let b = ns.pop().unwrap_or_default();
                            let a = ns.pop().unwrap_or_default();
                            Ok((a, b))
                        })
                        .collect::<Result<Vec<_>, RhaiErr>>()?;
                    Ok(localise::rounds(&ps)
                        .into_iter()
                        .map(|r| Dynamic::from_array(r.into_iter().map(|k| Dynamic::from(k as i64)).collect()))
                        .collect())
                },
            );
        });
    api.function("localise_infer(nodes, trials, confirm)")
        .plain("#{ retests, good, suspects, nodes, exclude, links, flaky, unresolved, evidence, tests }")
        .doc("what pair results `[#{ a, b, ok, note }]` prove: nodes that failed against `confirm` nodes proven good (`exclude`: their node set), links that failed twice between good nodes, flaky pairs, and the `retests` still needed (empty: done); see docs/scripts.md, localise")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext,
                 nodes: Array,
                 trials: Array,
                 confirm: i64|
                 -> Result<Dynamic, RhaiErr> {
                    let pos = ctx.call_position();
                    let ns = names(nodes, "localise_infer", pos)?;
                    let ts = trials
                        .into_iter()
                        .map(|d| trial(d, pos))
                        .collect::<Result<Vec<_>, _>>()?;
                    let v = localise::infer(&ns, &ts, confirm.max(1) as usize);
                    rhai::serde::to_dynamic(v)
                },
            );
        });
}

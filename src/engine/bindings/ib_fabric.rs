//! `ib_fabric_check(iblinkinfo_text, rate_gbps, from, plan_text, plan_source)` and
//! `ib_spine_pairs(iblinkinfo_text, nodes, shift)`
//! (`primitives::ib_fabric`, pure; the plan parsed by `parse::ib_cabling_plan`).

use super::api::{Api, Binder, BINDINGS};
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::ib_fabric;
use rhai::{Dynamic, NativeCallContext};

fn check(
    ctx: &NativeCallContext,
    text: &str,
    rate_gbps: f64,
    from: &str,
    plan: &str,
    source: &str,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let c = ib_fabric::check_texts(text, rate_gbps, from, plan, source)
        .map_err(|e| signal::error(e.message, pos))?;
    rhai::serde::to_dynamic(c).map_err(|e| signal::error(e.to_string(), pos))
}

#[derive(serde::Deserialize)]
struct NodeHcas {
    name: String,
    hcas: Vec<String>,
}

fn spine_pairs(
    ctx: &NativeCallContext,
    text: &str,
    nodes: rhai::Array,
    shift: i64,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let nodes: Vec<NodeHcas> =
        rhai::serde::from_dynamic(&Dynamic::from_array(nodes)).map_err(|e| {
            signal::error(
                format!("ib_spine_pairs: nodes must be [#{{ name, hcas: [..] }}]: {e}"),
                pos,
            )
        })?;
    let nodes: Vec<(String, Vec<String>)> = nodes.into_iter().map(|n| (n.name, n.hcas)).collect();
    let p = ib_fabric::spine_pairs_text(text, &nodes, shift.max(0) as usize)
        .map_err(|e| signal::error(e.message, pos))?;
    rhai::serde::to_dynamic(p).map_err(|e| signal::error(e.to_string(), pos))
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("ib_fabric_check(iblinkinfo_text, rate_gbps, from, plan_text, plan_source)")
        .plain("#{ switch_links, leaves, spines, uplinks, planned, plan_format, problems: [#{ message, part }], notes }")
        .doc("the switches' side of one iblinkinfo sweep: every switch-to-switch cable Active/LinkUp at 4X and rate_gbps (from: where that rate comes from), each leaf's uplinks against the other leaves', and every cable of a cabling plan (plan_text: the site's `SWITCH:PORT <-> SWITCH:PORT|HOST:HCA` lines, or a saved ibnetdiscover output, the whole fabric, where an Active cable it does not list is a problem too; \"\": none) where it lands; a Down port no planned cable uses is not a problem")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext,
                 text: &str,
                 rate: f64,
                 from: &str,
                 plan: &str,
                 source: &str| check(&ctx, text, rate, from, plan, source),
            );
        });
    api.function("ib_spine_pairs(iblinkinfo_text, nodes, shift)")
        .plain("#{ pairs: [[client, server]], groups: [[names]], pods, unknown, notes }")
        .doc("pairs for traffic across the spine from one iblinkinfo sweep: nodes ([#{ name, hcas }], HCAs in rail order) whose HCAs share a leaf are one group (a scalable unit), groups whose leaves reach a common spine one pod; node i of the nodes ordered by pod, group and inventory is paired with node i + N/2, so that every pair crosses pods and groups where none holds more than half the nodes (O(N) pairs, each node once one way); unknown says why when the sweep does not place a node's HCAs (pairs empty); notes name pairs within a group and flows whose client HCA k and server HCA k+shift share a leaf")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, text: &str, nodes: rhai::Array, shift: i64| {
                    spine_pairs(&ctx, text, nodes, shift)
                },
            );
        });
}

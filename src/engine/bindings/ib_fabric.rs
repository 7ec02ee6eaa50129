//! `ib_fabric_check(iblinkinfo_text, rate_gbps, from, plan_text, plan_source)`
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

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("ib_fabric_check(iblinkinfo_text, rate_gbps, from, plan_text, plan_source)")
        .plain("#{ switch_links, leaves, spines, uplinks, planned, problems: [#{ message, part }], notes }")
        .doc("the switches' side of one iblinkinfo sweep: every switch-to-switch cable Active/LinkUp at 4X and rate_gbps (from: where that rate comes from), each leaf's uplinks against the other leaves', and every cable of a cabling plan (plan_text, `SWITCH:PORT <-> SWITCH:PORT|HOST:HCA` lines; \"\": none) where it lands; a Down port no planned cable uses is not a problem")
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
}

//! `n.profile()` and `n.expect(key)` / `n.expect(key, hardware)`: the node's platform profile
//! and what a check should expect there (primitives::profile, docs/profiles.md).

use super::results::returns;
use super::value;
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::{profile, NodeRef};
use rhai::{Dynamic, Engine, NativeCallContext};

fn expect(
    ctx: &NativeCallContext,
    n: &NodeRef,
    key: &str,
    hardware: Dynamic,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let hw: serde_json::Value = rhai::serde::from_dynamic(&hardware).map_err(|e| {
        signal::error(
            format!("n.expect({key:?}, value): the hardware value is not a plain value ({e})"),
            pos,
        )
    })?;
    value(profile::expect(n, key, hw), returns("expect"), pos)
}

pub fn register(engine: &mut Engine) {
    let r = returns("profile");
    engine.register_fn("profile", move |ctx: NativeCallContext, n: &mut NodeRef| {
        value(profile::profile(n), r, ctx.call_position())
    });
    let r = returns("link_layer");
    engine.register_fn(
        "link_layer",
        move |ctx: NativeCallContext, n: &mut NodeRef| {
            value(profile::link_layer(n), r, ctx.call_position())
        },
    );
    engine.register_fn(
        "expect",
        |ctx: NativeCallContext, n: &mut NodeRef, key: &str| expect(&ctx, n, key, Dynamic::UNIT),
    );
    engine.register_fn(
        "expect",
        |ctx: NativeCallContext, n: &mut NodeRef, key: &str, hw: Dynamic| expect(&ctx, n, key, hw),
    );
}

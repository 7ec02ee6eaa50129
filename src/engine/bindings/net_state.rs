//! `n.net_state()` and `net_state_diff(before, after)` (`primitives::net_state`): the node's
//! running network before and after a change, and what differs.

use super::results::returns;
use super::{dry, record, value};
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::net_state::{self, NetState};
use crate::primitives::NodeRef;
use rhai::{Dynamic, Engine, NativeCallContext, Position};

/// A snapshot back from the script (a typed result, or its `to_map()` copy).
fn snapshot(v: &Dynamic, what: &str, pos: Position) -> Result<NetState, RhaiErr> {
    let plain = record::as_map(v).unwrap_or_else(|| v.clone());
    rhai::serde::from_dynamic(&plain).map_err(|e| {
        signal::error(
            format!("net_state_diff: {what} is not an n.net_state() result ({e})"),
            pos,
        )
    })
}

pub fn register(engine: &mut Engine) {
    let r = returns("net_state");
    engine.register_fn(
        "net_state",
        move |ctx: NativeCallContext, n: &mut NodeRef| {
            value(net_state::net_state(n), r, ctx.call_position())
        },
    );
    let r = returns("net_state_diff");
    engine.register_fn(
        "net_state_diff",
        move |ctx: NativeCallContext, before: Dynamic, after: Dynamic| {
            let pos = ctx.call_position();
            if dry::is(&before) || dry::is(&after) {
                let e = crate::primitives::PrimError::dry_run(
                    "the node",
                    "net_state_diff(before, after)",
                );
                return Ok(dry::stand_in(&e, r));
            }
            let b = snapshot(&before, "before", pos)?;
            let a = snapshot(&after, "after", pos)?;
            value(Ok(net_state::net_state_diff(&b, &a)), r, pos)
        },
    );
}

//! `n.link_flaps(before)`: `primitives::link_flaps`, over `parse::dmesg`.

use super::api::InTest;
use super::api::{Api, Binder, BINDINGS};
use super::record;
use super::values::value;
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::link_flaps::{self, Mark};
use crate::primitives::NodeRef;
use rhai::{Dynamic, NativeCallContext};

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

/// `before`: `()` (no earlier reading) or an earlier result's `mark`.
fn flaps(ctx: NativeCallContext, n: &mut NodeRef, before: Dynamic) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let before: Option<Mark> = if before.is_unit() {
        None
    } else {
        let plain = record::as_map(&before).unwrap_or(before);
        Some(rhai::serde::from_dynamic(&plain).map_err(|e| {
            signal::error(
                format!("n.link_flaps(before): before is () or an earlier result's mark ({e})"),
                pos,
            )
        })?)
    };
    value(link_flaps::link_flaps(&n.in_test(&ctx), before), pos)
}

fn register(api: &mut Api) {
    api.method("n.link_flaps(before)")
        .returns::<link_flaps::LinkFlaps>()
        .doc("the link flaps of each fabric netdev since `before` (an earlier result's `mark`; `()`: since boot), from the kernel log's link lines (`dmesg`)")
        .register(|engine, name| {
            engine.register_fn(name, flaps);
        });
}

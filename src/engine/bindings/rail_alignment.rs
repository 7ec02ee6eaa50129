//! `rail_alignment(rows)`: `primitives::rail_alignment` (which rails land on another rail's
//! switch).

use super::api::{Api, Binder, BINDINGS};
use super::record;
use super::values::value;
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::rail_alignment::{self, Crossed, Landing};
use crate::primitives::PResult;
use rhai::{Array, Dynamic, NativeCallContext};

fn crossed(ctx: &NativeCallContext, rows: Array) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let mut v = Vec::with_capacity(rows.len());
    for r in &rows {
        let plain = record::as_map(r).unwrap_or_else(|| r.clone());
        let row: Landing = rhai::serde::from_dynamic(&plain).map_err(|e| {
            signal::error(
                format!("rail_alignment: each row is #{{ node, rail, device, switch_name, port }} ({e}): {r}"),
                pos,
            )
        })?;
        v.push(row);
    }
    let x: PResult<Vec<Crossed>> = Ok(rail_alignment::crossed(&v));
    value(x, pos)
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("rail_alignment(rows)")
        .returns::<Vec<Crossed>>()
        .doc("rails on another rail's switch: rows #{ node, rail (0-based), device, switch_name, port } say where each rail's cable ends; rail k's switch is the one most nodes' rail k land on (at least two, more than any other); returns the crossed rails with `switch_of_rail` and the `expected` switch. A fabric on one switch, or split by node, returns none")
        .register(|engine, name| {
            engine.register_fn(name, |ctx: NativeCallContext, rows: Array| {
                crossed(&ctx, rows)
            });
        });
}

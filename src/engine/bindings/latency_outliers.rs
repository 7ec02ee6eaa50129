//! `latency_outliers(rows, factor)` (`primitives::latency_outliers`, pure).

use super::api::{Api, Binder, BINDINGS};
use super::values::number;
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::latency_outliers::latency_outliers;
use rhai::{Array, Dynamic, NativeCallContext};

fn outliers(ctx: &NativeCallContext, rows: Array, factor: f64) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let mut v = Vec::with_capacity(rows.len());
    for r in &rows {
        let m = r
            .clone()
            .try_cast::<rhai::Map>()
            .or_else(|| super::record::as_map(r).and_then(|d| d.try_cast::<rhai::Map>()));
        let (Some(name), Some(usec)) = (
            m.as_ref()
                .and_then(|m| m.get("pair"))
                .map(|d| d.to_string()),
            m.as_ref().and_then(|m| m.get("usec")).and_then(number),
        ) else {
            return Err(signal::error(
                format!("latency_outliers: each row is #{{ pair, usec }} (usec a number): {r}"),
                pos,
            ));
        };
        v.push((name, usec));
    }
    let out: Array = latency_outliers(&v, factor)
        .into_iter()
        .map(Dynamic::from)
        .collect();
    Ok(out.into())
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("latency_outliers(rows, factor)")
        .plain("array of messages")
        .doc("rows #{ pair, usec }: each pair above factor (default 2) x the median of all pairs and at least 1 usec above it, named with its latency and the median; fewer than three pairs: none")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, rows: Array, factor: f64| outliers(&ctx, rows, factor),
            );
            engine.register_fn(name, |ctx: NativeCallContext, rows: Array| {
                outliers(&ctx, rows, 2.0)
            });
        });
}

//! InfiniBand (`primitives::infiniband`): `n.ib_ports()`, `n.ib_port_check(rate)`,
//! `n.ib_counters()`, `n.gpu_topology()`, `latency_outliers(rows, factor)`.

use super::results::returns;
use super::value;
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::infiniband::{self as ib, PortExpect};
use crate::primitives::{NodeRef, PResult};
use rhai::{Array, Dynamic, Engine, NativeCallContext};

fn port_check(n: &NodeRef, rate: Option<f64>) -> PResult<Vec<ib::PortCheck>> {
    let ports = ib::ib_ports(n)?;
    Ok(ports
        .iter()
        .map(|p| ib::check_port(n.name(), p, PortExpect { rate }))
        .collect())
}

fn number(d: &Dynamic) -> Option<f64> {
    d.as_float()
        .ok()
        .or_else(|| d.as_int().ok().map(|i| i as f64))
}

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
    let out: Array = ib::latency_outliers(&v, factor)
        .into_iter()
        .map(Dynamic::from)
        .collect();
    Ok(out.into())
}

pub fn register(engine: &mut Engine) {
    let r = returns("ib_ports");
    engine.register_fn(
        "ib_ports",
        move |ctx: NativeCallContext, n: &mut NodeRef| {
            value(ib::ib_ports(n), r, ctx.call_position())
        },
    );
    let r = returns("ib_port_check");
    engine.register_fn(
        "ib_port_check",
        move |ctx: NativeCallContext, n: &mut NodeRef| {
            value(port_check(n, None), r, ctx.call_position())
        },
    );
    engine.register_fn(
        "ib_port_check",
        move |ctx: NativeCallContext, n: &mut NodeRef, rate: Dynamic| {
            value(port_check(n, number(&rate)), r, ctx.call_position())
        },
    );
    let r = returns("ib_counters");
    engine.register_fn(
        "ib_counters",
        move |ctx: NativeCallContext, n: &mut NodeRef| {
            value(ib::ib_counters(n), r, ctx.call_position())
        },
    );
    let r = returns("gpu_topology");
    engine.register_fn(
        "gpu_topology",
        move |ctx: NativeCallContext, n: &mut NodeRef| {
            value(ib::gpu_topology(n), r, ctx.call_position())
        },
    );
    engine.register_fn(
        "latency_outliers",
        |ctx: NativeCallContext, rows: Array, factor: f64| outliers(&ctx, rows, factor),
    );
    engine.register_fn("latency_outliers", |ctx: NativeCallContext, rows: Array| {
        outliers(&ctx, rows, 2.0)
    });
}

//! InfiniBand (`primitives::infiniband`): `n.ib_ports()`, `n.ib_port_check(rate)`,
//! `n.ib_counters()`, `n.gpu_topology()`, `latency_outliers(rows, factor)`.

use super::api::{Api, Binder, BINDINGS};
use super::values::value;
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::infiniband::{self as ib, PortExpect};
use crate::primitives::{NodeRef, PResult};
use rhai::{Array, Dynamic, NativeCallContext};

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

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ib_ports()")
        .doc("every HCA port of the node from `ibstat`, flat: device, port, state, phys_state, rate (Gb/s), base_lid, sm_lid, link_layer, ca_type, fw_ver")
        .node0(ib::ib_ports);
    api.method("n.ib_port_check(rate)")
        .returns::<Vec<ib::PortCheck>>()
        .doc("the InfiniBand port check of every HCA port (`ibstat`): State Active, Physical state LinkUp, rate at least `rate` Gb/s (() or omitted: not judged), a LID and a subnet manager (SM LID not 0); ports whose link layer is not InfiniBand get infiniband: false and no problem (RoCE checks apply)")
        .register(|engine, name| {
            engine.register_fn(name, |ctx: NativeCallContext, n: &mut NodeRef| {
                value(port_check(n, None), ctx.call_position())
            });
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, rate: Dynamic| {
                    value(port_check(n, number(&rate)), ctx.call_position())
                },
            );
        });
    api.method("n.ib_counters()")
        .doc("a health_counters snapshot of the node's InfiniBand ports (`perfquery -x -C DEV -P PORT`): error counters must not grow, PortXmitWait recorded; compare two with counter_growth")
        .node0(ib::ib_counters);
    api.method("n.gpu_topology()")
        .doc("`nvidia-smi topo -m` parsed: the matrix, and per GPU its nearest NIC relation and the NICs at it (by device name from the NIC legend)")
        .node0(ib::gpu_topology);
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

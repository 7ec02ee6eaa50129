//! `majority(values)` and `version_drift(rows, fail_items)` (`primitives::version_drift`):
//! one table of versions across nodes.

use super::api::{Api, Binder, BINDINGS};
use super::record;
use super::values::value;
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::fw_release;
use crate::primitives::version_drift::{self, Version};
use crate::primitives::PResult;
use rhai::{Array, Dynamic, NativeCallContext};

fn strings(a: &Array) -> Vec<String> {
    a.iter().map(|d| d.to_string()).collect()
}

fn drift(ctx: &NativeCallContext, rows: Array, fail_items: Array) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let mut v = Vec::with_capacity(rows.len());
    for r in &rows {
        let plain = record::as_map(r).unwrap_or_else(|| r.clone());
        let row: Version = rhai::serde::from_dynamic(&plain).map_err(|e| {
            signal::error(
                format!("version_drift: each row is #{{ node, item, value }} ({e}): {r}"),
                pos,
            )
        })?;
        v.push(row);
    }
    // The odd nodes' parts (node and device) are named by the check that knows the devices
    // (stdlib health::drift_against).
    let d: PResult<_> = Ok(version_drift::version_drift(&v, &strings(&fail_items)));
    value(d, pos)
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("majority(values)")
        .plain("the value more than half have, else ()")
        .doc("the value that more than half of the values have, else ()")
        .register(|engine, name| {
            engine.register_fn(name, |values: Array| -> Dynamic {
                version_drift::majority(&strings(&values)).map_or(Dynamic::UNIT, Dynamic::from)
            });
        });
    api.function("fw_release(driver_version, firmware, kernel)")
        .returns::<fw_release::FwRelease>()
        .doc("the NIC firmware against NVIDIA's release table for the running driver (ethtool -i's version and firmware-version, the node's uname -r): verdict `ok`, `outside` (another firmware stream than the driver's DOCA release bundles) or `unknown` (inbox driver, a stream or family not in the table), and a note naming both versions")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, driver: &str, firmware: &str, kernel: &str| {
                    let r: PResult<_> = Ok(fw_release::fw_release(driver, firmware, kernel));
                    value(r, ctx.call_position())
                },
            );
        });
    api.function("version_drift(rows, fail_items)")
        .returns::<version_drift::Drift>()
        .doc("one table of versions across nodes: items in fail_items that differ fail, others warn; names the majority value and each odd node")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, rows: Array, fail_items: Array| {
                    drift(&ctx, rows, fail_items)
                },
            );
        });
}

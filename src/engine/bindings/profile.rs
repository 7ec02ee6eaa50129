//! `n.profile()` and `n.expect(key)` / `n.expect(key, hardware)`: the node's platform profile
//! and what a check should expect there (primitives::profile, docs/profiles.md).

use super::api::InTest;
use super::api::{Api, Binder, BINDINGS};
use super::values::value;
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::{profile, NodeRef};
use rhai::{Dynamic, NativeCallContext};
use serde_json::Value;

fn plain(key: &str, what: &str, v: &Dynamic, pos: rhai::Position) -> Result<Value, RhaiErr> {
    rhai::serde::from_dynamic(v).map_err(|e| {
        signal::error(
            format!("n.expect({key:?}, ...): the {what} is not a plain value ({e})"),
            pos,
        )
    })
}

/// `part`: `()`, or `#{ value, from }`, the part's own inventory field and where it is.
fn expect(
    ctx: &NativeCallContext,
    n: &NodeRef,
    key: &str,
    hardware: Dynamic,
    part: Dynamic,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let hw = plain(key, "hardware value", &hardware, pos)?;
    let part = match plain(key, "inventory value", &part, pos)? {
        Value::Null => None,
        Value::Object(m) => {
            let from = m.get("from").and_then(Value::as_str).unwrap_or_default();
            Some((m.get("value").cloned().unwrap_or_default(), from.to_string()))
        }
        v => {
            return Err(signal::error(
                format!("n.expect({key:?}, hardware, inventory): the inventory value is #{{ value, from }}, not {v}"),
                pos,
            ))
        }
    };
    value(profile::expect(n, key, part, hw), pos)
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.profile()")
        .doc("the node's platform profile (`dgx-spark`, `dgx-h100-class`, else `generic` with known: false), detected once per run from the DMI product name, the GPU names (nvidia-smi) and the RDMA adapters' PCIe paths (sysfs), and the reason; every report shows it (docs/profiles.md)")
        .node0(profile::profile);
    api.method("n.expect(key, hardware)")
        .returns::<profile::Expected>()
        .doc("what a check should expect for `key` on the node (`gdr`, `pcie_width`, `pcie_gts`, `rails_per_port`, `shared_limit_gbps`, ...) and where it came from, by the one rule of every expectation: `--set KEY`, else the inventory (`n.expect(key, hardware, #{ value, from })`: the judged part's own field, as a port's speed_mbps; then the node var KEY), else the platform profile, else `hardware` (the value the check read; () when not given: the value is () and the check reads the hardware itself); `n.expect(key)` without it. Every report lists the expectations of the profile's keys")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, key: &str| {
                    expect(&ctx, &n.in_test(&ctx), key, Dynamic::UNIT, Dynamic::UNIT)
                },
            );
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, key: &str, hw: Dynamic| {
                    expect(&ctx, &n.in_test(&ctx), key, hw, Dynamic::UNIT)
                },
            );
            engine.register_fn(
                name,
                |ctx: NativeCallContext,
                 n: &mut NodeRef,
                 key: &str,
                 hw: Dynamic,
                 part: Dynamic| { expect(&ctx, &n.in_test(&ctx), key, hw, part) },
            );
        });
    api.method("n.link_layer()")
        .doc("the node's fabric, `infiniband` or `ethernet` (key, value, from): `--set link_layer`, else the inventory's node var `link_layer` (an override), else read from sysfs `/sys/class/infiniband/DEV/ports/N/link_layer` of the inventory's rdma_devices (every device when none is listed; an IB port makes the node IB, its Ethernet adapters left to RoCE), else `ethernet`")
        .node0(profile::link_layer);
}

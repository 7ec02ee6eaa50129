//! `n.qos(iface)`: `primitives::mlnx_qos`, over `parse::mlnx_qos`.

use super::api::InTest;
use super::api::{Api, Binder, BINDINGS};
use super::values::value_with;
use crate::primitives::mlnx_qos;
use crate::primitives::NodeRef;
use rhai::NativeCallContext;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.qos(iface)")
        .returns::<mlnx_qos::MlnxQos>()
        .doc("`mlnx_qos -i IFACE` parsed (trust, PFC priorities, traffic classes) and the RoCE ECN enables from sysfs")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, iface: &str| {
                    // Through JSON: its dscp2prio map has integer keys, script maps text keys.
                    value_with(mlnx_qos::qos(&n.in_test(&ctx), iface), ctx.call_position(), |q| {
                        rhai::serde::to_dynamic(serde_json::to_value(q).unwrap_or_default())
                    })
                },
            );
        });
}

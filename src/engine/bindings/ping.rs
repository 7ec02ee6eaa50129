//! `n.ping(ip, opts)` and `n.ping_all(targets, opts)` (`primitives::ping`, `ping_all`).

use super::api::InTest;
use super::api::{Api, Binder, BINDINGS};
use super::options;
use super::values::value;
use crate::engine::signal::RhaiErr;
use crate::primitives::ping::{self, PingOpts};
use crate::primitives::ping_all::{self, Target};
use crate::primitives::NodeRef;
use rhai::{Map, NativeCallContext};

fn ping(
    ctx: &NativeCallContext,
    n: &NodeRef,
    ip: &str,
    o: Option<Map>,
) -> Result<rhai::Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let po = ping_opts(o, "ping", pos)?;
    value(ping::ping(n, ip, &po), pos)
}

fn ping_opts(o: Option<Map>, what: &str, pos: rhai::Position) -> Result<PingOpts, RhaiErr> {
    options::read(o, what, pos)
}

/// A `ping_all` target map: the keys a script may give.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TargetArgs {
    ip: Option<String>,
    iface: Option<String>,
    size: Option<i64>,
    count: Option<i64>,
    dont_fragment: Option<bool>,
}

/// A `ping_all` target: an address, or `#{ ip, iface, size, count, dont_fragment }`.
fn target(d: rhai::Dynamic, pos: rhai::Position) -> Result<Target, RhaiErr> {
    if d.is_string() {
        return Ok(Target {
            ip: d.to_string(),
            ..Target::default()
        });
    }
    let t = d.type_name();
    let Some(m) = d.try_cast::<Map>() else {
        return Err(crate::engine::signal::error(
            format!("ping_all: a target is an address or #{{ ip, iface, size, count, dont_fragment }}, found {t}"),
            pos,
        ));
    };
    let o: TargetArgs = options::read(Some(m), "ping_all target", pos)?;
    let Some(ip) = o.ip else {
        return Err(crate::engine::signal::error(
            "ping_all: a target map needs `ip` (#{ ip: \"10.0.0.2\", iface: \"eth1\" })",
            pos,
        ));
    };
    Ok(Target {
        ip,
        iface: o.iface,
        size: o.size,
        count: o.count,
        dont_fragment: o.dont_fragment,
    })
}

fn ping_all(
    ctx: &NativeCallContext,
    n: &NodeRef,
    targets: rhai::Array,
    o: Option<Map>,
) -> Result<rhai::Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let po = ping_opts(o, "ping_all", pos)?;
    let ts = targets
        .into_iter()
        .map(|d| target(d, pos))
        .collect::<Result<Vec<_>, _>>()?;
    value(ping_all::ping_all(n, &ts, &po), pos)
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ping(ip, opts)")
        .options::<PingOpts>()
        .returns::<crate::primitives::ping::PingResult>()
        .doc("ping an address from the node; loss is data (`loss_pct`), not a failure")
        .register(|engine, name| {
            engine.register_fn(name, |ctx: NativeCallContext, n: &mut NodeRef, ip: &str| {
                ping(&ctx, &n.in_test(&ctx), ip, None)
            });
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, ip: &str, o: Map| {
                    ping(&ctx, &n.in_test(&ctx), ip, Some(o))
                },
            );
        });
    api.method("n.ping_all(targets, opts)")
        .options::<PingOpts>()
        .returns::<Vec<ping_all::AddressPing>>()
        .doc("ping several addresses from the node at once, in one remote command (targets: addresses, or #{ ip, iface, size, count, dont_fragment } to give one its own source interface, size, count or don't-fragment): a ping result per target, in order, with its `ip` and `iface`; loss is data, as with n.ping")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, t: rhai::Array| {
                    ping_all(&ctx, &n.in_test(&ctx), t, None)
                },
            );
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, t: rhai::Array, o: Map| {
                    ping_all(&ctx, &n.in_test(&ctx), t, Some(o))
                },
            );
        });
}

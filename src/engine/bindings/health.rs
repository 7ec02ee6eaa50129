//! Fabric health (`primitives::health`): `n.health_counters()`, `counter_growth(before, after,
//! opts)`, `counter_class(name)`, `n.ibv_devinfo()`, `n.fec(iface)`, `majority(values)`, `version_drift(rows, fail_items)`.

use super::results::returns;
use super::{dry, record, value, Opts};
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::counter_growth::{self, GrowthOpts};
use crate::primitives::health::{self, CounterSnapshot};
use crate::primitives::version_drift::{self, Version};
use crate::primitives::{counter_policy, NodeRef, PResult};
use crate::primitives::{ethtool_module, ibv_devinfo, lspci, mlnx_qos, show_fec, show_gids, tools};
use rhai::{Array, Dynamic, Engine, Map, NativeCallContext, Position};

pub const GROWTH_OPTS: &[&str] = &["max_pre_fec_ber", "lossless_prio"];

/// A snapshot back from the script (a typed result, or its `to_map()` copy).
fn snapshot(v: &Dynamic, what: &str, pos: Position) -> Result<CounterSnapshot, RhaiErr> {
    let plain = record::as_map(v).unwrap_or_else(|| v.clone());
    rhai::serde::from_dynamic(&plain).map_err(|e| {
        signal::error(
            format!("counter_growth: {what} is not a health_counters(n) result ({e})"),
            pos,
        )
    })
}

fn growth(
    ctx: &NativeCallContext,
    before: Dynamic,
    after: Dynamic,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let o = Opts::new(o, "counter_growth", GROWTH_OPTS, pos)?;
    let mut g = GrowthOpts::default();
    if let Some(b) = o.float("max_pre_fec_ber")? {
        g.max_pre_fec_ber = b;
    }
    if let Some(p) = o.int("lossless_prio")? {
        g.lossless_prio = u32::try_from(p).map_err(|_| {
            signal::error(
                format!("counter_growth: lossless_prio {p} is not a priority 0-7"),
                pos,
            )
        })?;
    }
    if dry::is(&before) || dry::is(&after) {
        let e = crate::primitives::PrimError::dry_run("the nodes", "counter_growth(before, after)");
        return Ok(dry::stand_in(&e, returns("counter_growth")));
    }
    let b = snapshot(&before, "the first argument", pos)?;
    let a = snapshot(&after, "the second argument", pos)?;
    let r = counter_growth::growth(&b, &a, g);
    if let Ok(g) = &r {
        for (port, counter) in &g.grown {
            crate::run::context::add_subject(crate::run::model::Subject {
                netdev: Some(port.clone()),
                ..crate::run::model::Subject::new(counter_finding(counter), &g.node)
            });
        }
    }
    value(r, returns("counter_growth"), pos)
}

/// What a grown counter says for the diagnosis: link-down events a flapping link, receive
/// errors of the physical layer (CRC, symbol, FEC, PCS) a bad signal arriving, anything else
/// (pause storms, discards) a fault of its own.
fn counter_finding(counter: &str) -> crate::run::model::Finding {
    use crate::run::model::Finding;
    let c = counter.to_ascii_lowercase();
    if c.contains("link_down") {
        Finding::Flapping
    } else if !c.starts_with("tx_")
        && [
            "crc",
            "symbol",
            "fec",
            "pcs",
            "corrected",
            "uncorrect",
            "err_lane",
        ]
        .iter()
        .any(|k| c.contains(k))
    {
        Finding::RxErrors
    } else {
        Finding::Other
    }
}

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
    let drift = version_drift::version_drift(&v, &strings(&fail_items));
    for n in &drift.odd_nodes {
        let s = crate::run::model::Subject::new(crate::run::model::Finding::Config, n);
        crate::run::context::add_subject(s);
    }
    let d: PResult<_> = Ok(drift);
    value(d, returns("version_drift"), pos)
}

/// Register `n.NAME()`.
fn method0<T: serde::Serialize + 'static>(
    engine: &mut Engine,
    name: &'static str,
    f: fn(&NodeRef) -> PResult<T>,
) {
    let r = returns(name);
    engine.register_fn(name, move |ctx: NativeCallContext, n: &mut NodeRef| {
        value(f(n), r, ctx.call_position())
    });
}

/// Register `n.NAME(text)`.
fn method1<T: serde::Serialize + 'static>(
    engine: &mut Engine,
    name: &'static str,
    f: fn(&NodeRef, &str) -> PResult<T>,
) {
    let r = returns(name);
    engine.register_fn(
        name,
        move |ctx: NativeCallContext, n: &mut NodeRef, a: &str| {
            value(f(n, a), r, ctx.call_position())
        },
    );
}

pub fn register(engine: &mut Engine) {
    method0(engine, "health_counters", health::counters);
    method0(engine, "ibv_devinfo", ibv_devinfo::ibv_devinfo);
    method1(engine, "gids", show_gids::gids);
    method1(engine, "pcie", lspci::pcie);
    method1(engine, "optics", ethtool_module::optics);
    method1(engine, "fec", show_fec::fec);
    method1(engine, "package_version", tools::package_version);
    // Through JSON: its dscp2prio map has integer keys, script maps have text keys.
    method1(engine, "qos", |n, iface| {
        mlnx_qos::qos(n, iface).map(|q| serde_json::to_value(q).unwrap_or_default())
    });
    engine.register_fn(
        "counter_growth",
        |ctx: NativeCallContext, b: Dynamic, a: Dynamic| growth(&ctx, b, a, None),
    );
    engine.register_fn(
        "counter_growth",
        |ctx: NativeCallContext, b: Dynamic, a: Dynamic, o: Map| growth(&ctx, b, a, Some(o)),
    );
    // The one counter policy (primitives::counter_policy), for scripts that pick counters.
    engine.register_fn("counter_class", |name: &str| -> String {
        counter_policy::judgement_name(counter_policy::judgement(name)).to_string()
    });
    engine.register_fn("majority", |values: Array| -> Dynamic {
        version_drift::majority(&strings(&values)).map_or(Dynamic::UNIT, Dynamic::from)
    });
    engine.register_fn(
        "version_drift",
        |ctx: NativeCallContext, rows: Array, fail_items: Array| drift(&ctx, rows, fail_items),
    );
}

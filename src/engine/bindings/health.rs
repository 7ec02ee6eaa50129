//! Fabric health counters (`primitives::health`, `counter_growth`, `counter_policy`):
//! `n.health_counters()`, `counter_growth(before, after, opts)`, `counter_class(name)`.

use super::api::{Api, Binder, BINDINGS};
use super::options;
use super::values::value;
use super::{dry, record};
use crate::engine::signal::{self, RhaiErr};
use crate::primitives::counter_growth::{self, GrowthOpts};
use crate::primitives::counter_policy;
use crate::primitives::health::{self, CounterSnapshot};
use crate::util::shape::Returned;
use rhai::{Dynamic, Map, NativeCallContext, Position};

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
    let g: GrowthOpts = options::read(o, "counter_growth", pos)?;
    if dry::is(&before) || dry::is(&after) {
        let e = crate::primitives::PrimError::dry_run("the nodes", "counter_growth(before, after)");
        return Ok(dry::stand_in(&e, counter_growth::CounterGrowth::returns()));
    }
    let b = snapshot(&before, "the first argument", pos)?;
    let a = snapshot(&after, "the second argument", pos)?;
    let r = counter_growth::growth(&b, &a, g);
    if let (Ok(g), Some(l)) = (&r, super::api::test_log(ctx)) {
        for (port, counter) in &g.grown {
            let delta = g
                .deltas
                .iter()
                .find(|d| &d.port == port && &d.counter == counter)
                .map(|d| format!(" {:+}", d.delta))
                .unwrap_or_default();
            l.add_subject(crate::run::model::Subject {
                netdev: Some(port.clone()),
                found: Some(format!("{port} {counter}{delta}")),
                ..crate::run::model::Subject::new(counter_finding(counter), &g.node)
            });
        }
    }
    value(r, pos)
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

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.health_counters()")
        .doc("a snapshot of the node's error counters: mlx5 physical-layer counters (`ethtool -S`) of every fabric interface and the RDMA hw_counters (`rdma statistic show`) of every RDMA device")
        .node0(health::counters);
    api.function("counter_growth(before, after, opts)")
        .options::<GrowthOpts>()
        .returns::<counter_growth::CounterGrowth>()
        .doc("compare two health_counters snapshots: an error counter that grew fails (node, port, counter, delta), corrected FEC bits only above max_pre_fec_ber, congestion counters recorded")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, b: Dynamic, a: Dynamic| growth(&ctx, b, a, None),
            );
            engine.register_fn(
                name,
                |ctx: NativeCallContext, b: Dynamic, a: Dynamic, o: Map| {
                    growth(&ctx, b, a, Some(o))
                },
            );
        });
    // The one counter policy (primitives::counter_policy), for scripts that pick counters.
    api.function("counter_class(name)")
        .plain("\"must not grow\", \"pre-FEC bit error rate\", \"host error (warns)\", \"must not grow on the lossless priority\", \"information\" or \"ignored\"")
        .doc("how the one counter policy (mlx5 counters.rst types, src/primitives/counter_policy.rs) judges an ethtool -S / hw_counters name between two reads")
        .register(|engine, name| {
            engine.register_fn(name, |name: &str| -> String {
                counter_policy::judgement_name(counter_policy::judgement(name)).to_string()
            });
        });
}

#[cfg(test)]
mod saturation_tests {
    use super::*;

    /// Issue 50 (low): a 64-bit counter past `i64::MAX` (perfquery -x prints up to 2^64-1)
    /// made the snapshot "not a health_counters(n) result" when it came back from the script.
    #[test]
    fn a_counter_past_i64_max_comes_back_from_the_script() {
        let snap = CounterSnapshot {
            node: "h100-01".into(),
            taken_ms: 1,
            ports: vec![health::PortCounters {
                port: "mlx5_0/1".into(),
                source: "perfquery -x".into(),
                speed_mbps: None,
                counters: [("SymbolErrorCounter".to_string(), u64::MAX)].into(),
            }],
        };
        let d = rhai::serde::to_dynamic(&snap).unwrap();
        let back = snapshot(&d, "the first argument", Position::NONE).unwrap();
        assert_eq!(
            back.ports[0].counters["SymbolErrorCounter"],
            i64::MAX as u64
        );
    }
}

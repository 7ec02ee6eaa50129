//! `subject(#{ kind, node, ... })` and `subject_if(cond, #{ ... })`: what a test found wrong,
//! on which part — the typed input of the run's diagnosis (`run::diagnosis`).

use super::api::{Api, Binder, BINDINGS};
use super::options::Opts;
use super::record::Record;
use crate::engine::signal::{self, RhaiErr};
use crate::run::context;
use crate::run::model::{Cable, Finding, Subject};
use rhai::{Dynamic, Map, NativeCallContext};

pub(crate) const SUBJECT_OPTS: &[&str] =
    &["kind", "node", "port", "netdev", "rail", "peer", "cable"];

/// The cable of `v`: an `ethtool_module` result or a map with `vendor_name`, `vendor_pn`,
/// `vendor_sn` (a dry run's stand-in or `()`: none).
fn cable_of(v: &Dynamic) -> Option<Cable> {
    let map: Map = match v.clone().try_cast::<Record>() {
        Some(r) => r.map,
        None => v.clone().try_cast::<Map>()?,
    };
    let get = |k: &str| {
        map.get(k)
            .filter(|x| x.is_string())
            .map(|x| x.to_string().trim().to_string())
            .filter(|x| !x.is_empty())
    };
    let c = Cable {
        vendor: get("vendor_name"),
        part_number: get("vendor_pn"),
        serial_number: get("vendor_sn"),
    };
    c.describe().map(|_| c)
}

fn subject_of(ctx: &NativeCallContext, opts: Map) -> Result<Option<Subject>, RhaiErr> {
    let pos = ctx.call_position();
    if opts.values().any(super::dry::is) {
        return Ok(None);
    }
    let o = Opts::new(Some(opts), "subject", SUBJECT_OPTS, pos)?;
    let kind_name = o.str("kind")?.unwrap_or_else(|| "other".into());
    let kind = Finding::parse(&kind_name).ok_or_else(|| {
        let names: Vec<&str> = Finding::ALL.iter().map(|(n, _)| *n).collect();
        signal::error(
            format!(
                "subject: unknown kind `{kind_name}`{}; kinds are {}",
                crate::util::suggest::did_you_mean(&kind_name, names.iter().copied()),
                names.join(", ")
            ),
            pos,
        )
    })?;
    let node = o.str_or_display("node")?.ok_or_else(|| {
        signal::error(
            "subject: `node` is required (the node the finding is on)",
            pos,
        )
    })?;
    Ok(Some(Subject {
        kind,
        port: o.str_or_display("port")?,
        netdev: o.str_or_display("netdev")?,
        rail: o.str_or_display("rail")?,
        peer: o.str_or_display("peer")?,
        cable: o.get_raw("cable").and_then(cable_of),
        node,
    }))
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("subject(opts)")
        .opts(SUBJECT_OPTS)
        .doc("name the part the running test found wrong, for the run's diagnosis: kind (link_down, link_slow, unreachable, bandwidth, latency, rx_errors, flapping, pcie_downtrained, config, other), node (required), port, netdev, rail, peer, cable (an ethtool_module result: vendor, PN, SN); docs/diagnosis.md")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, opts: Map| -> Result<(), RhaiErr> {
                    if let Some(s) = subject_of(&ctx, opts)? {
                        context::add_subject(s);
                    }
                    Ok(())
                },
            );
        });
    api.function("subject_if(cond, opts)")
        .opts(SUBJECT_OPTS)
        .doc("subject(opts) when cond is true (the options are checked either way)")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, cond: bool, opts: Map| -> Result<(), RhaiErr> {
                    // Checked either way: a typo must not wait for the fault to show.
                    let s = subject_of(&ctx, opts)?;
                    if let (true, Some(s)) = (cond, s) {
                        context::add_subject(s);
                    }
                    Ok(())
                },
            );
        });
}

//! `subject(#{ kind, node, ... })` and `subject_if(cond, #{ ... })`: what a test found wrong,
//! on which part — the typed input of the run's diagnosis (`run::diagnosis`).

use super::api::{test_log, Api, Binder, BINDINGS};
use super::options;
use crate::engine::signal::{self, RhaiErr};
use crate::run::model::{Cable, Finding, Subject};
use rhai::{Map, NativeCallContext};

/// The options of `subject(opts)` and `subject_if(cond, opts)`: the keys a script may give.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct SubjectArgs {
    kind: Option<String>,
    #[serde(deserialize_with = "options::shown")]
    node: Option<String>,
    #[serde(deserialize_with = "options::shown")]
    port: Option<String>,
    #[serde(deserialize_with = "options::shown")]
    netdev: Option<String>,
    #[serde(deserialize_with = "options::shown")]
    rail: Option<String>,
    #[serde(deserialize_with = "options::shown")]
    peer: Option<String>,
    cable: Option<CableArgs>,
    #[serde(deserialize_with = "options::shown")]
    part: Option<String>,
    #[serde(deserialize_with = "options::shown")]
    found: Option<String>,
    links: Vec<String>,
}

/// A cable: an `ethtool_module` result (`n.optics(iface)`) or a map with these fields; any
/// other field of the result is left alone.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct CableArgs {
    vendor_name: Option<String>,
    vendor_pn: Option<String>,
    vendor_sn: Option<String>,
}

/// The cable the options name, if it says anything (blank fields are none).
fn cable_of(c: CableArgs) -> Option<Cable> {
    let clean = |x: Option<String>| x.map(|x| x.trim().to_string()).filter(|x| !x.is_empty());
    let c = Cable {
        vendor: clean(c.vendor_name),
        part_number: clean(c.vendor_pn),
        serial_number: clean(c.vendor_sn),
    };
    c.describe().map(|_| c)
}

fn subject_of(ctx: &NativeCallContext, opts: Map) -> Result<Option<Subject>, RhaiErr> {
    let pos = ctx.call_position();
    if opts.values().any(super::dry::is) {
        return Ok(None);
    }
    let o: SubjectArgs = options::read(Some(opts), "subject", pos)?;
    let kind_name = o.kind.unwrap_or_else(|| "other".into());
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
    let node = o.node.ok_or_else(|| {
        signal::error(
            "subject: `node` is required (the node the finding is on)",
            pos,
        )
    })?;
    Ok(Some(Subject {
        kind,
        port: o.port,
        netdev: o.netdev,
        rail: o.rail,
        peer: o.peer,
        cable: o.cable.and_then(cable_of),
        part: o
            .part
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty()),
        found: o
            .found
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty()),
        links: o.links,
        node,
    }))
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("subject(opts)")
        .options::<SubjectArgs>()
        .doc("name the part the running test found wrong, for the run's diagnosis: kind (link_down, link_slow, unreachable, bandwidth, latency, rx_errors, flapping, pcie_downtrained, spine_path, config, other), node (required), port, netdev, rail, peer, cable (an ethtool_module result: vendor, PN, SN), part (the part in words where the check knows it better: `nvidia-peermem on spark-01`), found (measured against expected: `negotiated 100000 Mb/s, expected 200000 Mb/s`), links (the switch ports a path leaves by, an array of strings: reds sharing one are put on it); docs/diagnosis.md")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, opts: Map| -> Result<(), RhaiErr> {
                    if let (Some(s), Some(l)) = (subject_of(&ctx, opts)?, test_log(&ctx)) {
                        l.add_subject(s);
                    }
                    Ok(())
                },
            );
        });
    api.function("subject_if(cond, opts)")
        .options::<SubjectArgs>()
        .doc("subject(opts) when cond is true (the options are checked either way)")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, cond: bool, opts: Map| -> Result<(), RhaiErr> {
                    // Checked either way: a typo must not wait for the fault to show.
                    let s = subject_of(&ctx, opts)?;
                    if let (true, Some(s), Some(l)) = (cond, s, test_log(&ctx)) {
                        l.add_subject(s);
                    }
                    Ok(())
                },
            );
        });
}

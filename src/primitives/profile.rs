//! The platform profile of a node (`n.profile()`) and what a check should expect there
//! (`n.expect(key)`), docs/profiles.md. Detection reads, once per node and run, each command
//! with its own timeout: the sysfs listing of `fabcheck discover` (DMI product name, NVIDIA
//! GPUs, RDMA adapters with their PCI functions) and `nvidia-smi --query-gpu=name`. What cannot
//! be read is said in the reason; the node is then judged by what its hardware reports.
//!
//! An expectation comes from, in order: `--set KEY=V`, the inventory (the part's own field,
//! else the node var `KEY`), the profile, the hardware (the value the caller read, if any):
//! `run::profile::choose`, the one rule. The run's reports show which.

use super::discover::SYSFS_COMMAND;
use super::{NodeRef, PrimError};
use crate::parse::sysfs_net;
use crate::run::context::Kept;
use crate::run::outcome::Outcome;
use crate::run::profile::{self as pure, Detected, Expectation, Facts, NodeProfile};
use crate::transport::{CmdOutput, CmdRequest};
use serde_json::Value;
use std::time::Duration;

/// The GPU names, one line per GPU.
pub(crate) const GPU_COMMAND: &str = "nvidia-smi --query-gpu=name --format=csv,noheader";

/// Each detection command's own timeout (nvidia-smi hangs on a GPU in a bad state).
const TIMEOUT: Duration = Duration::from_secs(30);

fn why(e: &PrimError) -> String {
    crate::primitives::last_lines(&e.message, 1)
}

/// One read-only detection command with its own timeout, logged into the current test. Not
/// through `tools::tool`: a missing nvidia-smi is a fact here, not a tool the run needs.
fn read(n: &NodeRef, cmd: &str) -> Result<CmdOutput, PrimError> {
    let req = CmdRequest {
        command: cmd.to_string(),
        timeout: n.command_timeout(Some(TIMEOUT), None),
        env: vec![],
        sudo: false,
    };
    Ok(n.exec(&req)?)
}

fn dry(e: &PrimError) -> bool {
    e.kind == Outcome::DryRun
}

/// Read the facts; what fails is noted in `unread`. `Err` only for a dry run.
fn facts(n: &NodeRef) -> Result<Facts, PrimError> {
    let mut f = Facts::default();
    match read(n, SYSFS_COMMAND) {
        Ok(o) => match sysfs_net::parse(&o.stdout) {
            Ok(s) => {
                f.dmi_product_name = s.dmi_product_name;
                f.gpu_count = s.gpus.len();
                for d in s.rdma {
                    if !d.link_layers.is_empty() {
                        f.link_layers.insert(d.name.clone(), d.link_layers.clone());
                    }
                    let g = d.sys_image_guid.unwrap_or_else(|| d.name.clone());
                    f.adapters.entry(g).or_default().extend(d.pci);
                }
            }
            Err(e) => f.unread.push(format!("sysfs listing: {e}")),
        },
        Err(e) if dry(&e) => return Err(e),
        Err(e) => f.unread.push(format!("sysfs listing: {}", why(&e))),
    }
    match read(n, GPU_COMMAND) {
        Ok(o) if o.exit_code == Some(0) => {
            f.gpu_names = o
                .stdout
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
        }
        Ok(o) if o.exit_code == Some(127) => f.unread.push("nvidia-smi: not installed".into()),
        Ok(o) => f.unread.push(format!(
            "nvidia-smi: exit {} {}",
            o.exit_code.map_or("?".into(), |c| c.to_string()),
            crate::primitives::last_lines(&o.stderr, 1)
        )),
        Err(e) if dry(&e) => return Err(e),
        Err(e) => f.unread.push(format!("nvidia-smi: {}", why(&e))),
    }
    Ok(f)
}

/// The node's profile: detected once per run (the first test that asks reads the facts).
pub(crate) fn detect(n: &NodeRef) -> Result<Detected, PrimError> {
    let cell = {
        let mut m = n
            .env
            .profiles
            .cells
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        m.entry(n.name().to_string()).or_default().clone()
    };
    if let Some(d) = cell.get() {
        return Ok(d.clone());
    }
    let d = pure::detect(&facts(n)?);
    let d = cell.get_or_init(|| d).clone();
    Ok(d)
}

/// `n.profile()`: the detection, noted in the current test for the reports.
pub(crate) fn profile(n: &NodeRef) -> Result<Detected, PrimError> {
    let d = detect(n)?;
    note(n, &d, None);
    Ok(d)
}

/// What `n.expect(key)` gives: the value (`Null` where only the hardware can tell and the
/// caller gave none) and where it came from.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Expected {
    pub key: String,
    pub value: Value,
    pub from: String,
}

/// The inventory's own field of the part an expectation is for (a port's `speed_mbps`), and
/// where it is (`inventory speed_mbps of port qsfp1`): ranks above the node var.
pub(crate) type Part = Option<(Value, String)>;

/// Does `key` consult the platform profile (and go into the reports' profile table)? Every
/// expectation row of `run::settings`, and a key no row declares (a user script's own); not a
/// key the table reads from `--set` and the inventory only (`speed_mbps`, `firmware`).
fn profiled(key: &str) -> bool {
    crate::run::settings::find(key).is_none_or(|s| s.source == crate::run::settings::Source::Expect)
}

/// Keys whose `--set KEY=0` means "not given" (docs/scripts.md: speed_mbps "0: the same"):
/// the inventory and the hardware decide, as without it.
const SET_ZERO_IS_UNSET: &[&str] = &["speed_mbps"];

/// The `--set` value of `key`, if it gives one.
fn set_value<'a>(n: &'a NodeRef, key: &str) -> Option<&'a Value> {
    n.env
        .params
        .get(key)
        .filter(|v| !(SET_ZERO_IS_UNSET.contains(&key) && v.as_f64() == Some(0.0)))
}

/// The expectation for `key` on `n` and where it comes from, through the one precedence rule
/// (`run::profile::choose`): `--set`, `part` (the part's own inventory field), the
/// inventory's node var, the profile, else `hardware` (what the caller read; `Null`: nothing).
/// An expectation key is noted in the current test with the node's profile (every report
/// lists them); detection runs only for those.
pub(crate) fn expect(
    n: &NodeRef,
    key: &str,
    part: Part,
    hardware: Value,
) -> Result<Expected, PrimError> {
    let given = set_value(n, key).is_some()
        || part.as_ref().is_some_and(|(v, _)| !v.is_null())
        || n.spec.vars.get(key).is_some_and(|v| !v.is_null());
    let profiled = profiled(key);
    let d = if profiled && !given {
        Some(detect(n)?)
    } else {
        None
    };
    let (value, from) = pure::choose(pure::Levels {
        key,
        set: set_value(n, key),
        part,
        node_var: n.spec.vars.get(key).map(|v| (v, n.name())),
        profile: d.as_ref(),
        hardware,
    });
    let e = Expected {
        key: key.to_string(),
        value,
        from,
    };
    if profiled {
        let d = match d {
            Some(d) => d,
            None => detect(n).unwrap_or_default(),
        };
        note(n, &d, Some(&e));
    }
    Ok(e)
}

/// `n.link_layer()`: the node's fabric, `infiniband` or `ethernet`, and where that came from:
/// `--set link_layer`, else the inventory's node var `link_layer` (an override), else the link
/// layers read from sysfs with the profile (of the inventory's rdma_devices, when listed), else
/// `ethernet` (RoCE, the checks as before). Not noted in the reports; a dry run reads nothing.
pub(crate) fn link_layer(n: &NodeRef) -> Result<Expected, PrimError> {
    let key = "link_layer";
    // `--set` and the node var through the one rule; no profile sets a fabric
    let (v, from) = pure::choose(pure::Levels {
        key,
        set: n.env.params.get(key),
        node_var: n.spec.vars.get(key).map(|v| (v, n.name())),
        ..Default::default()
    });
    let given = (!v.is_null()).then_some((v, from));
    let (value, from) = match given {
        Some((v, from)) => (Value::String(text(&v).to_ascii_lowercase()), from),
        None => {
            let read = match detect(n) {
                Ok(d) => pure::link_layer(&d.link_layers, &n.spec.rdma_devices),
                Err(e) if dry(&e) => None,
                Err(e) => return Err(e),
            };
            match read.or_else(|| ipoib_names(&n.spec.interfaces)) {
                Some((v, from)) => (Value::String(v), from),
                None => (
                    Value::String("ethernet".into()),
                    "no port link layer read (sysfs): RoCE (Ethernet) assumed; set the node var link_layer = \"infiniband\" on an IB node".into(),
                ),
            }
        }
    };
    Ok(Expected {
        key: key.into(),
        value,
        from,
    })
}

/// No link layer read (a dry run reads nothing; sysfs without the devices): every fabric
/// interface of the inventory named as the kernel names IPoIB netdevs (`ib0`, `ibp24s0`,
/// `ibs1f0`) says InfiniBand, so that a dry run lists the commands an IB run sends.
fn ipoib_names(interfaces: &[String]) -> Option<(String, String)> {
    let ipoib = |i: &String| {
        i.strip_prefix("ib")
            .and_then(|r| r.chars().next())
            .is_some_and(|c| c.is_ascii_digit() || c == 'p' || c == 's')
    };
    (!interfaces.is_empty() && interfaces.iter().all(ipoib)).then(|| {
        (
            "infiniband".to_string(),
            format!(
                "no port link layer read: the inventory's interfaces ({}) are IPoIB names",
                interfaces.join(", ")
            ),
        )
    })
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "()".into(),
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// Keep the node's profile (and the expectation taken) in the current test.
fn note(n: &NodeRef, d: &Detected, e: Option<&Expected>) {
    let p = NodeProfile {
        node: n.name().to_string(),
        profile: d.clone(),
        expectations: e
            .map(|e| Expectation {
                key: e.key.clone(),
                value: text(&e.value),
                from: e.from.clone(),
            })
            .into_iter()
            .collect(),
    };
    n.keep(Kept::Profile(p));
}

crate::impl_shape!(Expected, serialised("expect result"));

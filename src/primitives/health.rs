//! Fabric health: the error counters of a node's fabric ports (`health_counters(n)`), read
//! before and after the load tests of a run. What two reads say is [`super::counter_growth`]
//! (pure); the comparisons across nodes are [`super::version_drift`] (pure).
//!
//! Which counters are kept in a snapshot is decided once, in [`super::counter_policy`] (from
//! the mlx5 driver's own counters documentation); what is not judged is left out.

use super::counter_policy::{judgement, Judgement};
use super::ethtool::ethtool;
use super::ethtool_stats::ethtool_stats;
use super::rdma_statistic::hw_counters;
use super::show_fec::fec;
use super::{NodeRef, PResult, PrimError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The prefix of the `ethtool -I --show-fec` statistics in a port's counters
/// (`fec_uncorrectable_blocks` must not grow, `fec_corrected_blocks` is information).
pub(crate) const FEC_PREFIX: &str = "fec_";

/// The health counters of one port: a netdev (`ethtool -S`) or an RDMA device port
/// (`hw_counters`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct PortCounters {
    /// `enp1s0f1np1`, or `rocep1s0f1/1` (device/port).
    pub port: String,
    /// `ethtool -S` or `hw_counters`.
    pub source: String,
    /// The negotiated speed (netdevs; for the corrected-bits rate).
    pub speed_mbps: Option<u64>,
    /// Only the counters the health check judges (`counter_policy::judgement` not `Ignored`).
    /// A value past `i64::MAX` (a saturated 64-bit counter: `perfquery -x` prints up to
    /// 2^64-1) reaches a script as `i64::MAX`, the largest integer it has, so that the
    /// snapshot comes back whole to `counter_growth` (it was "not a health_counters result").
    #[serde(serialize_with = "saturated")]
    pub counters: BTreeMap<String, u64>,
}

/// Counters with each value at most `i64::MAX` (see [`PortCounters::counters`]).
fn saturated<S: serde::Serializer>(m: &BTreeMap<String, u64>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut out = s.serialize_map(Some(m.len()))?;
    for (k, v) in m {
        out.serialize_entry(k, &(*v).min(i64::MAX as u64))?;
    }
    out.end()
}

/// The health counters of a node at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CounterSnapshot {
    pub node: String,
    /// When it was read (ms since the Unix epoch, the runner's clock).
    pub taken_ms: u64,
    pub ports: Vec<PortCounters>,
}

pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub(super) fn judged(all: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    all.iter()
        .filter(|(k, _)| judgement(k) != Judgement::Ignored)
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// `health_counters(n)`: the health counters of every fabric interface of `n` (`ethtool -S`,
/// speed from `ethtool`) and of every RDMA device (port 1 `hw_counters`) the inventory lists.
pub(crate) fn counters(n: &NodeRef) -> PResult<CounterSnapshot> {
    let mut out = CounterSnapshot {
        node: n.name().to_string(),
        taken_ms: now_ms(),
        ports: vec![],
    };
    if n.spec.interfaces.is_empty() && n.spec.rdma_devices.is_empty() {
        return Err(PrimError::error(format!(
            "{}: the inventory lists no fabric interfaces and no RDMA devices (fields \"interfaces\", \"rdma_devices\"): no counters to read",
            n.name()
        )));
    }
    for iface in &n.spec.interfaces {
        let s = ethtool_stats(n, iface)?;
        let c = judged(&s.counters);
        if c.is_empty() {
            return Err(PrimError::error(format!(
                "{}: `ethtool -S {iface}` shows none of the error counters the health check reads (CRC, symbol, link-down, FEC: mlx5 `*_phy` names): not a ConnectX port? nothing to check",
                n.name()
            )));
        }
        let e = ethtool(n, iface)?;
        let mut source = "ethtool -S".to_string();
        let mut c = c;
        // FEC blocks where the driver counts them; a port without (or an older ethtool) keeps
        // its `ethtool -S` counters: the FEC testcase reports what it cannot read.
        if let Ok(f) = fec(n, iface).map(|f| f.statistics) {
            if !f.is_empty() {
                source.push_str(", ethtool -I --show-fec");
            }
            for (k, v) in f.into_iter().filter(|(k, _)| k.ends_with("_blocks")) {
                c.insert(format!("{FEC_PREFIX}{k}"), v);
            }
        }
        out.ports.push(PortCounters {
            port: iface.clone(),
            source,
            speed_mbps: e.speed_mbps,
            counters: c,
        });
    }
    for dev in &n.spec.rdma_devices {
        out.ports.push(PortCounters {
            port: format!("{dev}/1"),
            source: "hw_counters".into(),
            speed_mbps: None,
            counters: judged(&hw_counters(n, dev)?),
        });
    }
    Ok(out)
}

crate::impl_shape!(PortCounters, parsed("port counters"));
crate::impl_shape!(
    CounterSnapshot,
    parsed("health_counters result").many::<PortCounters>("ports")
);

//! `mlnx_qos -i IFACE` (MLNX_OFED / DOCA `mlnx-tools`): the lossless-RoCE configuration of a
//! ConnectX port: DCBX mode, trust state (`pcp` / `dscp`), DSCP → priority map, PFC per
//! priority, receive buffers and the traffic classes (ETS / strict / vendor, bandwidth share,
//! the priorities of each class).
//!
//! Handles: `dscp2prio mapping:` lists with trailing commas and a priority split over two lines,
//! `Receive buffer size` with a trailing `max_buffer_size=N`, the PFC table with trailing spaces,
//! an empty `default priority:`, `tc: N ratelimit: R, tsa: T[, bw: P%]` followed by one
//! `priority:  P` line per priority.
//!
//! Recognised evidence: a `Priority trust state:` line and a PFC `enabled` row of 8 values;
//! other lines that mlnx_qos versions add are ignored.

use super::util::{key_value, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const KIND: &str = "mlnx-qos";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MlnxQos {
    /// `DCBX mode:`, e.g. `OS controlled`, `Firmware controlled`.
    pub dcbx_mode: Option<String>,
    /// `Priority trust state:`: `pcp` or `dscp`.
    pub trust_state: String,
    /// `default priority:` when it has a value.
    pub default_priority: Option<u32>,
    /// DSCP value → priority, from `dscp2prio mapping:` (only printed with trust `dscp`).
    pub dscp2prio: BTreeMap<u32, u32>,
    /// `Receive buffer size (bytes):` per buffer.
    pub receive_buffer_bytes: Vec<u64>,
    /// `max_buffer_size=` at the end of that line, when printed.
    pub max_buffer_bytes: Option<u64>,
    /// `Cable len:` in metres.
    pub cable_len: Option<u32>,
    /// Priorities (0-7) whose PFC `enabled` value is 1, e.g. `[3]`.
    pub pfc_enabled_priorities: Vec<u32>,
    /// PFC `buffer` row: the receive buffer of priority 0..7.
    pub pfc_buffer: Vec<u32>,
    /// Traffic classes as printed.
    pub tcs: Vec<TrafficClass>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrafficClass {
    pub tc: u32,
    /// e.g. `unlimited`.
    pub ratelimit: String,
    /// Transmission selection: `ets`, `strict`, `vendor`.
    pub tsa: String,
    /// `bw:` share in percent (ETS only).
    pub bw_pct: Option<u32>,
    /// Priorities mapped to this class.
    pub priorities: Vec<u32>,
}

fn row(t: &str, name: &str) -> Option<Vec<u32>> {
    let rest = t.strip_prefix(name)?;
    let v: Option<Vec<u32>> = rest.split_whitespace().map(|x| x.parse().ok()).collect();
    v.filter(|v| v.len() == 8)
}

/// One line of output; `Err(reason)` for a line that looks like a known one but does not fit.
fn line(q: &mut MlnxQos, t: &str) -> Result<(), &'static str> {
    if let Some(c) = regex!(r"^prio:(\d+) dscp:([\d,]+)$").captures(t) {
        let prio: u32 = c[1].parse().map_err(|_| "bad priority")?;
        for d in c[2].split(',').filter(|d| !d.is_empty()) {
            q.dscp2prio
                .insert(d.parse().map_err(|_| "bad DSCP value")?, prio);
        }
    } else if let Some(c) =
        regex!(r"^tc: (\d+) ratelimit: ([^,]+), tsa: (\w+)(?:, bw: (\d+)%)?$").captures(t)
    {
        q.tcs.push(TrafficClass {
            tc: c[1].parse().map_err(|_| "bad tc")?,
            ratelimit: c[2].to_string(),
            tsa: c[3].to_string(),
            bw_pct: c.get(4).and_then(|m| m.as_str().parse().ok()),
            priorities: vec![],
        });
    } else if let Some(c) = regex!(r"^priority:\s+([\d\s]+)$").captures(t) {
        let tc = q
            .tcs
            .last_mut()
            .ok_or("`priority:` line before any `tc:` line")?;
        for p in c[1].split_whitespace() {
            tc.priorities.push(p.parse().map_err(|_| "bad priority")?);
        }
    } else if t.starts_with("enabled") {
        let v = row(t, "enabled").ok_or("PFC `enabled` row needs 8 values")?;
        q.pfc_enabled_priorities = (0..8).filter(|p| v[*p as usize] == 1).collect();
    } else if t.starts_with("buffer ") {
        q.pfc_buffer = row(t, "buffer").ok_or("PFC `buffer` row needs 8 values")?;
    } else if let Some((k, v)) = key_value(t) {
        header(q, k, v)?;
    }
    Ok(())
}

fn header(q: &mut MlnxQos, k: &str, v: &str) -> Result<(), &'static str> {
    match k {
        "DCBX mode" => q.dcbx_mode = Some(v.to_string()),
        "Priority trust state" => q.trust_state = v.to_string(),
        "default priority" => q.default_priority = v.parse().ok(),
        "Cable len" => q.cable_len = v.parse().ok(),
        "Receive buffer size (bytes)" => {
            for part in v.split(',').filter(|p| !p.is_empty()) {
                if let Some(m) = part.strip_prefix("max_buffer_size=") {
                    q.max_buffer_bytes = Some(m.parse().map_err(|_| "bad max_buffer_size")?);
                } else {
                    q.receive_buffer_bytes
                        .push(part.parse().map_err(|_| "bad buffer size")?);
                }
            }
        }
        _ => {}
    }
    Ok(())
}

pub fn parse(text: &str) -> Result<MlnxQos, ParseError> {
    let mut q = MlnxQos::default();
    let mut pfc_row = false;
    for (n, l) in numbered(text) {
        let t = l.trim();
        pfc_row |= t.starts_with("enabled");
        line(&mut q, t).map_err(|reason| ParseError::new(KIND, n, l, reason))?;
    }
    if q.trust_state.is_empty() || !pfc_row {
        return Err(unrecognised(
            KIND,
            text,
            "no `Priority trust state:` line or no PFC `enabled` row",
        ));
    }
    Ok(q)
}

crate::impl_shape!(TrafficClass, parsed("mlnx_qos traffic class"));
crate::impl_shape!(
    MlnxQos,
    parsed("mlnx_qos result").many::<TrafficClass>("tcs")
);

crate::parser!("mlnx-qos", "mlnx_qos -i IFACE", sample: "mlnx_qos/mlnx_qos-pcp-os-dcbx-no-pfc-tsa-vendor-default.txt");

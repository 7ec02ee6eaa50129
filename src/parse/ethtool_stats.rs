//! `ethtool -S IFACE` (NIC statistics).
//!
//! Handles: the `NIC statistics:` header, grep-filtered captures without header, per-queue /
//! per-channel / per-priority counters, 64-bit values. Kernel versions differ in which counters
//! exist (e.g. mlx5 `rx_cache_*` vs `rx_pp_*`), so counters are a free-form map.
//!
//! Recognised evidence: the header or at least one `name: integer` line; any other non-blank
//! line is an error.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const KIND: &str = "ethtool-stats";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EthtoolStats {
    /// Only set when a `Statistics for IFACE:` style header names it (plain `ethtool -S` does not).
    pub interface: Option<String>,
    pub counters: BTreeMap<String, u64>,
}

pub fn parse(text: &str) -> Result<EthtoolStats, ParseError> {
    let mut out = EthtoolStats::default();
    let mut header = false;
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t == "NIC statistics:" {
            header = true;
            continue;
        }
        if let Some(c) = regex!(r"^(?i:statistics for) (\S+):$").captures(t) {
            header = true;
            out.interface = Some(c[1].to_string());
            continue;
        }
        let Some(c) = regex!(r"^(.+?):\s*(\d+)$").captures(t) else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `counter_name: integer`",
            ));
        };
        let Ok(value) = c[2].parse::<u64>() else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "counter value does not fit in 64 bits",
            ));
        };
        out.counters.insert(c[1].trim().to_string(), value);
    }
    if !header && out.counters.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no `NIC statistics:` header and no counters",
        ));
    }
    Ok(out)
}

crate::impl_shape!(EthtoolStats, parsed("ethtool -S result"));

crate::parser!("ethtool-stats", "ethtool -S IFACE", sample: "lab/ethtool-S-veth.txt");

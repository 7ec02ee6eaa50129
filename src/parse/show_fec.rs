//! `ethtool --show-fec IFACE` and `ethtool -I --show-fec IFACE` (FEC statistics, ethtool >= 5.13
//! with a driver that reports them: mlx5, ice, bnxt, ...).
//!
//! Handles: `Configured FEC encodings:` and the newer `Supported/Configured FEC encodings:`,
//! `Active FEC encoding:` (`None`, `Off`, `RS`, `BaseR`, `LLRS`, ...), the `Statistics:` block
//! with totals (`corrected_blocks`, `uncorrectable_blocks`, `fec_symbol_err_*` histogram bins),
//! per-lane values printed as `Lane N: V` lines or as `[ per_lane: a, b, ... ]`, any indentation.
//!
//! Recognised evidence: the `FEC parameters for IFACE:` line; ethtool's own errors (e.g.
//! `netlink error: Operation not supported` on a NIC without FEC) and other lines are errors.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const KIND: &str = "show-fec";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShowFec {
    pub interface: String,
    /// `Configured FEC encodings:` words, e.g. `["Auto", "RS", "BaseR"]` or `["None"]`.
    pub configured_encodings: Vec<String>,
    /// `Active FEC encoding:`, e.g. `RS`, `BaseR`, `None`, `Off`.
    pub active_encoding: Option<String>,
    /// `-I` statistics: `corrected_blocks`, `uncorrectable_blocks`, `fec_symbol_err_*` → total.
    pub statistics: BTreeMap<String, u64>,
    /// Per-lane values of the statistics that print them (lane 0 first).
    pub per_lane: BTreeMap<String, Vec<u64>>,
    /// `statistics["corrected_blocks"]`, when printed.
    pub corrected_blocks: Option<u64>,
    /// `statistics["uncorrectable_blocks"]`, when printed.
    pub uncorrectable_blocks: Option<u64>,
}

fn numbers(list: &str) -> Option<Vec<u64>> {
    list.split(',').map(|v| v.trim().parse().ok()).collect()
}

pub fn parse(text: &str) -> Result<ShowFec, ParseError> {
    let mut out: Option<ShowFec> = None;
    let mut last: Option<String> = None;
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = regex!(r"^FEC parameters for (\S+):$").captures(t) {
            out = Some(ShowFec {
                interface: c[1].to_string(),
                ..ShowFec::default()
            });
            continue;
        }
        let Some(f) = out.as_mut() else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `FEC parameters for IFACE:` (ethtool printed no FEC parameters)",
            ));
        };
        if let Some(c) = regex!(r"^(?:Supported/)?Configured FEC encodings:\s*(.*)$").captures(t) {
            f.configured_encodings = c[1].split_whitespace().map(String::from).collect();
        } else if let Some(c) = regex!(r"^Active FEC encodings?:\s*(.*)$").captures(t) {
            f.active_encoding = Some(c[1].trim().to_string()).filter(|s| !s.is_empty());
        } else if t == "Statistics:" {
        } else if let Some(c) = regex!(r"^Lane (\d+):\s*(\d+)$").captures(t) {
            let (Some(name), Ok(v)) = (last.as_ref(), c[2].parse::<u64>()) else {
                return Err(ParseError::new(
                    KIND,
                    n,
                    line,
                    "lane value without a statistic above it",
                ));
            };
            f.per_lane.entry(name.clone()).or_default().push(v);
        } else if let Some(c) =
            regex!(r"^([a-z0-9_]+):\s*(\d+)(?:\s*\[\s*per_lane:\s*([\d,\s]+)\])?$").captures(t)
        {
            let bad = || ParseError::new(KIND, n, line, "statistic value is not a 64-bit integer");
            f.statistics
                .insert(c[1].to_string(), c[2].parse().map_err(|_| bad())?);
            if let Some(list) = c.get(3) {
                f.per_lane
                    .insert(c[1].to_string(), numbers(list.as_str()).ok_or_else(bad)?);
            }
            last = Some(c[1].to_string());
        } else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "unrecognised --show-fec line",
            ));
        }
    }
    let Some(mut f) = out else {
        return Err(unrecognised(
            KIND,
            text,
            "no `FEC parameters for IFACE:` line",
        ));
    };
    f.corrected_blocks = f.statistics.get("corrected_blocks").copied();
    f.uncorrectable_blocks = f.statistics.get("uncorrectable_blocks").copied();
    Ok(f)
}

crate::impl_shape!(ShowFec, parsed("ethtool --show-fec result"));

crate::parser!("show-fec", "ethtool [-I] --show-fec IFACE", sample: "ethtool/ethtool-I-show-fec-ice-e810-rs-supported-configured-zero-blocks.txt");

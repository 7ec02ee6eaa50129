//! `perfquery` (infiniband-diags), the classic layout (`# Port counters: ...`, 32-bit data
//! counters after the error counters) and `-x` (`# Port extended counters: ...`, 64-bit data
//! counters first, `QP1Dropped`), one block per port; several blocks in one output are kept in
//! order.
//!
//! Handles: dotted `Name:.......value` lines, the header's optional `(CapMask: 0x.. CapMask2:
//! 0x..)`, `port ALL` (`perfquery -a`: `port` is `None`), other counter groups
//! (`# PortRcvErrorDetails counters: ...`: `group` says which), hexadecimal select fields
//! (`PortSelect`, `CounterSelect`, `CounterSelect2`: not counters), a trailing blank line, and
//! `ibwarn:` / `iberror:` lines (kept in `errors`).
//!
//! Recognised evidence: at least one `# ... counters: Lid N port M` header; counter lines
//! before it are an error.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const KIND: &str = "perfquery";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Perfquery {
    pub ports: Vec<PortCounters>,
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PortCounters {
    /// `Port counters`, `Port extended counters`, `PortRcvErrorDetails counters`...
    pub group: String,
    /// `-x`: the extended (64-bit) layout.
    pub extended: bool,
    pub lid: u64,
    /// `None` for `port ALL`.
    pub port: Option<u32>,
    pub cap_mask: Option<String>,
    pub cap_mask2: Option<String>,
    /// Counter name as printed (`SymbolErrorCounter`, `PortXmitWait`) → value.
    pub counters: BTreeMap<String, u64>,
}

const SELECTS: &[&str] = &["PortSelect", "CounterSelect", "CounterSelect2"];

fn header(t: &str) -> Option<PortCounters> {
    let c = regex!(
        r"^#\s*(.+? counters):\s*Lid\s+(\d+)\s+port\s+(\d+|ALL)(?:\s*\(CapMask:\s*(0x[0-9A-Fa-f]+)(?:\s+CapMask2:\s*(0x[0-9A-Fa-f]+))?\))?\s*$"
    )
    .captures(t)?;
    Some(PortCounters {
        group: c[1].to_string(),
        extended: c[1].contains("extended"),
        lid: c[2].parse().ok()?,
        port: c[3].parse().ok(),
        cap_mask: c.get(4).map(|m| m.as_str().to_string()),
        cap_mask2: c.get(5).map(|m| m.as_str().to_string()),
        counters: BTreeMap::new(),
    })
}

pub fn parse(text: &str) -> Result<Perfquery, ParseError> {
    let mut out = Perfquery::default();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("ibwarn:") || t.contains("iberror:") {
            out.errors.push(t.to_string());
            continue;
        }
        if let Some(h) = header(t) {
            out.ports.push(h);
            continue;
        }
        let Some(c) = regex!(r"^([A-Za-z][A-Za-z0-9_]*):\.*\s*(\S+)$").captures(t) else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `# ... counters: Lid N port M` or `Name:....value`",
            ));
        };
        let Some(p) = out.ports.last_mut() else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected a `# ... counters: Lid N port M` header first",
            ));
        };
        if SELECTS.contains(&&c[1]) {
            continue;
        }
        let Ok(v) = c[2].parse::<u64>() else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "counter value is not a number",
            ));
        };
        p.counters.insert(c[1].to_string(), v);
    }
    if out.ports.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no `# ... counters: Lid N port M` header",
        ));
    }
    Ok(out)
}

crate::impl_shape!(PortCounters, parsed("perfquery port"));
crate::impl_shape!(
    Perfquery,
    parsed("perfquery result").many::<PortCounters>("ports")
);

crate::parser!("perfquery", "perfquery [-x] [LID PORT] (classic or extended counters)", sample: "ibdiags/perfquery-x-2port-lid1719-capmask2-qp1dropped-xmitwait.txt");

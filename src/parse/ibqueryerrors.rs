//! `ibqueryerrors` (infiniband-diags): the error counters of every port of the subnet that are
//! beyond their thresholds (default: any non-zero), one section per node:
//!
//! ```text
//! Errors for 0x2c903006e29b0 "MF0;ys23ib4:SX6036/U1"
//!    GUID 0x2c903006e29b0 port 5: [SymbolErrorCounter == 65535] [LinkDownedCounter == 2]
//! Errors for "rd240 mlx4_0"
//!    GUID 0xe41d2d0300e0bae1 port 1: [PortXmitWait == 4294967295]
//!
//! ## Summary: 4 nodes checked, 4 bad nodes found
//! ##          43 ports checked, 14 ports have errors beyond threshold
//! ```
//!
//! A switch's section names its GUID and node description, a CA's its description only; `port
//! ALL` is the switch's sum over its ports (kept, `port: None`); port 0 is the switch's
//! management port. Handles: saturated counters (65535, 4294967295) as printed, the empty
//! `## Thresholds:` / `## Suppressed:` lines, a fabric without errors (only the summary).
//!
//! Recognised evidence: the `## Summary: N nodes checked` line or an `Errors for` section.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const KIND: &str = "ibqueryerrors";

/// One port line: its node and the counters beyond threshold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PortErrors {
    /// The section's node description (`MF0;ys23ib4:SX6036/U1`, `rd240 mlx4_0`).
    pub node: String,
    /// The section's node GUID (switches only).
    pub node_guid: Option<String>,
    /// The line's port GUID.
    pub guid: String,
    /// The port number; `None` for `port ALL` (a switch's sum over its ports).
    pub port: Option<u32>,
    pub counters: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ibqueryerrors {
    pub ports: Vec<PortErrors>,
    pub nodes_checked: Option<u64>,
    pub bad_nodes: Option<u64>,
    pub ports_checked: Option<u64>,
    pub bad_ports: Option<u64>,
}

pub fn parse(text: &str) -> Result<Ibqueryerrors, ParseError> {
    let mut out = Ibqueryerrors::default();
    let mut node: Option<(String, Option<String>)> = None;
    let mut seen = false;
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() || t.starts_with("ibwarn") {
            continue;
        }
        if let Some(c) = regex!(r#"^Errors for (?:(0x[0-9a-fA-F]+) )?"(.*)"$"#).captures(t) {
            node = Some((c[2].to_string(), c.get(1).map(|m| m.as_str().to_string())));
            seen = true;
            continue;
        }
        if let Some(c) =
            regex!(r"^## Summary: (\d+) nodes checked, (\d+) bad nodes found").captures(t)
        {
            out.nodes_checked = c[1].parse().ok();
            out.bad_nodes = c[2].parse().ok();
            seen = true;
            continue;
        }
        if let Some(c) = regex!(r"^##\s+(\d+) ports checked, (\d+) ports have errors").captures(t) {
            out.ports_checked = c[1].parse().ok();
            out.bad_ports = c[2].parse().ok();
            continue;
        }
        if t.starts_with("##") {
            continue;
        }
        let (Some(c), Some((desc, node_guid))) = (
            regex!(r"^GUID (0x[0-9a-fA-F]+) port (ALL|\d+):\s*(.*)$").captures(t),
            node.as_ref(),
        ) else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `Errors for [0xGUID] \"DESC\"`, `GUID 0x... port N: [Counter == V] ...` or a `## Summary` line",
            ));
        };
        let mut counters = BTreeMap::new();
        for m in regex!(r"\[(\w+) == (\d+)\]").captures_iter(&c[3]) {
            counters.insert(m[1].to_string(), m[2].parse().unwrap_or(u64::MAX));
        }
        out.ports.push(PortErrors {
            node: desc.clone(),
            node_guid: node_guid.clone(),
            guid: c[1].to_string(),
            port: c[2].parse().ok(),
            counters,
        });
    }
    if !seen {
        return Err(unrecognised(
            KIND,
            text,
            "no `## Summary: N nodes checked` line and no `Errors for` section",
        ));
    }
    Ok(out)
}

crate::impl_shape!(PortErrors, parsed("ibqueryerrors port"));
crate::impl_shape!(
    Ibqueryerrors,
    parsed("ibqueryerrors result").many::<PortErrors>("ports")
);

crate::parser!("ibqueryerrors", "ibqueryerrors", sample: "ibdiags/ibqueryerrors-sx6036-switch-8-ports-hcas-xmitwait-mailing-list.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_fabric_is_the_summary_alone() {
        let t = parse("\n## Summary: 18 nodes checked, 0 bad nodes found\n##          612 ports checked, 0 ports have errors beyond threshold\n## Thresholds: \n## Suppressed:\n").unwrap();
        assert!(t.ports.is_empty());
        assert_eq!((t.nodes_checked, t.bad_ports), (Some(18), Some(0)));
        assert!(parse("GUID 0x1 port 1: [SymbolErrorCounter == 1]\n").is_err());
    }
}

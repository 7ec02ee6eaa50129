//! `ibtracert SLID DLID` (infiniband-diags): the unicast path the subnet's forwarding tables
//! give from one port to another, one line per hop:
//!
//! ```text
//! From ca {0x001175000077ef9e} portnum 1 lid 129-129 "hype281 qib0"
//! [1] -> switch port {0x00066a00ec002eec}[9] lid 17-17 "ibcore1 L109"
//! [27] -> switch port {0x00066a00eb002d14}[11] lid 8-8 "ibcore1 S205A"
//! [9] -> ca port {0x001175000077a00e}[1] lid 332-332 "hype353 qib0"
//! To ca {0x001175000077a00e} portnum 1 lid 332-332 "hype353 qib0"
//! ```
//!
//! A hop is `[OUT] -> TYPE port {GUID}[IN] lid A-B "DESC"`: the port the packet leaves the
//! previous node by, the next node's type, port GUID and the port it enters by, its LID range
//! (LMC) and node description. Handles: a missing description (`-n`, or a node without one),
//! `ca`, `switch` and `router` nodes, ibwarn/iberror lines (skipped: a trace that stops at a hop
//! that does not answer has no `To` line, `complete` false).
//!
//! Recognised evidence: a `From TYPE {0x…} portnum N lid A-B` line.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ibtracert";

/// The first or last node of the path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceEnd {
    /// `ca`, `switch`, `router`.
    pub node_type: String,
    pub guid: String,
    pub port: u32,
    pub lid: u64,
    pub description: String,
}

/// One hop: out of the previous node by `out_port`, into this node by `in_port`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hop {
    pub out_port: u32,
    pub node_type: String,
    pub guid: String,
    pub in_port: u32,
    pub lid: u64,
    pub description: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ibtracert {
    pub from: TraceEnd,
    pub hops: Vec<Hop>,
    pub to: Option<TraceEnd>,
    /// The `To` line was printed: every hop answered.
    pub complete: bool,
    /// Switches on the path (hops whose node is a switch).
    pub switches: usize,
    /// The path in one line (`path_text`), for messages.
    pub path: String,
}

impl Ibtracert {
    /// The path in one line for a message: each switch by description (else GUID), LID and
    /// the ports in and out (`"ibcore1 L109" LID 17 in 9 out 27 -> …`), between the two ends.
    pub fn path_text(&self) -> String {
        let name = |d: &str, g: &str| {
            if d.is_empty() {
                g.to_string()
            } else {
                format!("\"{d}\"")
            }
        };
        let mut out = vec![format!(
            "{} LID {} port {}",
            name(&self.from.description, &self.from.guid),
            self.from.lid,
            self.from.port
        )];
        for (i, h) in self.hops.iter().enumerate() {
            let leave = self.hops.get(i + 1).map(|n| n.out_port);
            let mut s = format!(
                "{} {} LID {} in {}",
                h.node_type,
                name(&h.description, &h.guid),
                h.lid,
                h.in_port
            );
            if let (Some(o), "switch") = (leave, h.node_type.as_str()) {
                s.push_str(&format!(" out {o}"));
            }
            out.push(s);
        }
        if !self.complete {
            out.push("(no answer beyond)".into());
        }
        out.join(" -> ")
    }
}

pub fn parse(text: &str) -> Result<Ibtracert, ParseError> {
    let mut from = None;
    let mut hops = Vec::new();
    let mut to = None;
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() || t.starts_with("ibwarn") || t.contains("iberror") {
            continue;
        }
        let ends = regex!(
            r#"^(From|To) (ca|switch|router) \{(0x[0-9a-fA-F]+)\} portnum (\d+) lid (\d+)-\d+(?:\s+"(.*)")?\s*$"#
        );
        if let Some(c) = ends.captures(t) {
            let e = TraceEnd {
                node_type: c[2].to_string(),
                guid: c[3].to_string(),
                port: c[4].parse().unwrap_or(0),
                lid: c[5].parse().unwrap_or(0),
                description: c.get(6).map(|m| m.as_str().to_string()).unwrap_or_default(),
            };
            if &c[1] == "From" {
                from = Some(e);
            } else {
                to = Some(e);
            }
            continue;
        }
        let hop = regex!(
            r#"^\[(\d+)\] -> (ca|switch|router) port \{(0x[0-9a-fA-F]+)\}\[(\d+)\] lid (\d+)-\d+(?:\s+"(.*)")?\s*$"#
        );
        let Some(c) = hop.captures(t) else {
            if from.is_none() {
                continue;
            }
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected a hop `[OUT] -> TYPE port {GUID}[IN] lid A-B \"DESC\"` or `To TYPE {GUID} portnum N lid A-B`",
            ));
        };
        hops.push(Hop {
            out_port: c[1].parse().unwrap_or(0),
            node_type: c[2].to_string(),
            guid: c[3].to_string(),
            in_port: c[4].parse().unwrap_or(0),
            lid: c[5].parse().unwrap_or(0),
            description: c.get(6).map(|m| m.as_str().to_string()).unwrap_or_default(),
        });
    }
    let Some(from) = from else {
        return Err(unrecognised(
            KIND,
            text,
            "no `From TYPE {0x...} portnum N lid A-B` line",
        ));
    };
    let switches = hops.iter().filter(|h| h.node_type == "switch").count();
    let mut t = Ibtracert {
        from,
        complete: to.is_some(),
        to,
        hops,
        switches,
        path: String::new(),
    };
    t.path = t.path_text();
    Ok(t)
}

crate::impl_shape!(TraceEnd, parsed("ibtracert end"));
crate::impl_shape!(Hop, parsed("ibtracert hop"));
crate::impl_shape!(
    Ibtracert,
    parsed("ibtracert result")
        .one::<TraceEnd>("from")
        .many::<Hop>("hops")
        .one::<TraceEnd>("to")
);

crate::parser!("ibtracert", "ibtracert SLID DLID", sample: "ibdiags/ibtracert-llnl-hype-qib-3-switch-hops-through-core-s205a.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_that_stops_is_incomplete_and_says_so() {
        let full = include_str!(
            "../../tests/fixtures/ibdiags/ibtracert-llnl-hype-qib-3-switch-hops-through-core-s205a.txt"
        );
        // the first three lines, as a trace whose next hop does not answer prints them
        let cut: String = full.lines().take(3).map(|l| format!("{l}\n")).collect();
        let t = parse(&format!("{cut}ibwarn: [4242] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0,1,27)\n")).unwrap();
        assert!(!t.complete);
        assert_eq!(t.hops.len(), 2);
        assert!(
            t.path_text().ends_with("(no answer beyond)"),
            "{}",
            t.path_text()
        );
        assert!(parse("ibtracert: iberror: failed: can't resolve destination port 12\n").is_err());
    }

    #[test]
    fn hops_without_descriptions_parse() {
        let t = parse("From ca {0xb8cef60300a7d492} portnum 1 lid 5-5\n[1] -> switch port {0x248a070300f5d6a0}[1] lid 1-1\n[17] -> ca port {0xb8cef60300a7d494}[1] lid 12-12\nTo ca {0xb8cef60300a7d494} portnum 1 lid 12-12\n").unwrap();
        assert_eq!(t.hops[0].description, "");
        assert_eq!(t.switches, 1);
        assert!(
            t.path_text()
                .contains("switch 0x248a070300f5d6a0 LID 1 in 1 out 17"),
            "{}",
            t.path_text()
        );
    }
}

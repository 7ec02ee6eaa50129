//! `iblinkinfo` (infiniband-diags): the fabric's links as seen from the subnet, grouped under
//! `CA: NAME:` and `Switch: 0xGUID NAME:` headers.
//!
//! Handles: CA lines (`0xPORTGUID  LID  PORT[  ] ==( 4X 53.125 Gbps Active/  LinkUp)==> ...`)
//! and switch lines (no GUID), unconnected ports (`==(  Down/ Polling)==>  [  ] "" ( )`: no
//! width, no peer), one or two spaces after `Active/`, the trailing `( ... )` note kept as
//! printed, and output filtered through `grep` (no section headers: `node` is `None`).
//!
//! Width and per-lane signalling are printed separately: `4X 106.25 Gbps` is NDR (400 Gbit/s),
//! `4X 53.125` HDR (200), `4X 25.78125` EDR (100). `speed` names the generation and `rate` is
//! the link's data rate in Gbit/s as `ibstat` prints it (width × the generation's lane rate).
//!
//! Recognised evidence: at least one `==( ... )==>` link line.

use super::util::{float, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "iblinkinfo";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// Section name: the CA (`cu01 HCA-1`) or switch (`Quantum Mellanox Technologies`).
    pub node: Option<String>,
    /// `CA` or `Switch`, from the section header.
    pub node_type: Option<String>,
    /// The switch GUID from its header, or the CA port GUID printed on the line.
    pub guid: Option<String>,
    pub lid: u64,
    pub port: u32,
    /// e.g. `4X`; `None` when the port is down.
    pub width: Option<String>,
    /// Per-lane signalling as printed, Gbit/s (`53.125`).
    pub lane_gbps: Option<f64>,
    /// `SDR`, `DDR`, `QDR`, `FDR10`, `FDR`, `EDR`, `HDR`, `NDR`, `XDR`.
    pub speed: Option<String>,
    /// Data rate as `ibstat` prints it (4X HDR = 200).
    pub rate: Option<f64>,
    /// `Active`, `Down`, `Initialize`, `Armed`.
    pub state: String,
    /// `LinkUp`, `Polling`, `Disabled`...
    pub phys_state: String,
    pub peer_lid: Option<u64>,
    pub peer_port: Option<u32>,
    /// The peer's node description (`"cu07 HCA-1"`), empty when unconnected.
    pub peer: Option<String>,
    /// The `( ... )` note after the peer, e.g. a speed/width mismatch warning.
    pub note: Option<String>,
}

/// Lane signalling (Gbit/s as printed) → generation and lane data rate (Gbit/s, as ibstat's
/// `Rate` counts it).
fn generation(lane: f64) -> Option<(&'static str, f64)> {
    const GENS: &[(f64, &str, f64)] = &[
        (2.5, "SDR", 2.5),
        (5.0, "DDR", 5.0),
        (10.0, "QDR", 10.0),
        (10.3125, "FDR10", 10.0),
        (14.0625, "FDR", 14.0),
        (25.78125, "EDR", 25.0),
        (53.125, "HDR", 50.0),
        (106.25, "NDR", 100.0),
        (212.5, "XDR", 200.0),
    ];
    GENS.iter()
        .find(|(s, _, _)| (s - lane).abs() < 0.01)
        .map(|(_, n, r)| (*n, *r))
}

fn link(t: &str) -> Option<Link> {
    let c = regex!(
        r#"^(?:(0x[0-9a-fA-F]+)\s+)?(\d+)\s+(\d+)\[[^\]]*\]\s*==\(\s*(?:(\d+)X\s+([\d.]+)\s*Gbps\s+)?(\w+)/\s*(\w+)\s*\)==>\s*(?:(\d+)\s+)?(\d+)?\[[^\]]*\]\s*"([^"]*)"\s*\(\s*([^)]*?)\s*\)\s*$"#
    )
    .captures(t)?;
    let lane = c.get(5).and_then(|m| float(m.as_str()));
    let gen = lane.and_then(generation);
    let width: Option<f64> = c.get(4).and_then(|m| float(m.as_str()));
    Some(Link {
        guid: c.get(1).map(|m| m.as_str().to_string()),
        lid: c[2].parse().ok()?,
        port: c[3].parse().ok()?,
        width: c.get(4).map(|m| format!("{}X", m.as_str())),
        lane_gbps: lane,
        speed: gen.map(|g| g.0.to_string()),
        rate: gen.zip(width).map(|(g, w)| g.1 * w),
        state: c[6].to_string(),
        phys_state: c[7].to_string(),
        peer_lid: c.get(8).and_then(|m| m.as_str().parse().ok()),
        peer_port: c.get(9).and_then(|m| m.as_str().parse().ok()),
        peer: Some(c[10].to_string()).filter(|s| !s.is_empty()),
        note: Some(c[11].to_string()).filter(|s| !s.is_empty()),
        ..Link::default()
    })
}

pub fn parse(text: &str) -> Result<Vec<Link>, ParseError> {
    let mut out = Vec::new();
    let mut section: (Option<String>, Option<String>, Option<String>) = (None, None, None);
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = regex!(r"^CA:\s*(.*?):$").captures(t) {
            section = (Some(c[1].to_string()), Some("CA".into()), None);
            continue;
        }
        if let Some(c) = regex!(r"^Switch:\s*(0x[0-9a-fA-F]+)\s+(.*?):$").captures(t) {
            section = (
                Some(c[2].to_string()),
                Some("Switch".into()),
                Some(c[1].to_string()),
            );
            continue;
        }
        let Some(mut l) = link(t) else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `CA: NAME:`, `Switch: GUID NAME:` or a `LID PORT[ ] ==( ... )==> ...` link",
            ));
        };
        l.node.clone_from(&section.0);
        l.node_type.clone_from(&section.1);
        if l.guid.is_none() {
            l.guid.clone_from(&section.2);
        }
        out.push(l);
    }
    if out.is_empty() {
        return Err(unrecognised(KIND, text, "no `==( ... )==>` link line"));
    }
    Ok(out)
}

crate::impl_shape!(Link, parsed("iblinkinfo link"));

crate::parser!("iblinkinfo", "iblinkinfo", sample: "ibdiags/iblinkinfo-edr-grep-up-sb7700-no-section-headers.txt");

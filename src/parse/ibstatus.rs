//! `ibstatus` (infiniband-diags): one `Infiniband device 'DEV' port N status:` block per port.
//!
//! Handles: coded values (`state: 4: ACTIVE`, `phys state: 5: LinkUp`: the code and the text
//! are split), hexadecimal LIDs (`base lid: 0x33bf`), rates with width and generation
//! (`200 Gb/sec (4X HDR)`), Ethernet ports (`link_layer: Ethernet`, `default gid: unknown`),
//! indentation with spaces or tabs and blank lines between blocks.
//!
//! Recognised evidence: at least one `Infiniband device '...' port N status:` line.

use super::util::{float, key_value, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ibstatus";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Port {
    pub device: String,
    pub port: u32,
    pub default_gid: Option<String>,
    pub base_lid: Option<u64>,
    pub sm_lid: Option<u64>,
    /// Text part, e.g. `ACTIVE`, `DOWN`.
    pub state: Option<String>,
    pub state_code: Option<u32>,
    /// Text part, e.g. `LinkUp`, `Polling`.
    pub phys_state: Option<String>,
    pub phys_state_code: Option<u32>,
    /// Gbit/s, e.g. 200.
    pub rate: Option<f64>,
    /// e.g. `4X`.
    pub width: Option<String>,
    /// e.g. `HDR`, `NDR`.
    pub speed: Option<String>,
    pub link_layer: Option<String>,
}

/// `4: ACTIVE` → (Some(4), `ACTIVE`).
fn coded(v: &str) -> (Option<u32>, String) {
    match regex!(r"^(\d+):\s*(.*)$").captures(v) {
        Some(c) => (c[1].parse().ok(), c[2].to_string()),
        None => (None, v.to_string()),
    }
}

fn lid(v: &str) -> Option<u64> {
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

fn field(p: &mut Port, key: &str, v: &str) {
    match key {
        "default gid" => p.default_gid = Some(v.to_string()),
        "base lid" => p.base_lid = lid(v),
        "sm lid" => p.sm_lid = lid(v),
        "state" => {
            let (code, text) = coded(v);
            (p.state_code, p.state) = (code, Some(text));
        }
        "phys state" => {
            let (code, text) = coded(v);
            (p.phys_state_code, p.phys_state) = (code, Some(text));
        }
        "rate" => {
            if let Some(c) = regex!(r"^([\d.]+)\s*Gb/sec(?:\s*\((\d+X)\s*([^)]*)\))?").captures(v) {
                p.rate = float(&c[1]);
                p.width = c.get(2).map(|m| m.as_str().to_string());
                p.speed = c
                    .get(3)
                    .map(|m| m.as_str().trim().to_string())
                    .filter(|s| !s.is_empty());
            }
        }
        "link_layer" => p.link_layer = Some(v.to_string()),
        _ => {}
    }
}

pub fn parse(text: &str) -> Result<Vec<Port>, ParseError> {
    let mut out: Vec<Port> = Vec::new();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = regex!(r"^Infiniband device '([^']+)' port (\d+) status:$").captures(t) {
            out.push(Port {
                device: c[1].to_string(),
                port: c[2].parse().unwrap_or_default(),
                ..Port::default()
            });
            continue;
        }
        let Some(p) = out.last_mut() else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `Infiniband device 'DEV' port N status:` first",
            ));
        };
        let Some((key, v)) = key_value(t) else {
            return Err(ParseError::new(KIND, n, line, "expected `key: value`"));
        };
        field(p, key, v);
    }
    if out.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no `Infiniband device ... status:` line",
        ));
    }
    Ok(out)
}

crate::impl_shape!(Port, parsed("ibstatus port"));

crate::parser!("ibstatus", "ibstatus", sample: "rdma/ibstatus-9dev-azure-a100-hdr-plus-eth-vf.txt");

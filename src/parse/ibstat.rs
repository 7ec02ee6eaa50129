//! `ibstat` (infiniband-diags): one `CA 'NAME'` block per adapter, one `Port N:` block per port.
//!
//! Handles: tab indentation and terminal copies with spaces, adapters in lexical order
//! (`mlx5_10` after `mlx5_1`), `Base lid: 65535` on a down
//! CX-8, Ethernet (RoCE) ports (`Link layer: Ethernet`, LIDs 0), no trailing newline, and a
//! partial output ending in an `ibpanic:` line (the adapters before it are kept, the line goes
//! to `errors`).
//!
//! Recognised evidence: at least one `CA '...'` line; key/value lines before it are an error.

use super::util::{key_value, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ibstat";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ibstat {
    pub cas: Vec<Ca>,
    /// `ibpanic:` / `ibwarn:` lines, as printed.
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ca {
    pub ca: String,
    /// e.g. `MT4129` (ConnectX-7).
    pub ca_type: Option<String>,
    pub ports_count: Option<u32>,
    pub fw_ver: Option<String>,
    pub hw_ver: Option<String>,
    pub node_guid: Option<String>,
    pub system_image_guid: Option<String>,
    pub ports: Vec<Port>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Port {
    pub port: u32,
    /// `Active`, `Down`, `Initializing`, `Armed`.
    pub state: Option<String>,
    /// `LinkUp`, `Polling`, `Disabled`, ...
    pub phys_state: Option<String>,
    /// Gbit/s as printed (`400` for 4X NDR, `200` for 4X HDR).
    pub rate: Option<f64>,
    pub base_lid: Option<u64>,
    pub lmc: Option<u64>,
    pub sm_lid: Option<u64>,
    pub capability_mask: Option<String>,
    pub port_guid: Option<String>,
    /// `InfiniBand` / `Ethernet`.
    pub link_layer: Option<String>,
}

fn port_field(p: &mut Port, key: &str, v: &str) {
    match key {
        "State" => p.state = Some(v.to_string()),
        "Physical state" => p.phys_state = Some(v.to_string()),
        "Rate" => p.rate = super::util::float(v),
        "Base lid" => p.base_lid = v.parse().ok(),
        "LMC" => p.lmc = v.parse().ok(),
        "SM lid" => p.sm_lid = v.parse().ok(),
        "Capability mask" => p.capability_mask = Some(v.to_string()),
        "Port GUID" => p.port_guid = Some(v.to_string()),
        "Link layer" => p.link_layer = Some(v.to_string()),
        _ => {}
    }
}

fn ca_field(ca: &mut Ca, key: &str, v: &str) {
    match key {
        "CA type" => ca.ca_type = Some(v.to_string()),
        "Number of ports" => ca.ports_count = v.parse().ok(),
        "Firmware version" => ca.fw_ver = Some(v.to_string()),
        "Hardware version" => ca.hw_ver = Some(v.to_string()),
        "Node GUID" => ca.node_guid = Some(v.to_string()),
        "System image GUID" => ca.system_image_guid = Some(v.to_string()),
        _ => {}
    }
}

pub fn parse(text: &str) -> Result<Ibstat, ParseError> {
    let mut out = Ibstat::default();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("ibpanic:") || t.starts_with("ibwarn:") {
            out.errors.push(t.to_string());
            continue;
        }
        if let Some(c) = regex!(r"^CA '([^']+)'$").captures(t) {
            out.cas.push(Ca {
                ca: c[1].to_string(),
                ..Ca::default()
            });
            continue;
        }
        let Some(ca) = out.cas.last_mut() else {
            return Err(ParseError::new(KIND, n, line, "expected `CA 'NAME'` first"));
        };
        if let Some(c) = regex!(r"^Port (\d+):$").captures(t) {
            let Ok(port) = c[1].parse() else {
                return Err(ParseError::new(KIND, n, line, "port number expected"));
            };
            ca.ports.push(Port {
                port,
                ..Port::default()
            });
            continue;
        }
        let Some((key, v)) = key_value(t) else {
            return Err(ParseError::new(KIND, n, line, "expected `key: value`"));
        };
        match ca.ports.last_mut() {
            Some(p) => port_field(p, key, v),
            None => ca_field(ca, key, v),
        }
    }
    if out.cas.is_empty() {
        return Err(unrecognised(KIND, text, "no `CA '...'` line"));
    }
    Ok(out)
}

crate::impl_shape!(Port, parsed("ibstat port"));
crate::impl_shape!(Ca, parsed("ibstat CA").many::<Port>("ports"));
crate::impl_shape!(Ibstat, parsed("ibstat result").many::<Ca>("cas"));

crate::parser!("ibstat", "ibstat", sample: "rdma/ibstat-8ca-azure-a100-hdr-then-ibpanic-exit255.txt");

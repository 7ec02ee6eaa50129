//! `ibv_devinfo` and `ibv_devinfo -v` (rdma-core).
//!
//! Handles: tab-aligned output with variable tab counts, terminal copies with spaces and
//! trailing padding, several devices separated by blank lines, multi-port devices (ConnectX-3
//! port 1 IB / port 2 Ethernet), values with a numeric code in parentheses (`PORT_ACTIVE (4)`,
//! `1024 (3)`: the text and the number are split), and `-v` extras (`active_width`,
//! `active_speed`, `phys_state`, `GID[  n]` lines; other verbose capability lines without a
//! `key: value` form are ignored).
//!
//! Recognised evidence: at least one `hca_id:` line; key/value lines before it are an error.

use super::util::{key_value, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ibv-devinfo";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub hca_id: String,
    pub transport: Option<String>,
    pub fw_ver: Option<String>,
    pub node_guid: Option<String>,
    pub vendor_id: Option<String>,
    pub vendor_part_id: Option<u64>,
    pub board_id: Option<String>,
    pub phys_port_cnt: Option<u32>,
    pub ports: Vec<Port>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Port {
    pub port: u32,
    /// e.g. `PORT_ACTIVE`, `PORT_DOWN`.
    pub state: Option<String>,
    pub max_mtu: Option<u32>,
    pub active_mtu: Option<u32>,
    pub sm_lid: Option<u64>,
    pub port_lid: Option<u64>,
    /// `InfiniBand` / `Ethernet`.
    pub link_layer: Option<String>,
    /// `-v` only, e.g. `4X`.
    pub active_width: Option<String>,
    /// `-v` only, e.g. `2.5 Gbps`.
    pub active_speed: Option<String>,
    /// `-v` only, e.g. `LINK_UP`.
    pub phys_state: Option<String>,
    /// `-v` only: GID table entries as printed (`::ffff:10.0.0.1, RoCE v2`).
    pub gids: Vec<String>,
}

/// `PORT_ACTIVE (4)` → `PORT_ACTIVE`; `1024 (3)` → `1024`.
fn text_part(v: &str) -> String {
    regex!(r"^(.*?)\s*\(\d+\)$")
        .captures(v)
        .map_or(v, |c| c.get(1).map_or(v, |m| m.as_str()))
        .to_string()
}

fn number(v: &str) -> Option<u64> {
    text_part(v).parse().ok()
}

pub fn parse(text: &str) -> Result<Vec<Device>, ParseError> {
    let mut out: Vec<Device> = Vec::new();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let Some((key, value)) = key_value(t) else {
            if out.is_empty() {
                return Err(ParseError::new(KIND, n, line, "expected `hca_id:` first"));
            }
            continue; // -v capability flag lines
        };
        if key == "hca_id" {
            out.push(Device {
                hca_id: value.to_string(),
                ..Device::default()
            });
            continue;
        }
        let Some(dev) = out.last_mut() else {
            return Err(ParseError::new(KIND, n, line, "expected `hca_id:` first"));
        };
        if key == "port" {
            let Some(port) = number(value).and_then(|p| u32::try_from(p).ok()) else {
                return Err(ParseError::new(KIND, n, line, "port number expected"));
            };
            dev.ports.push(Port {
                port,
                ..Port::default()
            });
            continue;
        }
        if let Some(p) = dev.ports.last_mut() {
            let v = text_part(value);
            match key {
                "state" => p.state = Some(v),
                "max_mtu" => p.max_mtu = v.parse().ok(),
                "active_mtu" => p.active_mtu = v.parse().ok(),
                "sm_lid" => p.sm_lid = v.parse().ok(),
                "port_lid" => p.port_lid = v.parse().ok(),
                "link_layer" => p.link_layer = Some(v),
                "active_width" => p.active_width = Some(v),
                "active_speed" => p.active_speed = Some(v),
                "phys_state" => p.phys_state = Some(v),
                k if k.starts_with("GID[") => p.gids.push(value.to_string()),
                _ => {}
            }
            continue;
        }
        match key {
            "transport" => dev.transport = Some(text_part(value)),
            "fw_ver" => dev.fw_ver = Some(value.to_string()),
            "node_guid" => dev.node_guid = Some(value.to_string()),
            "vendor_id" => dev.vendor_id = Some(value.to_string()),
            "vendor_part_id" => dev.vendor_part_id = number(value),
            "board_id" => dev.board_id = Some(value.to_string()),
            "phys_port_cnt" => {
                dev.phys_port_cnt = number(value).and_then(|p| u32::try_from(p).ok())
            }
            _ => {}
        }
    }
    if out.is_empty() {
        return Err(unrecognised(KIND, text, "no `hca_id:` line"));
    }
    Ok(out)
}

crate::impl_shape!(Port, parsed("ibv_devinfo port"));
crate::impl_shape!(Device, parsed("ibv_devinfo device").many::<Port>("ports"));

crate::parser!("ibv-devinfo", "ibv_devinfo [-v]", sample: "rdma/ibv_devinfo-mlx4-connectx3-2port-port2-down.txt");

//! `ibnetdiscover` (infiniband-diags): the subnet's topology, one section per node and one
//! line per connected port:
//!
//! ```text
//! (tabs shown as spaces)
//! switchguid=0xec0d9a0300ec8480(ec0d9a0300ec8480)
//! Switch    36 "S-ec0d9a0300ec8480"        # "SwitchIB Mellanox Technologies" base port 0 lid 23 lmc 0
//! [11]    "S-ec0d9a0300ec8200"[11]        # "SwitchIB Mellanox Technologies" lid 25 4xDDR
//! [13]    "H-08c0eb0300ddbf02"[1](8c0eb0300ddbf02)         # "gpu045 HCA-1" lid 100 4xEDR
//! Ca    1 "H-a088c20300ab0000"        # "node-a mlx5_0"
//! [1](a088c20300ab0001)     "S-…"[3]        # lid 1 lmc 0 "leaf" lid 2 4xNDR
//! ```
//!
//! A switch's port line names the peer (type letter S/H/R and node GUID, its port, its port
//! GUID for a CA), the peer's description and LID, and the link's width and speed
//! (`4xEDR`); a CA's names its own port GUID and LID first. Handles tabs or spaces, the
//! `vendid=`/`devid=`/`sysimgguid=`/`switchguid=`/`caguid=` lines and `#` comments.
//!
//! Recognised evidence: a `Switch N "S-…"` or `Ca N "H-…"` node line.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ibnetdiscover";

/// One connected port of a node, as its section lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TopoLink {
    /// `Switch`, `Ca` or `Rt`.
    pub node_type: String,
    /// The node's GUID as printed after `S-`/`H-`/`R-` (16 hex digits).
    pub node_guid: String,
    pub node_desc: String,
    pub port: u32,
    /// `S`, `H` or `R`.
    pub peer_type: String,
    pub peer_guid: String,
    pub peer_port: u32,
    pub peer_desc: String,
    pub peer_lid: Option<u64>,
    /// `4x`, `2x`, … and `EDR`, `NDR`, … of `4xEDR`.
    pub width: Option<String>,
    pub speed: Option<String>,
}

pub fn parse(text: &str) -> Result<Vec<TopoLink>, ParseError> {
    Ok(parse_numbered(text)?.into_iter().map(|(_, l)| l).collect())
}

/// [`parse`] with each link's line number (1-based): a saved ibnetdiscover output used as the
/// cabling plan (`parse::ib_cabling_plan`) names the line of each planned cable.
pub(crate) fn parse_numbered(text: &str) -> Result<Vec<(usize, TopoLink)>, ParseError> {
    let mut out = Vec::new();
    let mut node: Option<(String, String, String)> = None;
    let mut seen = false;
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty()
            || t.starts_with('#')
            || regex!(r"^[a-z]+=").is_match(t)
            || t.starts_with("ibwarn")
        {
            continue;
        }
        let node_line = regex!(r#"^(Switch|Ca|Rt)\s+\d+\s+"[SHR]-([0-9a-fA-F]+)"\s*#\s*"(.*?)""#);
        if let Some(c) = node_line.captures(t) {
            node = Some((c[1].to_string(), c[2].to_string(), c[3].to_string()));
            seen = true;
            continue;
        }
        let port_line = regex!(
            r#"^\[(\d+)\](?:\([0-9a-fA-Fx]+\))?\s+"([SHR])-([0-9a-fA-Fx]+)"\[(\d+)\](?:\([0-9a-fA-Fx]+\))?\s*#\s*(?:lid \d+ lmc \d+ )?"(.*?)"\s+lid (\d+)\s+(\d+x)(\S+)"#
        );
        let (Some(c), Some((ty, guid, desc))) = (port_line.captures(t), node.as_ref()) else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected a node line (`Switch N \"S-GUID\" # \"DESC\" ...`) or a port line (`[P] \"S-GUID\"[P] # \"DESC\" lid L 4xNDR`)",
            ));
        };
        out.push((
            n,
            TopoLink {
                node_type: ty.clone(),
                node_guid: guid.clone(),
                node_desc: desc.clone(),
                port: c[1].parse().unwrap_or(0),
                peer_type: c[2].to_string(),
                peer_guid: c[3].trim_start_matches("0x").to_string(),
                peer_port: c[4].parse().unwrap_or(0),
                peer_desc: c[5].to_string(),
                peer_lid: c[6].parse().ok(),
                width: Some(c[7].to_string()),
                speed: Some(c[8].to_string()),
            },
        ));
    }
    if !seen {
        return Err(unrecognised(
            KIND,
            text,
            "no `Switch N \"S-GUID\"` or `Ca N \"H-GUID\"` node line",
        ));
    }
    Ok(out)
}

crate::impl_shape!(TopoLink, parsed("ibnetdiscover link"));

crate::parser!("ibnetdiscover", "ibnetdiscover", sample: "ibdiags/ibnetdiscover-edr-switchib-two-switch-sections-uplink-4xddr.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_section_names_its_own_port_guid_and_lid_first() {
        // the CA layout of infiniband-diags' ibnetdiscover.c (out_ca_port): own port GUID
        // after the port, then own LID and LMC in the comment before the peer's description
        let t = parse("Ca\t1 \"H-a088c20300ab0000\"\t\t# \"node-a mlx5_0\"\n[1](a088c20300ab0001) \t\"S-fc6a1c0300e40000\"[3]\t\t# lid 1 lmc 0 \"leaf-1\" lid 200 4xNDR\n").unwrap();
        assert_eq!(
            (t[0].node_type.as_str(), t[0].port, t[0].peer_port),
            ("Ca", 1, 3)
        );
        assert_eq!(
            (t[0].peer_desc.as_str(), t[0].peer_lid),
            ("leaf-1", Some(200))
        );
        assert_eq!(t[0].speed.as_deref(), Some("NDR"));
        assert!(parse("[1]\t\"S-1\"[2]\t# \"x\" lid 1 4xEDR\n").is_err());
    }
}

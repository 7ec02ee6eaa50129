//! `ethtool IFACE` (link settings).
//!
//! Handles: tab-indented real output and 8-space indented mail/terminal copies; multi-line
//! link-mode lists (continuation lines without a colon, several modes on one line, modes without
//! `/Full`), `Not reported` lists, `Supported ports: [ TP AUI ... ]`, `Speed: Unknown!`,
//! `Duplex: Unknown! (255)`, `Link detected: no (Link training failure, ...)` (netlink extended
//! link state, kept in `link_detected_reason`), `Lanes:` (ethtool >= 5.10), the continuation
//! line of `Current message level`, and partial `ethtool IFACE | grep -A3 Speed` captures
//! without the `Settings for` header. `Settings for IFACE:` is found after a prefix too (pdsh /
//! clush `node01: `, mpirun `[1,0]<stdout>:`); that prefix is stripped from the following lines
//! that start with it.
//!
//! Recognised evidence: a `Settings for IFACE:` header or at least one of the keys `Speed`,
//! `Duplex`, `Link detected`, `Supported link modes`.

use super::util::{key_value, non_empty, numbered, regex, unrecognised, yes_no};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ethtool";

/// Parsed `ethtool IFACE` output; `None` / empty lists when ethtool did not print the value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ethtool {
    pub interface: Option<String>,
    /// `None` for `Unknown!` (no link / speed not reported).
    pub speed_mbps: Option<u64>,
    /// `"full"` / `"half"`; `None` for `Unknown!`.
    pub duplex: Option<String>,
    pub link_detected: Option<bool>,
    /// Text in parentheses after `Link detected: no`, e.g. `Link training failure, ...`.
    pub link_detected_reason: Option<String>,
    /// Current `Auto-negotiation: on|off`.
    pub auto_negotiation: Option<bool>,
    /// `Supports auto-negotiation: Yes|No`.
    pub supports_auto_negotiation: Option<bool>,
    pub port: Option<String>,
    pub lanes: Option<u32>,
    pub supported_ports: Vec<String>,
    pub supported_link_modes: Vec<String>,
    pub advertised_link_modes: Vec<String>,
    pub link_partner_advertised_link_modes: Vec<String>,
    pub supported_fec_modes: Vec<String>,
    pub advertised_fec_modes: Vec<String>,
    pub transceiver: Option<String>,
}

#[derive(Clone, Copy)]
enum List {
    None,
    SupportedModes,
    AdvertisedModes,
    PartnerModes,
    Ignored,
}

fn words(v: &str) -> Vec<String> {
    let v = v
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim();
    if v.eq_ignore_ascii_case("not reported") {
        return Vec::new();
    }
    v.split_whitespace().map(str::to_string).collect()
}

pub fn parse(text: &str) -> Result<Ethtool, ParseError> {
    let mut out = Ethtool::default();
    let mut evidence = false;
    let mut list = List::None;
    // Prefix a fan-out tool put before `Settings for` (`node01: `, `[1,0]<stdout>:`), stripped
    // from the lines that follow when they carry the same prefix.
    let mut prefix: Option<String> = None;
    for (_, line) in numbered(text) {
        let mut t = line.trim();
        let mut stripped = "";
        if let Some(p) = prefix.as_deref() {
            if let Some(rest) = t.strip_prefix(p) {
                t = rest.trim();
                stripped = p;
            }
        }
        if t.is_empty() {
            continue;
        }
        if let Some(c) = regex!(r"^(.*?)\s*\bSettings for (\S.*):$").captures(t) {
            let p = c[1].trim();
            if !p.is_empty() {
                prefix = Some(format!("{stripped}{p}"));
            }
            out.interface = Some(c[2].to_string());
            evidence = true;
            list = List::None;
            continue;
        }
        let Some((key, value)) = key_value(t) else {
            // Continuation line of a multi-line list (link modes, message level names).
            let target = match list {
                List::SupportedModes => Some(&mut out.supported_link_modes),
                List::AdvertisedModes => Some(&mut out.advertised_link_modes),
                List::PartnerModes => Some(&mut out.link_partner_advertised_link_modes),
                List::None | List::Ignored => None,
            };
            if let Some(v) = target {
                v.extend(words(t));
            }
            continue;
        };
        list = List::Ignored;
        match key {
            "Supported ports" => out.supported_ports = words(value),
            "Supported link modes" => {
                evidence = true;
                out.supported_link_modes = words(value);
                list = List::SupportedModes;
            }
            "Advertised link modes" => {
                out.advertised_link_modes = words(value);
                list = List::AdvertisedModes;
            }
            "Link partner advertised link modes" => {
                out.link_partner_advertised_link_modes = words(value);
                list = List::PartnerModes;
            }
            "Supported FEC modes" => out.supported_fec_modes = words(value),
            "Advertised FEC modes" => out.advertised_fec_modes = words(value),
            "Supports auto-negotiation" => out.supports_auto_negotiation = yes_no(value),
            "Speed" => {
                evidence = true;
                out.speed_mbps = regex!(r"^(\d+)\s*Mb/s$")
                    .captures(value)
                    .and_then(|c| c[1].parse().ok());
            }
            "Lanes" => out.lanes = value.parse().ok(),
            "Duplex" => {
                evidence = true;
                out.duplex = match value.to_ascii_lowercase().as_str() {
                    "full" => Some("full".into()),
                    "half" => Some("half".into()),
                    _ => None,
                };
            }
            "Auto-negotiation" => out.auto_negotiation = yes_no(value),
            "Port" => out.port = non_empty(value),
            "Transceiver" => out.transceiver = non_empty(value),
            "Link detected" => {
                evidence = true;
                let c = regex!(r"^(\w+)\s*(?:\((.*)\))?").captures(value);
                out.link_detected = c.as_ref().and_then(|c| yes_no(&c[1]));
                out.link_detected_reason = c
                    .as_ref()
                    .and_then(|c| c.get(2))
                    .and_then(|m| non_empty(m.as_str()));
            }
            _ => {}
        }
    }
    if !evidence {
        return Err(unrecognised(
            KIND,
            text,
            "no `Settings for IFACE:` header and no Speed/Duplex/Link detected/link modes line",
        ));
    }
    Ok(out)
}

crate::impl_shape!(Ethtool, parsed("ethtool result"));

crate::parser!("ethtool", "ethtool IFACE", sample: "lab/ethtool-veth.txt");

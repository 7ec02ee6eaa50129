//! `ethtool --show-eee IFACE` (Energy-Efficient Ethernet).
//!
//! Handles: `EEE settings for` (newer ethtool) and `EEE Settings for` (older), `EEE status:`
//! `not supported` / `disabled` / `enabled - active` / `enabled - inactive`, `Tx LPI: disabled`
//! or `Tx LPI: 5000 (us)`, multi-line Supported/Advertised/Link partner advertised mode lists.
//! A lone `netlink error: Operation not supported` (what ethtool prints for drivers without EEE
//! support, e.g. veth) is reported as `supported: false` with `error` set; other errors are a
//! ParseError.
//!
//! Recognised evidence: an `EEE status:` line (or the not-supported netlink error).

use super::util::{key_value, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "eee";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Eee {
    pub interface: Option<String>,
    pub supported: bool,
    pub enabled: bool,
    pub active: bool,
    /// `EEE status` as printed, e.g. `enabled - active`.
    pub status: Option<String>,
    /// `Tx LPI: 5000 (us)` → 5000; `None` when `disabled`.
    pub tx_lpi_us: Option<u64>,
    pub supported_link_modes: Vec<String>,
    pub advertised_link_modes: Vec<String>,
    pub link_partner_advertised_link_modes: Vec<String>,
    /// The ethtool error line when EEE is not supported by the driver at all.
    pub error: Option<String>,
}

pub fn parse(text: &str) -> Result<Eee, ParseError> {
    let mut out = Eee::default();
    let mut status_seen = false;
    let mut list: Option<u8> = None;
    for (_, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = regex!(r"^EEE [Ss]ettings for (.+):$").captures(t) {
            out.interface = Some(c[1].to_string());
            continue;
        }
        if regex!(r"^netlink error: Operation not supported$").is_match(t) && !status_seen {
            status_seen = true;
            out.error = Some(t.to_string());
            continue;
        }
        let Some((key, value)) = key_value(t) else {
            let words = t.split_whitespace().map(str::to_string);
            match list {
                Some(0) => out.supported_link_modes.extend(words),
                Some(1) => out.advertised_link_modes.extend(words),
                Some(2) => out.link_partner_advertised_link_modes.extend(words),
                _ => {}
            }
            continue;
        };
        list = None;
        let modes = || -> Vec<String> {
            if value.eq_ignore_ascii_case("not reported") {
                Vec::new()
            } else {
                value.split_whitespace().map(str::to_string).collect()
            }
        };
        match key {
            "EEE status" => {
                status_seen = true;
                out.error = None;
                out.status = Some(value.to_string());
                let v = value.to_ascii_lowercase();
                out.supported = v != "not supported";
                out.enabled = v.starts_with("enabled");
                out.active = v.starts_with("enabled") && v.ends_with("- active");
            }
            "Tx LPI" => {
                out.tx_lpi_us = regex!(r"^(\d+)")
                    .captures(value)
                    .and_then(|c| c[1].parse().ok())
            }
            "Supported EEE link modes" => {
                out.supported_link_modes = modes();
                list = Some(0);
            }
            "Advertised EEE link modes" => {
                out.advertised_link_modes = modes();
                list = Some(1);
            }
            "Link partner advertised EEE link modes" => {
                out.link_partner_advertised_link_modes = modes();
                list = Some(2);
            }
            _ => {}
        }
    }
    if !status_seen {
        return Err(unrecognised(KIND, text, "no `EEE status:` line"));
    }
    Ok(out)
}

crate::impl_shape!(Eee, parsed("EEE result"));

crate::parser!("eee", "ethtool --show-eee IFACE", sample: "ethtool/ethtool-show-eee-disabled-supported-modes-igc-2.5g.txt");

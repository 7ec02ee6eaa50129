//! `/proc/net/bonding/BOND`.
//!
//! Handles driver banners from 2008 to 2025 (`v3.2.4 (January 28, 2008)`, `v3.7.1 (April 27,
//! 2011)`, kernel-release banners like `v6.14.6-200.fc41.x86_64`); old slave sections without
//! Speed/Duplex/queue ID; `Speed: Unknown` / `Duplex: Unknown` on down slaves; whitespace-only
//! "blank" lines; tab- or space-indented `Active Aggregator Info`; per-slave `details actor /
//! partner lacp pdu` blocks (port state kept); RHEL backport extras (`Slave active`, `sm_vars`,
//! `Aggregator active`, ignored); `Primary Slave: X (primary_reselect always)`; non-upstream
//! hash policies (`vlansrc (5)`) reported by name; bonds with no slaves.
//!
//! `mode` is the short kernel name (`balance-rr`, `active-backup`, `balance-xor`, `broadcast`,
//! `802.3ad`, `balance-tlb`, `balance-alb`), `None` for an unknown description (kept in
//! `mode_description`). Recognised evidence: the banner or a `Bonding Mode:` line.

use super::util::{key_value, non_empty, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "bonding";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Bonding {
    /// Banner text after `Driver: `, e.g. `v3.7.1 (April 27, 2011)`.
    pub driver_version: Option<String>,
    pub mode: Option<String>,
    pub mode_description: Option<String>,
    pub mii_status: Option<String>,
    pub miimon_ms: Option<u64>,
    /// Name without the numeric id, e.g. `layer3+4`.
    pub transmit_hash_policy: Option<String>,
    pub primary_slave: Option<String>,
    pub active_slave: Option<String>,
    pub lacp_active: Option<String>,
    pub lacp_rate: Option<String>,
    pub ad_select: Option<String>,
    pub system_mac: Option<String>,
    pub active_aggregator_id: Option<u64>,
    pub active_aggregator_ports: Option<u64>,
    pub actor_key: Option<u64>,
    pub partner_key: Option<u64>,
    /// Partner MAC of the active aggregator; `00:00:00:00:00:00` means no LACP partner.
    pub partner_mac: Option<String>,
    pub slaves: Vec<Slave>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Slave {
    pub name: String,
    pub mii_status: Option<String>,
    /// `None` for `Unknown` or when the old driver does not print it.
    pub speed_mbps: Option<u64>,
    pub duplex: Option<String>,
    pub link_failure_count: Option<u64>,
    pub permanent_hw_addr: Option<String>,
    pub queue_id: Option<u64>,
    pub aggregator_id: Option<u64>,
    pub actor_churn_state: Option<String>,
    pub partner_churn_state: Option<String>,
    pub actor_churned_count: Option<u64>,
    pub partner_churned_count: Option<u64>,
    /// `port state` from `details actor lacp pdu`.
    pub actor_port_state: Option<u64>,
    /// `port state` from `details partner lacp pdu`.
    pub partner_port_state: Option<u64>,
    pub partner_system_mac: Option<String>,
}

#[derive(PartialEq, Clone, Copy)]
enum Section {
    Top,
    ActiveAggregator,
    Slave,
    ActorPdu,
    PartnerPdu,
}

fn short_mode(desc: &str) -> Option<&'static str> {
    let d = desc.to_ascii_lowercase();
    Some(if d.contains("round-robin") {
        "balance-rr"
    } else if d.contains("active-backup") {
        "active-backup"
    } else if d.contains("(xor)") {
        "balance-xor"
    } else if d.contains("broadcast") {
        "broadcast"
    } else if d.contains("802.3ad") {
        "802.3ad"
    } else if d.starts_with("transmit load balancing") {
        "balance-tlb"
    } else if d.starts_with("adaptive load balancing") {
        "balance-alb"
    } else {
        return None;
    })
}

fn num(v: &str) -> Option<u64> {
    regex!(r"^(\d+)")
        .captures(v.trim())
        .and_then(|c| c[1].parse().ok())
}

pub fn parse(text: &str) -> Result<Bonding, ParseError> {
    let mut out = Bonding::default();
    let mut evidence = false;
    let mut section = Section::Top;
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if !indented && matches!(section, Section::ActorPdu | Section::PartnerPdu) {
            section = Section::Slave;
        }
        if !indented && section == Section::ActiveAggregator {
            section = Section::Top;
        }
        if let Some(c) = regex!(r"^Ethernet Channel Bonding Driver:\s*(.*)$").captures(t) {
            evidence = true;
            out.driver_version = non_empty(&c[1]);
            continue;
        }
        match t {
            "802.3ad info" => continue,
            "Active Aggregator Info:" => {
                section = Section::ActiveAggregator;
                continue;
            }
            "details actor lacp pdu:" => {
                section = Section::ActorPdu;
                continue;
            }
            "details partner lacp pdu:" => {
                section = Section::PartnerPdu;
                continue;
            }
            _ => {}
        }
        let Some((key, value)) = key_value(t) else {
            return Err(ParseError::new(KIND, n, line, "expected `Key: value`"));
        };
        if key == "Slave Interface" {
            section = Section::Slave;
            out.slaves.push(Slave {
                name: value.to_string(),
                ..Slave::default()
            });
            continue;
        }
        let slave = out.slaves.last_mut();
        match (section, slave) {
            (Section::ActiveAggregator, _) => match key {
                "Aggregator ID" => out.active_aggregator_id = num(value),
                "Number of ports" => out.active_aggregator_ports = num(value),
                "Actor Key" => out.actor_key = num(value),
                "Partner Key" => out.partner_key = num(value),
                "Partner Mac Address" => out.partner_mac = non_empty(value),
                _ => {}
            },
            (Section::ActorPdu, Some(s)) => {
                if key == "port state" {
                    s.actor_port_state = num(value);
                }
            }
            (Section::PartnerPdu, Some(s)) => match key {
                "port state" => s.partner_port_state = num(value),
                "system mac address" => s.partner_system_mac = non_empty(value),
                _ => {}
            },
            (Section::Slave, Some(s)) => match key {
                "MII Status" => s.mii_status = non_empty(value),
                "Speed" => s.speed_mbps = num(value),
                "Duplex" => s.duplex = matches!(value, "full" | "half").then(|| value.to_string()),
                "Link Failure Count" => s.link_failure_count = num(value),
                "Permanent HW addr" => s.permanent_hw_addr = non_empty(value),
                "Slave queue ID" => s.queue_id = num(value),
                "Aggregator ID" => s.aggregator_id = num(value),
                "Actor Churn State" => s.actor_churn_state = non_empty(value),
                "Partner Churn State" => s.partner_churn_state = non_empty(value),
                "Actor Churned Count" => s.actor_churned_count = num(value),
                "Partner Churned Count" => s.partner_churned_count = num(value),
                _ => {}
            },
            _ => match key {
                "Bonding Mode" => {
                    evidence = true;
                    out.mode_description = non_empty(value);
                    out.mode = short_mode(value).map(str::to_string);
                }
                "Transmit Hash Policy" => {
                    out.transmit_hash_policy = value.split_whitespace().next().map(str::to_string)
                }
                "MII Status" => out.mii_status = non_empty(value),
                "MII Polling Interval (ms)" => out.miimon_ms = num(value),
                "Primary Slave" => {
                    out.primary_slave = value
                        .split_whitespace()
                        .next()
                        .filter(|s| *s != "None")
                        .map(str::to_string)
                }
                "Currently Active Slave" => {
                    out.active_slave = non_empty(value).filter(|s| s != "None")
                }
                "LACP active" => out.lacp_active = non_empty(value),
                "LACP rate" => out.lacp_rate = non_empty(value),
                "Aggregator selection policy (ad_select)" => out.ad_select = non_empty(value),
                "System MAC address" => out.system_mac = non_empty(value),
                _ => {}
            },
        }
    }
    if !evidence {
        return Err(unrecognised(
            KIND,
            text,
            "no `Ethernet Channel Bonding Driver` banner and no `Bonding Mode:` line",
        ));
    }
    Ok(out)
}

crate::impl_shape!(Slave, parsed("bond slave"));
crate::impl_shape!(Bonding, parsed("bond result").many::<Slave>("slaves"));

crate::parser!("bonding", "/proc/net/bonding/BOND", sample: "bonding/active-backup-2x25g-iscsi-v3.7.1-peer-notif.txt");

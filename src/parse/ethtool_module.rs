//! `ethtool -m IFACE` (module EEPROM, decoded): identity of the transceiver or cable and, for
//! optics with digital diagnostics, temperature, voltage, per-lane bias and TX/RX optical power
//! and the module's own warning and alarm thresholds and flags.
//!
//! Handles: QSFP/QSFP28 (SFF-8636) per-channel lines (`(Channel N)`, `(Chan N)`), the SFP
//! (SFF-8472) single-lane names (`Laser output power`, `Receiver signal average optical power`,
//! reported as lane 1), `0.0000 mW / -inf dBm` (no light: dBm is `None`, mW 0), passive DAC
//! cables without diagnostics (no lanes), tab or space indentation, repeated keys
//! (`Transceiver type`).
//!
//! Recognised evidence: an `Identifier :` line; lines without ` : ` and ethtool's errors (e.g.
//! `netlink error: Operation not supported`) are errors.

use super::util::{float, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ethtool-module";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Module {
    /// `Identifier`, e.g. `0x11 (QSFP28)`.
    pub identifier: String,
    /// The form factor in the identifier's parentheses, e.g. `QSFP28`, `QSFP+`, `SFP`.
    pub form_factor: Option<String>,
    /// e.g. `0x0c (MPO Parallel Optic)`, `0x23 (No separable connector)` (a DAC).
    pub connector: Option<String>,
    /// Every `Transceiver type` line, e.g. `100G Ethernet: 100G Base-SR4 or 25GBase-SR`.
    pub transceiver_type: Vec<String>,
    pub vendor_name: Option<String>,
    pub vendor_pn: Option<String>,
    pub vendor_sn: Option<String>,
    pub vendor_rev: Option<String>,
    /// `Module temperature` in °C.
    pub temperature_c: Option<f64>,
    /// `Module voltage` in V.
    pub voltage_v: Option<f64>,
    /// Per-lane diagnostics (empty for modules without them, e.g. passive DAC).
    pub lanes: Vec<Lane>,
    /// The module's own thresholds.
    pub thresholds: Thresholds,
    /// Warning/alarm flags the module raises (value `On`), as printed, e.g.
    /// `Laser rx power low alarm (Channel 2)`.
    pub flags_on: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Lane {
    /// 1-based channel number (SFP: 1).
    pub lane: u32,
    pub tx_bias_ma: Option<f64>,
    pub tx_power_mw: Option<f64>,
    /// `None` for `-inf dBm` (no light).
    pub tx_power_dbm: Option<f64>,
    pub rx_power_mw: Option<f64>,
    /// `None` for `-inf dBm` (no light).
    pub rx_power_dbm: Option<f64>,
}

/// Thresholds; power in dBm (`None` where the module reports 0 mW / -inf dBm, i.e. none set).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    pub temperature_high_alarm_c: Option<f64>,
    pub temperature_low_alarm_c: Option<f64>,
    pub temperature_high_warning_c: Option<f64>,
    pub temperature_low_warning_c: Option<f64>,
    pub tx_power_high_alarm_dbm: Option<f64>,
    pub tx_power_low_alarm_dbm: Option<f64>,
    pub tx_power_high_warning_dbm: Option<f64>,
    pub tx_power_low_warning_dbm: Option<f64>,
    pub rx_power_high_alarm_dbm: Option<f64>,
    pub rx_power_low_alarm_dbm: Option<f64>,
    pub rx_power_high_warning_dbm: Option<f64>,
    pub rx_power_low_warning_dbm: Option<f64>,
    pub bias_high_alarm_ma: Option<f64>,
    pub bias_low_alarm_ma: Option<f64>,
    pub bias_high_warning_ma: Option<f64>,
    pub bias_low_warning_ma: Option<f64>,
}

/// `1.3924 mW / 1.44 dBm` → (mW, dBm); `-inf` dBm → None.
fn power(v: &str) -> Option<(f64, Option<f64>)> {
    let c = regex!(r"^([\d.]+) mW / (-inf|-?[\d.]+) dBm$").captures(v)?;
    Some((float(&c[1])?, float(&c[2])))
}

/// Leading number of `30.56 degrees C / ...`, `3.2350 V`, `6.750 mA`.
fn number(v: &str) -> Option<f64> {
    v.split_whitespace().next().and_then(float)
}

fn lane(m: &mut Module, n: u32) -> &mut Lane {
    if let Some(i) = m.lanes.iter().position(|l| l.lane == n) {
        return &mut m.lanes[i];
    }
    m.lanes.push(Lane {
        lane: n,
        ..Lane::default()
    });
    m.lanes.last_mut().expect("just pushed")
}

fn threshold<'a>(t: &'a mut Thresholds, what: &str, level: &str) -> Option<&'a mut Option<f64>> {
    Some(match (what, level) {
        ("Module temperature", "high alarm") => &mut t.temperature_high_alarm_c,
        ("Module temperature", "low alarm") => &mut t.temperature_low_alarm_c,
        ("Module temperature", "high warning") => &mut t.temperature_high_warning_c,
        ("Module temperature", "low warning") => &mut t.temperature_low_warning_c,
        ("Laser output power", "high alarm") => &mut t.tx_power_high_alarm_dbm,
        ("Laser output power", "low alarm") => &mut t.tx_power_low_alarm_dbm,
        ("Laser output power", "high warning") => &mut t.tx_power_high_warning_dbm,
        ("Laser output power", "low warning") => &mut t.tx_power_low_warning_dbm,
        ("Laser rx power", "high alarm") => &mut t.rx_power_high_alarm_dbm,
        ("Laser rx power", "low alarm") => &mut t.rx_power_low_alarm_dbm,
        ("Laser rx power", "high warning") => &mut t.rx_power_high_warning_dbm,
        ("Laser rx power", "low warning") => &mut t.rx_power_low_warning_dbm,
        ("Laser bias current", "high alarm") => &mut t.bias_high_alarm_ma,
        ("Laser bias current", "low alarm") => &mut t.bias_low_alarm_ma,
        ("Laser bias current", "high warning") => &mut t.bias_high_warning_ma,
        ("Laser bias current", "low warning") => &mut t.bias_low_warning_ma,
        _ => return None,
    })
}

/// One `key : value` pair; `key` has its channel suffix removed (`ch`).
fn field(m: &mut Module, key: &str, ch: Option<u32>, v: &str) {
    let pw = |v: &str| power(v).map_or((None, None), |(mw, dbm)| (Some(mw), dbm));
    if let Some(c) = regex!(r"^(.+) (high|low) (alarm|warning) threshold$").captures(key) {
        let level = format!("{} {}", &c[2], &c[3]);
        let value = if c[1].contains("power") {
            pw(v).1
        } else {
            number(v)
        };
        if let Some(slot) = threshold(&mut m.thresholds, &c[1], &level) {
            *slot = value;
        }
        return;
    }
    if regex!(r" (alarm|warning)$").is_match(key) {
        if v == "On" {
            let name = match ch {
                Some(n) => format!("{key} (Channel {n})"),
                None => key.to_string(),
            };
            m.flags_on.push(name);
        }
        return;
    }
    match key {
        "Identifier" => {
            m.identifier = v.to_string();
            m.form_factor = regex!(r"\((.+)\)").captures(v).map(|c| c[1].to_string());
        }
        "Connector" => m.connector = Some(v.to_string()),
        "Transceiver type" => m.transceiver_type.push(v.to_string()),
        "Vendor name" => m.vendor_name = Some(v.to_string()),
        "Vendor PN" => m.vendor_pn = Some(v.to_string()),
        "Vendor SN" => m.vendor_sn = Some(v.to_string()),
        "Vendor rev" => m.vendor_rev = Some(v.to_string()),
        "Module temperature" => m.temperature_c = number(v),
        "Module voltage" => m.voltage_v = number(v),
        "Laser tx bias current" | "Laser bias current" => {
            lane(m, ch.unwrap_or(1)).tx_bias_ma = number(v);
        }
        "Transmit avg optical power" | "Laser output power" => {
            let (mw, dbm) = pw(v);
            let l = lane(m, ch.unwrap_or(1));
            (l.tx_power_mw, l.tx_power_dbm) = (mw, dbm);
        }
        "Rcvr signal avg optical power" | "Receiver signal average optical power" => {
            let (mw, dbm) = pw(v);
            let l = lane(m, ch.unwrap_or(1));
            (l.rx_power_mw, l.rx_power_dbm) = (mw, dbm);
        }
        _ => {}
    }
}

pub fn parse(text: &str) -> Result<Module, ParseError> {
    let mut m = Module::default();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let Some((k, v)) = t.split_once(" : ").or_else(|| t.split_once(": ")) else {
            return Err(ParseError::new(KIND, n, line, "expected `Name : value`"));
        };
        let k = regex!(r"\s+").replace_all(k.trim(), " ");
        let (key, ch) = match regex!(r"^(.*?) ?\((?:Channel|Chan|Lane) (\d+)\)$").captures(&k) {
            Some(c) => (c[1].to_string(), c[2].parse().ok()),
            None => (k.to_string(), None),
        };
        field(&mut m, &key, ch, v.trim());
    }
    if m.identifier.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no `Identifier :` line (module EEPROM not decoded)",
        ));
    }
    m.lanes.sort_by_key(|l| l.lane);
    Ok(m)
}

crate::impl_shape!(Lane, parsed("ethtool -m lane"));
crate::impl_shape!(Thresholds, parsed("ethtool -m thresholds"));
crate::impl_shape!(
    Module,
    parsed("ethtool -m result")
        .many::<Lane>("lanes")
        .one::<Thresholds>("thresholds")
);

crate::parser!("ethtool-module", "ethtool -m IFACE", sample: "ethtool-m/ethtool-m-qsfp-100g-dac-mellanox-mcp1600-passive-copper-no-dom.txt");

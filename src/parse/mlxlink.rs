//! `mlxlink -d DEV -m -c -e` (NVIDIA MFT): a port's physical layer in titled sections of
//! `Key : value` lines (`Operational Info`, `Troubleshooting Info`, `Tool Information`, `Module
//! Info`, `Physical Counters and BER Info`, `EYE Opening Info`, ...). Read here: state, speed,
//! width, FEC, the troubleshooting recommendation, the HCA's firmware, the module (identifier,
//! cable technology, vendor, part number, serial, its firmware, temperature, rx and tx power per
//! lane), the counters: raw and effective physical BER (printed `15E-255`: mantissa and
//! exponent), the effective errors, the raw errors per lane, link down and error recovery
//! counters, and on InfiniBand `Symbol Errors` / `Symbol BER` (counted after FEC: a link near
//! failure shows in the raw BER first), and the eye opening per lane (`Physical Grade`, `Height
//! Eye Opening [mV]`, `Phase  Eye Opening [psec]`: ConnectX-6 and older; ConnectX-7's
//! `Initial FOM`/`Last FOM` grades are kept in `sections`). Every section's lines are also kept
//! as printed (`sections`).
//!
//! Module readings: MFT 4.2x+ prints `54 [-5..75]` and per lane `1.103,1.290,0.931,1.103
//! [-9.508..6.999]`: the values, then the module's own low and high thresholds. Those are the
//! module's ALARM thresholds (mstflint's PDDR module-info page: `rx_power_low_th` "Alarm low RX
//! Power threshold in dBm. Taking only from channel 0"); `-m` prints no warning threshold. A
//! passive copper cable with diagnostics reads `0,0,0,0 [0..0]` (no thresholds), without them
//! `N/A`.
//!
//! Handles: `N/A` values (None), sections other tools' versions add (kept, not typed), the
//! leading blank line, `-----` underlines, trailing blanks after values (MFT 4.35), mlxlink's
//! `Errors` section of free text (`Showing Eye via SLRG raised the following exception: ...`).
//!
//! Recognised evidence: an `Operational Info`, `Physical Counters and BER Info`, `Module Info`,
//! `PCIe Operational (Enabled) Info` (`--port_type PCIE`) or `EYE Opening Info` section.

use super::util::{float, numbered, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const KIND: &str = "mlxlink";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mlxlink {
    pub state: Option<String>,
    pub phys_state: Option<String>,
    pub speed: Option<String>,
    pub width: Option<String>,
    pub fec: Option<String>,
    pub recommendation: Option<String>,
    /// The HCA's firmware (`Tool Information` / `Firmware Version`).
    pub firmware: Option<String>,
    /// The module: `Identifier` (OSFP, QSFP28, ...) and `Cable Technology` (`Copper cable,
    /// passive, ...`, `850 nm VCSEL`, ...).
    pub identifier: Option<String>,
    pub cable_technology: Option<String>,
    pub vendor: Option<String>,
    pub part_number: Option<String>,
    pub serial: Option<String>,
    /// The module's own firmware (`FW Version` in `Module Info`; N/A on passive cables).
    pub module_firmware: Option<String>,
    pub temperature_c: Option<f64>,
    /// Received and transmitted optical power per lane, with the module's alarm thresholds.
    pub rx_power_dbm: Option<Reading>,
    pub tx_power_dbm: Option<Reading>,
    /// Pre-FEC bit error rate (`Raw Physical BER`).
    pub raw_ber: Option<f64>,
    /// Post-FEC (`Effective Physical BER`).
    pub effective_ber: Option<f64>,
    pub effective_errors: Option<u64>,
    pub raw_errors_per_lane: Vec<u64>,
    /// InfiniBand: `Symbol Errors` and `Symbol BER`.
    pub symbol_errors: Option<u64>,
    pub symbol_ber: Option<f64>,
    pub link_down: Option<u64>,
    pub link_error_recovery: Option<u64>,
    /// The eye opening per lane (`EYE Opening Info`, also `(PCIe)`), when `-e` printed it.
    pub eye: Option<Eye>,
    /// mlxlink's `Errors` section, line by line (what it could not read).
    pub errors: Vec<String>,
    /// Every section's `Key : value` lines as printed.
    pub sections: BTreeMap<String, BTreeMap<String, String>>,
}

/// A module reading: one value per lane (or one for the module) and the module's own alarm
/// thresholds (`[low..high]`; `0` and `0` on a passive copper cable: none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub lanes: Vec<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// `EYE Opening Info` per lane: the SerDes grade and, where given, the eye's height and width.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Eye {
    /// The section's title (`EYE Opening Info`, `EYE Opening Info (PCIe)`).
    pub title: String,
    pub physical_grade: Vec<u64>,
    pub height_mv: Vec<u64>,
    pub phase_ps: Vec<u64>,
}

/// `1.103,1.290,0.931,1.103 [-9.508..6.999]`, `54 [-5..75]` or a bare `47`; `N/A` is None, and
/// so is a value that is not numbers.
pub fn reading(v: &str) -> Option<Reading> {
    let v = v.trim();
    let (vals, range) = match v.split_once('[') {
        Some((a, b)) => (a.trim(), Some(b.trim().strip_suffix(']')?)),
        None => (v, None),
    };
    let lanes = vals.split(',').map(float).collect::<Option<Vec<f64>>>()?;
    let (low, high) = match range {
        Some(r) => {
            let (lo, hi) = r.split_once("..")?;
            (Some(float(lo)?), Some(float(hi)?))
        }
        None => (None, None),
    };
    Some(Reading { lanes, low, high })
}

/// `  1848,  2220` (padded per lane) → numbers; a lane printed N/A leaves the list empty.
fn per_lane(v: Option<&str>) -> Vec<u64> {
    v.and_then(|v| v.split(',').map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_default()
}

fn eye(s: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Eye> {
    let (title, sec) = s.iter().find(|(t, _)| t.starts_with("EYE Opening Info"))?;
    let key = |k: &str| {
        sec.iter()
            .find(|(name, _)| name.split_whitespace().eq(k.split_whitespace()))
            .map(|(_, v)| v.as_str())
    };
    Some(Eye {
        title: title.clone(),
        physical_grade: per_lane(key("Physical Grade")),
        height_mv: per_lane(key("Height Eye Opening [mV]")),
        phase_ps: per_lane(key("Phase Eye Opening [psec]")),
    })
}

fn get<'a>(
    s: &'a BTreeMap<String, BTreeMap<String, String>>,
    sec: &str,
    key: &str,
) -> Option<&'a str> {
    s.get(sec)?
        .get(key)
        .map(String::as_str)
        .filter(|v| *v != "N/A" && !v.is_empty())
}

/// `15E-255` (mlxlink's mantissa and exponent) → 1.5e-254; plain numbers as they are.
fn ber(v: Option<&str>) -> Option<f64> {
    float(v?)
}

/// Is the line after `i` a `-----` underline (so line `i` is a section title)?
fn next_is_underline(lines: &[(usize, &str)], i: usize) -> bool {
    lines.get(i + 1).is_some_and(|(_, u)| {
        let u = u.trim();
        !u.is_empty() && u.chars().all(|c| c == '-')
    })
}

pub fn parse(text: &str) -> Result<Mlxlink, ParseError> {
    let mut sections: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut errors = Vec::new();
    let lines: Vec<(usize, &str)> = numbered(text).collect();
    for (i, (n, line)) in lines.iter().enumerate() {
        let t = line.trim_end();
        if t.trim().is_empty() || t.chars().all(|c| c == '-') {
            continue;
        }
        if let Some((k, v)) = t
            .split_once(" : ")
            .or_else(|| t.strip_suffix(" :").map(|k| (k, "")))
        {
            let Some(sec) = current.as_ref() else {
                return Err(ParseError::new(
                    KIND,
                    *n,
                    line,
                    "a `Key : value` line before any section title",
                ));
            };
            sections
                .entry(sec.clone())
                .or_default()
                .insert(k.trim().to_string(), v.trim().to_string());
            continue;
        }
        // mlxlink's `Errors` section is free text
        if current.as_deref() == Some("Errors") && !next_is_underline(&lines, i) {
            errors.push(t.trim().to_string());
            continue;
        }
        // a section title is followed by its underline
        if next_is_underline(&lines, i) {
            current = Some(t.trim().to_string());
            continue;
        }
        return Err(ParseError::new(
            KIND,
            *n,
            line,
            "expected a section title (underlined) or a `Key : value` line",
        ));
    }
    let evidence = [
        "Operational Info",
        "Physical Counters and BER Info",
        "Module Info",
        "PCIe Operational (Enabled) Info",
    ];
    if !evidence.iter().any(|k| sections.contains_key(*k))
        && !sections.keys().any(|k| k.starts_with("EYE Opening Info"))
    {
        return Err(unrecognised(
            KIND,
            text,
            "no `Operational Info`, `Physical Counters and BER Info`, `Module Info`, `PCIe Operational (Enabled) Info` or `EYE Opening Info` section",
        ));
    }
    let (op, tr, md, pc, tool) = (
        "Operational Info",
        "Troubleshooting Info",
        "Module Info",
        "Physical Counters and BER Info",
        "Tool Information",
    );
    let s = |sec, k| get(&sections, sec, k).map(str::to_string);
    let int = |sec, k| get(&sections, sec, k).and_then(|v| v.parse::<u64>().ok());
    Ok(Mlxlink {
        state: s(op, "State"),
        phys_state: s(op, "Physical state"),
        speed: s(op, "Speed"),
        width: s(op, "Width"),
        fec: s(op, "FEC"),
        recommendation: s(tr, "Recommendation"),
        firmware: s(tool, "Firmware Version"),
        identifier: s(md, "Identifier"),
        cable_technology: s(md, "Cable Technology"),
        vendor: s(md, "Vendor Name"),
        part_number: s(md, "Vendor Part Number"),
        serial: s(md, "Vendor Serial Number"),
        module_firmware: s(md, "FW Version"),
        temperature_c: get(&sections, md, "Temperature [C]")
            .and_then(reading)
            .and_then(|r| r.lanes.first().copied()),
        rx_power_dbm: get(&sections, md, "Rx Power Current [dBm]").and_then(reading),
        tx_power_dbm: get(&sections, md, "Tx Power Current [dBm]").and_then(reading),
        raw_ber: ber(get(&sections, pc, "Raw Physical BER")),
        effective_ber: ber(get(&sections, pc, "Effective Physical BER")),
        effective_errors: int(pc, "Effective Physical Errors"),
        raw_errors_per_lane: get(&sections, pc, "Raw Physical Errors Per Lane")
            .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
            .unwrap_or_default(),
        symbol_errors: int(pc, "Symbol Errors"),
        symbol_ber: ber(get(&sections, pc, "Symbol BER")),
        link_down: int(pc, "Link Down Counter"),
        link_error_recovery: int(pc, "Link Error Recovery Counter"),
        eye: eye(&sections),
        errors,
        sections,
    })
}

crate::impl_shape!(Reading, parsed("mlxlink module reading"));
crate::impl_shape!(Eye, parsed("mlxlink eye opening"));
crate::impl_shape!(
    Mlxlink,
    parsed("mlxlink port")
        .one::<Reading>("rx_power_dbm")
        .one::<Reading>("tx_power_dbm")
        .one::<Eye>("eye")
);

crate::parser!("mlxlink", "mlxlink -d DEV -m -c -e", sample: "ibdiags/mlxlink-m-c-bluefield3-100g-dac-fs-q28-pc03-ber-15e-255.txt");

//! `mlxlink -d DEV -m -c` (NVIDIA MFT): a port's physical layer in titled sections of
//! `Key : value` lines (`Operational Info`, `Troubleshooting Info`, `Module Info`, `Physical
//! Counters and BER Info`, ...). Read here: state, speed, width, FEC, the troubleshooting
//! recommendation, the module (vendor, part number, serial, temperature, rx power) and the
//! counters: raw and effective physical BER (printed `15E-255`: mantissa and exponent), the
//! effective errors, the raw errors per lane, link down and error recovery counters, and on
//! InfiniBand `Symbol Errors` / `Symbol BER` (counted after FEC: a link near failure shows in
//! the raw BER first). Every section's lines are also kept as printed (`sections`).
//!
//! Handles: `N/A` values (None), sections other tools' versions add (kept, not typed), the
//! leading blank line, `-----` underlines.
//!
//! Recognised evidence: an `Operational Info` or `Physical Counters and BER Info` section.

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
    pub vendor: Option<String>,
    pub part_number: Option<String>,
    pub serial: Option<String>,
    pub temperature_c: Option<f64>,
    pub rx_power_dbm: Option<String>,
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
    /// Every section's `Key : value` lines as printed.
    pub sections: BTreeMap<String, BTreeMap<String, String>>,
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

pub fn parse(text: &str) -> Result<Mlxlink, ParseError> {
    let mut sections: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
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
        // a section title is followed by its underline
        let underlined = lines.get(i + 1).is_some_and(|(_, u)| {
            let u = u.trim();
            !u.is_empty() && u.chars().all(|c| c == '-')
        });
        if underlined {
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
    if !sections.contains_key("Operational Info")
        && !sections.contains_key("Physical Counters and BER Info")
    {
        return Err(unrecognised(
            KIND,
            text,
            "no `Operational Info` or `Physical Counters and BER Info` section",
        ));
    }
    let (op, tr, md, pc) = (
        "Operational Info",
        "Troubleshooting Info",
        "Module Info",
        "Physical Counters and BER Info",
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
        vendor: s(md, "Vendor Name"),
        part_number: s(md, "Vendor Part Number"),
        serial: s(md, "Vendor Serial Number"),
        temperature_c: get(&sections, md, "Temperature [C]").and_then(float),
        rx_power_dbm: s(md, "Rx Power Current [dBm]"),
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
        sections,
    })
}

crate::impl_shape!(Mlxlink, parsed("mlxlink port"));

crate::parser!("mlxlink", "mlxlink -d DEV -m -c", sample: "ibdiags/mlxlink-m-c-bluefield3-100g-dac-fs-q28-pc03-ber-15e-255.txt");

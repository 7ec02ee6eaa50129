//! `ethtool -i IFACE` (driver information).
//!
//! Handles: empty values with or without a trailing space (`expansion-rom-version: `), bracketed
//! sub-drivers (`mlx5_core[ib_ipoib]`, kept as printed), firmware versions with a PSID suffix
//! (`20.31.1014 (MT_0000000223)`: `firmware_version` is the whole value as printed, PSID
//! included, so that two boards with the same version but different PSIDs compare different;
//! `firmware_psid` is the part in parentheses), inbox `version: 5.0-0` vs MLNX_OFED/DOCA `version: 24.07-0.6.1`
//! (reported as printed; it is the driver string, not necessarily the kernel), veth without
//! firmware/bus info.
//!
//! Recognised evidence: a `driver:` line.

use super::util::{key_value, non_empty, numbered, regex, unrecognised, yes_no};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ethtool-driver";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EthtoolDriver {
    pub driver: Option<String>,
    pub version: Option<String>,
    /// Firmware version as printed, PSID suffix kept: `22.29.1016 (MT_0000000430)`.
    pub firmware_version: Option<String>,
    /// PSID printed in parentheses after the firmware version, e.g. `MT_0000000430`.
    pub firmware_psid: Option<String>,
    pub expansion_rom_version: Option<String>,
    pub bus_info: Option<String>,
    pub supports_statistics: Option<bool>,
    pub supports_test: Option<bool>,
    pub supports_eeprom_access: Option<bool>,
    pub supports_register_dump: Option<bool>,
    pub supports_priv_flags: Option<bool>,
}

pub fn parse(text: &str) -> Result<EthtoolDriver, ParseError> {
    let mut out = EthtoolDriver::default();
    let mut seen_driver = false;
    for (n, line) in numbered(text) {
        if line.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = key_value(line) else {
            return Err(ParseError::new(KIND, n, line, "expected `key: value`"));
        };
        match key {
            "driver" => {
                seen_driver = true;
                out.driver = non_empty(value);
            }
            "version" => out.version = non_empty(value),
            "firmware-version" => {
                out.firmware_version = non_empty(value);
                out.firmware_psid = regex!(r"^\S+\s+\((.*)\)$")
                    .captures(value)
                    .and_then(|c| non_empty(&c[1]));
            }
            "expansion-rom-version" => out.expansion_rom_version = non_empty(value),
            "bus-info" => out.bus_info = non_empty(value),
            "supports-statistics" => out.supports_statistics = yes_no(value),
            "supports-test" => out.supports_test = yes_no(value),
            "supports-eeprom-access" => out.supports_eeprom_access = yes_no(value),
            "supports-register-dump" => out.supports_register_dump = yes_no(value),
            "supports-priv-flags" => out.supports_priv_flags = yes_no(value),
            _ if !seen_driver => {
                return Err(ParseError::new(KIND, n, line, "expected `driver:` first"));
            }
            _ => {}
        }
    }
    if !seen_driver {
        return Err(unrecognised(KIND, text, "no `driver:` line"));
    }
    Ok(out)
}

crate::impl_shape!(EthtoolDriver, parsed("ethtool -i result"));

crate::parser!("ethtool-driver", "ethtool -i IFACE", sample: "lab/ethtool-i-veth.txt");

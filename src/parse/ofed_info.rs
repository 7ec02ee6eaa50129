//! `ofed_info -s` (first line of plain `ofed_info` works too).
//!
//! Handles: `MLNX_OFED_LINUX-24.10-1.1.4.0:` (flavor `MLNX_OFED`), DOCA host packages
//! `OFED-internal-23.07-0.5.0:` (flavor `DOCA`), community `OFED-4.8-2:` (flavor `OFED`), with
//! or without the trailing colon, indentation, and the long form
//! `MLNX_OFED_LINUX-5.8-1.1.2.1 (OFED-5.8-1.1.2):`.

use super::util::{first_nonblank, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ofed-info";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OfedInfo {
    /// The version line as printed (trimmed).
    pub raw: String,
    /// e.g. `24.10-1.1.4.0`, `23.07-0.5.0`.
    pub version: String,
    /// `MLNX_OFED`, `DOCA` or `OFED`.
    pub flavor: String,
}

pub fn parse(text: &str) -> Result<OfedInfo, ParseError> {
    let (n, line) = first_nonblank(text);
    let t = line.trim();
    let re = regex!(r"^(MLNX_OFED_LINUX|OFED-internal|OFED)-(\d[\w.\-]*?)(?:\s+\(.*\))?:?$");
    let Some(c) = re.captures(t) else {
        if n == 0 {
            return Err(unrecognised(KIND, text, "no version line"));
        }
        return Err(ParseError::new(
            KIND,
            n,
            line,
            "expected `MLNX_OFED_LINUX-X:`, `OFED-internal-X:` or `OFED-X:`",
        ));
    };
    let flavor = match &c[1] {
        "MLNX_OFED_LINUX" => "MLNX_OFED",
        "OFED-internal" => "DOCA",
        _ => "OFED",
    };
    Ok(OfedInfo {
        raw: t.to_string(),
        version: c[2].to_string(),
        flavor: flavor.to_string(),
    })
}

crate::impl_shape!(OfedInfo, parsed("ofed_info result"));

crate::parser!("ofed-info", "ofed_info -s", sample: "rdma/ofed_info-s-doca-ofed-internal-23.07-indented.txt");

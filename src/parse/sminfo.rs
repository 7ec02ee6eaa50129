//! `sminfo` (infiniband-diags): the SMInfo of the subnet manager a port's SM LID points at (no
//! argument), or of the SM at a given LID/GUID: one line,
//! `sminfo: sm lid 37 sm guid 0x7cfe90030016aef1, activity count 4484381 priority 14 state 3 SMINFO_MASTER`.
//!
//! Handles: GUIDs without leading zeros (sminfo prints them with `%"PRIx64"`), every state of
//! infiniband-diags' `statestr` (`SMINFO_NOTACT` 0, `SMINFO_DISCOVER` 1, `SMINFO_STANDBY` 2,
//! `SMINFO_MASTER` 3, `???` beyond), `ibwarn:`/`iberror:` lines around it (skipped: the exit
//! code and stderr say why a query failed).
//!
//! Recognised evidence: one `sminfo: sm lid N sm guid 0x…` line.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "sminfo";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sminfo {
    pub sm_lid: u64,
    /// As printed (`0x10e0406d5aa0a0`).
    pub sm_guid: String,
    /// The GUID as 16 hex digits, lower case, with `0x` (`0x0010e0406d5aa0a0`): compare this.
    pub guid: String,
    pub activity_count: u64,
    pub priority: u32,
    /// 0 not active, 1 discovering, 2 standby, 3 master.
    pub state: u32,
    /// `SMINFO_MASTER`, ...
    pub state_name: String,
}

pub fn parse(text: &str) -> Result<Sminfo, ParseError> {
    for (_, line) in numbered(text) {
        let Some(c) = regex!(
            r"^sminfo:\s+sm lid (\d+) sm guid (0x[0-9a-fA-F]+), activity count (\d+) priority (\d+) state (\d+) (\S+)\s*$"
        )
        .captures(line.trim()) else {
            continue;
        };
        let g = u64::from_str_radix(&c[2][2..], 16).unwrap_or(0);
        return Ok(Sminfo {
            sm_lid: c[1].parse().unwrap_or(0),
            sm_guid: c[2].to_string(),
            guid: format!("0x{g:016x}"),
            activity_count: c[3].parse().unwrap_or(0),
            priority: c[4].parse().unwrap_or(0),
            state: c[5].parse().unwrap_or(0),
            state_name: c[6].to_string(),
        });
    }
    Err(unrecognised(
        KIND,
        text,
        "no `sminfo: sm lid N sm guid 0x..., activity count N priority N state N NAME` line",
    ))
}

crate::impl_shape!(Sminfo, parsed("sminfo"));

crate::parser!("sminfo", "sminfo [SM_LID | -G GUID]", sample: "ibdiags/sminfo-master-lid37-hca-prio14.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_guid_is_padded_for_comparison() {
        let s = parse(include_str!(
            "../../tests/fixtures/ibdiags/sminfo-master-lid15-sun-dcs-switch-short-guid.txt"
        ))
        .unwrap();
        assert_eq!((s.sm_lid, s.priority, s.state), (15, 14, 3));
        assert_eq!(s.guid, "0x0010e0406d5aa0a0");
        assert_eq!(s.state_name, "SMINFO_MASTER");
        assert!(parse("ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 1)\n").is_err());
    }
}

//! `ip -j neigh` (`ip -j neigh show [ADDR] [dev IFACE]`): the neighbour table, for the identity
//! check (the MAC an address answered from).
//!
//! Handles: entries with a link-layer address (`REACHABLE`, `STALE`, ...), entries without one
//! (`INCOMPLETE`, `FAILED`: no answer), `dev` left out when the command named it, `router`
//! flags, an empty table (`[]`: no entry for that address, e.g. an address behind a router).
//! The text format (`ip neigh`) is rejected with a ParseError asking for `ip -j neigh`.
//!
//! Recognised evidence: a JSON array whose elements are objects with a `dst`.

use super::util::{json_at, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

const KIND: &str = "ip-neigh";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Neighbour {
    pub dst: String,
    /// Absent when the command named the device (`dev IFACE`).
    pub dev: Option<String>,
    /// The MAC the address answered from; absent while unresolved (`INCOMPLETE`, `FAILED`).
    pub lladdr: Option<String>,
    /// NUD states as printed (`REACHABLE`, `STALE`, `DELAY`, `PROBE`, `INCOMPLETE`, `FAILED`,
    /// `PERMANENT`, `NOARP`).
    pub state: Vec<String>,
    pub router: bool,
}

pub fn parse(text: &str) -> Result<Vec<Neighbour>, ParseError> {
    if !text.trim_start().starts_with('[') {
        return Err(unrecognised(
            KIND,
            text,
            "not `ip -j neigh` JSON (expected a JSON array); use `ip -j neigh`",
        ));
    }
    let v: Value = json_at(KIND, text, "JSON")?;
    let s = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let mut out = Vec::new();
    for (i, o) in v.as_array().into_iter().flatten().enumerate() {
        let Some(dst) = s(o, "dst") else {
            return Err(ParseError::new(
                KIND,
                1,
                &o.to_string(),
                format!("entry {} has no `dst`", i + 1),
            ));
        };
        // `state` is an array (a list of NUD flags); a single string is read as one state.
        let state = match o.get("state") {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            Some(Value::String(st)) => vec![st.clone()],
            _ => vec![],
        };
        out.push(Neighbour {
            dst,
            dev: s(o, "dev"),
            lladdr: s(o, "lladdr").map(|m| m.to_ascii_lowercase()),
            state,
            router: o.get("router").is_some(),
        });
    }
    Ok(out)
}

crate::impl_shape!(Neighbour, parsed("ip neigh entry"));

crate::parser!("ip-neigh", "ip -j neigh [show ADDR dev IFACE]", sample: "lab/ip-j-neigh-show-addr-dev-reachable.json");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_output_is_refused_naming_the_json_form() {
        let e = parse("10.77.0.2 dev idva lladdr 3a:f1:30:0e:75:2d REACHABLE\n").unwrap_err();
        assert!(e.reason.contains("ip -j neigh"), "{e}");
        let e = parse("[{\"dev\":\"x\"}]").unwrap_err();
        assert!(e.reason.contains("no `dst`"), "{e}");
    }

    #[test]
    fn a_single_string_state_and_an_upper_case_mac_are_read() {
        let n =
            parse("[{\"dst\":\"10.0.0.1\",\"lladdr\":\"AA:BB:CC:DD:EE:FF\",\"state\":\"STALE\"}]")
                .unwrap();
        assert_eq!(n[0].state, ["STALE"]);
        assert_eq!(n[0].lladdr.as_deref(), Some("aa:bb:cc:dd:ee:ff"));
    }
}

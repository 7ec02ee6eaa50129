//! `ip -j addr` (and `ip -d -j addr`; extra detail keys are ignored).
//!
//! Handles: single-line JSON with or without trailing newline, `ifname@ifN` peers (the name is
//! printed without the suffix in JSON; `link_index` kept), interfaces with empty `addr_info`.
//! The brief text formats (`ip -br a`) are rejected with a ParseError asking for `ip -j addr`.
//!
//! Recognised evidence: a JSON array whose elements are objects with an `ifname`.

use super::util::{first_nonblank, json_at, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

const KIND: &str = "ip-addr";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interface {
    pub ifname: String,
    pub ifindex: Option<u64>,
    pub link_index: Option<u64>,
    pub operstate: Option<String>,
    pub mtu: Option<u64>,
    pub flags: Vec<String>,
    pub link_type: Option<String>,
    /// MAC address.
    pub address: Option<String>,
    pub master: Option<String>,
    pub addresses: Vec<Address>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Address {
    /// `inet` / `inet6`.
    pub family: Option<String>,
    pub local: Option<String>,
    pub prefixlen: Option<u64>,
    pub scope: Option<String>,
}

pub fn parse(text: &str) -> Result<Vec<Interface>, ParseError> {
    if !text.trim_start().starts_with('[') {
        return Err(unrecognised(
            KIND,
            text,
            "not `ip -j addr` JSON (expected a JSON array); use `ip -j addr`",
        ));
    }
    let v: Value = json_at(KIND, text, "JSON")?;
    let s = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let mut out = Vec::new();
    for (i, o) in v.as_array().into_iter().flatten().enumerate() {
        let Some(ifname) = s(o, "ifname") else {
            let (n, l) = first_nonblank(text);
            return Err(ParseError::new(
                KIND,
                n,
                l,
                format!("array element {i} has no `ifname`"),
            ));
        };
        let addresses = o
            .get("addr_info")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|a| a.get("local").is_some() || a.get("family").is_some())
            .map(|a| Address {
                family: s(a, "family"),
                local: s(a, "local"),
                prefixlen: a.get("prefixlen").and_then(Value::as_u64),
                scope: s(a, "scope"),
            })
            .collect();
        out.push(Interface {
            ifname,
            ifindex: o.get("ifindex").and_then(Value::as_u64),
            link_index: o.get("link_index").and_then(Value::as_u64),
            operstate: s(o, "operstate"),
            mtu: o.get("mtu").and_then(Value::as_u64),
            flags: o
                .get("flags")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect(),
            link_type: s(o, "link_type"),
            address: s(o, "address"),
            master: s(o, "master"),
            addresses,
        });
    }
    Ok(out)
}

crate::impl_shape!(Address, parsed("address"));
crate::impl_shape!(
    Interface,
    parsed("ip addr interface").many::<Address>("addresses")
);

crate::parser!("ip-addr", "ip -j addr", sample: "lab/ip-j-addr-netns.json");

//! `ip -j route` / `ip -j -6 route` (`ip --json route show [table main]`): the routing table, for
//! step 5's "the node came back" comparison.
//!
//! Handles: `default` and prefix destinations, routes without a device (`blackhole`,
//! `unreachable`: `type` set, no `dev`), `linkdown` in `flags`, IPv6 `expires` (seconds left,
//! counts down between two reads) and `pref`, multipath routes (`nexthops`, each with its own
//! `gateway`/`dev`), JSON pretty-printed over several lines. The text format (`ip route`) is
//! rejected with a ParseError asking for `ip -j route`.
//!
//! Recognised evidence: a JSON array whose elements are objects with a `dst`.

use super::util::{first_nonblank, json_at, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

const KIND: &str = "ip-route";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Route {
    /// `default` or a prefix (`10.0.0.0/24`, `fd00::/64`) or a host address.
    pub dst: String,
    /// Route type when not unicast (`blackhole`, `unreachable`, `prohibit`, `local`, ...).
    #[serde(rename = "type")]
    pub route_type: Option<String>,
    pub gateway: Option<String>,
    /// Absent for routes without an output device (`blackhole`).
    pub dev: Option<String>,
    /// Who installed it: `kernel`, `static`, `dhcp`, `ra`, `boot`, a routing daemon...
    pub protocol: Option<String>,
    pub scope: Option<String>,
    pub prefsrc: Option<String>,
    pub metric: Option<u64>,
    /// `linkdown`, `onlink`, `dead`, ...
    pub flags: Vec<String>,
    /// Seconds until a learned route expires (IPv6 RA routes): changes between two reads.
    pub expires: Option<u64>,
    /// Multipath next hops (`nexthops`): `gateway@dev` each.
    pub nexthops: Vec<String>,
}

fn strs(o: &Value, k: &str) -> Vec<String> {
    o.get(k)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_string))
        .collect()
}

pub fn parse(text: &str) -> Result<Vec<Route>, ParseError> {
    if !text.trim_start().starts_with('[') {
        return Err(unrecognised(
            KIND,
            text,
            "not `ip -j route` JSON (expected a JSON array); use `ip -j route` / `ip -j -6 route`",
        ));
    }
    let v: Value = json_at(KIND, text, "JSON")?;
    let s = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let mut out = Vec::new();
    for (i, o) in v.as_array().into_iter().flatten().enumerate() {
        let Some(dst) = s(o, "dst") else {
            let (n, l) = first_nonblank(text);
            return Err(ParseError::new(
                KIND,
                n,
                l,
                format!("array element {i} has no `dst`"),
            ));
        };
        let nexthops = o
            .get("nexthops")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|h| {
                format!(
                    "{}@{}",
                    s(h, "gateway").unwrap_or_default(),
                    s(h, "dev").unwrap_or_default()
                )
            })
            .collect();
        out.push(Route {
            dst,
            route_type: s(o, "type"),
            gateway: s(o, "gateway"),
            dev: s(o, "dev"),
            protocol: s(o, "protocol"),
            scope: s(o, "scope"),
            prefsrc: s(o, "prefsrc"),
            metric: o.get("metric").and_then(Value::as_u64),
            flags: strs(o, "flags"),
            expires: o.get("expires").and_then(Value::as_u64),
            nexthops,
        });
    }
    Ok(out)
}

crate::impl_shape!(Route, parsed("ip route entry"));

crate::parser!("ip-route", "ip -j route / ip -j -6 route", sample: "lab/ip-j-route-host-default-kernel.json");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_output_and_elements_without_dst_are_refused() {
        let e = parse("default via 10.0.0.1 dev eth0 proto dhcp metric 100\n").unwrap_err();
        assert!(e.reason.contains("ip -j route"), "{e}");
        let e = parse("[{\"dev\":\"eth0\"}]").unwrap_err();
        assert!(e.reason.contains("no `dst`"), "{e}");
        let e = parse("[{\"dst\":\"default\",").unwrap_err();
        assert!(e.reason.contains("invalid JSON"), "{e}");
    }

    #[test]
    fn multipath_next_hops_are_kept() {
        let r = parse(
            "[{\"dst\":\"10.1.0.0/16\",\"protocol\":\"static\",\"flags\":[],\"nexthops\":[{\"gateway\":\"10.0.0.1\",\"dev\":\"a\",\"weight\":1,\"flags\":[]},{\"gateway\":\"10.0.1.1\",\"dev\":\"b\",\"weight\":1,\"flags\":[]}]}]",
        )
        .unwrap();
        assert_eq!(r[0].nexthops, ["10.0.0.1@a", "10.0.1.1@b"]);
        assert_eq!(r[0].dev, None);
    }
}

//! `lldpctl -f json` (lldpd): the LLDP neighbour of each interface, for rail alignment on RoCE
//! (which switch and port each rail's cable ends on).
//!
//! Handles the shapes lldpd 1.0.x prints: `"interface"` as an object keyed by interface name
//! (one interface with a neighbour) or as a list of one-key objects (several interfaces, or
//! several neighbours on one); `"chassis"` keyed by the system name, or without a name (the
//! chassis fields directly, `id` among them); port ids of type `ifname` (what switches send:
//! `swp1`, `Ethernet0`) or `mac` (a host's lldpd by default), with `descr` beside them; no
//! neighbour at all (`{"lldp": {}}`, or `"lldp": []`). Other formats (`-f json0`, `keyvalue`,
//! plain text) are rejected asking for `lldpctl -f json`.
//!
//! Recognised evidence: a JSON object with a top-level `lldp` key.

use super::util::{json_at, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

const KIND: &str = "lldpctl";

/// One neighbour seen on one local interface.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LldpNeighbour {
    /// The local interface (`enp1s0f1np1`).
    pub interface: String,
    /// The neighbour's system name (`leaf-rail0`); "" when it sends none.
    pub system: String,
    /// The neighbour's chassis id value (a MAC, usually).
    pub chassis_id: String,
    /// The neighbour's port id (`swp1`, or a MAC) and its type (`ifname`, `mac`, `local`...).
    pub port_id: String,
    pub port_id_type: String,
    /// The port description the neighbour sends ("" when none).
    pub port_descr: String,
    /// The neighbour's port as a technician reads it: the id when it is an interface name or
    /// local name, else the description, else the id.
    pub port: String,
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        // `-f json` prints a one-element list of {value} for some fields in older releases
        Some(Value::Array(a)) => a
            .first()
            .map(|x| text(x.get("value").or(Some(x))))
            .unwrap_or_default(),
        Some(Value::Object(o)) => text(o.get("value")),
        _ => String::new(),
    }
}

/// `(system name, chassis fields)` of a `chassis` object.
fn chassis(c: Option<&Value>) -> (String, Map<String, Value>) {
    let Some(Value::Object(o)) = c else {
        return (String::new(), Map::new());
    };
    // unnamed: the fields themselves (`id`, `descr`, ...)
    if o.contains_key("id") && o.get("id").is_none_or(|v| v.get("id").is_none()) {
        return (String::new(), o.clone());
    }
    match o.iter().next() {
        Some((name, Value::Object(fields))) => (name.clone(), fields.clone()),
        _ => (String::new(), Map::new()),
    }
}

fn neighbour(interface: &str, v: &Value) -> LldpNeighbour {
    let (system, c) = chassis(v.get("chassis"));
    let port = v.get("port");
    let id = port.and_then(|p| p.get("id"));
    let port_id = text(id.and_then(|i| i.get("value")));
    let port_id_type = text(id.and_then(|i| i.get("type")));
    let port_descr = text(port.and_then(|p| p.get("descr")));
    let readable = matches!(port_id_type.as_str(), "ifname" | "local" | "ifalias");
    let shown = if readable || port_descr.is_empty() {
        port_id.clone()
    } else {
        port_descr.clone()
    };
    LldpNeighbour {
        interface: interface.to_string(),
        system,
        chassis_id: text(c.get("id").and_then(|i| i.get("value"))),
        port_id,
        port_id_type,
        port_descr,
        port: shown,
    }
}

pub fn parse(text_in: &str) -> Result<Vec<LldpNeighbour>, ParseError> {
    if !text_in.trim_start().starts_with('{') {
        return Err(unrecognised(
            KIND,
            text_in,
            "not `lldpctl -f json` (expected a JSON object with an `lldp` key); use `lldpctl -f json`",
        ));
    }
    let v: Value = json_at(KIND, text_in, "JSON")?;
    let Some(lldp) = v.get("lldp") else {
        return Err(unrecognised(
            KIND,
            text_in,
            "no top-level `lldp` key (is this `lldpctl -f json0` or another tool's JSON?); use `lldpctl -f json`",
        ));
    };
    let mut out = Vec::new();
    match lldp.get("interface") {
        Some(Value::Object(m)) => {
            for (name, n) in m {
                out.push(neighbour(name, n));
            }
        }
        Some(Value::Array(list)) => {
            for item in list {
                for (name, n) in item.as_object().into_iter().flatten() {
                    out.push(neighbour(name, n));
                }
            }
        }
        _ => {}
    }
    Ok(out)
}

crate::impl_shape!(LldpNeighbour, parsed("lldp neighbour"));

crate::parser!("lldpctl", "lldpctl -f json", sample: "lldp/lldpctl-f-json-1.0.16-two-interfaces-list-portid-ifname.json");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_formats_are_refused_saying_which_to_use() {
        let e = parse("Interface:    eth0, via: LLDP\n").unwrap_err();
        assert!(e.to_string().contains("lldpctl -f json"), "{e}");
        let e = parse("{\"lldp\": [{\"interface\": []}]").unwrap_err();
        assert!(e.to_string().contains("invalid JSON"), "{e}");
        let e = parse("{\"x\": 1}").unwrap_err();
        assert!(e.to_string().contains("no top-level `lldp`"), "{e}");
        // json0's unnamed list shape: no interface is read, nothing invented
        assert!(parse("{\"lldp\": [{\"interface\": []}]}")
            .unwrap()
            .is_empty());
    }
}

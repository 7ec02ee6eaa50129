//! `n.net_state()` and `net_state_diff(before, after)`: a snapshot of what a node's running
//! network is (each interface's operstate, MTU and addresses from `ip -j addr`; the stable routes
//! of the main table from `ip -j route` and `ip -j -6 route`) and what changed between two
//! snapshots. Five-step step 5 takes one before its netplan backup and one after the restore:
//! the node must have come back exactly as it was.
//!
//! Routes that churn on a healthy node are not compared: IPv6 routes learned from router
//! advertisements or redirects (`proto ra` / `redirect`) and any route with an `expires` timer
//! (its value counts down between reads). A route is compared by its destination and type, then
//! by gateway, device, protocol and metric; its `linkdown` flag is not (the interface's
//! operstate says that, naming the interface). A new interface (a container's veth) is a note,
//! never a failure; an interface gone, an address lost or added, an operstate or an MTU changed,
//! a route gone, added or changed is a change.

use super::tools::simple;
use super::{NodeRef, PResult};
use crate::parse::{ip_addr, ip_route};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct NetState {
    pub node: String,
    pub interfaces: Vec<IfState>,
    /// Stable routes, one line each: `DST [type T] [via GW] [dev DEV] [proto P] [metric M]`.
    pub routes: Vec<String>,
    /// How many routes were left out as churn (RA-learned, redirect, expiring).
    pub churn_routes: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct IfState {
    pub ifname: String,
    pub operstate: Option<String>,
    pub mtu: Option<u64>,
    /// `ADDRESS/PREFIXLEN` each, as `ip addr` prints them.
    pub addresses: Vec<String>,
}

/// What `net_state_diff` returns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct NetDiff {
    /// Each change, naming the node and the interface or route.
    pub changes: Vec<String>,
    /// What was seen and not compared (a new interface).
    pub notes: Vec<String>,
}

/// [`diff`] as a result.
pub(crate) fn net_state_diff(before: &NetState, after: &NetState) -> NetDiff {
    let (changes, notes) = diff(before, after);
    NetDiff { changes, notes }
}

/// Take the snapshot: three read-only `ip -j` commands.
pub(crate) fn net_state(n: &NodeRef) -> PResult<NetState> {
    let addr = simple(n, "ip", "ip -j addr", ip_addr::parse)?;
    let mut routes = simple(n, "ip", "ip -j route", ip_route::parse)?;
    routes.extend(simple(n, "ip", "ip -j -6 route", ip_route::parse)?);
    Ok(snapshot(n.name(), &addr, &routes))
}

/// The snapshot of parsed `ip -j addr` and `ip -j route` answers.
pub(crate) fn snapshot(
    node: &str,
    addr: &[ip_addr::Interface],
    routes: &[ip_route::Route],
) -> NetState {
    let interfaces = addr
        .iter()
        .map(|i| IfState {
            ifname: i.ifname.clone(),
            operstate: i.operstate.clone(),
            mtu: i.mtu,
            addresses: i
                .addresses
                .iter()
                .filter_map(|a| {
                    let l = a.local.as_ref()?;
                    Some(match a.prefixlen {
                        Some(p) => format!("{l}/{p}"),
                        None => l.clone(),
                    })
                })
                .collect(),
        })
        .collect();
    let churn = |r: &ip_route::Route| {
        r.expires.is_some()
            || matches!(r.protocol.as_deref(), Some("ra" | "redirect"))
            || r.flags.iter().any(|f| f == "cloned")
            || r.route_type.as_deref() == Some("cache")
    };
    let stable: Vec<String> = routes
        .iter()
        .filter(|r| !churn(r))
        .map(route_line)
        .collect();
    NetState {
        node: node.to_string(),
        interfaces,
        churn_routes: (routes.len() - stable.len()) as i64,
        routes: stable,
    }
}

fn route_line(r: &ip_route::Route) -> String {
    let mut s = r.dst.clone();
    let mut add = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            s.push_str(&format!(" {k} {v}"));
        }
    };
    add("type", r.route_type.clone());
    add("via", r.gateway.clone());
    add("dev", r.dev.clone());
    add("proto", r.protocol.clone());
    add("metric", r.metric.map(|m| m.to_string()));
    if !r.nexthops.is_empty() {
        add("nexthops", Some(r.nexthops.join(",")));
    }
    s
}

/// The key two route lines are matched by: the destination and the type.
fn route_key(line: &str) -> String {
    let mut w = line.split(' ');
    let dst = w.next().unwrap_or("");
    let ty = line
        .split(" type ")
        .nth(1)
        .and_then(|t| t.split(' ').next());
    format!("{dst} {}", ty.unwrap_or("unicast"))
}

/// What changed from `before` to `after`: (changes, notes). Each names the node, the interface
/// or route, and what it was and is.
pub(crate) fn diff(before: &NetState, after: &NetState) -> (Vec<String>, Vec<String>) {
    let node = &before.node;
    let mut changes = Vec::new();
    let mut notes = Vec::new();
    let now: BTreeMap<&str, &IfState> = after
        .interfaces
        .iter()
        .map(|i| (i.ifname.as_str(), i))
        .collect();
    for b in &before.interfaces {
        let name = &b.ifname;
        let Some(a) = now.get(name.as_str()) else {
            changes.push(format!(
                "{node} {name}: the interface is gone (it was {})",
                b.operstate.as_deref().unwrap_or("?")
            ));
            continue;
        };
        if a.operstate != b.operstate {
            changes.push(format!(
                "{node} {name}: link state {} before, {} now",
                b.operstate.as_deref().unwrap_or("?"),
                a.operstate.as_deref().unwrap_or("?")
            ));
        }
        if a.mtu != b.mtu {
            let m = |m: Option<u64>| m.map_or("?".to_string(), |m| m.to_string());
            changes.push(format!(
                "{node} {name}: MTU {} before, {} now",
                m(b.mtu),
                m(a.mtu)
            ));
        }
        for x in b.addresses.iter().filter(|x| !a.addresses.contains(x)) {
            changes.push(format!("{node} {name}: address {x} lost"));
        }
        for x in a.addresses.iter().filter(|x| !b.addresses.contains(x)) {
            changes.push(format!("{node} {name}: address {x} appeared"));
        }
    }
    let had: Vec<&str> = before
        .interfaces
        .iter()
        .map(|i| i.ifname.as_str())
        .collect();
    for a in after
        .interfaces
        .iter()
        .filter(|a| !had.contains(&a.ifname.as_str()))
    {
        notes.push(format!(
            "{node} {}: a new interface (not compared)",
            a.ifname
        ));
    }
    route_diff(node, before, after, &mut changes);
    (changes, notes)
}

fn route_diff(node: &str, before: &NetState, after: &NetState, changes: &mut Vec<String>) {
    let gone: Vec<&String> = before
        .routes
        .iter()
        .filter(|r| !after.routes.contains(r))
        .collect();
    let new: Vec<&String> = after
        .routes
        .iter()
        .filter(|r| !before.routes.contains(r))
        .collect();
    let mut matched = Vec::new();
    for g in &gone {
        match new
            .iter()
            .find(|n| route_key(n) == route_key(g) && !matched.contains(*n))
        {
            Some(n) => {
                matched.push(*n);
                changes.push(format!("{node}: route changed: `{g}` before, `{n}` now"));
            }
            None => changes.push(format!("{node}: route gone: `{g}`")),
        }
    }
    for n in new.iter().filter(|n| !matched.contains(*n)) {
        changes.push(format!("{node}: route appeared: `{n}`"));
    }
}

crate::impl_shape!(IfState, parsed("net_state interface"));
crate::impl_shape!(
    NetState,
    parsed("net_state result").many::<IfState>("interfaces")
);
crate::impl_shape!(NetDiff, parsed("net_state_diff result"));

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(p: &str) -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        std::fs::read_to_string(root.join(p)).unwrap()
    }

    fn lab() -> NetState {
        let addr = ip_addr::parse(&fixture("lab/ip-j-addr-netns.json")).unwrap();
        let mut r = ip_route::parse(&fixture(
            "lab/ip-j-route-netns-static-dhcp-blackhole-linkdown.json",
        ))
        .unwrap();
        r.extend(
            ip_route::parse(&fixture("lab/ip-j-6-route-netns-ra-expires-kernel.json")).unwrap(),
        );
        snapshot("lab01", &addr, &r)
    }

    #[test]
    fn the_same_node_read_twice_has_no_change_and_churn_is_left_out() {
        let a = lab();
        // the RA route (with its expires countdown) is not compared
        assert_eq!(a.churn_routes, 1);
        assert!(
            a.routes
                .iter()
                .any(|r| r == "10.50.0.0/16 via 10.99.0.254 dev fcrb proto static metric 20"),
            "{:?}",
            a.routes
        );
        let mut b = a.clone();
        b.interfaces.push(IfState {
            ifname: "veth1".into(),
            ..Default::default()
        });
        let (c, n) = diff(&a, &b);
        assert!(c.is_empty(), "{c:?}");
        assert_eq!(n.len(), 1);
    }

    #[test]
    fn a_lost_route_address_link_and_mtu_are_named() {
        let a = lab();
        let mut b = a.clone();
        b.routes.retain(|r| !r.starts_with("10.50.0.0/16"));
        let i = b
            .interfaces
            .iter_mut()
            .find(|i| !i.addresses.is_empty() && i.ifname != "lo")
            .unwrap();
        let name = i.ifname.clone();
        let lost = i.addresses.remove(0);
        i.operstate = Some("DOWN".into());
        i.mtu = Some(1234);
        let d = b
            .routes
            .iter_mut()
            .find(|r| r.starts_with("default"))
            .unwrap();
        *d = d.replace("10.99.0.1", "10.99.0.9");
        let (c, _) = diff(&a, &b);
        let all = c.join("\n");
        assert!(
            all.contains("lab01: route gone: `10.50.0.0/16 via 10.99.0.254"),
            "{all}"
        );
        assert!(
            all.contains(&format!("lab01 {name}: address {lost} lost")),
            "{all}"
        );
        assert!(
            all.contains(&format!("lab01 {name}: link state UP before, DOWN now"))
                || all.contains("link state"),
            "{all}"
        );
        assert!(all.contains("MTU") && all.contains("1234 now"), "{all}");
        assert!(
            all.contains("route changed: `default via 10.99.0.1")
                && all.contains("`default via 10.99.0.9"),
            "{all}"
        );
        assert_eq!(c.len(), 5, "{all}");
    }
}

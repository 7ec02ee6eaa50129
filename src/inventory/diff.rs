//! `fabcheck discover --diff FILE`: what the nodes are now against what an inventory says
//! (docs/discover.md): nodes missing or new, rails renamed, addresses moved, RDMA devices
//! remapped, ports regrouped, MTU and speed changed.
//!
//! What a node of FILE says about each rail: the `vars.rails` table a discovered inventory
//! carries, else the inventory's own pairing (`fabric_ips[k]` and `rdma_devices[k]` belong to
//! `interfaces[k]` when the lists are as long: the shipped scripts pair them so).

use super::discovered::{Discovery, Found, Rail};
use super::{Inventory, Node};
use std::collections::BTreeMap;

/// What FILE says about one rail of a node.
#[derive(Debug, Clone, Default, PartialEq)]
struct Said {
    rdma_device: Option<String>,
    ips: Vec<String>,
    mtu: Option<u64>,
    speed_mbps: Option<u64>,
    pci: Option<String>,
    gid_index: Option<u64>,
}

fn said_rails(n: &Node) -> BTreeMap<String, Said> {
    let mut out = BTreeMap::new();
    let rails = n.vars.get("rails").and_then(|r| r.as_object());
    for (k, iface) in n.interfaces.iter().enumerate() {
        let mut s = Said::default();
        if let Some(r) = rails.and_then(|r| r.get(iface)) {
            let str_of = |key: &str| r.get(key).and_then(|v| v.as_str()).map(str::to_string);
            s.rdma_device = str_of("rdma_device");
            s.pci = str_of("pci");
            s.ips = r
                .get("addresses")
                .and_then(|a| a.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str())
                        .map(|x| x.split('/').next().unwrap_or(x).to_string())
                        .collect()
                })
                .unwrap_or_default();
            s.mtu = r.get("mtu").and_then(|v| v.as_u64());
            s.speed_mbps = r.get("speed_mbps").and_then(|v| v.as_u64());
            s.gid_index = r.get("gid_index").and_then(|v| v.as_u64());
        } else {
            if n.fabric_ips.len() == n.interfaces.len() {
                s.ips = vec![n.fabric_ips[k].clone()];
            }
            if n.rdma_devices.len() == n.interfaces.len() {
                s.rdma_device = Some(n.rdma_devices[k].clone());
            }
        }
        out.insert(iface.clone(), s);
    }
    out
}

/// The differences between FILE (`was`) and this discovery, one line each, naming the node.
/// Nodes of FILE that were not asked for are reported as not discovered.
pub(crate) fn diff(was: &Inventory, file: &str, now: &[Discovery]) -> Vec<String> {
    let mut out = Vec::new();
    for d in now {
        let old = was.all_nodes().find(|n| n.name == d.name());
        match (d, old) {
            (Discovery::NotReached { reason, .. }, Some(_)) => {
                out.push(format!("{}: not reached ({reason})", d.name()))
            }
            (Discovery::NotReached { .. }, None) => out.push(format!(
                "{}: not reached, and not in {file} either",
                d.name()
            )),
            (Discovery::Found(_), None) => out.push(format!("{}: new (not in {file})", d.name())),
            (Discovery::Found(f), Some(o)) => out.extend(
                node_diff(o, f)
                    .into_iter()
                    .map(|l| format!("{}: {l}", o.name)),
            ),
        }
    }
    for o in was.all_nodes() {
        if !now.iter().any(|d| d.name() == o.name) {
            out.push(format!(
                "{}: in {file}, but not among the hosts discovered",
                o.name
            ));
        }
    }
    out
}

/// The new name of each rail of FILE that is gone: a new interface with the same PCI
/// function, else the same RDMA device, else the same address.
fn renames(said: &BTreeMap<String, Said>, f: &Found) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let fresh: Vec<&Rail> = f
        .rails
        .iter()
        .filter(|r| !said.contains_key(&r.iface))
        .collect();
    for (iface, s) in said {
        if f.rails.iter().any(|r| &r.iface == iface) {
            continue;
        }
        let hit = fresh.iter().find(|r| {
            (s.pci.is_some() && r.pci == s.pci)
                || (s.rdma_device.is_some() && r.rdma_device == s.rdma_device)
                || r.ips().iter().any(|ip| s.ips.contains(ip))
        });
        if let Some(r) = hit {
            if !out.values().any(|v| v == &r.iface) {
                out.insert(iface.clone(), r.iface.clone());
            }
        }
    }
    out
}

fn node_diff(o: &Node, f: &Found) -> Vec<String> {
    let said = said_rails(o);
    let renamed = renames(&said, f);
    let mut out = Vec::new();
    let now_of = |iface: &str| -> Option<&Rail> {
        let name = renamed.get(iface).map(String::as_str).unwrap_or(iface);
        f.rails.iter().find(|r| r.iface == name)
    };
    for (iface, s) in &said {
        if let Some(new) = renamed.get(iface) {
            out.push(format!("rail {iface} renamed {new}"));
        }
        let Some(r) = now_of(iface) else {
            out.push(format!(
                "rail {iface} is gone (no fabric interface of that name, PCI function, RDMA device or address)"
            ));
            continue;
        };
        out.extend(rail_diff(iface, s, r));
    }
    for r in &f.rails {
        if !said.contains_key(&r.iface) && !renamed.values().any(|v| v == &r.iface) {
            out.push(format!(
                "new rail {} ({})",
                r.iface,
                if r.addresses.is_empty() {
                    "no address".to_string()
                } else {
                    r.addresses.join(", ")
                }
            ));
        }
    }
    out.extend(addresses_moved(&said, f, &renamed));
    out.extend(ports_diff(o, f, &renamed));
    out.extend(expectations_diff(o, f));
    out
}

fn rail_diff(iface: &str, s: &Said, r: &Rail) -> Vec<String> {
    let mut out = Vec::new();
    if s.rdma_device.is_some() && s.rdma_device != r.rdma_device {
        out.push(format!(
            "rail {iface}: RDMA device {} is now {}",
            s.rdma_device.as_deref().unwrap_or("-"),
            r.rdma_device.as_deref().unwrap_or("none")
        ));
    }
    let num = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or("unknown".into());
    if s.mtu.is_some() && s.mtu != r.mtu {
        out.push(format!(
            "rail {iface}: MTU {} is now {}",
            num(s.mtu),
            num(r.mtu)
        ));
    }
    if s.speed_mbps.is_some() && s.speed_mbps != r.speed_mbps {
        out.push(format!(
            "rail {iface}: speed {} Mb/s is now {}",
            num(s.speed_mbps),
            num(r.speed_mbps)
        ));
    }
    if s.gid_index.is_some() && s.gid_index != r.gid_index.map(u64::from) {
        out.push(format!(
            "rail {iface}: RoCE v2 GID index {} is now {}",
            num(s.gid_index),
            num(r.gid_index.map(u64::from))
        ));
    }
    if s.pci.is_some() && s.pci != r.pci {
        out.push(format!(
            "rail {iface}: PCI function {} is now {}",
            s.pci.as_deref().unwrap_or("-"),
            r.pci.as_deref().unwrap_or("none")
        ));
    }
    out
}

/// Addresses that are on another rail now, gone, or new.
fn addresses_moved(
    said: &BTreeMap<String, Said>,
    f: &Found,
    renamed: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut known = Vec::new();
    for (iface, s) in said {
        let was_on = renamed.get(iface).unwrap_or(iface);
        for ip in &s.ips {
            known.push(ip.clone());
            match f.rails.iter().find(|r| r.ips().contains(ip)) {
                Some(r) if &r.iface == was_on => {}
                Some(r) => out.push(format!("address {ip} moved from {iface} to {}", r.iface)),
                None => out.push(format!(
                    "address {ip} (on {iface}) is on no fabric interface now"
                )),
            }
        }
    }
    for r in &f.rails {
        for ip in r.ips() {
            if !known.contains(&ip) && said.values().any(|s| !s.ips.is_empty()) {
                out.push(format!("new address {ip} on {}", r.iface));
            }
        }
    }
    out
}

fn ports_diff(o: &Node, f: &Found, renamed: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    let now = f.port_specs();
    for p in &o.ports {
        let want: Vec<String> = p
            .interfaces
            .iter()
            .map(|i| renamed.get(i).cloned().unwrap_or_else(|| i.clone()))
            .collect();
        match now.iter().find(|q| q.name == p.name) {
            None => out.push(format!(
                "port {} ({}) was not found as one port",
                p.name,
                p.interfaces.join(", ")
            )),
            Some(q) if q.interfaces != want => out.push(format!(
                "port {}: interfaces [{}] are now [{}]",
                p.name,
                p.interfaces.join(", "),
                q.interfaces.join(", ")
            )),
            Some(_) => {}
        }
    }
    if !o.ports.is_empty() {
        for q in &now {
            if !o.ports.iter().any(|p| p.name == q.name) {
                out.push(format!("new port {} ({})", q.name, q.interfaces.join(", ")));
            }
        }
    }
    out
}

/// FILE's expectations (node var `mtu`, `speed_mbps` of the node or a port) against what the
/// rails have now.
fn expectations_diff(o: &Node, f: &Found) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = o.vars.get("mtu").and_then(|v| v.as_u64()) {
        for r in f.rails.iter().filter(|r| r.mtu.is_some_and(|x| x != m)) {
            out.push(format!(
                "rail {}: MTU {} (the inventory's mtu is {m})",
                r.iface,
                r.mtu.unwrap_or(0)
            ));
        }
    }
    let node_speed = o.vars.get("speed_mbps").and_then(|v| v.as_u64());
    for r in &f.rails {
        let port = o.ports.iter().find(|p| p.interfaces.contains(&r.iface));
        let want = port.and_then(|p| p.speed_mbps).or(node_speed);
        if let (Some(w), Some(s)) = (want, r.speed_mbps) {
            if w != s {
                out.push(format!(
                    "rail {}: negotiated {s} Mb/s (the inventory's speed_mbps is {w})",
                    r.iface
                ));
            }
        }
    }
    out
}

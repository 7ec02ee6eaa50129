//! `fabcheck discover`: read a node's fabric (read-only, every command with the run's timeout)
//! and say what its rails, ports and platform are (docs/discover.md).
//!
//! Commands: `$SSH_CONNECTION` (the address SSH reached: the management NIC), `ip -j addr`,
//! the sysfs listing [`SYSFS_COMMAND`], `rdma link` (else `ibdev2netdev`, else sysfs),
//! `ethtool IFACE` and `show_gids DEV` per fabric interface.

use super::{tools, NodeRef, PrimError};
use crate::inventory::discovered::{Found, Platform, Port, Rail};
use crate::parse::ethtool::Ethtool;
use crate::parse::ip_addr::Interface;
use crate::parse::sysfs_net::{self, SysfsNet};
use std::collections::{BTreeMap, BTreeSet};

/// One line per network interface, per RDMA device, the DMI product name and one per NVIDIA
/// GPU (format: `parse::sysfs_net`). Reads sysfs and procfs only.
pub(crate) const SYSFS_COMMAND: &str = concat!(
    r#"cd /sys/class/net 2>/dev/null && for n in *; do l=$(readlink "$n/device" 2>/dev/null); "#,
    r#"v=$(readlink "$n/device/driver" 2>/dev/null); m=$(readlink "$n/master" 2>/dev/null); k=; "#,
    r#"[ -d "$n/bridge" ] && k=bridge; [ -d "$n/bonding" ] && k=bond; "#,
    r#"{ [ -d "$n/wireless" ] || [ -e "$n/phy80211" ]; } && k=wireless; "#,
    r#"printf 'net %s pci=%s driver=%s kind=%s master=%s carrier=%s speed=%s port_name=%s\n' "#,
    r#""$n" "${l##*/}" "${v##*/}" "$k" "${m##*/}" "$(cat "$n/carrier" 2>/dev/null)" "#,
    r#""$(cat "$n/speed" 2>/dev/null)" "$(cat "$n/phys_port_name" 2>/dev/null)"; done; "#,
    r#"cd /sys/class/infiniband 2>/dev/null && for n in *; do [ -e "$n" ] || continue; "#,
    r#"l=$(readlink "$n/device" 2>/dev/null); "#,
    r#"printf 'rdma %s pci=%s sys_image_guid=%s node_guid=%s netdevs=%s link_layer=%s\n' "$n" "${l##*/}" "#,
    r#""$(cat "$n/sys_image_guid" 2>/dev/null)" "$(cat "$n/node_guid" 2>/dev/null)" "#,
    r#""$(for x in "$n"/device/net/*; do [ -e "$x" ] && printf '%s,' "${x##*/}"; done)" "#,
    r#""$(for x in "$n"/ports/*; do [ -e "$x/link_layer" ] && printf '%s,' "$(cat "$x/link_layer")"; done)"; done; "#,
    r#"printf 'dmi product_name=%s\n' "$(cat /sys/class/dmi/id/product_name 2>/dev/null)"; "#,
    r#"for g in /proc/driver/nvidia/gpus/*; do [ -e "$g" ] && printf 'gpu %s\n' "${g##*/}"; done; true"#
);

/// Everything read from one node.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    /// The address SSH reached (the inventory host on replayed nodes).
    pub mgmt: Option<String>,
    pub addrs: Vec<Interface>,
    pub sysfs: SysfsNet,
    /// netdev -> RDMA device, and where the mapping came from.
    pub rdma: BTreeMap<String, String>,
    pub rdma_source: String,
    pub notes: Vec<String>,
}

/// Read a node: `Err` when it could not be reached or `ip -j addr` could not be read (its
/// message is the reason, for the "not reached" line).
pub(crate) fn discover(n: &NodeRef, fabric: &[glob::Pattern]) -> Result<Found, PrimError> {
    let facts = gather(n)?;
    let mut found = derive(n.spec.as_ref().clone(), &facts, fabric);
    let mut notes = Vec::new();
    for r in &mut found.rails {
        measure(n, r, &facts.sysfs, &mut notes);
    }
    let ib: Vec<&str> = found
        .rails
        .iter()
        .filter(|r| infiniband(r, &facts.sysfs))
        .map(|r| r.iface.as_str())
        .collect();
    if !ib.is_empty() {
        notes.push(format!(
            "InfiniBand (IPoIB) rails {}: no ethtool link modes or RoCE GID to read; runs judge each HCA port by ibstat (state, rate, LID, SM)",
            ib.join(", ")
        ));
    }
    found.notes.extend(notes);
    Ok(found)
}

fn gather(n: &NodeRef) -> Result<Facts, PrimError> {
    let mgmt = tools::mgmt_address(n)?;
    let addrs = super::ip_addr::addresses(n)?;
    let mut notes = Vec::new();
    let sysfs = match tools::tool(n, "sh", SYSFS_COMMAND, None, None) {
        Ok(o) => sysfs_net::parse(&o.stdout).unwrap_or_else(|e| {
            notes.push(format!(
                "sysfs listing unreadable ({e}): no PCI, driver or carrier facts"
            ));
            SysfsNet::default()
        }),
        Err(e) => {
            notes.push(format!("sysfs listing failed: {}", e.message));
            SysfsNet::default()
        }
    };
    let (rdma, rdma_source) = rdma_mapping(n, &sysfs, &mut notes);
    Ok(Facts {
        mgmt: mgmt.parse::<std::net::IpAddr>().ok().map(|_| mgmt),
        addrs,
        sysfs,
        rdma,
        rdma_source,
        notes,
    })
}

/// netdev -> RDMA device: `rdma link`, else `ibdev2netdev`, else sysfs `device/net`.
fn rdma_mapping(
    n: &NodeRef,
    sysfs: &SysfsNet,
    notes: &mut Vec<String>,
) -> (BTreeMap<String, String>, String) {
    match super::rdma_link::rdma_links(n) {
        Ok(links) => {
            let m: BTreeMap<String, String> = links
                .into_iter()
                .filter_map(|l| Some((l.netdev?, l.rdma_device)))
                .collect();
            if !m.is_empty() || sysfs.rdma.is_empty() {
                return (m, "rdma link".into());
            }
        }
        Err(e) => notes.push(format!("rdma link: {}", e.message)),
    }
    if !sysfs.rdma.is_empty() {
        if let Ok(maps) = super::ibdev2netdev::ibdev2netdev(n) {
            let m: BTreeMap<String, String> = maps
                .into_iter()
                .map(|x| (x.netdev, x.rdma_device))
                .collect();
            if !m.is_empty() {
                return (m, "ibdev2netdev".into());
            }
        }
    }
    let m = sysfs
        .rdma
        .iter()
        .flat_map(|d| d.netdevs.iter().map(|nd| (nd.clone(), d.name.clone())))
        .collect();
    (m, "sysfs /sys/class/infiniband/*/device/net".into())
}

fn carrier(i: &Interface, s: &SysfsNet) -> bool {
    i.flags.iter().any(|f| f == "LOWER_UP")
        || s.netdevs
            .iter()
            .any(|d| d.name == i.ifname && d.carrier == Some(true))
}

fn global_addresses(i: &Interface) -> Vec<String> {
    let mut v: Vec<(bool, String)> = i
        .addresses
        .iter()
        .filter(|a| a.scope.as_deref() == Some("global"))
        .filter_map(|a| {
            let ip = a.local.clone()?;
            let v6 = a.family.as_deref() == Some("inet6");
            Some((
                v6,
                match a.prefixlen {
                    Some(p) => format!("{ip}/{p}"),
                    None => ip,
                },
            ))
        })
        .collect();
    v.sort_by_key(|(v6, _)| *v6);
    v.into_iter().map(|(_, a)| a).collect()
}

/// Which interfaces are rails, and the rule that chose them (pure: unit-tested). `fabric`
/// (`--fabric IFACE[,IFACE…]`, names or globs), when given, names them instead of the rules.
pub(crate) fn derive(node: crate::inventory::Node, f: &Facts, fabric: &[glob::Pattern]) -> Found {
    let owns_mgmt = |i: &Interface| {
        f.mgmt
            .as_ref()
            .is_some_and(|m| i.addresses.iter().any(|a| a.local.as_ref() == Some(m)))
    };
    let mgmt_if = f
        .addrs
        .iter()
        .find(|i| owns_mgmt(i))
        .map(|i| i.ifname.clone());
    let mgmt_txt = match (&mgmt_if, &f.mgmt) {
        (Some(i), Some(m)) => format!("{i} ({m}, the address SSH reached)"),
        (None, Some(m)) => format!("the NIC of {m} (on no interface listed)"),
        _ => "unknown (the node did not say which address SSH reached)".into(),
    };
    let sys = |name: &str| f.sysfs.netdevs.iter().find(|d| d.name == name);
    let with_rdma = f.addrs.iter().any(|i| f.rdma.contains_key(&i.ifname));
    let mut notes = f.notes.clone();
    let mut problems = Vec::new();
    let mut rails = Vec::new();
    for i in &f.addrs {
        let s = sys(&i.ifname);
        let rdma = f.rdma.get(&i.ifname);
        let skip = if fabric.is_empty() {
            skip_reason(i, f, mgmt_if.as_deref(), with_rdma)
        } else {
            named_reason(i, fabric, mgmt_if.as_deref(), &mut notes)
        };
        match skip {
            Some(why) if why.is_empty() => {}
            Some(why) => {
                let dev = rdma.map(|d| format!(" ({d})")).unwrap_or_default();
                notes.push(format!("left out {}{dev}: {why}", i.ifname));
            }
            None => rails.push(Rail {
                iface: i.ifname.clone(),
                rdma_device: rdma.cloned(),
                addresses: global_addresses(i),
                mtu: i.mtu,
                speed_mbps: s.and_then(|s| s.speed_mbps),
                max_mbps: None,
                pci: s.and_then(|s| s.pci.clone()),
                driver: s.and_then(|s| s.driver.clone()),
                gid_index: None,
            }),
        }
    }
    let rule = if !fabric.is_empty() {
        let names: Vec<&str> = fabric.iter().map(glob::Pattern::as_str).collect();
        for p in fabric {
            if !f.addrs.iter().any(|i| p.matches(&i.ifname)) {
                problems.push(format!(
                    "--fabric {}: no interface of this node matches it (ip -j addr lists {})",
                    p.as_str(),
                    f.addrs
                        .iter()
                        .map(|i| i.ifname.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        format!(
            "named with --fabric {} (the management NIC is {mgmt_txt})",
            names.join(",")
        )
    } else if with_rdma {
        format!(
            "the netdevs of RDMA devices ({}) with carrier, not the management NIC {mgmt_txt}",
            f.rdma_source
        )
    } else {
        format!("no RDMA device on this node: the interfaces with carrier and a global address, other than loopback, bridges, wireless and the management NIC {mgmt_txt}")
    };
    if rails.is_empty() && fabric.is_empty() {
        if let Some(m) = &mgmt_if {
            problems.push(format!(
                "no fabric interface: the only interface with a link is {m}, the one SSH \
                 reached (management and fabric on one NIC?); if it is the fabric, name it: \
                 fabcheck discover … --fabric {m}"
            ));
        }
    }
    let (ports, port_notes) = group_ports(&rails, &f.sysfs);
    notes.extend(port_notes);
    Found {
        platform: platform(&f.sysfs),
        node,
        rails,
        ports,
        rule,
        notes,
        problems,
    }
}

/// With `--fabric`: why interface `i` is not a rail (`Some("")`: not worth a note), `None`
/// when a pattern names it; naming the management NIC is allowed, and noted.
fn named_reason(
    i: &Interface,
    fabric: &[glob::Pattern],
    mgmt_if: Option<&str>,
    notes: &mut Vec<String>,
) -> Option<String> {
    if i.link_type.as_deref() == Some("loopback") || i.ifname == "lo" {
        return Some(String::new());
    }
    if !fabric.iter().any(|p| p.matches(&i.ifname)) {
        return Some(String::new());
    }
    if Some(i.ifname.as_str()) == mgmt_if {
        notes.push(format!(
            "WARNING {}: named by --fabric and also the interface SSH reached (the management \
             NIC): tests share it with SSH",
            i.ifname
        ));
    }
    None
}

/// Why interface `i` is not a rail (`Some("")`: not worth a note), `None` when it is one.
fn skip_reason(i: &Interface, f: &Facts, mgmt_if: Option<&str>, with_rdma: bool) -> Option<String> {
    let s = f.sysfs.netdevs.iter().find(|d| d.name == i.ifname);
    if i.link_type.as_deref() == Some("loopback") || i.ifname == "lo" {
        return Some(String::new());
    }
    if Some(i.ifname.as_str()) == mgmt_if {
        return Some("the management NIC".to_string());
    }
    if with_rdma && !f.rdma.contains_key(&i.ifname) {
        let noted = carrier(i, &f.sysfs) && !global_addresses(i).is_empty();
        return Some(if noted {
            "no RDMA device".into()
        } else {
            String::new()
        });
    }
    if let Some(m) = s.and_then(|s| s.master.clone()).or(i.master.clone()) {
        return Some(format!("enslaved to {m}"));
    }
    if !carrier(i, &f.sysfs) {
        return Some("no carrier".to_string());
    }
    if let Some(k) = s
        .and_then(|s| s.kind.clone())
        .filter(|k| k == "bridge" || k == "wireless")
    {
        return Some(format!("a {k} interface"));
    }
    if !with_rdma && global_addresses(i).is_empty() {
        return Some("no global address".to_string());
    }
    None
}

/// `0000:01:00.1` -> (`0000:01`, `1`): the PCIe path (domain and bus) and the function.
fn path_and_function(pci: &str) -> Option<(String, String)> {
    let (head, func) = pci.rsplit_once('.')?;
    let (path, _dev) = head.rsplit_once(':')?;
    Some((path.to_string(), func.to_string()))
}

/// Ports of rails that share one cable: the RDMA functions of one adapter (one
/// `sys_image_guid`) reached over more than one PCIe path (a DGX Spark's ConnectX-7: two
/// Gen5 x4 paths) carry each QSFP port once per path, as the same PCI function number on
/// each; those rails are one port. A rail of an adapter on one PCIe path is its own port (no
/// entry). Also notes a port whose twin rail on another path has no carrier.
pub(crate) fn group_ports(rails: &[Rail], s: &SysfsNet) -> (Vec<Port>, Vec<String>) {
    let mut nics: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for d in &s.rdma {
        if let (Some(g), Some(p)) = (
            &d.sys_image_guid,
            d.pci.as_deref().and_then(path_and_function),
        ) {
            nics.entry(g.clone()).or_default().insert(p.0);
        }
    }
    let multi: Vec<(&String, &BTreeSet<String>)> =
        nics.iter().filter(|(_, paths)| paths.len() > 1).collect();
    let mut ports = Vec::new();
    let mut notes = Vec::new();
    for (k, (guid, paths)) in multi.iter().enumerate() {
        let mut by_fn: BTreeMap<String, Vec<&Rail>> = BTreeMap::new();
        for r in rails {
            let dev = s
                .rdma
                .iter()
                .find(|d| Some(&d.name) == r.rdma_device.as_ref());
            let Some(dev) = dev.filter(|d| d.sys_image_guid.as_ref() == Some(*guid)) else {
                continue;
            };
            if let Some((_, func)) = dev.pci.as_deref().and_then(path_and_function) {
                by_fn.entry(func).or_default().push(r);
            }
        }
        for (func, members) in by_fn {
            let name = if multi.len() > 1 {
                format!("nic{}-qsfp{func}", k + 1)
            } else {
                format!("qsfp{func}")
            };
            let twins: Vec<String> = s
                .rdma
                .iter()
                .filter(|d| d.sys_image_guid.as_ref() == Some(*guid))
                .filter(|d| {
                    d.pci.as_deref().and_then(path_and_function).map(|p| p.1) == Some(func.clone())
                })
                .filter(|d| {
                    !members
                        .iter()
                        .any(|r| r.rdma_device.as_ref() == Some(&d.name))
                })
                .map(|d| d.name.clone())
                .collect();
            if !twins.is_empty() {
                notes.push(format!(
                    "WARNING {name}: {} of this port's rails on the other PCIe path has no usable link ({}): a port of this adapter is one rail per path",
                    twins.len(),
                    twins.join(", ")
                ));
            }
            ports.push(Port {
                why: format!(
                    "{name}: {} rail(s) of one cable: PCI function {func} of the adapter with sys_image_guid {guid} on each of its PCIe paths ({}); they share the port's bandwidth",
                    members.len(),
                    paths.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
                name,
                interfaces: members.iter().map(|r| r.iface.clone()).collect(),
                rdma_devices: members.iter().filter_map(|r| r.rdma_device.clone()).collect(),
            });
        }
    }
    (ports, notes)
}

/// The platform facts read and the profile they make (`run::profile::detect`, from the sysfs
/// listing alone: the DMI product name, the GPUs and the adapters' PCIe paths).
fn platform(s: &SysfsNet) -> Platform {
    let mut facts = Vec::new();
    facts.push(match &s.dmi_product_name {
        Some(p) => format!("DMI product name: {p}"),
        None => "DMI product name: none readable (/sys/class/dmi/id/product_name)".into(),
    });
    facts.push(match s.gpus.len() {
        0 => "NVIDIA GPUs: none listed in /proc/driver/nvidia/gpus".into(),
        k => format!("NVIDIA GPUs: {k} ({})", s.gpus.join(", ")),
    });
    let mut nics: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in &s.rdma {
        let g = d.sys_image_guid.clone().unwrap_or_else(|| "unknown".into());
        nics.entry(g).or_default().push(format!(
            "{} at {}",
            d.name,
            d.pci.as_deref().unwrap_or("?")
        ));
    }
    for (g, devs) in nics {
        facts.push(format!(
            "RDMA adapter sys_image_guid {g}: {}",
            devs.join(", ")
        ));
    }
    let mut pf = crate::run::profile::Facts {
        dmi_product_name: s.dmi_product_name.clone(),
        gpu_count: s.gpus.len(),
        ..Default::default()
    };
    for d in &s.rdma {
        let g = d.sys_image_guid.clone().unwrap_or_else(|| d.name.clone());
        pf.adapters.entry(g).or_default().extend(d.pci.clone());
    }
    let d = crate::run::profile::detect(&pf);
    Platform {
        profile: d.known.then(|| d.name.clone()),
        reasons: if d.known { vec![d.reason] } else { vec![] },
        facts,
    }
}

/// Whether the rail's RDMA device has an InfiniBand port (sysfs `ports/N/link_layer`).
fn infiniband(r: &Rail, s: &SysfsNet) -> bool {
    let Some(dev) = r.rdma_device.as_deref() else {
        return false;
    };
    s.rdma
        .iter()
        .any(|d| d.name == dev && d.link_layers.iter().any(|l| l == "InfiniBand"))
}

/// The speed the rail negotiated and the most it supports (`ethtool`), its RoCE v2 GID index
/// (`show_gids`); what cannot be read is noted, never guessed. An IPoIB rail (its HCA's port is
/// InfiniBand) has neither link modes nor a RoCE GID: its rate is ibstat's, read by the runs,
/// and its speed is sysfs's.
fn measure(n: &NodeRef, r: &mut Rail, s: &SysfsNet, notes: &mut Vec<String>) {
    if infiniband(r, s) {
        return;
    }
    match super::ethtool::ethtool(n, &r.iface) {
        Ok(e) => {
            if e.speed_mbps.is_some() {
                r.speed_mbps = e.speed_mbps;
            }
            r.max_mbps = max_supported(&e);
        }
        Err(e) => notes.push(format!("{}: ethtool: {}", r.iface, e.message)),
    }
    if let (Some(sp), Some(mx)) = (r.speed_mbps, r.max_mbps) {
        if sp < mx {
            notes.push(format!(
                "NOTE {}: negotiated {sp} Mb/s, supports {mx} (a slower partner, or a fault: the checks judge it)",
                r.iface
            ));
        }
    }
    let Some(dev) = r.rdma_device.clone() else {
        return;
    };
    let ipv4: Vec<String> = r.ips().into_iter().filter(|a| !a.contains(':')).collect();
    if ipv4.is_empty() {
        return;
    }
    match super::show_gids::gids(n, &dev) {
        Ok(gids) => {
            r.gid_index = gids
                .iter()
                .find(|g| g.roce_version == "v2" && g.ipv4.as_ref() == Some(&ipv4[0]))
                .map(|g| g.index);
            if r.gid_index.is_none() {
                notes.push(format!(
                    "WARNING {dev}: no RoCE v2 GID for {} (show_gids)",
                    ipv4[0]
                ));
            }
        }
        Err(e) => notes.push(format!("{dev}: show_gids: {}", e.message)),
    }
}

/// The highest link mode ethtool lists as supported (Mb/s: `200000baseCR4/Full` -> 200000).
pub(crate) fn max_supported(e: &Ethtool) -> Option<u64> {
    e.supported_link_modes
        .iter()
        .filter_map(|m| {
            let digits: String = m.chars().take_while(|c| c.is_ascii_digit()).collect();
            digits.parse::<u64>().ok()
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::ip_addr::Address;
    use crate::parse::sysfs_net::{Netdev, RdmaDev};

    fn iface(name: &str, up: bool, ip: Option<&str>) -> Interface {
        Interface {
            ifname: name.into(),
            mtu: Some(9000),
            flags: if up {
                vec!["UP".into(), "LOWER_UP".into()]
            } else {
                vec!["NO-CARRIER".into(), "UP".into()]
            },
            link_type: Some(if name == "lo" { "loopback" } else { "ether" }.into()),
            addresses: ip
                .map(|a| Address {
                    family: Some("inet".into()),
                    local: Some(a.into()),
                    prefixlen: Some(24),
                    scope: Some("global".into()),
                })
                .into_iter()
                .collect(),
            ..Default::default()
        }
    }

    fn net(name: &str, pci: &str) -> Netdev {
        Netdev {
            name: name.into(),
            pci: Some(pci.into()).filter(|p: &String| !p.is_empty()),
            ..Default::default()
        }
    }

    fn dev(name: &str, pci: &str, guid: &str, netdev: &str) -> RdmaDev {
        RdmaDev {
            name: name.into(),
            pci: Some(pci.into()),
            sys_image_guid: Some(guid.into()),
            netdevs: vec![netdev.into()],
            ..Default::default()
        }
    }

    fn facts(addrs: Vec<Interface>, netdevs: Vec<Netdev>, rdma: Vec<RdmaDev>) -> Facts {
        let map = rdma
            .iter()
            .map(|d| (d.netdevs[0].clone(), d.name.clone()))
            .collect();
        Facts {
            mgmt: Some("10.0.0.11".into()),
            addrs,
            sysfs: SysfsNet {
                netdevs,
                rdma,
                ..Default::default()
            },
            rdma: map,
            rdma_source: "rdma link".into(),
            notes: vec![],
        }
    }

    /// A DGX Spark: one ConnectX-7 (one sys_image_guid) over two PCIe paths; the cable in
    /// QSFP port 1 (function 1 on both paths).
    fn spark(second_rail_up: bool) -> Facts {
        let g = "4cbb:4703:002d:1a16";
        facts(
            vec![
                iface("lo", true, Some("127.0.0.1")),
                iface("enP7s7", true, Some("10.0.0.11")),
                iface("enp1s0f0np0", false, None),
                iface("enp1s0f1np1", true, Some("192.168.100.10")),
                iface("enP2p1s0f0np0", false, None),
                iface("enP2p1s0f1np1", second_rail_up, Some("192.168.200.10")),
            ],
            vec![
                net("enp1s0f1np1", "0000:01:00.1"),
                net("enP2p1s0f1np1", "0002:01:00.1"),
            ],
            vec![
                dev("rocep1s0f0", "0000:01:00.0", g, "enp1s0f0np0"),
                dev("rocep1s0f1", "0000:01:00.1", g, "enp1s0f1np1"),
                dev("roceP2p1s0f0", "0002:01:00.0", g, "enP2p1s0f0np0"),
                dev("roceP2p1s0f1", "0002:01:00.1", g, "enP2p1s0f1np1"),
            ],
        )
    }

    #[test]
    fn a_spark_port_is_one_entry_of_two_rails() {
        let f = derive(crate::inventory::Node::bare("spark-01"), &spark(true), &[]);
        assert_eq!(f.interfaces(), ["enp1s0f1np1", "enP2p1s0f1np1"]);
        assert_eq!(f.fabric_ips(), ["192.168.100.10", "192.168.200.10"]);
        assert_eq!(f.rdma_devices(), ["rocep1s0f1", "roceP2p1s0f1"]);
        assert_eq!(f.ports.len(), 1);
        assert_eq!(f.ports[0].name, "qsfp1");
        assert_eq!(f.ports[0].interfaces, ["enp1s0f1np1", "enP2p1s0f1np1"]);
        assert!(
            f.ports[0].why.contains("0000:01, 0002:01"),
            "{}",
            f.ports[0].why
        );
        assert!(f.rule.contains("enP7s7 (10.0.0.11"), "{}", f.rule);
        assert!(f
            .notes
            .iter()
            .any(|n| n == "left out enP7s7: the management NIC"));
        assert!(
            !f.notes.iter().any(|n| n.starts_with("WARNING")),
            "{:?}",
            f.notes
        );
    }

    #[test]
    fn a_spark_port_with_one_rail_down_is_warned() {
        let f = derive(crate::inventory::Node::bare("spark-01"), &spark(false), &[]);
        assert_eq!(f.interfaces(), ["enp1s0f1np1"]);
        assert_eq!(f.ports[0].interfaces, ["enp1s0f1np1"]);
        let w: Vec<&String> = f
            .notes
            .iter()
            .filter(|n| n.starts_with("WARNING"))
            .collect();
        assert_eq!(w.len(), 1, "{:?}", f.notes);
        assert!(
            w[0].contains("qsfp1") && w[0].contains("roceP2p1s0f1"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn adapters_on_one_pcie_path_make_no_port_entries() {
        // A DGX H100-class host: eight single-port ConnectX-7, each its own adapter and bus;
        // and a dual-port card on one x16 path (one adapter, functions 0 and 1 on one bus).
        let mut addrs = vec![iface("eno1", true, Some("10.0.0.11"))];
        let mut devs = Vec::new();
        let mut nets = Vec::new();
        for (k, bus) in ["18", "40", "53", "66", "9c", "c0", "ce", "dc"]
            .iter()
            .enumerate()
        {
            let n = format!("ibp{bus}s0");
            let pci = format!("0000:{bus}:00.0");
            addrs.push(iface(&n, true, Some(&format!("10.1.{k}.1"))));
            nets.push(net(&n, &pci));
            devs.push(dev(&format!("mlx5_{k}"), &pci, &format!("guid{k}"), &n));
        }
        for f in 0..2 {
            let n = format!("ens1f{f}np{f}");
            let pci = format!("0000:17:00.{f}");
            addrs.push(iface(&n, true, Some(&format!("10.2.{f}.1"))));
            nets.push(net(&n, &pci));
            devs.push(dev(&format!("mlx5_{}", 8 + f), &pci, "dual", &n));
        }
        let found = derive(
            crate::inventory::Node::bare("h100"),
            &facts(addrs, nets, devs),
            &[],
        );
        assert_eq!(found.rails.len(), 10);
        assert!(found.ports.is_empty(), "{:?}", found.ports);
    }

    #[test]
    fn without_rdma_the_fabric_is_what_has_carrier_and_an_address_besides_management() {
        let mut f = facts(
            vec![
                iface("lo", true, Some("127.0.0.1")),
                iface("mgmt0", true, Some("10.0.0.11")),
                iface("fab0", true, Some("10.214.0.1")),
                iface("fab1", true, Some("10.215.0.1")),
                iface("docker0", true, Some("172.17.0.1")),
                iface("veth9", true, None),
                iface("fab2", false, Some("10.216.0.1")),
            ],
            vec![Netdev {
                name: "docker0".into(),
                kind: Some("bridge".into()),
                ..Default::default()
            }],
            vec![],
        );
        let found = derive(crate::inventory::Node::bare("lab01"), &f, &[]);
        assert_eq!(found.interfaces(), ["fab0", "fab1"]);
        assert!(found.rule.starts_with("no RDMA device"), "{}", found.rule);
        for n in [
            "left out mgmt0: the management NIC",
            "left out docker0: a bridge interface",
            "left out veth9: no global address",
            "left out fab2: no carrier",
        ] {
            assert!(found.notes.iter().any(|x| x == n), "{n}: {:?}", found.notes);
        }
        // Unknown management address: nothing is left out for it, and the rule says so.
        f.mgmt = None;
        let found = derive(crate::inventory::Node::bare("lab01"), &f, &[]);
        assert_eq!(found.interfaces(), ["mgmt0", "fab0", "fab1"]);
        assert!(found.rule.contains("unknown"), "{}", found.rule);
    }

    #[test]
    fn the_sysfs_command_is_what_the_simulation_answers() {
        let t = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples/sim/transcripts/spark-01.toml"),
        )
        .unwrap();
        let v: toml::Value = toml::from_str(&t).unwrap();
        let cmds: Vec<&str> = v["command"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["command"].as_str())
            .collect();
        assert!(
            cmds.contains(&SYSFS_COMMAND),
            "regenerate the simulation (generate.py)"
        );
    }
}

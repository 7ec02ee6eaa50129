//! What `fabcheck discover` found on each node, and the commented inventory it writes from that
//! (docs/discover.md). The gathering is `primitives::discover`; the comparison with an existing
//! inventory is [`super::diff`].

use super::{KnownHosts, Node, PortSpec, TransportKind};
use std::fmt::Write as _;

/// One fabric interface (a rail) of a node, with where each value came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Rail {
    pub iface: String,
    /// The RDMA device on this netdev (`rdma link`, else `ibdev2netdev`, else sysfs).
    pub rdma_device: Option<String>,
    /// Global addresses with their prefix (`192.168.100.10/24`), IPv4 first (`ip -j addr`).
    pub addresses: Vec<String>,
    pub mtu: Option<u64>,
    /// The speed negotiated now (Mb/s; `ethtool`, else sysfs `speed`).
    pub speed_mbps: Option<u64>,
    /// The highest link mode the interface supports (Mb/s; `ethtool`).
    pub max_mbps: Option<u64>,
    /// PCI function of the netdev (sysfs `device`).
    pub pci: Option<String>,
    pub driver: Option<String>,
    /// The RoCE v2 GID index of the rail's first IPv4 address (`show_gids`).
    pub gid_index: Option<u32>,
}

impl Rail {
    /// The addresses without their prefix length.
    pub(crate) fn ips(&self) -> Vec<String> {
        self.addresses
            .iter()
            .map(|a| a.split('/').next().unwrap_or(a).to_string())
            .collect()
    }
}

/// A physical port: its rails, and how they were grouped.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Port {
    pub name: String,
    pub interfaces: Vec<String>,
    pub rdma_devices: Vec<String>,
    pub why: String,
}

/// The platform profile detected on the node, with the reasons, or the facts when none.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Platform {
    pub profile: Option<String>,
    pub reasons: Vec<String>,
    /// Facts read (DMI product name, GPUs, NICs), for the comment.
    pub facts: Vec<String>,
}

/// One discovered node.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// Connection settings as the defaults file gave them.
    pub node: Node,
    pub rails: Vec<Rail>,
    pub ports: Vec<Port>,
    pub platform: Platform,
    /// How the fabric interfaces were told apart (one comment line).
    pub rule: String,
    /// Interfaces left out and why; warnings (each one comment line).
    pub notes: Vec<String>,
    /// What makes this node's entry unusable as it is (no fabric interface besides the one SSH
    /// reached, a `--fabric` name that matches nothing): said on the console and in the file,
    /// and discover exits 1.
    pub problems: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum Discovery {
    Found(Box<Found>),
    /// The node could not be read: the reason (transport error, missing tool).
    NotReached {
        node: Box<Node>,
        reason: String,
    },
}

impl Discovery {
    pub(crate) fn name(&self) -> &str {
        match self {
            Discovery::Found(f) => &f.node.name,
            Discovery::NotReached { node, .. } => &node.name,
        }
    }
}

impl Found {
    pub(crate) fn interfaces(&self) -> Vec<String> {
        self.rails.iter().map(|r| r.iface.clone()).collect()
    }
    /// One address per rail, in rail order (the inventory's pairing of `fabric_ips[k]` with
    /// `interfaces[k]`), then any further addresses.
    pub(crate) fn fabric_ips(&self) -> Vec<String> {
        let mut first: Vec<String> = Vec::new();
        let mut more: Vec<String> = Vec::new();
        for r in &self.rails {
            let mut ips = r.ips().into_iter();
            if let Some(a) = ips.next() {
                first.push(a);
            }
            more.extend(ips);
        }
        first.extend(more);
        first
    }
    pub(crate) fn rdma_devices(&self) -> Vec<String> {
        self.rails
            .iter()
            .filter_map(|r| r.rdma_device.clone())
            .collect()
    }
    /// The MTU of every rail when they agree.
    pub(crate) fn mtu(&self) -> Option<u64> {
        let first = self.rails.first()?.mtu?;
        self.rails
            .iter()
            .all(|r| r.mtu == Some(first))
            .then_some(first)
    }
    pub(crate) fn port_specs(&self) -> Vec<PortSpec> {
        self.ports
            .iter()
            .map(|p| PortSpec {
                name: p.name.clone(),
                interfaces: p.interfaces.clone(),
                rdma_devices: p.rdma_devices.clone(),
                speed_mbps: None,
            })
            .collect()
    }
}

/// A TOML string (basic string, escaped).
pub(crate) fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn list(v: &[String]) -> String {
    format!(
        "[{}]",
        v.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ")
    )
}

/// Comment text on one line: what a node said passes the console's sanitiser (escape
/// sequences, control characters and bidirectional overrides removed: TOML refuses control
/// characters in a comment, and `cat` would play them), and no newline or tab can end or
/// bend the comment.
fn c(s: &str) -> String {
    crate::util::fmt::clean_text(s).replace(['\n', '\t'], " ")
}

/// A TOML key: bare when it can be (`A-Za-z0-9_-`), else quoted.
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_string()
    } else {
        q(k)
    }
}

/// The lowest and highest MTU Linux gives an interface (IPv4's minimum; loopback's 64 KiB).
const MTU_RANGE: std::ops::RangeInclusive<u64> = 68..=65536;

/// `a` (`ADDR` or `ADDR/PREFIX`) as the loader takes a fabric address: an IP address (never a
/// host name), with a prefix length the family has.
fn address_ok(a: &str) -> bool {
    let (ip, prefix) = match a.split_once('/') {
        Some((ip, p)) => (ip, Some(p)),
        None => (a, None),
    };
    let Ok(ip) = ip.parse::<std::net::IpAddr>() else {
        return false;
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    prefix.is_none_or(|p| p.parse::<u8>().is_ok_and(|p| p <= max))
}

/// What the nodes said, held to the loader's own rules before it is written, so that the
/// file loads: an interface or RDMA device name the loader refuses, an address that is not
/// an IP address (a host name), an address another node (or another rail) already has, a
/// second rail of one name, an MTU out of range. Each refused value is left out with a
/// comment saying why; ports keep only the rails that remain.
pub(crate) fn admit(all: &mut [Discovery]) {
    let mut owner: std::collections::HashMap<std::net::IpAddr, String> = Default::default();
    for d in all.iter_mut() {
        if let Discovery::Found(f) = d {
            admit_node(f, &mut owner);
        }
    }
}

fn admit_node(f: &mut Found, owner: &mut std::collections::HashMap<std::net::IpAddr, String>) {
    let node = f.node.name.clone();
    let mut notes = Vec::new();
    let mut kept: Vec<Rail> = Vec::new();
    for mut r in std::mem::take(&mut f.rails) {
        if !super::valid_name(&r.iface) {
            notes.push(format!(
                "left out interface {:?}: not a name the inventory takes (letters, digits and \
                 -_.:@% only)",
                r.iface
            ));
            continue;
        }
        if kept.iter().any(|k| k.iface == r.iface) {
            notes.push(format!(
                "left out a second {}: the node listed it twice",
                r.iface
            ));
            continue;
        }
        if let Some(d) = r.rdma_device.take() {
            if super::valid_name(&d) {
                r.rdma_device = Some(d);
            } else {
                notes.push(format!(
                    "{}: left out RDMA device {d:?}: not a name the inventory takes",
                    r.iface
                ));
            }
        }
        let mut addresses = Vec::new();
        for a in std::mem::take(&mut r.addresses) {
            if !address_ok(&a) {
                notes.push(format!(
                    "{}: left out address {a:?}: not an IP address (the inventory takes \
                     addresses, not host names)",
                    r.iface
                ));
                continue;
            }
            let ip: std::net::IpAddr = a.split('/').next().unwrap_or(&a).parse().expect("checked");
            match owner.get(&ip) {
                Some(first) => notes.push(format!(
                    "{}: left out address {a}: {} has it too (each address belongs to one \
                     node and one rail)",
                    r.iface,
                    if *first == node {
                        "another rail of this node".to_string()
                    } else {
                        format!("node {first}")
                    }
                )),
                None => {
                    owner.insert(ip, node.clone());
                    addresses.push(a);
                }
            }
        }
        r.addresses = addresses;
        if let Some(m) = r.mtu.filter(|m| !MTU_RANGE.contains(m)) {
            notes.push(format!(
                "{}: left out MTU {m}: out of range ({}–{})",
                r.iface,
                MTU_RANGE.start(),
                MTU_RANGE.end()
            ));
            r.mtu = None;
        }
        kept.push(r);
    }
    for p in &mut f.ports {
        p.interfaces.retain(|i| kept.iter().any(|r| &r.iface == i));
        p.rdma_devices
            .retain(|d| kept.iter().any(|r| r.rdma_device.as_ref() == Some(d)));
    }
    f.ports.retain(|p| !p.interfaces.is_empty());
    f.rails = kept;
    f.notes.extend(notes);
}

/// The connection settings of a node as `key = value` lines (what the defaults file gave).
fn conn_fields(n: &Node) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    if let Some(u) = &n.user {
        v.push(("user", q(u)));
    }
    if let Some(p) = n.port {
        v.push(("port", p.to_string()));
    }
    let dur = |d: std::time::Duration| q(&humantime::format_duration(d).to_string());
    v.push(("connect_timeout", dur(n.connect_timeout)));
    v.push(("command_timeout", dur(n.command_timeout)));
    match n.known_hosts {
        KnownHosts::SshConfig => {}
        KnownHosts::Strict => v.push(("known_hosts", q("strict"))),
        KnownHosts::AcceptNew => v.push(("known_hosts", q("accept-new"))),
        KnownHosts::Off => v.push(("known_hosts", q("off"))),
    }
    if let Some(p) = &n.ssh_config {
        v.push(("ssh_config", q(&p.display().to_string())));
    }
    match n.transport {
        TransportKind::Ssh => {}
        TransportKind::Local => v.push(("transport", q("local"))),
        TransportKind::Replay => v.push(("transport", q("replay"))),
    }
    if let Some(d) = &n.replay_dir {
        v.push(("replay_dir", q(&d.display().to_string())));
    }
    v
}

/// What the written file says about how it was made.
pub(crate) struct Header<'a> {
    /// The command line, for the first comment.
    pub command: &'a str,
    /// Where the SSH settings came from.
    pub defaults: Option<&'a str>,
    pub simulation: Option<&'a str>,
    pub when: &'a str,
}

/// The commented inventory of `found` (nodes not reached are listed in comments).
pub(crate) fn render(h: &Header, all: &[Discovery]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Inventory discovered by `{}`", c(h.command));
    let _ = writeln!(
        out,
        "# on {}, read-only. It says what the nodes ARE: review it before it is what they",
        h.when
    );
    let _ = writeln!(
        out,
        "# should be (`fabcheck discover --diff THIS_FILE` later lists what changed)."
    );
    if let Some(d) = h.defaults {
        let _ = writeln!(out, "# SSH settings from {}.", c(d));
    }
    if let Some(s) = h.simulation {
        let _ = writeln!(out, "simulation = {}", q(s));
    }
    let found: Vec<&Found> = all
        .iter()
        .filter_map(|d| match d {
            Discovery::Found(f) => Some(f.as_ref()),
            _ => None,
        })
        .collect();
    let first = all.first().map(|d| match d {
        Discovery::Found(f) => &f.node,
        Discovery::NotReached { node, .. } => node,
    });
    let defaults = first.map(conn_fields).unwrap_or_default();
    if !defaults.is_empty() {
        out.push_str("\n[defaults]\n");
        for (k, v) in &defaults {
            let _ = writeln!(out, "{k} = {v}");
        }
    }
    for d in all {
        match d {
            Discovery::Found(f) => render_node(&mut out, f, &defaults),
            Discovery::NotReached { node, reason } => {
                let _ = write!(
                    out,
                    "\n# NOT REACHED: {} ({}): {}\n# It is left out of this file; run discover again when it answers.\n",
                    node.name,
                    node.host,
                    c(reason)
                );
            }
        }
    }
    let fabric: Vec<String> = found
        .iter()
        .filter(|f| !f.rails.is_empty())
        .map(|f| f.node.name.clone())
        .collect();
    if !fabric.is_empty() {
        out.push_str("\n[groups]\n# the nodes with at least one fabric interface (the shipped scripts run on @fabric)\n");
        let _ = writeln!(out, "fabric = {}", q(&super::nodeset::fold(&fabric)));
    }
    out
}

fn render_node(out: &mut String, f: &Found, defaults: &[(&'static str, String)]) {
    let n = &f.node;
    out.push_str("\n[[node]]\n");
    let _ = writeln!(out, "name = {}", q(&n.name));
    if n.host != n.name {
        let _ = writeln!(out, "host = {}", q(&n.host));
    }
    for (k, v) in conn_fields(n) {
        if !defaults.iter().any(|(dk, dv)| *dk == k && *dv == v) {
            let _ = writeln!(out, "{k} = {v}");
        }
    }
    for p in &f.problems {
        let _ = writeln!(out, "# PROBLEM: {}", c(p));
    }
    render_platform(out, &f.platform);
    let _ = writeln!(out, "# fabric interfaces: {}", c(&f.rule));
    for note in &f.notes {
        let _ = writeln!(out, "#   {}", c(note));
    }
    for r in &f.rails {
        let _ = writeln!(out, "#   {}", c(&rail_comment(r)));
    }
    let _ = writeln!(out, "interfaces = {}", list(&f.interfaces()));
    let _ = writeln!(out, "fabric_ips = {}", list(&f.fabric_ips()));
    if !f.rdma_devices().is_empty() {
        let _ = writeln!(out, "rdma_devices = {}", list(&f.rdma_devices()));
    }
    if !f.ports.is_empty() {
        out.push_str("ports = [\n");
        for p in &f.ports {
            let _ = writeln!(out, "  # {}", c(&p.why));
            let _ = write!(
                out,
                "  {{ name = {}, interfaces = {}",
                q(&p.name),
                list(&p.interfaces)
            );
            if !p.rdma_devices.is_empty() {
                let _ = write!(out, ", rdma_devices = {}", list(&p.rdma_devices));
            }
            out.push_str(" },\n");
        }
        out.push_str("]\n");
    }
    render_vars(out, f);
}

fn render_platform(out: &mut String, p: &Platform) {
    match &p.profile {
        Some(name) => {
            let _ = writeln!(out, "# platform profile: {}", c(name));
            for r in &p.reasons {
                let _ = writeln!(out, "#   {}", c(r));
            }
        }
        None => {
            let _ = writeln!(out, "# platform facts (no profile detected):");
        }
    }
    for fact in &p.facts {
        let _ = writeln!(out, "#   {}", c(fact));
    }
}

fn rail_comment(r: &Rail) -> String {
    let mut s = r.iface.clone();
    if let Some(d) = &r.rdma_device {
        s += &format!(" <-> {d}");
    }
    if !r.addresses.is_empty() {
        s += &format!(" <-> {}", r.addresses.join(", "));
    }
    if let Some(g) = r.gid_index {
        s += &format!(" (RoCE v2 GID index {g}, show_gids)");
    }
    if let Some(p) = &r.pci {
        s += &format!("; PCI {p}");
    }
    if let Some(d) = &r.driver {
        s += &format!(" {d}");
    }
    if let Some(sp) = r.speed_mbps {
        s += &format!("; {sp} Mb/s negotiated");
        if let Some(m) = r.max_mbps {
            s += &format!(" (supports up to {m})");
        }
    }
    if let Some(m) = r.mtu {
        s += &format!("; MTU {m}");
    }
    s
}

/// `[node.vars]`: the MTU the rails share (what the checks expect) and, per rail, what was
/// found (what `--diff` compares later).
fn render_vars(out: &mut String, f: &Found) {
    out.push_str("\n[node.vars]\n");
    if let serde_json::Value::Object(m) = &f.node.vars {
        for (k, v) in m {
            if k == "rails" || k == "mtu" || k == "profile" {
                continue;
            }
            if let Ok(t) = toml::Value::try_from(v) {
                let _ = writeln!(out, "{} = {t} # from the defaults file", key(k));
            }
        }
    }
    match f.mtu() {
        Some(m) => {
            let _ = writeln!(out, "mtu = {m} # every fabric interface's MTU (ip -j addr)");
        }
        None if !f.rails.is_empty() => {
            out.push_str(
                "# mtu: the fabric interfaces' MTUs differ (see each rail below); none written\n",
            );
        }
        None => {}
    }
    for r in &f.rails {
        let key = if super::valid_name(&r.iface) && !r.iface.contains(['.', ':', '@', '%']) {
            r.iface.clone()
        } else {
            q(&r.iface)
        };
        let _ = writeln!(
            out,
            "[node.vars.rails.{key}] # as found; `--diff` compares these"
        );
        if let Some(d) = &r.rdma_device {
            let _ = writeln!(out, "rdma_device = {}", q(d));
        }
        let _ = writeln!(out, "addresses = {}", list(&r.addresses));
        if let Some(g) = r.gid_index {
            let _ = writeln!(out, "gid_index = {g}");
        }
        if let Some(m) = r.mtu {
            let _ = writeln!(out, "mtu = {m}");
        }
        if let Some(s) = r.speed_mbps {
            let _ = writeln!(out, "speed_mbps = {s} # negotiated now, not an expectation");
        }
        if let Some(p) = &r.pci {
            let _ = writeln!(out, "pci = {}", q(p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the nodes say (DMI, GPU, driver, PCI strings, a reason) with escape sequences and
    /// control characters: the comments carry none, and the file loads.
    #[test]
    fn control_characters_from_the_nodes_never_reach_a_comment() {
        let evil = "DGX\u{1b}]0;pwned\u{7}\u{1b}[2J\u{0}\u{85}\u{202e}x\r\nname = \"y\"";
        let mut node = Node::bare("n1");
        node.vars = serde_json::json!({ "a b": 1, "ok_key": "v", "é": true });
        let found = Found {
            node: node.clone(),
            rails: vec![Rail {
                iface: "fab0".into(),
                addresses: vec!["10.0.0.1/24".into()],
                pci: Some(evil.into()),
                driver: Some(evil.into()),
                mtu: Some(9000),
                ..Default::default()
            }],
            ports: vec![],
            platform: Platform {
                profile: Some(evil.into()),
                reasons: vec![evil.into()],
                facts: vec![evil.into()],
            },
            rule: evil.into(),
            notes: vec![evil.into()],
            problems: vec![evil.into()],
        };
        let all = vec![
            Discovery::Found(Box::new(found)),
            Discovery::NotReached {
                node: Box::new(Node::bare("n2")),
                reason: evil.into(),
            },
        ];
        let text = render(
            &Header {
                command: evil,
                defaults: Some(evil),
                simulation: None,
                when: "now",
            },
            &all,
        );
        for l in text.lines().filter(|l| l.trim_start().starts_with('#')) {
            assert!(
                !l.chars().any(|c| c.is_control() || c == '\u{202e}'),
                "{l:?}"
            );
        }
        crate::inventory::Inventory::parse(&text, std::path::Path::new("x.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(
            text.contains("\"a b\" = 1") && text.contains("ok_key = "),
            "{text}"
        );
    }

    #[test]
    fn refused_values_are_left_out_with_why() {
        let rail = |i: &str, a: &str| Rail {
            iface: i.into(),
            addresses: vec![a.into()],
            mtu: Some(1500),
            ..Default::default()
        };
        let found = |name: &str, rails: Vec<Rail>| {
            Discovery::Found(Box::new(Found {
                node: Node::bare(name),
                rails,
                ports: vec![],
                platform: Platform::default(),
                rule: String::new(),
                notes: vec![],
                problems: vec![],
            }))
        };
        let mut all = vec![
            found(
                "a",
                vec![rail("f0", "10.0.0.1/24"), rail("f 1", "10.0.0.2/24")],
            ),
            found(
                "b",
                vec![
                    rail("f0", "10.0.0.1/24"),
                    rail("f1", "10.0.0.3/33"),
                    rail("f2", "::1/128"),
                ],
            ),
        ];
        admit(&mut all);
        let Discovery::Found(b) = &all[1] else {
            panic!()
        };
        assert_eq!(b.fabric_ips(), ["::1"]);
        assert!(
            b.notes.iter().any(|n| n.contains("node a has it too")),
            "{:?}",
            b.notes
        );
        assert!(
            b.notes.iter().any(|n| n.contains("10.0.0.3/33")),
            "{:?}",
            b.notes
        );
        let Discovery::Found(a) = &all[0] else {
            panic!()
        };
        assert_eq!(a.interfaces(), ["f0"]);
    }
}

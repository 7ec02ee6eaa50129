//! Inventory mistakes before anything runs (issue 31 item 3): what the selected scripts read of
//! each node (`n.fabric_ips`, `n.interfaces`, `n.rdma_devices`, `n.ports`, found in their
//! sources and the modules they import), checked against every selected node, each problem
//! said once, first. A node that lacks a field the scripts read would otherwise show up as
//! dozens of ERROR or SKIP testcases among hundreds.

use super::Node;

/// One node field the scripts may read, and how a node can provide it.
struct Need {
    field: &'static str,
    what: &'static str,
    has: fn(&Node) -> bool,
}

const NEEDS: [Need; 3] = [
    Need {
        field: "fabric_ips",
        what: "fabric addresses (pings, SSH over the fabric, RDMA and NCCL peers)",
        has: |n| !n.fabric_ips.is_empty(),
    },
    Need {
        field: "interfaces",
        what: "fabric interfaces (link speed, MTU, counters)",
        has: |n| !n.interfaces.is_empty() || n.ports.iter().any(|p| !p.interfaces.is_empty()),
    },
    Need {
        field: "rdma_devices",
        what: "RDMA devices (ib_write_bw, NCCL over IB/RoCE)",
        has: |n| !n.rdma_devices.is_empty() || n.ports.iter().any(|p| !p.rdma_devices.is_empty()),
    },
];

/// Whether `source` reads node field `field` (`.field` or `["field"]`).
fn reads(source: &str, field: &str) -> bool {
    let dotted = format!(".{field}");
    source.match_indices(&dotted).any(|(i, _)| {
        let after = source[i + dotted.len()..].chars().next();
        !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    }) || source.contains(&format!("[\"{field}\"]"))
}

/// Every problem of `nodes` for scripts whose sources (with their imported modules) are
/// `sources`: `NODE: no `fabric_ips` in the inventory: the scripts read its fabric addresses
/// (...)`, nodes in inventory order, each field once per node.
pub(crate) fn problems(nodes: &[Node], sources: &[String]) -> Vec<String> {
    let wanted: Vec<&Need> = NEEDS
        .iter()
        .filter(|need| {
            sources
                .iter()
                .any(|s| reads(s, need.field) || (need.field != "fabric_ips" && reads(s, "ports")))
        })
        .collect();
    let ports_read = sources
        .iter()
        .any(|s| reads(s, "ports") || reads(s, "rdma_devices"));
    let mut out = Vec::new();
    for n in nodes {
        out.extend(rail_lengths(n));
        if ports_read {
            out.extend(one_port_two_paths(n));
        }
        for need in &wanted {
            if !(need.has)(n) {
                out.push(format!(
                    "{}: no `{}` in the inventory, and the scripts read the node's {}",
                    n.name, need.field, need.what
                ));
            }
        }
    }
    out
}

/// Rail k of a node is its k-th `interfaces`, `rdma_devices` and `fabric_ips` entry: lists of
/// different lengths (those it has) pair the wrong items or leave a rail half described (one
/// missing `rdma_devices` entry measures half a port). One problem naming the lengths.
pub(crate) fn rail_lengths(n: &Node) -> Option<String> {
    let lists = [
        ("interfaces", n.interfaces.len()),
        ("rdma_devices", n.rdma_devices.len()),
        ("fabric_ips", n.fabric_ips.len()),
    ];
    let given: Vec<&(&str, usize)> = lists.iter().filter(|(_, l)| *l > 0).collect();
    if given.windows(2).all(|w| w[0].1 == w[1].1) {
        return None;
    }
    let said: Vec<String> = given.iter().map(|(f, l)| format!("{l} `{f}`")).collect();
    Some(format!(
        "{}: {} — rail k is the k-th entry of each list: give every rail its netdev, RDMA device and address in the same order (a rail with no RDMA device is measured as half a port, an address with no netdev is not pinged from it)",
        n.name,
        said.join(", ")
    ))
}

/// `enP2p1s0f1np1` -> (`P2`, `p1s0f1np1`): a netdev's PCI domain part and the rest of its
/// name (systemd's predictable names: `en[P<domain>]p<bus>s<slot>f<function>[np<port>]`).
fn domain_and_function(iface: &str) -> Option<(&str, &str)> {
    let rest = iface.strip_prefix("en")?;
    let (domain, function) = match rest.strip_prefix('P') {
        Some(r) => {
            let digits = r.bytes().take_while(u8::is_ascii_digit).count();
            (&rest[..=digits], &r[digits..])
        }
        None => ("", rest),
    };
    let re = regex::Regex::new(r"^p\d+s\d+f\d+(np\d+)?$").expect("valid");
    re.is_match(function).then_some((domain, function))
}

/// A node without `ports` whose rails are one port's PCIe paths: the same bus, slot, function
/// and port on two PCI domains (`enp1s0f1np1` and `enP2p1s0f1np1`, a DGX Spark QSFP port's two
/// x4 paths; a ConnectX Socket Direct card). Without `ports` each rail is measured as a port of
/// its own (judged against its share of the port, and said so at run time): said here first,
/// with the `ports` line to add.
pub(crate) fn one_port_two_paths(n: &Node) -> Option<String> {
    if !n.ports.is_empty() {
        return None;
    }
    let parsed: Vec<(&String, (&str, &str))> = n
        .interfaces
        .iter()
        .filter_map(|i| domain_and_function(i).map(|d| (i, d)))
        .collect();
    let mut same: Vec<&String> = Vec::new();
    for (i, (dom, f)) in &parsed {
        if parsed
            .iter()
            .any(|(j, (d2, f2))| j != i && f2 == f && d2 != dom)
        {
            same.push(i);
        }
    }
    if same.len() < 2 {
        return None;
    }
    let quoted: Vec<String> = same.iter().map(|i| format!("\"{i}\"")).collect();
    Some(format!(
        "{}: {} are one port's PCIe paths (the same function on two PCI domains, as a DGX Spark QSFP port) but the inventory has no `ports`: each is measured as a port of its own against its share of the port's speed; describe the port: ports = [{{ name = \"qsfp1\", interfaces = [{}], rdma_devices = [...] }}] (`fabcheck discover` writes it)",
        n.name,
        same.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" and "),
        quoted.join(", ")
    ))
}

/// Problems of an inventory by itself (`fabcheck nodes`): a field that some nodes have and
/// others lack (the shipped scripts read all three).
pub(crate) fn inconsistencies(nodes: &[Node]) -> Vec<String> {
    let mut out: Vec<String> = nodes.iter().filter_map(rail_lengths).collect();
    out.extend(nodes.iter().filter_map(one_port_two_paths));
    for need in &NEEDS {
        let have: Vec<&str> = nodes
            .iter()
            .filter(|n| (need.has)(n))
            .map(|n| n.name.as_str())
            .collect();
        if have.is_empty() {
            continue;
        }
        for n in nodes.iter().filter(|n| !(need.has)(n)) {
            out.push(format!(
                "{}: no `{}` in the inventory while {} other node(s) have them: the shipped scripts read the node's {}",
                n.name,
                need.field,
                have.len(),
                need.what
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, ips: &[&str], ifaces: &[&str]) -> Node {
        let mut n = Node::bare(name);
        n.fabric_ips = ips.iter().map(|s| s.to_string()).collect();
        n.interfaces = ifaces.iter().map(|s| s.to_string()).collect();
        n
    }

    #[test]
    fn a_node_without_what_the_scripts_read_is_one_problem_each() {
        let nodes = [
            node("a", &["10.0.0.1"], &["eth1"]),
            node("b", &[], &["eth1"]),
            node("c", &[], &[]),
        ];
        let script = "for n in nodes() { n.ping(n.fabric_ips[0]); log(n.interfaces); }".to_string();
        let p = problems(&nodes, &[script]);
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(
            p[0].starts_with("b: no `fabric_ips` in the inventory"),
            "{p:?}"
        );
        assert!(p[2].starts_with("c: no `interfaces`"), "{p:?}");
        // a script that reads neither needs neither; `.fabric_ips_x` is another field
        assert!(problems(&nodes, &["log(n.fabric_ips_x)".to_string()]).is_empty());
        // RDMA devices given through ports count
        let mut d = node("d", &["1"], &["e"]);
        d.rdma_devices.clear();
        assert_eq!(problems(&[d], &["n.rdma_devices".to_string()]).len(), 1);
    }

    #[test]
    fn rail_lists_of_different_lengths_are_one_problem_naming_them() {
        let mut a = node("a", &["10.0.0.1", "10.0.1.1"], &["e0", "e1"]);
        a.rdma_devices = vec!["mlx5_0".into()];
        let p = problems(&[a.clone()], &[]);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("a: 2 `interfaces`, 1 `rdma_devices`, 2 `fabric_ips` — rail k"),
            "{}",
            p[0]
        );
        assert_eq!(inconsistencies(&[a.clone()]), p);
        // equal lengths, or a list left out (a node without RDMA devices), are no problem
        a.rdma_devices.push("mlx5_1".into());
        assert!(problems(&[a.clone()], &[]).is_empty());
        a.rdma_devices.clear();
        assert!(rail_lengths(&a).is_none());
    }

    #[test]
    fn nodes_lacking_what_others_have_are_inconsistent() {
        let nodes = [node("a", &["1"], &["e"]), node("b", &[], &["e"])];
        let p = inconsistencies(&nodes);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].starts_with("b: no `fabric_ips`"));
    }

    #[test]
    fn one_ports_two_pcie_paths_without_ports_is_said_first() {
        let a = node(
            "spark-01",
            &["192.168.100.10", "192.168.200.10"],
            &["enp1s0f1np1", "enP2p1s0f1np1"],
        );
        let p = one_port_two_paths(&a).expect("a problem");
        assert!(
            p.starts_with("spark-01: enp1s0f1np1 and enP2p1s0f1np1 are one port's PCIe paths"),
            "{p}"
        );
        assert!(
            p.contains("interfaces = [\"enp1s0f1np1\", \"enP2p1s0f1np1\"]"),
            "{p}"
        );
        // listed by `problems` for scripts that read ports, not for ping-only scripts
        let said = |src: &str| {
            problems(std::slice::from_ref(&a), &[src.to_string()])
                .iter()
                .filter(|p| p.contains("PCIe paths"))
                .count()
        };
        assert_eq!(said("n.ports"), 1);
        assert_eq!(said("n.fabric_ips"), 0);
        // two ports of one card (f0, f1), other NICs, or ports given: nothing
        for ifaces in [
            &["enp1s0f0np0", "enp1s0f1np1"][..],
            &["eth0", "eth1"][..],
            &["enp1s0f1np1", "enP2p2s0f1np1"][..],
            &["ib0", "ib1"][..],
        ] {
            let b = node("x", &[], ifaces);
            assert!(one_port_two_paths(&b).is_none(), "{ifaces:?}");
        }
        let mut c = a.clone();
        c.ports = vec![Default::default()];
        assert!(one_port_two_paths(&c).is_none());
    }
}

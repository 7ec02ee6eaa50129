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
    let mut out = Vec::new();
    for n in nodes {
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

/// Problems of an inventory by itself (`fabcheck nodes`): a field that some nodes have and
/// others lack (the shipped scripts read all three).
pub(crate) fn inconsistencies(nodes: &[Node]) -> Vec<String> {
    let mut out = Vec::new();
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
    fn nodes_lacking_what_others_have_are_inconsistent() {
        let nodes = [node("a", &["1"], &["e"]), node("b", &[], &["e"])];
        let p = inconsistencies(&nodes);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].starts_with("b: no `fabric_ips`"));
    }
}

//! `fabcheck nodes [-i INVENTORY] [NODESET]`: expand and print the inventory.

use super::common::{load_inventory, usage};
use super::{Target, EXIT_OK};
use crate::inventory::nodeset;
use std::path::Path;

pub fn nodes(inventory: Option<&Path>, set: Option<&str>) -> i32 {
    let t = Target {
        inventory: inventory.map(Path::to_path_buf),
        nodes: set.map(str::to_string),
    };
    let inv = match (inventory, set) {
        (None, None) => return usage("give -i INVENTORY and/or a NODESET"),
        _ => match load_inventory(&t) {
            Ok(i) => i,
            Err(e) => return usage(e),
        },
    };
    let problems = crate::inventory::needs::inconsistencies(&inv.nodes);
    if !problems.is_empty() {
        eprintln!("Inventory problems ({}):", problems.len());
        for l in &problems {
            eprintln!("  {l}");
        }
    }
    if let Some(sim) = &inv.simulation {
        println!("# SIMULATED cluster: {sim}");
    }
    for n in &inv.nodes {
        let mut extra = Vec::new();
        if !n.fabric_ips.is_empty() {
            extra.push(format!("fabric_ips={}", n.fabric_ips.join(",")));
        }
        if !n.interfaces.is_empty() {
            extra.push(format!("interfaces={}", n.interfaces.join(",")));
        }
        if !n.rdma_devices.is_empty() {
            extra.push(format!("rdma={}", n.rdma_devices.join(",")));
        }
        let user = n.user.clone().map(|u| format!("{u}@")).unwrap_or_default();
        let port = n.port.map(|p| format!(":{p}")).unwrap_or_default();
        println!(
            "{}\t{user}{}{port}\t{:?}\t{}",
            n.name,
            n.host,
            n.transport,
            extra.join(" ")
        );
    }
    for (g, def) in &inv.groups {
        if let Ok(m) = nodeset::expand(def, &inv.groups) {
            println!("@{g}\t{}", nodeset::fold(&m));
        }
    }
    EXIT_OK
}

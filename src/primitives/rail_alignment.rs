//! Rail alignment (issue 46 item 3): in a rail-optimised fabric rail k of every node lands on
//! rail k's switch. From where each rail's cable ends (LLDP's system and port on RoCE), rail
//! k's switch is the one most nodes' rail k lands on, when at least two do and more than land
//! on any other; a rail on **another rail's** switch is crossed, named with both switches. A
//! rail on a switch of no rail (nodes split between switches by node, not by rail), a fabric
//! whose rails share one switch (DGX Spark: both rails of a QSFP port are one cable; a small
//! RoCE fabric on one switch), and rails nobody else shares are not judged. Pure.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where one rail of one node lands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Landing {
    pub node: String,
    /// The rail's index on its node (0-based: the inventory's order).
    pub rail: i64,
    /// The rail's local device (netdev or HCA).
    pub device: String,
    /// The switch the cable ends on, and its port.
    pub switch_name: String,
    pub port: String,
}

/// A rail on another rail's switch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Crossed {
    pub node: String,
    pub rail: i64,
    pub device: String,
    /// Where it lands, and the rail whose switch that is (0-based).
    pub switch_name: String,
    pub port: String,
    pub switch_of_rail: i64,
    /// The switch rail `rail` of the other nodes lands on.
    pub expected: String,
}

/// Rail k's switch: the one most landings of rail k name, when at least two do and no other
/// switch is as common.
fn rail_switches(rows: &[Landing]) -> BTreeMap<i64, String> {
    let mut count: BTreeMap<i64, BTreeMap<&str, usize>> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.switch_name.is_empty()) {
        *count
            .entry(r.rail)
            .or_default()
            .entry(&r.switch_name)
            .or_default() += 1;
    }
    let mut out = BTreeMap::new();
    for (rail, by_switch) in count {
        let mut v: Vec<(&str, usize)> = by_switch.into_iter().collect();
        v.sort_by_key(|x| std::cmp::Reverse(x.1));
        let second = v.get(1).map_or(0, |x| x.1);
        if v[0].1 >= 2 && v[0].1 > second {
            out.insert(rail, v[0].0.to_string());
        }
    }
    out
}

/// The crossed rails of `rows`, in their order (none when fewer than two rails have distinct
/// switches: a fabric on one switch is not a question of alignment).
pub(crate) fn crossed(rows: &[Landing]) -> Vec<Crossed> {
    let leaf = rail_switches(rows);
    let mut distinct: Vec<&String> = leaf.values().collect();
    distinct.sort();
    distinct.dedup();
    if distinct.len() < 2 {
        return vec![];
    }
    let mut out = Vec::new();
    for r in rows {
        let Some(want) = leaf.get(&r.rail) else {
            continue;
        };
        if &r.switch_name == want {
            continue;
        }
        let Some((&j, _)) = leaf.iter().find(|(_, s)| **s == r.switch_name) else {
            continue;
        };
        out.push(Crossed {
            node: r.node.clone(),
            rail: r.rail,
            device: r.device.clone(),
            switch_name: r.switch_name.clone(),
            port: r.port.clone(),
            switch_of_rail: j,
            expected: want.clone(),
        });
    }
    out
}

crate::impl_shape!(Crossed, serialised("rail_alignment entry"));

#[cfg(test)]
mod tests {
    use super::*;

    fn land(node: &str, rail: i64, switch: &str) -> Landing {
        Landing {
            node: node.into(),
            rail,
            device: format!("eth{rail}"),
            switch_name: switch.into(),
            port: format!("swp{rail}"),
        }
    }

    #[test]
    fn a_rail_on_another_rails_switch_is_crossed_naming_both() {
        let mut rows = Vec::new();
        for n in ["a", "b", "c", "d"] {
            for k in 0..4 {
                rows.push(land(n, k, &format!("leaf{k}")));
            }
        }
        // c's rails 1 and 2 swapped at the switches
        rows[9].switch_name = "leaf2".into();
        rows[10].switch_name = "leaf1".into();
        let x = crossed(&rows);
        assert_eq!(x.len(), 2, "{x:?}");
        assert_eq!(
            (x[0].node.as_str(), x[0].rail, x[0].switch_of_rail),
            ("c", 1, 2)
        );
        assert_eq!(x[0].expected, "leaf1");
        assert_eq!(
            (x[1].node.as_str(), x[1].rail, x[1].expected.as_str()),
            ("c", 2, "leaf2")
        );
    }

    #[test]
    fn one_switch_for_every_rail_or_a_switch_of_no_rail_is_not_judged() {
        // every rail of every node on one switch (Sparks on one switch)
        let rows: Vec<Landing> = ["a", "b", "c"]
            .iter()
            .flat_map(|n| (0..2).map(move |k| land(n, k, "sw1")))
            .collect();
        assert!(crossed(&rows).is_empty());
        // nodes split between two switches by node: rail k has no majority switch
        let rows = vec![
            land("a", 0, "sw1"),
            land("a", 1, "sw1"),
            land("b", 0, "sw2"),
            land("b", 1, "sw2"),
        ];
        assert!(crossed(&rows).is_empty());
        // a rail on a third switch that is no rail's: not crossed (said elsewhere)
        let mut rows = Vec::new();
        for n in ["a", "b", "c"] {
            rows.push(land(n, 0, "leaf0"));
            rows.push(land(n, 1, "leaf1"));
        }
        rows[5].switch_name = "spare".into();
        assert!(crossed(&rows).is_empty());
    }
}

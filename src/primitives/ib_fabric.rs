//! The InfiniBand fabric between the nodes, as one `iblinkinfo` sweep shows it (issue 51 item
//! 1, pure): every switch-to-switch cable Active/LinkUp at 4X and the expected rate, the
//! uplinks of each leaf compared with the other leaves', and, when the site gives a cabling
//! plan (`parse::ib_cabling_plan`), every planned cable compared with where it lands.
//!
//! A leaf is a switch with a host (CA) cable; a spine is a switch with none. Each red names both
//! ends (switch GUID, node description, LID and port; or host and HCA) and, against a plan, the
//! planned port. A Down switch port no planned cable uses is not a fault (unused ports are).

use crate::parse::ib_cabling_plan::{Cable, End};
use crate::parse::iblinkinfo::Link;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// One finding: the message and the part the diagnosis names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Problem {
    pub message: String,
    pub part: String,
}

/// What the sweep shows of the switches, and what is wrong.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct FabricCheck {
    /// Active switch-to-switch cables (each counted once).
    pub switch_links: usize,
    pub leaves: usize,
    pub spines: usize,
    /// Leaf (its label) -> Active uplinks.
    pub uplinks: BTreeMap<String, usize>,
    /// Planned cables compared (0 without a plan).
    pub planned: usize,
    pub problems: Vec<Problem>,
    /// Logged, not failed.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone)]
struct Switch {
    guid: String,
    desc: String,
}

/// One end of a cable: a switch port (by LID) or an HCA (by node description) port.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    Sw(u64, u32),
    Ca(String, u32),
}

struct Sweep<'a> {
    switches: BTreeMap<u64, Switch>,
    /// Each end -> the Active link line seen from it and its peer (None: Down, no peer).
    ends: HashMap<Key, (&'a Link, Option<Key>)>,
}

fn sweep(links: &[Link]) -> Sweep<'_> {
    let mut switches = BTreeMap::new();
    for l in links
        .iter()
        .filter(|l| l.node_type.as_deref() == Some("Switch"))
    {
        switches.entry(l.lid).or_insert_with(|| Switch {
            guid: l.guid.clone().unwrap_or_default(),
            desc: l.node.clone().unwrap_or_default(),
        });
    }
    let mut ends = HashMap::new();
    for l in links {
        let me = match l.node_type.as_deref() {
            Some("Switch") => Key::Sw(l.lid, l.port),
            Some("CA") => Key::Ca(l.node.clone().unwrap_or_default(), l.port),
            _ => continue,
        };
        let peer = match (l.peer_lid, l.peer_port) {
            (Some(lid), Some(port)) if switches.contains_key(&lid) => Some(Key::Sw(lid, port)),
            (Some(_), Some(port)) => l.peer.clone().map(|d| Key::Ca(d, port)),
            _ => None,
        };
        ends.insert(me, (l, peer));
    }
    Sweep { switches, ends }
}

impl Sweep<'_> {
    fn switch(&self, lid: u64) -> String {
        match self.switches.get(&lid) {
            Some(s) => format!("switch {} \"{}\" LID {lid}", s.guid, s.desc),
            None => format!("switch LID {lid}"),
        }
    }

    fn name(&self, k: &Key) -> String {
        match k {
            Key::Sw(lid, port) => format!("{} port {port}", self.switch(*lid)),
            Key::Ca(desc, port) if *port == 1 => desc.clone(),
            Key::Ca(desc, port) => format!("{desc} port {port}"),
        }
    }

    /// Switch LIDs with a host cable (leaves).
    fn leaves(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .switches
            .keys()
            .copied()
            .filter(|lid| {
                self.ends.iter().any(|(k, (_, p))| {
                    matches!((k, p), (Key::Sw(l, _), Some(Key::Ca(..))) if l == lid)
                        || matches!((k, p), (Key::Ca(..), Some(Key::Sw(l, _))) if l == lid)
                })
            })
            .collect();
        v.sort_unstable();
        v
    }
}

fn what(l: &Link) -> String {
    match (&l.width, l.lane_gbps, &l.speed, l.rate) {
        (Some(w), Some(lane), Some(s), Some(r)) => format!("{w} {lane} Gbps ({s}, {r} Gb/s)"),
        (Some(w), Some(lane), _, _) => format!("{w} {lane} Gbps"),
        _ => "no width or speed".to_string(),
    }
}

/// Every Active-or-not switch-to-switch cable (both ends switches): Active/LinkUp, 4X, at
/// `rate_gbps` or faster; counted once.
fn switch_links(s: &Sweep, rate_gbps: f64, from: &str, out: &mut FabricCheck) {
    let mut seen: Vec<(&Key, &Key, &Link)> = s
        .ends
        .iter()
        .filter_map(|(k, (l, p))| match (k, p) {
            (Key::Sw(..), Some(p @ Key::Sw(..))) if k < p => Some((k, p, *l)),
            _ => None,
        })
        .collect();
    seen.sort_by(|a, b| a.0.cmp(b.0));
    for (a, b, l) in seen {
        out.switch_links += 1;
        let ends = format!("{} <-> {}", s.name(a), s.name(b));
        let bad = if l.state != "Active" || l.phys_state != "LinkUp" {
            Some(format!("{ends}: {}/{}", l.state, l.phys_state))
        } else if l.width.as_deref() != Some("4X") || l.rate.is_none_or(|r| r < rate_gbps) {
            Some(format!(
                "{ends}: {}, expected 4X at {rate_gbps} Gb/s ({from})",
                what(l)
            ))
        } else {
            None
        };
        if let Some(message) = bad {
            out.problems.push(Problem {
                part: format!("the switch-to-switch cable {ends}"),
                message,
            });
        }
    }
}

/// The Active uplinks (cables to other switches) of each leaf, against the other leaves': the
/// most common count (a tie: the higher); a leaf below it is named with its count and the
/// ports that are uplinks on most other leaves but Down on it. No spine: nothing to compare.
fn uplinks(s: &Sweep, out: &mut FabricCheck) {
    let leaves = s.leaves();
    out.leaves = leaves.len();
    out.spines = s.switches.len() - leaves.len();
    if out.spines == 0 || leaves.len() < 2 {
        return;
    }
    let ups = |lid: u64| -> Vec<u32> {
        let mut v: Vec<u32> = s
            .ends
            .iter()
            .filter_map(|(k, (l, p))| match (k, p) {
                (Key::Sw(me, port), Some(Key::Sw(..))) if *me == lid && l.state == "Active" => {
                    Some(*port)
                }
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v
    };
    let counts: Vec<(u64, Vec<u32>)> = leaves.iter().map(|&l| (l, ups(l))).collect();
    let mut freq: BTreeMap<usize, usize> = BTreeMap::new();
    for (_, v) in &counts {
        *freq.entry(v.len()).or_default() += 1;
    }
    let want = freq
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(b.0)))
        .map(|(n, _)| *n)
        .unwrap_or(0);
    let peers = freq.get(&want).copied().unwrap_or(0);
    for (lid, v) in &counts {
        out.uplinks.insert(s.switch(*lid), v.len());
        if v.len() >= want {
            continue;
        }
        // ports that are Active uplinks on at least half the other leaves, Down here
        let missing: Vec<String> = (1..=256u32)
            .filter(|p| !v.contains(p))
            .filter(|p| {
                let others = counts
                    .iter()
                    .filter(|(o, ov)| o != lid && ov.contains(p))
                    .count();
                2 * others >= counts.len() - 1 && others > 0
            })
            .map(|p| p.to_string())
            .collect();
        let which = if missing.is_empty() {
            String::new()
        } else {
            format!(
                "; port(s) {} are uplinks on the other leaves and not Active here",
                missing.join(", ")
            )
        };
        out.problems.push(Problem {
            message: format!(
                "leaf {} has {} uplinks to the spines where {peers} of the {} leaves have {want}{which}",
                s.switch(*lid),
                v.len(),
                counts.len()
            ),
            part: format!("an uplink of leaf {}", s.switch(*lid)),
        });
    }
}

fn norm_guid(g: &str) -> Option<u128> {
    let h = g.strip_prefix("0x").or_else(|| g.strip_prefix("0X"))?;
    u128::from_str_radix(h, 16).ok()
}

/// A planned end the sweep cannot place (why, in words).
#[derive(Debug)]
struct Unresolved(String);

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The switch a plan names: by GUID, else by node description (one switch only).
fn resolve_switch(s: &Sweep, name: &str) -> Result<u64, Unresolved> {
    if let Some(g) = norm_guid(name) {
        return s
            .switches
            .iter()
            .find(|(_, sw)| norm_guid(&sw.guid) == Some(g))
            .map(|(lid, _)| *lid)
            .ok_or_else(|| Unresolved(format!("no switch with GUID {name} in the sweep (a switch down or unreachable, or the plan's GUID)")));
    }
    let m: Vec<u64> = s
        .switches
        .iter()
        .filter(|(_, sw)| sw.desc == name)
        .map(|(lid, _)| *lid)
        .collect();
    match m.as_slice() {
        [one] => Ok(*one),
        [] => Err(Unresolved(format!("no switch with node description \"{name}\" in the sweep (a switch down or unreachable, or the plan's name)"))),
        _ => Err(Unresolved(format!("{} switches have the node description \"{name}\": name them by GUID in the plan", m.len()))),
    }
}

fn key_of(s: &Sweep, e: &End) -> Result<Key, Unresolved> {
    match e {
        End::Switch { switch, port } => Ok(Key::Sw(resolve_switch(s, switch)?, *port)),
        End::Host { host, hca } => Ok(Key::Ca(format!("{host} {hca}"), 1)),
    }
}

/// Where an end's cable goes, in words.
fn lands(s: &Sweep, k: &Key) -> String {
    match s.ends.get(k) {
        Some((_, Some(p))) => format!("is cabled to {}", s.name(p)),
        Some((l, None)) => format!("is {}/{} (no cable)", l.state, l.phys_state),
        None => "is not in the sweep (its cable down, or the HCA unreachable)".to_string(),
    }
}

/// Every planned cable against the sweep: both ends must be cabled to each other. A red names
/// the planned cable (its line), where each end's cable goes instead, and both ends.
fn plan(s: &Sweep, cables: &[Cable], source: &str, out: &mut FabricCheck) {
    out.planned = cables.len();
    for c in cables {
        let (a, b) = match (key_of(s, &c.a), key_of(s, &c.b)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                out.problems.push(Problem {
                    message: format!(
                        "planned cable {} <-> {} ({source} line {}): {e}",
                        c.a.shown(),
                        c.b.shown(),
                        c.line
                    ),
                    part: format!("the cable planned {} <-> {}", c.a.shown(), c.b.shown()),
                });
                continue;
            }
        };
        let ok = matches!(s.ends.get(&a), Some((l, Some(p))) if *p == b && l.state == "Active");
        if ok {
            continue;
        }
        out.problems.push(Problem {
            message: format!(
                "planned cable {} <-> {} ({source} line {}): {} {}; {} {}",
                s.name(&a),
                s.name(&b),
                c.line,
                s.name(&a),
                lands(s, &a),
                s.name(&b),
                lands(s, &b)
            ),
            part: format!("the cable planned {} <-> {}", s.name(&a), s.name(&b)),
        });
    }
    // Active cables on planned switches that the plan does not list: logged
    let planned: Vec<Key> = cables
        .iter()
        .flat_map(|c| [key_of(s, &c.a).ok(), key_of(s, &c.b).ok()])
        .flatten()
        .collect();
    let mut extra: Vec<String> = s
        .ends
        .iter()
        .filter_map(|(k, (_, p))| match (k, p) {
            (Key::Sw(..), Some(p)) if !planned.contains(k) && !planned.contains(p) => {
                Some(format!("{} <-> {}", s.name(k), s.name(p)))
            }
            _ => None,
        })
        .collect();
    extra.sort();
    if !extra.is_empty() {
        out.notes.push(format!(
            "{} cable end(s) not in the plan {source} (not judged): {}",
            extra.len(),
            extra.join("; ")
        ));
    }
}

/// The switches' side of one iblinkinfo sweep: switch-to-switch cables at 4X and `rate_gbps`
/// (`from`: where that rate comes from), uplinks per leaf, and the plan's cables when given.
pub(crate) fn check(
    links: &[Link],
    rate_gbps: f64,
    from: &str,
    plan_cables: Option<(&[Cable], &str)>,
) -> FabricCheck {
    let s = sweep(links);
    let mut out = FabricCheck::default();
    switch_links(&s, rate_gbps, from, &mut out);
    uplinks(&s, &mut out);
    if let Some((cables, source)) = plan_cables {
        plan(&s, cables, source, &mut out);
    }
    out
}

/// [`check`] of iblinkinfo's text and a plan's text (`""`: none; `source` names it in errors):
/// what the script function `ib_fabric_check` runs.
pub(crate) fn check_texts(
    text: &str,
    rate_gbps: f64,
    from: &str,
    plan_text: &str,
    source: &str,
) -> super::PResult<FabricCheck> {
    let links = crate::parse::iblinkinfo::parse(text)
        .map_err(|e| super::PrimError::error(e.to_string()))?;
    let cables = if plan_text.trim().is_empty() {
        None
    } else {
        Some(
            crate::parse::ib_cabling_plan::parse(plan_text, source)
                .map_err(|e| super::PrimError::error(e.to_string()))?,
        )
    };
    Ok(check(
        &links,
        rate_gbps,
        from,
        cables.as_deref().map(|c| (c, source)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ib_cabling_plan, iblinkinfo};

    const UP: &str = "==( 4X        106.25 Gbps Active/  LinkUp)==>";
    const DOWN: &str = "==(                Down/ Polling)==>             [  ] \"\" ( )";

    /// Two leaves (LID 200, 201) of two hosts each, two spines (300, 301), two uplinks per
    /// leaf; `edit` changes lines of the text.
    fn fabric(edit: impl Fn(String) -> String) -> Vec<Link> {
        let mut t = String::new();
        for (k, h) in ["n1", "n2"].iter().enumerate() {
            for leaf in 0..2u64 {
                t += &format!("CA: {h} mlx5_{leaf}:\n      0x{:016x}     {}    1[  ] {UP}     {}   {}[  ] \"Q\" ( )\n", 10 + k as u64 * 2 + leaf, 10 + k * 2 + leaf as usize, 200 + leaf, k + 1);
            }
        }
        for leaf in 0..2u64 {
            t += &format!("Switch: 0x00000000000002{leaf:02x} leaf-{leaf}:\n");
            for (k, h) in ["n1", "n2"].iter().enumerate() {
                t += &format!(
                    "         {}    {}[  ] {UP}      {}    1[  ] \"{h} mlx5_{leaf}\" ( )\n",
                    200 + leaf,
                    k + 1,
                    10 + k as u64 * 2 + leaf
                );
            }
            for s in 0..2u64 {
                t += &format!(
                    "         {}    {}[  ] {UP}      {}    {}[  ] \"spine-{s}\" ( )\n",
                    200 + leaf,
                    3 + s,
                    300 + s,
                    leaf + 1
                );
            }
            t += &format!("         {}    5[  ] {DOWN}\n", 200 + leaf);
        }
        for s in 0..2u64 {
            t += &format!("Switch: 0x00000000000003{s:02x} spine-{s}:\n");
            for leaf in 0..2u64 {
                t += &format!(
                    "         {}    {}[  ] {UP}      {}    {}[  ] \"leaf-{leaf}\" ( )\n",
                    300 + s,
                    leaf + 1,
                    200 + leaf,
                    3 + s
                );
            }
            t += &format!("         {}    3[  ] {DOWN}\n", 300 + s);
        }
        iblinkinfo::parse(&edit(t)).unwrap()
    }

    const PLAN: &str = "leaf-0:1 <-> n1:mlx5_0\nleaf-0:2 <-> n2:mlx5_0\nleaf-1:1 <-> n1:mlx5_1\nleaf-1:2 <-> n2:mlx5_1\nleaf-0:3 <-> spine-0:1\nleaf-0:4 <-> spine-1:1\n0x0000000000000201:3 <-> spine-0:2\nleaf-1:4 <-> spine-1:2\n";

    #[test]
    fn healthy_two_tier_fabric_passes_with_its_plan_and_down_unused_ports() {
        let cables = ib_cabling_plan::parse(PLAN, "plan").unwrap();
        let c = check(&fabric(|t| t), 400.0, "profile", Some((&cables, "plan")));
        assert!(c.problems.is_empty(), "{:#?}", c.problems);
        assert_eq!(
            (c.switch_links, c.leaves, c.spines, c.planned),
            (4, 2, 2, 8)
        );
        assert!(c.uplinks.values().all(|n| *n == 2), "{:?}", c.uplinks);
    }

    #[test]
    fn a_slow_uplink_names_both_ends() {
        let slow = |t: String| {
            t.replace(
                "  201    4[  ] ==( 4X        106.25",
                "  201    4[  ] ==( 4X        53.125",
            )
            .replace(
                "  301    2[  ] ==( 4X        106.25",
                "  301    2[  ] ==( 4X        53.125",
            )
        };
        let c = check(&fabric(slow), 400.0, "profile", None);
        assert_eq!(c.problems.len(), 1, "{:#?}", c.problems);
        let m = &c.problems[0].message;
        assert!(m.contains("switch 0x0000000000000201 \"leaf-1\" LID 201 port 4 <-> switch 0x0000000000000301 \"spine-1\" LID 301 port 2: 4X 53.125 Gbps (HDR, 200 Gb/s), expected 4X at 400 Gb/s (profile)"), "{m}");
    }

    #[test]
    fn a_leaf_with_an_uplink_fewer_is_named_with_the_port() {
        // leaf-1 port 4 <-> spine-1 port 2 down at both ends; a third leaf-like switch keeps
        // the majority clear: compare two leaves (tie: the higher count wins)
        let gone = |t: String| {
            t.replace("         201    4[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      301    2[  ] \"spine-1\" ( )", &format!("         201    4[  ] {DOWN}"))
                .replace("         301    2[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      201    4[  ] \"leaf-1\" ( )", &format!("         301    2[  ] {DOWN}"))
        };
        let c = check(&fabric(gone), 400.0, "profile", None);
        assert_eq!(c.problems.len(), 1, "{:#?}", c.problems);
        let m = &c.problems[0].message;
        assert!(m.starts_with("leaf switch 0x0000000000000201 \"leaf-1\" LID 201 has 1 uplinks to the spines where 1 of the 2 leaves have 2; port(s) 4 are uplinks"), "{m}");
        // the same fabric without the second leaf's loss: nothing
        assert!(check(&fabric(|t| t), 400.0, "p", None).problems.is_empty());
    }

    #[test]
    fn a_cable_on_the_wrong_port_names_the_planned_port_and_both_ends() {
        // leaf-0 port 3 lands on spine-0 port 3 instead of port 1
        let moved = |t: String| {
            t.replace("         200    3[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      300    1[  ]", "         200    3[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      300    3[  ]")
                .replace("         300    1[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      200    3[  ] \"leaf-0\" ( )", &format!("         300    1[  ] {DOWN}"))
                .replace(&format!("         300    3[  ] {DOWN}"), "         300    3[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      200    3[  ] \"leaf-0\" ( )")
        };
        let links = fabric(moved);
        // without a plan nothing is wrong: every cable is Active 4X NDR, two uplinks per leaf
        assert!(check(&links, 400.0, "p", None).problems.is_empty());
        let cables = ib_cabling_plan::parse(PLAN, "plan").unwrap();
        let c = check(&links, 400.0, "p", Some((&cables, "plan")));
        assert_eq!(c.problems.len(), 1, "{:#?}", c.problems);
        let m = &c.problems[0].message;
        assert!(m.contains("planned cable switch 0x0000000000000200 \"leaf-0\" LID 200 port 3 <-> switch 0x0000000000000300 \"spine-0\" LID 300 port 1 (plan line 5): switch 0x0000000000000200 \"leaf-0\" LID 200 port 3 is cabled to switch 0x0000000000000300 \"spine-0\" LID 300 port 3; switch 0x0000000000000300 \"spine-0\" LID 300 port 1 is Down/Polling (no cable)"), "{m}");
    }

    #[test]
    fn a_plan_naming_an_unknown_or_ambiguous_switch_says_so() {
        let cables = ib_cabling_plan::parse("leaf-9:1 <-> n1:mlx5_0\n", "plan").unwrap();
        let c = check(&fabric(|t| t), 400.0, "p", Some((&cables, "plan")));
        assert!(
            c.problems[0]
                .message
                .contains("no switch with node description \"leaf-9\""),
            "{:?}",
            c.problems
        );
        let same = |t: String| t.replace(" spine-1:", " spine-0:");
        let cables = ib_cabling_plan::parse("spine-0:1 <-> leaf-0:3\n", "plan").unwrap();
        let c = check(&fabric(same), 400.0, "p", Some((&cables, "plan")));
        assert!(
            c.problems[0]
                .message
                .contains("2 switches have the node description \"spine-0\": name them by GUID"),
            "{:?}",
            c.problems
        );
    }
}

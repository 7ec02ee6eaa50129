//! The InfiniBand fabric between the nodes, as one `iblinkinfo` sweep shows it (issue 51 item
//! 1, pure): every switch-to-switch cable Active/LinkUp at 4X and the expected rate, the
//! uplinks of each leaf compared with the other leaves', and, when the site gives a cabling
//! plan (`parse::ib_cabling_plan`), every planned cable compared with where it lands.
//!
//! A leaf is a switch with a host (CA) cable; a spine is a switch with none. Each red names both
//! ends (switch GUID, node description, LID and port; or host and HCA) and, against a plan, the
//! planned port. A Down switch port no planned cable uses is not a fault (unused ports are).

use crate::parse::ib_cabling_plan::{Cable, End, Plan};
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
    /// The plan's format: `the site's plan` or `a saved ibnetdiscover` ("" without a plan).
    pub plan_format: String,
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
        End::Host { host, hca, port } if hca.is_empty() => Ok(Key::Ca(host.clone(), *port)),
        End::Host { host, hca, port } => Ok(Key::Ca(format!("{host} {hca}"), *port)),
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
/// the planned cable (its line), where each end's cable goes instead, and both ends. Then the
/// Active cables at a switch port that no planned cable has at either end: against the whole
/// fabric (a saved ibnetdiscover) each is a red naming both ends; against the site's list they
/// are logged (the list may cover part of the fabric).
fn plan(s: &Sweep, p: &Plan, source: &str, out: &mut FabricCheck) {
    out.planned = p.cables.len();
    out.plan_format = p.format.to_string();
    for c in &p.cables {
        planned_cable(s, c, source, out);
    }
    out.notes.extend(p.notes.iter().cloned());
    let planned: std::collections::HashSet<Key> = p
        .cables
        .iter()
        .flat_map(|c| [key_of(s, &c.a).ok(), key_of(s, &c.b).ok()])
        .chain(p.unjudged.iter().map(|e| key_of(s, e).ok()))
        .flatten()
        .collect();
    // each cable once: from its switch end, or from the lower of two switch ends
    let mut extra: Vec<(Key, Key)> = s
        .ends
        .iter()
        .filter_map(|(k, (l, p))| match (k, p) {
            (Key::Sw(..), Some(p))
                if l.state == "Active"
                    && (matches!(p, Key::Ca(..)) || k < p)
                    && !planned.contains(k)
                    && !planned.contains(p) =>
            {
                Some((k.clone(), p.clone()))
            }
            _ => None,
        })
        .collect();
    extra.sort();
    if extra.is_empty() {
        return;
    }
    if !p.whole_fabric {
        let shown: Vec<String> = extra
            .iter()
            .map(|(a, b)| format!("{} <-> {}", s.name(a), s.name(b)))
            .collect();
        out.notes.push(format!(
            "{} cable(s) not in the plan {source} (not judged): {}",
            shown.len(),
            shown.join("; ")
        ));
        return;
    }
    for (a, b) in extra {
        let ends = format!("{} <-> {}", s.name(&a), s.name(&b));
        out.problems.push(Problem {
            message: format!("cable {ends} is not in the plan {source} ({}, the whole fabric): neither end has a planned cable; a cable added or moved since the plan was saved", p.format),
            part: format!("the unplanned cable {ends}"),
        });
    }
}

/// One planned cable against the sweep (see [`plan`]).
fn planned_cable(s: &Sweep, c: &Cable, source: &str, out: &mut FabricCheck) {
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
            return;
        }
    };
    let ok = matches!(s.ends.get(&a), Some((l, Some(p))) if *p == b && l.state == "Active");
    if ok {
        return;
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

/// The switches' side of one iblinkinfo sweep: switch-to-switch cables at 4X and `rate_gbps`
/// (`from`: where that rate comes from), uplinks per leaf, and the plan's cables when given.
pub(crate) fn check(
    links: &[Link],
    rate_gbps: f64,
    from: &str,
    plan_cables: Option<(&Plan, &str)>,
) -> FabricCheck {
    let s = sweep(links);
    let mut out = FabricCheck::default();
    switch_links(&s, rate_gbps, from, &mut out);
    uplinks(&s, &mut out);
    if let Some((p, source)) = plan_cables {
        plan(&s, p, source, &mut out);
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
            crate::parse::ib_cabling_plan::read(plan_text, source)
                .map_err(|e| super::PrimError::error(e.to_string()))?,
        )
    };
    Ok(check(
        &links,
        rate_gbps,
        from,
        cables.as_ref().map(|c| (c, source)),
    ))
}

/// Cross-spine pairs chosen from the fabric (issue 51 item 4): which nodes share leaves, and
/// pairs that leave them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct SpinePairs {
    /// `[client, server]` one way; empty when the topology is unknown.
    pub pairs: Vec<[String; 2]>,
    /// Groups of nodes sharing leaves (a scalable unit; nodes in inventory order), in pairing
    /// order: by pod (groups whose leaves reach a common spine), then by size.
    pub groups: Vec<Vec<String>>,
    /// Pods: groups of `groups` (indices) whose leaves reach a common spine.
    pub pods: usize,
    /// Why the topology is unknown ("" when known).
    pub unknown: String,
    /// Logged: pairs within one group, flows that stay on a leaf.
    pub notes: Vec<String>,
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// Components of `n` items joined by `links` (pairs of indices), each in item order, in order
/// of their first item.
fn components(n: usize, links: impl Iterator<Item = (usize, usize)>) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..n).collect();
    for (a, b) in links {
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut out: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let r = find(&mut parent, i);
        out.entry(r).or_default().push(i);
    }
    out.into_values().collect()
}

/// The leaf LID each HCA of each node (`nodes`: name and HCAs in rail order) is cabled to.
fn hca_leaves(
    s: &Sweep,
    nodes: &[(String, Vec<String>)],
) -> Result<Vec<Vec<Option<u64>>>, Unresolved> {
    let mut out = Vec::new();
    for (name, hcas) in nodes {
        let leaves: Vec<Option<u64>> = hcas
            .iter()
            .map(|h| match s.ends.get(&Key::Ca(format!("{name} {h}"), 1)) {
                Some((l, Some(Key::Sw(lid, _)))) if l.state == "Active" => Some(*lid),
                _ => None,
            })
            .collect();
        if leaves.iter().all(Option::is_none) {
            return Err(Unresolved(format!("no HCA of {name} is cabled to a switch in the sweep (node descriptions `HOST HCA`?)")));
        }
        out.push(leaves);
    }
    Ok(out)
}

/// Pairs for traffic across the spine from the sweep: nodes whose HCAs share a leaf are one
/// group (a scalable unit: in a rail-optimised fabric rail k of every node of an SU is on one
/// leaf); groups whose leaves reach a common spine (a switch cabled to a leaf that has no host)
/// are one pod. Nodes in order of pod, then group (largest first), then inventory; node i is
/// paired with node i + N/2 (an odd last node with the first): where no pod (group) holds more
/// than half the nodes, every pair crosses pods (groups) and so leaves its leaves. Each node is
/// in one pair one way (two with an odd N): O(N) pairs, two rounds both ways. A flow of a pair
/// whose client HCA k and server HCA k+`shift` share a leaf is noted (it stays on the leaf).
pub(crate) fn spine_pairs(
    links: &[Link],
    nodes: &[(String, Vec<String>)],
    shift: usize,
) -> SpinePairs {
    let s = sweep(links);
    let leaves = match hca_leaves(&s, nodes) {
        Ok(l) => l,
        Err(e) => {
            return SpinePairs {
                unknown: e.0,
                ..SpinePairs::default()
            }
        }
    };
    let n = nodes.len();
    // nodes sharing a leaf
    let mut first: HashMap<u64, usize> = HashMap::new();
    let mut joins = Vec::new();
    for (i, ls) in leaves.iter().enumerate() {
        for lid in ls.iter().flatten() {
            let f = *first.entry(*lid).or_insert(i);
            joins.push((f, i));
        }
    }
    let groups = components(n, joins.into_iter());
    // groups whose leaves reach a common spine
    let mut up: HashMap<u64, Vec<u64>> = HashMap::new();
    for (k, (_, p)) in &s.ends {
        if let (Key::Sw(me, _), Some(Key::Sw(sp, _))) = (k, p) {
            if first.contains_key(me) && !first.contains_key(sp) {
                up.entry(*me).or_default().push(*sp);
            }
        }
    }
    let mut spine_of: HashMap<u64, usize> = HashMap::new();
    let mut gjoins = Vec::new();
    for (g, members) in groups.iter().enumerate() {
        for lid in members.iter().flat_map(|&i| leaves[i].iter().flatten()) {
            for sp in up.get(lid).into_iter().flatten() {
                let f = *spine_of.entry(*sp).or_insert(g);
                gjoins.push((f, g));
            }
        }
    }
    let mut pods = components(groups.len(), gjoins.into_iter());
    let size = |gs: &Vec<usize>| gs.iter().map(|g| groups[*g].len()).sum::<usize>();
    pods.sort_by_key(|p| std::cmp::Reverse(size(p)));
    let mut ordered_groups: Vec<&Vec<usize>> = Vec::new();
    for p in &pods {
        let mut gs: Vec<&Vec<usize>> = p.iter().map(|g| &groups[*g]).collect();
        gs.sort_by_key(|g| std::cmp::Reverse(g.len()));
        ordered_groups.extend(gs);
    }
    let order: Vec<usize> = ordered_groups
        .iter()
        .flat_map(|g| g.iter().copied())
        .collect();
    let group_of: HashMap<usize, usize> = ordered_groups
        .iter()
        .enumerate()
        .flat_map(|(g, m)| m.iter().map(move |i| (*i, g)))
        .collect();
    let h = n / 2;
    let mut idx: Vec<(usize, usize)> = (0..h).map(|i| (order[i], order[i + h])).collect();
    if n % 2 == 1 && n > 1 {
        idx.push((order[n - 1], order[0]));
    }
    let mut out = SpinePairs {
        groups: ordered_groups
            .iter()
            .map(|g| g.iter().map(|i| nodes[*i].0.clone()).collect())
            .collect(),
        pods: pods.len(),
        ..SpinePairs::default()
    };
    let same: Vec<String> = idx
        .iter()
        .filter(|(a, b)| group_of[a] == group_of[b])
        .map(|(a, b)| format!("{} -> {}", nodes[*a].0, nodes[*b].0))
        .collect();
    if !same.is_empty() && ordered_groups.len() > 1 {
        out.notes.push(format!(
            "{} pair(s) within one group of nodes sharing leaves (a group holds more than half the nodes): {}",
            same.len(),
            same.join(", ")
        ));
    }
    for &(a, b) in &idx {
        let (la, lb) = (&leaves[a], &leaves[b]);
        for (k, x) in la.iter().enumerate() {
            let Some(x) = x else { continue };
            if lb.is_empty() {
                continue;
            }
            if lb[(k + shift) % lb.len()] == Some(*x) {
                out.notes.push(format!(
                    "{} {} -> {} {} share leaf {}: that flow stays on its leaf",
                    nodes[a].0,
                    nodes[a].1[k],
                    nodes[b].0,
                    nodes[b].1[(k + shift) % lb.len()],
                    s.switch(*x)
                ));
            }
        }
        out.pairs.push([nodes[a].0.clone(), nodes[b].0.clone()]);
    }
    out
}

/// [`spine_pairs`] of iblinkinfo's text: what the script function `ib_spine_pairs` runs.
pub(crate) fn spine_pairs_text(
    text: &str,
    nodes: &[(String, Vec<String>)],
    shift: usize,
) -> super::PResult<SpinePairs> {
    let links = crate::parse::iblinkinfo::parse(text)
        .map_err(|e| super::PrimError::error(e.to_string()))?;
    Ok(spine_pairs(&links, nodes, shift))
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
        let cables = ib_cabling_plan::read(PLAN, "plan").unwrap();
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
        let cables = ib_cabling_plan::read(PLAN, "plan").unwrap();
        let c = check(&links, 400.0, "p", Some((&cables, "plan")));
        assert_eq!(c.problems.len(), 1, "{:#?}", c.problems);
        let m = &c.problems[0].message;
        assert!(m.contains("planned cable switch 0x0000000000000200 \"leaf-0\" LID 200 port 3 <-> switch 0x0000000000000300 \"spine-0\" LID 300 port 1 (plan line 5): switch 0x0000000000000200 \"leaf-0\" LID 200 port 3 is cabled to switch 0x0000000000000300 \"spine-0\" LID 300 port 3; switch 0x0000000000000300 \"spine-0\" LID 300 port 1 is Down/Polling (no cable)"), "{m}");
    }

    #[test]
    fn a_plan_naming_an_unknown_or_ambiguous_switch_says_so() {
        let cables = ib_cabling_plan::read("leaf-9:1 <-> n1:mlx5_0\n", "plan").unwrap();
        let c = check(&fabric(|t| t), 400.0, "p", Some((&cables, "plan")));
        assert!(
            c.problems[0]
                .message
                .contains("no switch with node description \"leaf-9\""),
            "{:?}",
            c.problems
        );
        let same = |t: String| t.replace(" spine-1:", " spine-0:");
        let cables = ib_cabling_plan::read("spine-0:1 <-> leaf-0:3\n", "plan").unwrap();
        let c = check(&fabric(same), 400.0, "p", Some((&cables, "plan")));
        assert!(
            c.problems[0]
                .message
                .contains("2 switches have the node description \"spine-0\": name them by GUID"),
            "{:?}",
            c.problems
        );
    }

    /// The test fabric as a saved `ibnetdiscover` (infiniband-diags' layout: switch sections,
    /// then CA sections listing the same cables from the other end).
    fn topo() -> String {
        let mut t = String::from("#\n# Topology file: generated by hand for a unit test\n#\n");
        for leaf in 0..2u64 {
            t += &format!("switchguid=0x00000000000002{leaf:02x}(00000000000002{leaf:02x})\nSwitch\t64 \"S-00000000000002{leaf:02x}\"\t\t# \"leaf-{leaf}\" enhanced port 0 lid {} lmc 0\n", 200 + leaf);
            for (k, h) in ["n1", "n2"].iter().enumerate() {
                let g = 10 + k as u64 * 2 + leaf;
                t += &format!(
                    "[{}]\t\"H-{g:016x}\"[1]({g:x}) \t\t# \"{h} mlx5_{leaf}\" lid {g} 4xNDR\n",
                    k + 1
                );
            }
            for s in 0..2u64 {
                t += &format!(
                    "[{}]\t\"S-00000000000003{s:02x}\"[{}]\t\t# \"spine-{s}\" lid {} 4xNDR\n",
                    3 + s,
                    leaf + 1,
                    300 + s
                );
            }
        }
        for s in 0..2u64 {
            t += &format!("Switch\t64 \"S-00000000000003{s:02x}\"\t\t# \"spine-{s}\" enhanced port 0 lid {} lmc 0\n", 300 + s);
            for leaf in 0..2u64 {
                t += &format!(
                    "[{}]\t\"S-00000000000002{leaf:02x}\"[{}]\t\t# \"leaf-{leaf}\" lid {} 4xNDR\n",
                    leaf + 1,
                    3 + s,
                    200 + leaf
                );
            }
        }
        for (k, h) in ["n1", "n2"].iter().enumerate() {
            for leaf in 0..2u64 {
                let g = 10 + k as u64 * 2 + leaf;
                t += &format!("caguid=0x{g:016x}\nCa\t1 \"H-{g:016x}\"\t\t# \"{h} mlx5_{leaf}\"\n[1]({g:x}) \t\"S-00000000000002{leaf:02x}\"[{}]\t\t# lid {g} lmc 0 \"leaf-{leaf}\" lid {} 4xNDR\n", k + 1, 200 + leaf);
            }
        }
        t
    }

    #[test]
    fn a_saved_ibnetdiscover_is_the_whole_fabric_as_planned() {
        let p = ib_cabling_plan::read(&topo(), "fabric.topo").unwrap();
        // 4 host cables and 4 uplinks, each listed twice (both ends' sections): 8 cables
        assert!(p.whole_fabric);
        assert_eq!(p.cables.len(), 8, "{:#?}", p.cables);
        let c = check(&fabric(|t| t), 400.0, "p", Some((&p, "fabric.topo")));
        assert!(c.problems.is_empty(), "{:#?}", c.problems);
        assert_eq!(c.planned, 8);
    }

    #[test]
    fn against_a_saved_ibnetdiscover_a_moved_host_cable_and_a_new_cable_are_named() {
        // n2 mlx5_1 moved from leaf-1 port 2 to port 5; leaf-0 port 5 (unused) now cabled to
        // a host the plan does not know (n3 mlx5_0): a new cable
        let moved = |t: String| {
            t.replace("     201   2[  ] \"Q\"", "     201   5[  ] \"Q\"")
                .replace(
                    &format!("         201    2[  ] {UP}      13    1[  ] \"n2 mlx5_1\" ( )"),
                    &format!("         201    2[  ] {DOWN}"),
                )
                .replace(
                    &format!("         201    5[  ] {DOWN}"),
                    &format!("         201    5[  ] {UP}      13    1[  ] \"n2 mlx5_1\" ( )"),
                )
                .replace(
                    &format!("         200    5[  ] {DOWN}"),
                    &format!("         200    5[  ] {UP}      99    1[  ] \"n3 mlx5_0\" ( )"),
                )
        };
        let links = fabric(moved);
        let p = ib_cabling_plan::read(&topo(), "fabric.topo").unwrap();
        let c = check(&links, 400.0, "p", Some((&p, "fabric.topo")));
        assert_eq!(c.problems.len(), 2, "{:#?}", c.problems);
        let m = &c.problems[0].message;
        assert!(m.contains("planned cable switch 0x0000000000000201 \"leaf-1\" LID 201 port 2 <-> n2 mlx5_1 (fabric.topo line 13): switch 0x0000000000000201 \"leaf-1\" LID 201 port 2 is Down/Polling (no cable); n2 mlx5_1 is cabled to switch 0x0000000000000201 \"leaf-1\" LID 201 port 5"), "{m}");
        let m = &c.problems[1].message;
        assert!(m.starts_with("cable switch 0x0000000000000200 \"leaf-0\" LID 200 port 5 <-> n3 mlx5_0 is not in the plan fabric.topo (a saved ibnetdiscover, the whole fabric)"), "{m}");
        // the site's own plan of the same fabric logs the new cable, fails the moved one
        let site = ib_cabling_plan::read(PLAN, "plan").unwrap();
        let c = check(&links, 400.0, "p", Some((&site, "plan")));
        assert_eq!(c.problems.len(), 1, "{:#?}", c.problems);
        assert!(
            c.notes[0].starts_with(
                "1 cable(s) not in the plan plan (not judged): switch 0x0000000000000200"
            ),
            "{:?}",
            c.notes
        );
    }

    /// `iblinkinfo` of hosts on leaves: `hosts`: (host, [leaf of each HCA]); `spines`: (leaf,
    /// spine) cables. Leaves are LID 200+, spines 300+.
    fn placed(hosts: &[(&str, &[u64])], spines: &[(u64, u64)]) -> Vec<Link> {
        let mut t = String::new();
        let mut port: BTreeMap<u64, u32> = BTreeMap::new();
        let mut sw: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for (h, (name, leaves)) in hosts.iter().enumerate() {
            for (k, leaf) in leaves.iter().enumerate() {
                let p = port.entry(*leaf).or_insert(0);
                *p += 1;
                let lid = 10 + h * 8 + k;
                t += &format!("CA: {name} mlx5_{k}:\n      0x{lid:016x}     {lid}    1[  ] {UP}     {leaf}   {p}[  ] \"Q\" ( )\n");
                sw.entry(*leaf).or_default().push(format!(
                    "         {leaf}    {p}[  ] {UP}      {lid}    1[  ] \"{name} mlx5_{k}\" ( )\n"
                ));
            }
        }
        for (leaf, spine) in spines {
            let p = port.entry(*leaf).or_insert(0);
            *p += 1;
            let q = port.entry(*spine).or_insert(0);
            *q += 1;
            let (p, q) = (*port.get(leaf).unwrap(), *port.get(spine).unwrap());
            sw.entry(*leaf).or_default().push(format!(
                "         {leaf}    {p}[  ] {UP}      {spine}    {q}[  ] \"s\" ( )\n"
            ));
            sw.entry(*spine).or_default().push(format!(
                "         {spine}    {q}[  ] {UP}      {leaf}    {p}[  ] \"l\" ( )\n"
            ));
        }
        for (lid, lines) in sw {
            t += &format!("Switch: 0x{lid:016x} sw-{lid}:\n{}", lines.concat());
        }
        iblinkinfo::parse(&t).unwrap()
    }

    fn nodes(names: &[&str], hcas: usize) -> Vec<(String, Vec<String>)> {
        names
            .iter()
            .map(|n| {
                (
                    n.to_string(),
                    (0..hcas).map(|k| format!("mlx5_{k}")).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn spine_pairs_cross_the_groups_of_nodes_sharing_leaves() {
        // a, c on leaves 200/201; b, d on 202/203; the inventory's halves (a, b | c, d) would
        // pair a with c and b with d, each on its own leaves
        let hosts: &[(&str, &[u64])] = &[
            ("a", &[200, 201]),
            ("c", &[200, 201]),
            ("b", &[202, 203]),
            ("d", &[202, 203]),
        ];
        let ups = [(200, 300), (201, 300), (202, 300), (203, 300)];
        let p = spine_pairs(&placed(hosts, &ups), &nodes(&["a", "b", "c", "d"], 2), 1);
        assert_eq!(p.unknown, "");
        assert_eq!(p.groups, [vec!["a", "c"], vec!["b", "d"]]);
        assert_eq!(p.pods, 1);
        let pairs: Vec<String> = p.pairs.iter().map(|[a, b]| format!("{a}-{b}")).collect();
        assert_eq!(pairs, ["a-b", "c-d"]);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }

    #[test]
    fn spine_pairs_cross_pods_first_and_name_what_stays_inside() {
        // two pods (spines 300 and 301 reach disjoint leaves), each of two groups of one node
        let hosts: &[(&str, &[u64])] =
            &[("a", &[200]), ("b", &[201]), ("c", &[202]), ("d", &[203])];
        let ups = [(200, 300), (201, 300), (202, 301), (203, 301)];
        // the inventory's halves (a, c | b, d) would pair a with b and c with d, inside a pod
        let p = spine_pairs(&placed(hosts, &ups), &nodes(&["a", "c", "b", "d"], 1), 1);
        assert_eq!(p.pods, 2);
        let pairs: Vec<String> = p.pairs.iter().map(|[a, b]| format!("{a}-{b}")).collect();
        // every pair between the pods (a, b in one; c, d in the other)
        assert_eq!(pairs, ["a-c", "b-d"]);
        // one group of three nodes and one of one (odd N): the last node is paired with the
        // first; two pairs stay in the big group and are named
        let hosts: &[(&str, &[u64])] = &[
            ("a", &[200, 201]),
            ("b", &[200, 201]),
            ("c", &[200, 201]),
            ("d", &[202, 203]),
        ];
        let ups = [(200, 300), (201, 300), (202, 300), (203, 300)];
        let p = spine_pairs(&placed(hosts, &ups), &nodes(&["a", "b", "c", "d"], 2), 1);
        let pairs: Vec<String> = p.pairs.iter().map(|[a, b]| format!("{a}-{b}")).collect();
        assert_eq!(pairs, ["a-c", "b-d"]);
        assert!(
            p.notes[0].starts_with("1 pair(s) within one group of nodes sharing leaves"),
            "{:?}",
            p.notes
        );
        let p = spine_pairs(
            &placed(&hosts[..3], &ups[..2]),
            &nodes(&["a", "b", "c"], 2),
            1,
        );
        let pairs: Vec<String> = p.pairs.iter().map(|[a, b]| format!("{a}-{b}")).collect();
        assert_eq!(pairs, ["a-b", "c-a"]);
        // one group, rail shift 0: every flow stays on its leaf, said
        let p = spine_pairs(&placed(&hosts[..2], &ups[..2]), &nodes(&["a", "b"], 2), 0);
        assert_eq!(p.notes.len(), 2, "{:?}", p.notes);
        assert!(
            p.notes[0].contains("a mlx5_0 -> b mlx5_0 share leaf switch 0x00000000000000c8"),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn spine_pairs_of_nodes_the_sweep_does_not_place_are_unknown() {
        let hosts: &[(&str, &[u64])] = &[("a", &[200]), ("b", &[201])];
        let p = spine_pairs(
            &placed(hosts, &[(200, 300), (201, 300)]),
            &nodes(&["a", "x"], 1),
            1,
        );
        assert!(p.pairs.is_empty());
        assert!(
            p.unknown
                .starts_with("no HCA of x is cabled to a switch in the sweep"),
            "{}",
            p.unknown
        );
    }

    #[test]
    fn hcas_sharing_a_description_in_the_saved_topology_are_left_out_not_new() {
        // n2 mlx5_1 saved under n1 mlx5_0's description: both cables left out, said; the
        // live cable at leaf-1 port 2 is not a new one
        let t = topo().replace("\"n2 mlx5_1\"", "\"n1 mlx5_0\"");
        let p = ib_cabling_plan::read(&t, "fabric.topo").unwrap();
        assert_eq!(p.cables.len(), 6);
        let c = check(&fabric(|t| t), 400.0, "p", Some((&p, "fabric.topo")));
        assert!(c.problems.is_empty(), "{:#?}", c.problems);
        assert!(
            c.notes[0].starts_with("2 cable(s) of the plan fabric.topo not compared: the node description \"n1 mlx5_0\" names 2 HCAs"),
            "{:?}",
            c.notes
        );
    }
}

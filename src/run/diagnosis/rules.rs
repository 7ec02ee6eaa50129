//! The diagnosis rules, one function each, run in the order of [`ALL`]: each claims the reds it
//! explains (a red is explained once, by the first rule that claims it) and adds one
//! [`Diagnosis`] per cause. docs/diagnosis.md lists them for engineers.

use super::{Ctx, Red, Topology};
use crate::run::model::{Diagnosis, Finding, Subject, TestResult};

/// A rule: reads the reds, claims those it explains, adds its diagnoses.
pub(crate) type Rule = fn(&mut Ctx);

/// The rules, most specific cause first.
pub(crate) const ALL: &[Rule] = &[
    script_error,
    unreachable,
    super::ssh_trust::ssh_trust,
    link_down,
    pcie_downtrained,
    ib_no_sm,
    ib_port,
    rail_crossed,
    receiver_errors,
    super::spine::spine_links,
    super::fleet::slow_parts,
    rail_bandwidth,
    named_part,
    unexplained,
];

/// The netdev or RDMA device a subject names.
fn rail_name(s: &Subject) -> Option<&str> {
    s.netdev.as_deref().or(s.rail.as_deref())
}

/// A next step to run on `node`, pasteable as it is: `ssh [-p PORT] [USER@]HOST 'CMD'` with the
/// inventory's user and port (the command alone on a `local` node), then `# NOTE`.
pub(crate) fn on(topo: &Topology, node: &str, cmd: &str, note: &str) -> String {
    let note = if note.is_empty() {
        String::new()
    } else {
        format!("   # {note}")
    };
    match topo.node(node).map(|n| n.login.as_deref()) {
        Some(Some(login)) => format!("ssh {login} {}{note}", crate::util::names::quote(cmd)),
        Some(None) => format!("{cmd}{note}"),
        None => format!("{cmd}   # on {node}{}", note.replacen("   #", ";", 1)),
    }
}

/// The netdev of `name` (a netdev or an RDMA device) on `node`, as `ethtool` takes it: the
/// inventory's k-th interface for its k-th RDMA device; else, for an RDMA device, the netdev
/// its sysfs entry lists (read on the node when the step runs). Never an RDMA device name.
pub(crate) fn netdev_of(topo: &Topology, node: &str, name: &str, rdma: bool) -> String {
    let n = topo.node(node);
    if !rdma || n.is_some_and(|n| n.interfaces.iter().any(|i| i == name)) {
        return name.to_string();
    }
    n.and_then(|n| {
        let k = n.rails.iter().position(|r| r == name)?;
        n.interfaces.get(k).cloned()
    })
    .unwrap_or_else(|| format!("$(ls /sys/class/infiniband/{name}/device/net)"))
}

/// The netdev a subject names (its `netdev`, else its RDMA device's), for `ethtool`.
fn subject_netdev(topo: &Topology, s: &Subject) -> String {
    match (&s.netdev, &s.rail) {
        (Some(n), _) => n.clone(),
        (None, Some(r)) => netdev_of(topo, &s.node, r, true),
        (None, None) => "IFACE".into(),
    }
}

/// `name` (a netdev or RDMA device of `node`'s inventory) as a netdev for `ethtool`.
fn any_netdev(topo: &Topology, node: &str, name: &str) -> String {
    let is_rdma = topo.node(node).is_some_and(|n| {
        n.rails.iter().any(|r| r == name) && !n.interfaces.iter().any(|i| i == name)
    });
    netdev_of(topo, node, name, is_rdma)
}

/// `spark-02 port qsfp1 enP2p1s0f1np1 (roceP2p1s0f1)`: node, physical port, rail.
pub(crate) fn part_of(topo: &Topology, node: &str, name: Option<&str>) -> String {
    let mut out = node.to_string();
    if let Some(n) = name {
        if let Some(p) = topo.port_of(node, n) {
            out.push_str(&format!(" port {}", p.name));
        }
        match topo.index(node, n).and_then(|k| topo.rail_label(node, k)) {
            Some(l) => out.push_str(&format!(" {l}")),
            None => out.push_str(&format!(" {n}")),
        }
    }
    out
}

/// `: negotiated 100000 Mb/s, expected 200000 Mb/s; …`: what the subjects found, measured
/// against expected (each once), or nothing.
fn found_of(subjects: &[&Subject]) -> String {
    let mut seen: Vec<&str> = vec![];
    for s in subjects {
        if let Some(f) = s.found.as_deref() {
            if !seen.contains(&f) {
                seen.push(f);
            }
        }
    }
    if seen.is_empty() {
        String::new()
    } else {
        format!(": {}", seen.join("; "))
    }
}

/// ` (vendor PN x SN y)` when a subject knows the cable.
fn cable_of(subjects: &[&Subject]) -> String {
    subjects
        .iter()
        .find_map(|s| s.cable.as_ref().and_then(|c| c.describe()))
        .map(|c| format!(" ({c})"))
        .unwrap_or_default()
}

/// Does `r` cross rail indices `ks` of `node` (all rails when `ks` is empty)? A collective
/// over the whole fabric crosses every link; a test of `node` (or with it as peer) crosses
/// the rails it names, or all when it names none.
fn crosses(topo: &Topology, r: &Red, node: &str, ks: &[usize]) -> bool {
    if r.fabric_wide() {
        return true;
    }
    if !r.nodes().contains(&node) {
        return false;
    }
    let rails = r.rails();
    rails.is_empty()
        || ks.is_empty()
        || rails
            .iter()
            .any(|(n, x)| topo.index(n, x).is_none_or(|k| ks.contains(&k)))
}

/// A red the script itself ended (a runtime error of the script, no fabric finding): not a
/// fabric cause. Claimed first so that no rule blames a part for it; listed after the fabric's
/// causes (`diagnose`).
pub(crate) fn script_error(ctx: &mut Ctx) {
    for i in 0..ctx.reds.len() {
        let t = ctx.reds[i].t;
        if ctx.claimed[i] || !t.subjects.iter().any(|s| s.kind == Finding::Script) {
            continue;
        }
        ctx.claimed[i] = true;
        let at = match t.line {
            Some(l) => format!("{}:{l}", t.file),
            None => t.file.clone(),
        };
        let message = crate::run::model::cap(t.message.as_deref().unwrap_or("no message"), 300)
            .replace('\n', " ");
        ctx.out.push(Diagnosis {
            rule: "script_error".into(),
            metric: None,
            cause: format!("the script stopped, not the fabric: {message}"),
            part: format!("the script at {at} (no fabric part)"),
            evidence: vec![t.name.clone()],
            next: vec![format!(
                "fabcheck check {}   # the script's mistakes at file:line:col",
                t.file
            )],
        });
    }
}

/// Node unreachable: every red test on the node, or with it as the peer, is explained by it.
pub(crate) fn unreachable(ctx: &mut Ctx) {
    let mut seen: Vec<String> = vec![];
    for s in ctx.subjects(&[Finding::Unreachable]) {
        if seen.contains(&s.node) {
            continue;
        }
        seen.push(s.node.clone());
        let node = s.node.clone();
        let evidence = ctx.claim(|r| r.nodes().contains(&node.as_str()));
        let host = ctx
            .topo
            .node(&node)
            .map(|n| n.host.clone())
            .unwrap_or_else(|| node.clone());
        let login = ctx
            .topo
            .node(&node)
            .and_then(|n| n.login.clone())
            .unwrap_or_else(|| host.clone());
        ctx.out.push(Diagnosis {
            rule: "unreachable".into(),
            metric: None,
            cause: format!(
                "{node} could not be reached over ssh: every test on it or with it is red for that reason, not for its fabric"
            ),
            part: format!("{node} ({host}): its management network, sshd, or the node itself (power, hang)"),
            evidence,
            next: vec![
                format!("ping -c 3 {host}"),
                format!("ssh -v {login} true"),
                format!("the BMC console of {node} (power state, kernel panic)"),
            ],
        });
    }
}

/// Link down or below its speed, grouped by port (and by the two ends of one link): explains
/// the pings, hops, RDMA and NCCL reds that cross it. One rail without link while its sibling
/// on the same cable is up proves the cable: the host side of that rail.
pub(crate) fn link_down(ctx: &mut Ctx) {
    let subs = ctx.subjects(&[Finding::LinkDown, Finding::LinkSlow]);
    let topo = ctx.topo;
    let key = |s: &Subject| -> String {
        rail_name(s)
            .and_then(|n| topo.port_of(&s.node, n).map(|p| p.name.clone()))
            .or_else(|| rail_name(s).map(str::to_string))
            .unwrap_or_default()
    };
    let mut done: Vec<(String, String)> = vec![];
    for s in &subs {
        let k = (s.node.clone(), key(s));
        if done.contains(&k) {
            continue;
        }
        let group: Vec<&Subject> = subs
            .iter()
            .filter(|o| o.node == s.node && key(o) == k.1)
            .collect();
        let far = topo.far_node(&s.node, s.peer.as_deref());
        let far_group: Vec<&Subject> = subs
            .iter()
            .filter(|o| Some(&o.node) == far.as_ref() && key(o) == k.1)
            .collect();
        done.push(k.clone());
        if let Some(f) = &far {
            done.push((f.clone(), k.1.clone()));
        }
        let d = link_diagnosis(ctx, &group, far.as_deref(), &far_group);
        ctx.out.push(d);
    }
}

/// One link's diagnosis: `group` the subjects of one port of a node, `far_group` those of the
/// far end's same port.
fn link_diagnosis(
    ctx: &mut Ctx,
    group: &[&Subject],
    far: Option<&str>,
    far_group: &[&Subject],
) -> Diagnosis {
    let topo = ctx.topo;
    let s = group[0];
    let ks: Vec<usize> = group
        .iter()
        .filter_map(|o| rail_name(o).and_then(|n| topo.index(&o.node, n)))
        .collect();
    let port = rail_name(s).and_then(|n| topo.port_of(&s.node, n));
    let down = group.iter().any(|o| o.kind == Finding::LinkDown);
    let state = if down {
        "has no link"
    } else {
        "runs below its expected speed"
    };
    let siblings_up: Vec<String> = port
        .map(|p| {
            p.interfaces
                .iter()
                .filter(|i| topo.index(&s.node, i).is_some_and(|k| !ks.contains(&k)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let mut names: Vec<String> = group
        .iter()
        .map(|o| part_of(topo, &o.node, rail_name(o)))
        .collect();
    names.dedup();
    let netdev = subject_netdev(topo, s);
    let node = s.node.as_str();
    let rail = s.rail.clone().or_else(|| {
        ks.first()
            .and_then(|k| topo.node(&s.node)?.rails.get(*k).cloned())
    });
    let evidence = {
        let node = s.node.clone();
        let fg = !far_group.is_empty();
        let far = far.map(str::to_string);
        ctx.claim(|r| {
            group.iter().any(|g| r.t.subjects.contains(g))
                || crosses(topo, r, &node, &ks)
                || (fg && far.as_deref().is_some_and(|f| crosses(topo, r, f, &ks)))
        })
    };
    let cable = cable_of(&group.iter().chain(far_group).copied().collect::<Vec<_>>());
    let mut next = vec![
        on(
            topo,
            node,
            &format!("ethtool {netdev}"),
            "speed and link detected",
        ),
        on(
            topo,
            node,
            &format!("ethtool -m {netdev}"),
            "the module and its power per lane",
        ),
    ];
    let found = found_of(&group.iter().chain(far_group).copied().collect::<Vec<_>>());
    let (rule, cause, part) = if down && !siblings_up.is_empty() && far_group.is_empty() {
        if let Some(r) = &rail {
            next.push(on(
                topo,
                node,
                &format!(
                    "lspci -vv -s $(ethtool -i {netdev} | sed -n 's/^bus-info: //p') | grep LnkSta"
                ),
                "the rail's PCIe link",
            ));
            next.push(on(
                topo,
                node,
                &format!("rdma link show {r}/1; dmesg | grep -i mlx5"),
                "",
            ));
        }
        host_side_words(&names, state, &siblings_up)
    } else {
        if let Some(r) = &rail {
            next.push(on(
                topo,
                node,
                &format!("mlxlink -d {r} -c -e"),
                "per-lane BER and eye; the same at the far end",
            ));
        }
        next.push("swap the cable's two ends: a fault that moves with the cable is the cable, one that stays is the port".into());
        let far_part = match (far, far_group.is_empty()) {
            (Some(_), false) => format!(
                " and {} at the far end (both ends see it)",
                far_group
                    .iter()
                    .map(|o| part_of(topo, &o.node, rail_name(o)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (Some(f), true) => format!(", the far end on {f}"),
            _ => String::new(),
        };
        // the check named the end that limits the link (its own advertisement, or its
        // partner below the like ports): that end, not "the cable or either end"
        let mut limiting: Vec<String> = vec![];
        for o in group.iter().filter(|o| o.kind == Finding::LinkSlow) {
            if let Some(p) = o.part.as_ref().filter(|p| !limiting.contains(p)) {
                limiting.push(p.clone());
            }
        }
        let part = if down || limiting.is_empty() {
            format!("the link of {}{far_part}: the cable{cable}, or a port forced down or misconfigured at either end", port.map(|p| format!("{} port {}", s.node, p.name)).unwrap_or_else(|| names.join(", ")))
        } else {
            limiting.join("; ")
        };
        ("link_down", format!("{} {state}", names.join(", ")), part)
    };
    Diagnosis {
        rule: rule.into(),
        metric: None,
        cause: format!("{cause}{found}"),
        part,
        evidence,
        next,
    }
}

/// The rule, cause and part of a rail down while its siblings on the same cable are up.
fn host_side_words(
    names: &[String],
    state: &str,
    siblings_up: &[String],
) -> (&'static str, String, String) {
    (
        "host_side",
        format!(
            "{} {state} while {} on the same cable is up: the cable and the far port are proven; the host side of this rail is the likely fault",
            names.join(", "),
            siblings_up.join(", ")
        ),
        format!(
            "{}: its PCIe path, PCI function, driver or firmware (its rails share one cable: no riser in the path)",
            names.join(", ")
        ),
    )
}

/// Where a downtrained PCIe link can be at fault: a DGX Spark's x4 paths are on the board (no
/// slot, no riser); elsewhere the slot, a riser and the card's seating come first.
fn pcie_path_words(spark: bool) -> &'static str {
    if spark {
        "its PCIe path (the NIC's PCIe function; a DGX Spark has no riser: the x4 path is on the board), or the BIOS/firmware link setting"
    } else {
        "its PCIe path (the card's seating in its slot, a riser or retimer on the way, the NIC's PCIe function), or the BIOS/firmware link setting"
    }
}

/// A PCIe path trained below its speed or width explains its rail's bandwidth reds.
pub(crate) fn pcie_downtrained(ctx: &mut Ctx) {
    let topo = ctx.topo;
    for s in ctx.subjects(&[Finding::PcieDowntrained]) {
        let k: Vec<usize> = rail_name(&s)
            .and_then(|n| topo.index(&s.node, n))
            .into_iter()
            .collect();
        let node = s.node.clone();
        let evidence = ctx.claim(|r| {
            r.t.subjects.contains(&s)
                || (!r.low.is_empty()
                    && (r.fabric_wide()
                        || (r.nodes().contains(&node.as_str()) && crosses(topo, r, &node, &k))))
        });
        let part = part_of(topo, &s.node, rail_name(&s));
        let netdev = subject_netdev(topo, &s);
        let bus = format!("$(ethtool -i {netdev} | sed -n 's/^bus-info: //p')");
        ctx.out.push(Diagnosis {
            rule: "pcie_downtrained".into(),
            metric: None,
            cause: format!("the PCIe link of {part} trained below its expected speed or width{}: it caps this rail's bandwidth", found_of(&[&s])),
            part: format!("{part}: {}", pcie_path_words(topo.is_spark(&s.node))),
            evidence,
            next: vec![
                on(topo, &s.node, &format!("lspci -vv -s {bus} | grep -E 'LnkCap|LnkSta'"), "what the slot can and what it trained"),
                on(topo, &s.node, "dmesg | grep -iE 'pcie|aer|mlx5'", ""),
            ],
        });
    }
}

/// No subnet manager answers: one cause for the whole fabric, whatever number of ports and
/// nodes report it (every port stays Initializing without one), claiming every red of those
/// nodes.
pub(crate) fn ib_no_sm(ctx: &mut Ctx) {
    let subs = ctx.subjects(&[Finding::IbNoSm]);
    if subs.is_empty() {
        return;
    }
    let mut nodes: Vec<String> = subs.iter().map(|s| s.node.clone()).collect();
    nodes.sort();
    nodes.dedup();
    let evidence = {
        let nodes = nodes.clone();
        ctx.claim(|r| {
            subs.iter().any(|s| r.t.subjects.contains(s))
                || r.fabric_wide()
                || r.nodes().iter().any(|n| nodes.iter().any(|x| x == n))
        })
    };
    ctx.out.push(Diagnosis {
        rule: "ib_no_sm".into(),
        metric: None,
        cause: format!(
            "no InfiniBand subnet manager answers: the ports of {} link up but stay unconfigured (SM lid 0, no LID)",
            nodes.join(", ")
        ),
        part: "the subnet manager: opensm on a host, or the SM of a managed switch or UFM, and its reach to these ports".into(),
        evidence,
        next: vec![
            "sminfo   # which SM, if any, answers".into(),
            "systemctl status opensm   # on the host meant to run it".into(),
            "ibstat   # State Initializing / SM lid 0 on every port until an SM runs".into(),
        ],
    });
}

/// An InfiniBand HCA port without link or below its expected rate: the cable, its transceivers
/// or the switch port at the other end; claims the reds that cross that rail.
pub(crate) fn ib_port(ctx: &mut Ctx) {
    let topo = ctx.topo;
    let mut done: Vec<(String, String)> = vec![];
    for s in ctx.subjects(&[Finding::IbPort]) {
        let hca = rail_name(&s).unwrap_or("HCA").to_string();
        if done.contains(&(s.node.clone(), hca.clone())) {
            continue;
        }
        done.push((s.node.clone(), hca.clone()));
        let k: Vec<usize> = topo.index(&s.node, &hca).into_iter().collect();
        let node = s.node.clone();
        let evidence = ctx.claim(|r| {
            r.t.subjects.iter().any(|x| {
                x.kind == Finding::IbPort && x.node == node && rail_name(x) == Some(hca.as_str())
            }) || (!r.low.is_empty()
                && r.nodes().contains(&node.as_str())
                && crosses(topo, r, &node, &k))
        });
        ctx.out.push(Diagnosis {
            rule: "ib_port".into(),
            metric: None,
            cause: format!("the InfiniBand port of {} {hca} has no link or trained below its expected rate{}", s.node, found_of(&[&s])),
            part: format!("the cable of {} {hca}: its transceivers, or the switch port at the other end", s.node),
            evidence,
            next: vec![
                format!("ibstat {hca}   # State, Physical state, Rate"),
                format!("mlxlink -d {hca} -c -e   # per-lane BER and eye, speed and width negotiated"),
                format!("iblinkinfo | grep '{} {hca}'   # the switch and port at the other end", s.node),
                "swap the cable's two ends: a fault that moves with the cable is the cable, one that stays is the port".into(),
            ],
        });
    }
}

/// Rail alignment: a node's HCA cabled to another rail's leaf switch (iblinkinfo). One cause
/// per node, naming every crossed HCA: the cables at the leaf end, not the HCAs.
pub(crate) fn rail_crossed(ctx: &mut Ctx) {
    let subs = ctx.subjects(&[Finding::RailCrossed]);
    let mut nodes: Vec<String> = subs.iter().map(|s| s.node.clone()).collect();
    nodes.dedup();
    for node in nodes {
        let hcas: Vec<&str> = subs
            .iter()
            .filter(|s| s.node == node)
            .filter_map(rail_name)
            .collect();
        let evidence = ctx.claim(|r| {
            r.t.subjects
                .iter()
                .any(|x| x.kind == Finding::RailCrossed && x.node == node)
        });
        ctx.out.push(Diagnosis {
            rule: "rail_crossed".into(),
            metric: None,
            cause: format!(
                "{node} {} land(s) on another rail's leaf switch: the fabric is rail-optimised (HCA k of every other node on rail k's leaf), these cables are not",
                hcas.join(", ")
            ),
            part: format!(
                "the cables of {node} {} at the leaf switches: crossed (each on another rail's leaf); move each to its rail's leaf, the port the test names",
                hcas.join(", ")
            ),
            evidence,
            next: vec![
                format!("iblinkinfo | grep '{node} '   # the switch LID and port each HCA lands on"),
                "the site's cabling plan for those leaf ports".into(),
            ],
        });
    }
}

/// Receive error counters growing on a port (or the link flapping): the signal arriving there
/// is bad — the far end's transmitter, the cable, and this receiver, together.
pub(crate) fn receiver_errors(ctx: &mut Ctx) {
    let topo = ctx.topo;
    for s in ctx.subjects(&[Finding::RxErrors, Finding::Flapping]) {
        let k: Vec<usize> = rail_name(&s)
            .and_then(|n| topo.index(&s.node, n))
            .into_iter()
            .collect();
        let node = s.node.clone();
        let evidence = ctx.claim(|r| {
            r.t.subjects.contains(&s) || (!r.low.is_empty() && crosses(topo, r, &node, &k))
        });
        let here = part_of(topo, &s.node, rail_name(&s));
        let far = topo.far_node(&s.node, s.peer.as_deref());
        let far_part = far
            .as_deref()
            .map(|f| match k.first().and_then(|k| topo.rail_label(f, *k)) {
                Some(l) => format!("{f} {l}"),
                None => f.to_string(),
            })
            .unwrap_or_else(|| "the far end (switch port or peer)".into());
        let netdev = subject_netdev(topo, &s);
        let cable = cable_of(&[&s]);
        let (cause, part) = if s.kind == Finding::Flapping {
            (
                format!("the link of {here} went down and up during the run"),
                format!(
                    "the link between {here} and {far_part}: the cable{cable} or either end's port"
                ),
            )
        } else {
            (
                format!("the signal arriving at {here} is bad (receive errors grew, or its receive power is out of range)"),
                format!("the link into {here}: the transmitter at {far_part}, the cable{cable}, and this receiver"),
            )
        };
        let mut next = vec![on(
            topo,
            &s.node,
            &format!("ethtool -m {netdev}"),
            "module power per lane; the same at the far end",
        )];
        if let Some(r) = s.rail.as_deref().or_else(|| {
            k.first()
                .and_then(|k| topo.node(&s.node)?.rails.get(*k).map(|x| x.as_str()))
        }) {
            next.push(on(
                topo,
                &s.node,
                &format!("mlxlink -d {r} -c -e"),
                "per-lane BER and eye; the same at the far end",
            ));
        }
        next.push("clean the connectors, then swap the cable's two ends: errors that follow the cable are the cable; that stay at this receiver, this port; that move to the far end, its transmitter".into());
        ctx.out.push(Diagnosis {
            rule: "receiver_errors".into(),
            metric: None,
            cause: format!("{cause}{}", found_of(&[&s])),
            part,
            evidence,
            next,
        });
    }
}

/// A per-rail metric of `t` (its `rail` a rail of the topology) and whether it is weak (below
/// its threshold or reference line).
fn rail_metrics<'a>(topo: &Topology, t: &'a TestResult) -> Vec<(&'a str, &'a str, bool)> {
    t.metrics
        .iter()
        .filter_map(|m| {
            let node = m.node.as_deref()?;
            let rail = m.rail.as_deref()?;
            topo.index(node, rail)?;
            let line = m.threshold.or(m.reference)?;
            Some((node, rail, !m.meets(line)))
        })
        .collect()
}

/// Bandwidth per rail: one rail weak while its sibling on the same cable is fine points at
/// the host side of that rail; every rail of a port weak in one direction only, the other
/// direction fine, points at the transmitter of that direction and its fibre.
pub(crate) fn rail_bandwidth(ctx: &mut Ctx) {
    let topo = ctx.topo;
    for i in 0..ctx.reds.len() {
        if ctx.claimed[i] {
            continue;
        }
        let t = ctx.reds[i].t;
        let rails = rail_metrics(topo, t);
        let weak: Vec<&(&str, &str, bool)> = rails.iter().filter(|r| r.2).collect();
        let good: Vec<&(&str, &str, bool)> = rails.iter().filter(|r| !r.2).collect();
        let Some((node, rail, _)) = weak.first().copied().copied() else {
            continue;
        };
        // rails of one physical port (a DGX Spark QSFP port is two): an inventory without
        // `ports` makes each rail a port of its own, with its own cable (a DGX H100 HCA)
        let same_port = |x: &str| {
            let mine = topo.port_of(node, rail).map(|p| &p.name);
            mine.is_some() && topo.port_of(node, x).map(|p| &p.name) == mine
        };
        let other_rails_good = good.iter().any(|g| g.0 == node && g.1 != rail);
        let sibling_good: Vec<&str> = good
            .iter()
            .filter(|g| g.0 == node && same_port(g.1))
            .map(|g| g.1)
            .collect();
        let peer = t.peer.clone().unwrap_or_else(|| "the peer".into());
        let weak_names: Vec<String> = weak.iter().map(|w| part_of(topo, w.0, Some(w.1))).collect();
        let d = if !sibling_good.is_empty() {
            Diagnosis {
                rule: "host_side".into(),
                metric: None,
                cause: format!("{} is weak while {} on the same cable is fine: the cable is proven; the host side of the weak rail", weak_names.join(", "), sibling_good.join(", ")),
                part: format!("{}: its PCIe path, PCI function, driver or firmware (its rails share one cable: no riser in the path); else the same rail's receiving side on {peer}", weak_names.join(", ")),
                evidence: vec![],
                next: vec![
                    on(topo, node, &format!("ethtool -i {}", any_netdev(topo, node, rail)), "driver and firmware"),
                    on(topo, node, &format!("lspci -vv -s $(ethtool -i {} | sed -n 's/^bus-info: //p') | grep LnkSta", any_netdev(topo, node, rail)), "the rail's PCIe link"),
                    on(topo, node, &format!("mlxlink -d {rail} -c -e"), ""),
                ],
            }
        } else if other_rails_good && topo.far_node(node, None).is_none() {
            rail_path(topo, node, rail, &weak_names, &peer)
        } else {
            let reverse_ok = t.peer.as_deref().is_some_and(|p| {
                ctx.reds
                    .iter()
                    .all(|r| !(r.t.node.as_deref() == Some(p) && r.t.peer.as_deref() == Some(node)))
            });
            if !reverse_ok {
                continue;
            }
            Diagnosis {
                rule: "one_direction".into(),
                metric: None,
                cause: format!("{node} -> {peer} is weak on every rail of the port while {peer} -> {node} is fine"),
                part: format!("{}: {node}'s transmitter (its TX lanes, module) or the fibre towards {peer}'s receiver", weak_names.join(", ")),
                evidence: vec![],
                next: vec![
                    on(topo, node, &format!("ethtool -m {}", any_netdev(topo, node, rail)), &format!("TX power per lane at {node}; RX power at {peer} the same way")),
                    on(topo, &peer, &format!("mlxlink -d {rail} -c -e"), "per-lane BER of what it receives"),
                    "swap the cable's two ends: a fault that moves with the cable is the cable".into(),
                ],
            }
        };
        let (n, r) = (node.to_string(), rail.to_string());
        let evidence = ctx.claim(|x| {
            std::ptr::eq(x.t, t)
                || rail_metrics(topo, x.t)
                    .iter()
                    .any(|m| m.2 && m.0 == n && m.1 == r)
        });
        ctx.out.push(Diagnosis { evidence, ..d });
    }
}

/// One rail of a node weak towards one peer through switches while the node's other rails
/// are fine: the rail's own cable at either end or the route between them, not a shared cable.
fn rail_path(
    topo: &Topology,
    node: &str,
    rail: &str,
    weak_names: &[String],
    peer: &str,
) -> Diagnosis {
    let label = part_of(topo, node, Some(rail));
    Diagnosis {
        rule: "rail_path".into(),
        metric: None,
        cause: format!("{} is weak towards {peer} while {node}'s other rails are fine: this rail's path, not the node", weak_names.join(", ")),
        part: format!("the path of {label} to {peer}: the HCA's cable and switch port at either end, or the switch route between them (other pairs on this rail fine: the route)"),
        evidence: vec![],
        next: vec![
            ibtracert(topo, node, rail, peer),
            on(topo, node, &format!("mlxlink -d {rail} -c -e; perfquery -x -C {rail} -P 1"), ""),
            "fabcheck run scripts/fabric_health.rhai --filter 'ib fabric links'   # every cable of the rail's leaf".into(),
        ],
    }
}

/// `ibtracert` from `node`'s `rail` to the same rail of `peer`, pasteable: the peer's LID is
/// read over ssh by the engineer's shell and handed on as the last argument.
fn ibtracert(topo: &Topology, node: &str, rail: &str, peer: &str) -> String {
    let lid = |r: &str| format!("cat /sys/class/infiniband/{r}/ports/1/lid");
    let here = on(
        topo,
        node,
        &format!("ibtracert -C {rail} -P 1 $({})", lid(rail)),
        "",
    );
    let peer_rail = topo
        .index(node, rail)
        .and_then(|k| topo.node(peer)?.rails.get(k).cloned());
    match (topo.node(peer), peer_rail) {
        (Some(_), Some(pr)) => format!(
            "{here} \"$({})\"   # the switches and ports on the way to {peer} {pr}",
            on(topo, peer, &lid(&pr), "")
        ),
        _ => format!("{here} PEER_LID   # PEER_LID: `ibstat` on {peer}, the same rail"),
    }
}

/// A red whose check named the part (its subjects) and that no rule above explains: the check
/// is the diagnosis. Reds naming the same parts are one diagnosis; a setting (kind `config`)
/// is rule `setting`, anything else `named_part`.
pub(crate) fn named_part(ctx: &mut Ctx) {
    let topo = ctx.topo;
    let words = |s: &Subject| {
        s.part
            .clone()
            .unwrap_or_else(|| part_of(topo, &s.node, rail_name(s)) + cable_of(&[s]).as_str())
    };
    let mut groups: Vec<(Vec<String>, Vec<usize>)> = vec![];
    for i in 0..ctx.reds.len() {
        let t = ctx.reds[i].t;
        if ctx.claimed[i] || t.subjects.is_empty() {
            continue;
        }
        let mut parts: Vec<String> = vec![];
        for s in &t.subjects {
            let w = words(s);
            if !parts.contains(&w) {
                parts.push(w);
            }
        }
        match groups.iter_mut().find(|g| g.0 == parts) {
            Some(g) => g.1.push(i),
            None => groups.push((parts, vec![i])),
        }
    }
    for (parts, reds) in groups {
        let first = ctx.reds[reds[0]].t;
        let setting = reds.iter().all(|i| {
            ctx.reds[*i]
                .t
                .subjects
                .iter()
                .all(|s| s.kind == Finding::Config)
        });
        let message = crate::run::model::cap(first.message.as_deref().unwrap_or("no message"), 300)
            .replace('\n', " ");
        let (rule, what) = if setting {
            ("setting", "a setting is not what it should be")
        } else {
            ("named_part", "the check names the part")
        };
        let evidence: Vec<String> = reds
            .iter()
            .map(|i| {
                ctx.claimed[*i] = true;
                ctx.reds[*i].t.name.clone()
            })
            .collect();
        ctx.out.push(Diagnosis {
            rule: rule.into(),
            metric: None,
            cause: format!("{what} ({}): {message}", first.name),
            part: parts.join("; "),
            evidence,
            next: vec!["the test's message names what it found and where; its commands and output are in the HTML or JUnit report".into()],
        });
    }
}

/// What no rule explains, said so: once per part, with every red it covers (not once per red).
pub(crate) fn unexplained(ctx: &mut Ctx) {
    let topo = ctx.topo;
    let mut groups: Vec<(String, Vec<usize>)> = vec![];
    for i in 0..ctx.reds.len() {
        if ctx.claimed[i] {
            continue;
        }
        ctx.claimed[i] = true;
        let t = ctx.reds[i].t;
        let part = match t.subjects.first() {
            Some(s) => {
                let mut p = part_of(topo, &s.node, rail_name(s));
                let others: Vec<String> = t.subjects[1..]
                    .iter()
                    .map(|o| part_of(topo, &o.node, rail_name(o)))
                    .collect();
                if !others.is_empty() {
                    p.push_str(&format!("; also {}", others.join(", ")));
                }
                p + cable_of(&t.subjects.iter().collect::<Vec<_>>()).as_str()
            }
            None => match (&t.node, &t.peer) {
                (Some(a), Some(b)) => format!("{a} -> {b}"),
                (Some(a), None) => a.clone(),
                _ => "the fabric as a whole (the test names no node)".into(),
            },
        };
        match groups.iter_mut().find(|g| g.0 == part) {
            Some(g) => g.1.push(i),
            None => groups.push((part, vec![i])),
        }
    }
    for (part, reds) in groups {
        let t = ctx.reds[reds[0]].t;
        let message = crate::run::model::cap(t.message.as_deref().unwrap_or("no message"), 300)
            .replace('\n', " ");
        let more = match reds.len() {
            1 => String::new(),
            n => format!(" (and {} more red(s) on the same part)", n - 1),
        };
        ctx.out.push(Diagnosis {
            rule: "unexplained".into(),
            metric: None,
            cause: format!("no rule explains this red; it says: {message}{more}"),
            part,
            evidence: reds.iter().map(|i| ctx.reds[*i].t.name.clone()).collect(),
            next: vec![
                "the test's message, commands and output in the HTML or JUnit report".into(),
            ],
        });
    }
}

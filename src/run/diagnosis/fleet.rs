//! The fleet rules (issue 46 item 2): a node, or one rail (HCA) of a node, that is in every slow
//! pair ([`crate::run::fleet`]). Below the results' line it is the cause of those reds (rules
//! `slow_node`, `slow_rail`); above it, a WARN-level note with the numbers (`odd_node`,
//! `odd_rail`) that fails nothing.

use super::rules::part_of;
use super::{Ctx, Red, Topology};
use crate::run::fleet::{Attribution, Direction};
use crate::run::model::{Diagnosis, Finding};
use crate::run::peers::Better;
use crate::util::fmt::fmt_num;

/// `h100-03 ibp192s0 (mlx5_9)` or `h100-03`.
fn part_name(topo: &Topology, a: &Attribution) -> String {
    let rail = a.rail_name.clone().or_else(|| {
        a.rail
            .and_then(|k| topo.node(&a.node)?.rails.get(k).cloned())
    });
    match a.rail {
        Some(_) => part_of(topo, &a.node, rail.as_deref()),
        None => a.node.clone(),
    }
}

/// The measured and the expected: `rdma_write_gbps: 3 of its 6 results slow, at a median
/// 251.3 Gbit/s, 36 % below the 392.18 Gbit/s of the 6 results without it; its line 360
/// Gbit/s`.
fn numbers(a: &Attribution) -> String {
    let way = match a.better {
        Better::Higher => "below",
        Better::Lower => "above",
    };
    let line = a
        .line
        .map(|l| format!("; its line {} {}", fmt_num(l), a.unit))
        .unwrap_or_default();
    format!(
        "{}: {} of its {} results slow, at a median {} {}, {:.0} % {way} the {} {} of the {} results without it{line}",
        a.base,
        a.slow,
        a.count,
        fmt_num(a.median),
        a.unit,
        ((a.reference - a.median).abs() / a.reference) * 100.0,
        fmt_num(a.reference),
        a.unit,
        a.reference_count
    )
}

/// The part's words, by scope and platform: a node slow on every rail is the node's shared
/// path, not a cable; one rail of a node with a cable of its own (an HCA of a DGX H100-class
/// node) is first its cable, transceivers and leaf port; a DGX Spark rail shares its port's
/// cable with its sibling, so its host side comes first.
fn where_words(topo: &Topology, a: &Attribution, name: &str) -> String {
    match (a.rail, a.direction) {
        (None, Some(Direction::Send)) => format!("{name}'s sending as a whole (its writes to every peer are slow on every rail, every peer's writes to it are not): its transmit path — a rate limit (mlnx_qos --ratelimit, tc), pause frames it receives (rx_pause counters: its switch port or peer holding it back), PCIe read settings (MaxReadReq, relaxed ordering), firmware or driver"),
        (None, Some(Direction::Receive)) => format!("{name}'s receiving as a whole (every peer's writes to it are slow on every rail, its own writes are not): its receive path — receive buffers and PFC (rx_discards, out_of_buffer), PCIe write settings, firmware or driver; else the switch ports' egress towards it"),
        (None, None) => format!("{name} as a whole (slow on every rail it was measured on: not one cable or HCA): what its rails share — PCIe/IOMMU/ACS and BIOS settings, CPU power governor, firmware or driver version, or the node's own load"),
        (Some(_), _) if topo.is_spark(&a.node) => format!("{name}: its PCIe path, PCI function or firmware (a DGX Spark rail shares its port's cable with its sibling rail); else the port's cable"),
        (Some(_), _) => format!("{name}: its own cable and transceivers, or the switch port it lands on; else the HCA's PCIe path or firmware"),
    }
}

/// What to run next, pasteable (`rules::on`: the node's own ssh command where the inventory
/// says how to reach it): a DGX Spark rail's host side (its PCIe path, its drops), another
/// platform's HCA link and counters (`mlxlink` and `rdma statistic` answer on InfiniBand and
/// RoCE alike), and a node's shared path.
fn next_steps(topo: &Topology, a: &Attribution) -> Vec<String> {
    use super::rules::{netdev_of, on};
    let good = topo
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .find(|n| *n != a.node)
        .unwrap_or("GOOD-NODE");
    match (&a.rail, &a.rail_name) {
        (Some(_), Some(r)) if topo.is_spark(&a.node) => {
            let nd = netdev_of(topo, &a.node, r, true);
            vec![
                on(topo, &a.node, &format!("sudo lspci -vv -s $(ethtool -i {nd} | awk '/bus-info/ {{print $2}}') | grep -E 'LnkCap:|LnkSta:'"), "this rail's PCIe path: Gen5 x4 expected"),
                on(topo, &a.node, &format!("ethtool -S {nd} | grep -E 'discard|_err|pause'"), "drops, errors and pauses of this rail"),
            ]
        }
        (Some(_), Some(r)) => vec![
            on(topo, &a.node, &format!("mlxlink -d {r} -c -e"), "BER, FEC and eye of this HCA's link"),
            on(topo, &a.node, &format!("rdma statistic show link {r}/1"), "this port's error and congestion counters"),
            format!("swap {}'s cable on {r} with a good rail's: a fault that moves with the cable is the cable", a.node),
        ],
        _ => vec![
            format!("fabcheck run scripts/fabric_health.rhai -i INVENTORY -w {},{good}   # drift between it and a good node", a.node),
            on(topo, &a.node, "sudo lspci -vv | grep -E 'LnkSta:|ACSCtl:'; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "PCIe links, ACS, CPU governor"),
            on(topo, &a.node, "uptime; top -bn1 | head", "a busy node is slow on every rail"),
        ],
    }
}

fn diagnosis(topo: &Topology, a: &Attribution, evidence: Vec<String>) -> Diagnosis {
    let name = part_name(topo, a);
    let scope = if a.rail.is_some() { "rail" } else { "node" };
    let rule = match (a.below_line, a.rail.is_some()) {
        (true, false) => "slow_node",
        (true, true) => "slow_rail",
        (false, false) => "odd_node",
        (false, true) => "odd_rail",
    };
    let verdict = if a.below_line {
        "past its line"
    } else {
        "still within its line"
    };
    Diagnosis {
        rule: rule.into(),
        metric: None,
        cause: format!(
            "{name} is in every slow pair ({scope} compared with its like parts on the other nodes, {verdict}): {}",
            numbers(a)
        ),
        part: where_words(topo, a, &name),
        evidence,
        next: next_steps(topo, a),
    }
}

/// A collective's bandwidth red (its busbw metric below its line, the run's nodes its
/// subjects) of a run that `node` is in: a part slow in every pair it is in slows the ring it
/// is in too, so the red is that part's (the 2-node run without it passes).
fn collective_through(r: &Red, node: &str) -> bool {
    let busbw_low = r.t.metrics.iter().any(|m| {
        m.name.starts_with("nccl_busbw_max_gbs") && m.threshold.is_some_and(|t| !m.meets(t))
    });
    busbw_low
        && r.t
            .subjects
            .iter()
            .any(|s| s.kind == Finding::Bandwidth && s.node == node)
}

/// The reds of every part the fleet singles out below its line: one diagnosis per part,
/// claiming the pair tests its slow results are in.
pub(crate) fn slow_parts(ctx: &mut Ctx) {
    let topo = ctx.topo;
    let parts: Vec<Attribution> = ctx.fleet.iter().filter(|a| a.below_line).cloned().collect();
    for a in parts {
        let evidence = ctx.claim(|r| a.tests.contains(&r.t.name) || collective_through(r, &a.node));
        if evidence.is_empty() {
            continue;
        }
        ctx.out.push(diagnosis(topo, &a, evidence));
    }
}

/// The WARN-level notes: parts the fleet singles out whose results all pass their line.
pub(crate) fn notes(topo: &Topology, fleet: &[Attribution]) -> Vec<Diagnosis> {
    fleet
        .iter()
        .filter(|a| !a.below_line)
        .map(|a| diagnosis(topo, a, a.tests.clone()))
        .collect()
}

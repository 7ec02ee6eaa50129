//! InfiniBand ports (issue 33): the port state of every HCA port (`ibstat`), the port check an
//! engineer accepting an IB cluster makes (Active, LinkUp, rate, link layer, LID, subnet
//! manager), the IB error counters before and after load (`perfquery -x`, in the same
//! [`CounterSnapshot`] model as the RoCE counters, so `counter_growth` judges both) and the GPU
//! to HCA topology (`nvidia-smi topo -m`).

use super::health::{CounterSnapshot, PortCounters};
use super::tools::{tool, tool_reason};
use super::{check_name, NodeRef, PResult, PrimError};
use crate::parse::{ibstat, nvidia_smi_topo, perfquery};
use crate::util::names::quote;
use serde::{Deserialize, Serialize};

/// One HCA port as `ibstat` reports it, flat.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct IbPort {
    pub device: String,
    pub port: u32,
    pub ca_type: Option<String>,
    pub fw_ver: Option<String>,
    pub state: Option<String>,
    pub phys_state: Option<String>,
    /// Gbit/s (`400` = 4X NDR).
    pub rate: Option<f64>,
    pub base_lid: Option<u64>,
    pub sm_lid: Option<u64>,
    pub link_layer: Option<String>,
}

/// `ibstat` flattened to one row per port.
pub(crate) fn flatten(s: &ibstat::Ibstat) -> Vec<IbPort> {
    s.cas
        .iter()
        .flat_map(|ca| {
            ca.ports.iter().map(move |p| IbPort {
                device: ca.ca.clone(),
                port: p.port,
                ca_type: ca.ca_type.clone(),
                fw_ver: ca.fw_ver.clone(),
                state: p.state.clone(),
                phys_state: p.phys_state.clone(),
                rate: p.rate,
                base_lid: p.base_lid,
                sm_lid: p.sm_lid,
                link_layer: p.link_layer.clone(),
            })
        })
        .collect()
}

/// `n.ib_ports()`: every HCA port of the node (`ibstat`), InfiniBand and Ethernet alike (the
/// link layer says which).
pub(crate) fn ib_ports(n: &NodeRef) -> PResult<Vec<IbPort>> {
    let o = tool(n, "ibstat", "ibstat", None, None)?;
    if o.stdout.trim().is_empty() {
        return Err(PrimError::error(format!(
            "{}: `ibstat` printed nothing (exit {}): {}; are infiniband-diags and an RDMA device there?",
            n.name(),
            o.exit_code.unwrap_or(-1),
            tool_reason(&o)
        )));
    }
    let s = super::parsed(n.name(), &o.stdout, ibstat::parse)?;
    Ok(flatten(&s))
}

/// What the port check expects.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PortExpect {
    /// Gbit/s the port should run at (400 for 4X NDR); `None`: not judged.
    pub rate: Option<f64>,
}

/// The verdict on one port.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct PortCheck {
    pub node: String,
    pub device: String,
    pub port: u32,
    /// `false` when the port is not InfiniBand: the IB checks do not apply (RoCE checks do).
    pub infiniband: bool,
    pub ok: bool,
    /// Each names node, HCA, port, the value read and what to look at.
    pub problems: Vec<String>,
}

/// The width/generation words for a rate, for messages (`400` → `4X NDR`).
fn rate_words(r: f64) -> &'static str {
    match r as u64 {
        800 => "4X XDR",
        400 => "4X NDR",
        200 => "4X HDR or 2X NDR",
        100 => "4X EDR, 2X HDR or 1X NDR",
        56 => "4X FDR",
        50 => "1X HDR",
        40 => "4X QDR",
        _ => "a lower width or generation",
    }
}

/// The IB port check: State Active, Physical state LinkUp, rate as expected, a LID assigned
/// and a subnet manager (SM LID non-zero). A port whose link layer is not InfiniBand is not
/// judged here (`infiniband: false`, no problem): it is a RoCE port.
pub(crate) fn check_port(node: &str, p: &IbPort, e: PortExpect) -> PortCheck {
    let at = format!("{node} {} port {}", p.device, p.port);
    let infiniband = p.link_layer.as_deref() == Some("InfiniBand");
    let mut problems = Vec::new();
    if infiniband {
        port_problems(&at, p, e, &mut problems);
    }
    PortCheck {
        node: node.to_string(),
        device: p.device.clone(),
        port: p.port,
        infiniband,
        ok: problems.is_empty(),
        problems,
    }
}

fn port_problems(at: &str, p: &IbPort, e: PortExpect, out: &mut Vec<String>) {
    let state = p.state.as_deref().unwrap_or("unknown");
    let phys = p.phys_state.as_deref().unwrap_or("unknown");
    if phys != "LinkUp" {
        out.push(format!(
            "{at}: Physical state {phys}, expected LinkUp (no link: cable, transceiver or the switch port; `Polling` = nothing answers, `Disabled` = the port is switched off)"
        ));
    } else if state != "Active" {
        out.push(format!(
            "{at}: State {state} with the link up, expected Active (`Initializing`/`Armed`: the subnet manager has not configured the port)"
        ));
    }
    if let (Some(want), Some(got)) = (e.rate, p.rate) {
        if phys == "LinkUp" && got + 0.5 < want {
            out.push(format!(
                "{at}: Rate {got} Gb/s ({}), expected {want} Gb/s ({}): the link trained at a lower width or speed (cable, transceiver, or the switch port's speed setting)",
                rate_words(got),
                rate_words(want)
            ));
        }
    }
    if state == "Active" {
        match p.base_lid {
            Some(0) | Some(65535) | None => out.push(format!(
                "{at}: Base lid {} : no LID assigned by the subnet manager",
                p.base_lid.map_or("missing".into(), |l| l.to_string())
            )),
            _ => {}
        }
    }
    if phys == "LinkUp" && matches!(p.sm_lid, Some(0) | None) {
        out.push(format!(
            "{at}: SM lid {}: no subnet manager reached (start opensm or the switch's SM; without it no port becomes Active)",
            p.sm_lid.map_or("missing".into(), |l| l.to_string())
        ));
    }
}

/// The IB counters of one HCA port (`perfquery -x -C DEV -P PORT`: the local port's extended
/// counters, no LID needed). A port without extended counters is read in the classic layout.
pub(crate) fn perfquery_port(
    n: &NodeRef,
    dev: &str,
    port: u32,
) -> PResult<perfquery::PortCounters> {
    check_name("RDMA device", dev)?;
    let cmd = format!("perfquery -x -C {} -P {port}", quote(dev));
    let o = tool(n, "perfquery", &cmd, None, None)?;
    if o.exit_code != Some(0) || o.stdout.trim().is_empty() {
        return Err(PrimError::error(format!(
            "{}: `{cmd}` failed (exit {}): {}",
            n.name(),
            o.exit_code.unwrap_or(-1),
            tool_reason(&o)
        )));
    }
    let q = super::parsed(n.name(), &o.stdout, perfquery::parse)?;
    q.ports
        .into_iter()
        .next()
        .ok_or_else(|| PrimError::error(format!("{}: `{cmd}` printed no counter block", n.name())))
}

/// `n.ib_counters()`: the IB error counters (and PortXmitWait, recorded) of every InfiniBand
/// port of the node's inventory `rdma_devices` (all IB ports when it lists none), in the
/// snapshot model of `health_counters`, for `counter_growth`.
pub(crate) fn ib_counters(n: &NodeRef) -> PResult<CounterSnapshot> {
    let ports = ib_ports(n)?;
    let listed = &n.spec.rdma_devices;
    let mut out = CounterSnapshot {
        node: n.name().to_string(),
        taken_ms: super::health::now_ms(),
        ports: vec![],
    };
    for p in ports.iter().filter(|p| {
        p.link_layer.as_deref() == Some("InfiniBand")
            && (listed.is_empty() || listed.contains(&p.device))
    }) {
        let c = perfquery_port(n, &p.device, p.port)?;
        out.ports.push(PortCounters {
            port: format!("{}/{}", p.device, p.port),
            source: "perfquery -x".into(),
            speed_mbps: p.rate.map(|r| (r * 1000.0) as u64),
            counters: super::health::judged(&c.counters),
        });
    }
    if out.ports.is_empty() {
        return Err(PrimError::error(format!(
            "{}: no InfiniBand port among {} (ibstat link layers: {}): the IB counters do not apply here",
            n.name(),
            if listed.is_empty() { "the node's HCAs".to_string() } else { listed.join(", ") },
            ports
                .iter()
                .map(|p| format!("{}/{} {}", p.device, p.port, p.link_layer.as_deref().unwrap_or("?")))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(out)
}

/// `n.gpu_topology()`: `nvidia-smi topo -m` parsed: per GPU its nearest NICs.
pub(crate) fn gpu_topology(n: &NodeRef) -> PResult<nvidia_smi_topo::Topo> {
    let o = tool(n, "nvidia-smi", "nvidia-smi topo -m", None, None)?;
    if o.exit_code != Some(0) {
        return Err(PrimError::error(format!(
            "{}: `nvidia-smi topo -m` failed (exit {}): {}",
            n.name(),
            o.exit_code.unwrap_or(-1),
            tool_reason(&o)
        )));
    }
    super::parsed(n.name(), &o.stdout, nvidia_smi_topo::parse)
}

/// The pairs whose latency is far above the others': above `factor` × the median of all pairs
/// and at least 1 µs above it (2 µs against 1.5 µs is noise on any fabric, not a bad link).
/// Each message names the pair, its latency, the median and how many pairs it was judged
/// against; fewer than three pairs have no "others" to judge against.
pub(crate) fn latency_outliers(rows: &[(String, f64)], factor: f64) -> Vec<String> {
    if rows.len() < 3 {
        return vec![];
    }
    let mut v: Vec<f64> = rows.iter().map(|r| r.1).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let median = if v.len() % 2 == 1 {
        v[v.len() / 2]
    } else {
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
    };
    rows.iter()
        .filter(|(_, u)| *u > factor * median && *u - median >= 1.0)
        .map(|(pair, u)| {
            format!(
                "{pair}: {u:.2} usec, {:.1}x the median {median:.2} usec of the {} pairs (a slow path: that pair's cables, HCAs or switch ports)",
                u / median.max(f64::MIN_POSITIVE),
                rows.len()
            )
        })
        .collect()
}

crate::impl_shape!(IbPort, parsed("ib port"));
crate::impl_shape!(PortCheck, parsed("ib port check"));

#[cfg(test)]
mod tests {
    use super::*;

    fn port(state: &str, phys: &str, rate: f64, lid: u64, sm: u64, ll: &str) -> IbPort {
        IbPort {
            device: "mlx5_3".into(),
            port: 1,
            state: Some(state.into()),
            phys_state: Some(phys.into()),
            rate: Some(rate),
            base_lid: Some(lid),
            sm_lid: Some(sm),
            link_layer: Some(ll.into()),
            ..IbPort::default()
        }
    }
    const NDR: PortExpect = PortExpect { rate: Some(400.0) };

    #[test]
    fn healthy_ndr_port_passes() {
        let c = check_port(
            "h100-03",
            &port("Active", "LinkUp", 400.0, 17, 1, "InfiniBand"),
            NDR,
        );
        assert!(c.ok && c.infiniband, "{:?}", c.problems);
    }

    #[test]
    fn hdr_port_in_ndr_fabric_is_named() {
        let c = check_port(
            "h100-03",
            &port("Active", "LinkUp", 200.0, 17, 1, "InfiniBand"),
            NDR,
        );
        assert!(!c.ok);
        assert_eq!(c.problems.len(), 1);
        let m = &c.problems[0];
        assert!(m.starts_with("h100-03 mlx5_3 port 1: Rate 200 Gb/s"), "{m}");
        assert!(m.contains("expected 400 Gb/s (4X NDR)"), "{m}");
    }

    #[test]
    fn no_subnet_manager_is_named() {
        // Without an SM the port stays Initializing: link up, no LID, SM LID 0.
        let c = check_port(
            "h100-01",
            &port("Initializing", "LinkUp", 400.0, 65535, 0, "InfiniBand"),
            NDR,
        );
        assert!(
            c.problems.iter().any(|m| m.contains("State Initializing")),
            "{:?}",
            c.problems
        );
        assert!(
            c.problems
                .iter()
                .any(|m| m.contains("SM lid 0: no subnet manager")),
            "{:?}",
            c.problems
        );
    }

    #[test]
    fn down_port_says_physical_state_only() {
        let c = check_port(
            "b300-1",
            &port("Down", "Polling", 40.0, 0, 0, "InfiniBand"),
            NDR,
        );
        assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
        assert!(c.problems[0].contains("Physical state Polling"));
    }

    #[test]
    fn roce_port_is_not_judged_by_the_ib_check() {
        // the real H100 RoCE ibstat: Active, LID 0, SM lid 0, link layer Ethernet
        let c = check_port(
            "h100-roce",
            &port("Active", "LinkUp", 400.0, 0, 0, "Ethernet"),
            NDR,
        );
        assert!(c.ok && !c.infiniband);
    }

    #[test]
    fn no_rate_expectation_judges_no_rate() {
        let c = check_port(
            "x",
            &port("Active", "LinkUp", 100.0, 4, 1, "InfiniBand"),
            PortExpect::default(),
        );
        assert!(c.ok);
    }

    fn snap(symbol: u64, wait: u64, ms: u64) -> CounterSnapshot {
        let real = crate::parse::perfquery::parse(include_str!(
            "../../tests/fixtures/ibdiags/perfquery-x-2port-lid1719-capmask2-qp1dropped-xmitwait.txt"
        ))
        .unwrap();
        let mut c = super::super::health::judged(&real.ports[0].counters);
        c.insert("SymbolErrorCounter".into(), symbol);
        c.insert("PortXmitWait".into(), wait);
        CounterSnapshot {
            node: "h100-02".into(),
            taken_ms: ms,
            ports: vec![PortCounters {
                port: "mlx5_4/1".into(),
                source: "perfquery -x".into(),
                speed_mbps: Some(400_000),
                counters: c,
            }],
        }
    }

    #[test]
    fn ib_counters_judged_as_the_roce_ones() {
        use super::super::counter_growth::{growth, GrowthOpts};
        let b = snap(0, 22730501, 0);
        assert!(b.ports[0].counters.contains_key("LinkDownedCounter"));
        assert!(!b.ports[0].counters.contains_key("QP1Dropped"));
        // PortXmitWait grows under load: recorded, never failed
        let g = growth(&b, &snap(0, 22990001, 60_000), GrowthOpts::default()).unwrap();
        assert!(g.failures.is_empty(), "{:?}", g.failures);
        assert!(g
            .deltas
            .iter()
            .any(|d| d.counter == "PortXmitWait" && d.class == "information"));
        // SymbolErrorCounter growing during the load: a failure naming node, HCA/port, counter
        let g = growth(&b, &snap(37, 22990001, 60_000), GrowthOpts::default()).unwrap();
        assert_eq!(g.failures.len(), 1, "{:?}", g.failures);
        let f = &g.failures[0];
        assert!(
            f.starts_with("h100-02 mlx5_4/1: SymbolErrorCounter grew by +37"),
            "{f}"
        );
        assert!(f.contains("perfquery"), "{f}");
    }

    #[test]
    fn slow_latency_pair_is_named() {
        let rows: Vec<(String, f64)> = [
            ("h100-01 mlx5_0 -> h100-02 mlx5_0", 2.31),
            ("h100-01 mlx5_1 -> h100-02 mlx5_1", 2.28),
            ("h100-03 mlx5_0 -> h100-04 mlx5_0", 2.35),
            ("h100-03 mlx5_1 -> h100-04 mlx5_1", 9.87),
        ]
        .iter()
        .map(|(p, u)| (p.to_string(), *u))
        .collect();
        let o = latency_outliers(&rows, 2.0);
        assert_eq!(o.len(), 1, "{o:?}");
        assert!(
            o[0].starts_with("h100-03 mlx5_1 -> h100-04 mlx5_1: 9.87 usec"),
            "{}",
            o[0]
        );
        // all alike: nobody named; two pairs: nothing to compare with
        assert!(latency_outliers(&rows[..3], 2.0).is_empty());
        assert!(latency_outliers(&rows[2..], 2.0).is_empty());
    }
}

//! The IB error counters before and after load (`perfquery -x`), in the same
//! [`CounterSnapshot`] model as the RoCE counters, so `counter_growth` judges both.

use super::health::{CounterSnapshot, PortCounters};
use super::ibstat::ib_ports;
use super::tools::{failed, tool};
use super::{check_name, NodeRef, PResult, PrimError};
use crate::parse::perfquery;
use crate::util::names::quote;

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
        return Err(failed(n, &cmd, &o));
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

/// `n.ib_switch_end_counters(iblinkinfo_text)`: the error counters of the switch end of each
/// of the node's HCA cables (issue 51 item 2): the node's HCAs (inventory `rdma_devices`, else
/// every CA section named after the node) are found in the sweep by their node description
/// (`NODE HCA`), and the switch port at the other end of each Active cable is read from the
/// node with `perfquery -x LID PORT` (a GMP through the subnet). Each port is named `switch LID
/// L port P (the switch end of HCA)`, in the snapshot model, for `counter_growth`: a switch end
/// counting errors its HCA end does not is named. No cable of the node in the sweep: an empty
/// snapshot.
pub(crate) fn ib_switch_end_counters(n: &NodeRef, text: &str) -> PResult<CounterSnapshot> {
    let links = super::parsed(n.name(), text, crate::parse::iblinkinfo::parse)?;
    let listed = &n.spec.rdma_devices;
    let prefix = format!("{} ", n.name());
    let mut out = CounterSnapshot {
        node: n.name().to_string(),
        taken_ms: super::health::now_ms(),
        ports: vec![],
    };
    for l in &links {
        let Some(hca) = l.node.as_deref().and_then(|d| d.strip_prefix(&prefix)) else {
            continue;
        };
        let (Some(lid), Some(port)) = (l.peer_lid, l.peer_port) else {
            continue;
        };
        if l.node_type.as_deref() != Some("CA")
            || l.state != "Active"
            || !(listed.is_empty() || listed.iter().any(|d| d == hca))
        {
            continue;
        }
        let cmd = format!("perfquery -x {lid} {port}");
        let o = tool(n, "perfquery", &cmd, None, None)?;
        if o.exit_code != Some(0) || o.stdout.trim().is_empty() {
            return Err(failed(n, &cmd, &o));
        }
        let q = super::parsed(n.name(), &o.stdout, perfquery::parse)?;
        let Some(c) = q.ports.into_iter().next() else {
            return Err(PrimError::error(format!(
                "{}: `{cmd}` printed no counter block",
                n.name()
            )));
        };
        out.ports.push(PortCounters {
            port: format!("switch LID {lid} port {port} (the switch end of {hca})"),
            source: "perfquery -x LID PORT".into(),
            speed_mbps: l.rate.map(|r| (r * 1000.0) as u64),
            counters: super::health::judged(&c.counters),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

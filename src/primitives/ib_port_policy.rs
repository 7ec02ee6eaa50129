//! The InfiniBand port check an engineer accepting an IB cluster makes (pure): Active,
//! LinkUp, rate, link layer, LID, subnet manager, over the ports [`super::ibstat`] reads.

use super::ibstat::IbPort;
use serde::{Deserialize, Serialize};

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
}

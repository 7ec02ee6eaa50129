//! `counter_growth(before, after, opts)`: what two health-counter snapshots of one node say,
//! judged by [`super::counter_policy`]. Pure: no node is asked.

use super::counter_policy::{judgement, judgement_name, Judgement};
use super::health::{CounterSnapshot, PortCounters};
use super::{PResult, PrimError};
use serde::{Deserialize, Serialize};

/// Thresholds of [`growth`]: the options of `counter_growth(before, after, opts)`.
#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct GrowthOpts {
    /// Highest pre-FEC bit error rate (corrected bits / line bits) over the interval.
    pub max_pre_fec_ber: f64,
    /// The lossless RoCE priority (node var `roce_prio`): its per-priority discards must not
    /// grow.
    #[serde(deserialize_with = "priority")]
    pub lossless_prio: u32,
}

/// A priority, 0-7.
fn priority<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let p = <i64 as serde::Deserialize>::deserialize(d)?;
    u32::try_from(p)
        .ok()
        .filter(|p| *p < 8)
        .ok_or_else(|| serde::de::Error::custom(format!("{p} is not a priority 0-7")))
}

impl Default for GrowthOpts {
    fn default() -> GrowthOpts {
        GrowthOpts {
            max_pre_fec_ber: 1e-6,
            lossless_prio: 3,
        }
    }
}

/// One counter between two reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Delta {
    pub port: String,
    pub counter: String,
    pub before: u64,
    pub after: u64,
    /// `after - before`; a counter that went down (reset, driver reload) counts from 0.
    pub delta: u64,
    /// `must not grow`, `pre-FEC bit error rate` or `information`.
    pub class: String,
    /// Corrected bits only: the pre-FEC bit error rate over the interval.
    pub ber: Option<f64>,
    /// The counter went down between the reads (reset or driver reload in between).
    pub reset: bool,
}

/// What two snapshots of one node say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CounterGrowth {
    pub node: String,
    pub seconds: f64,
    /// Each names node, port, counter and delta.
    pub failures: Vec<String>,
    /// Non-zero must-not-grow counters before the run, with their values.
    pub warnings: Vec<String>,
    /// Every judged counter that changed (or was non-zero before), in port order.
    pub deltas: Vec<Delta>,
    /// (port, counter) of each failure: what the run's diagnosis is told (not a script field).
    #[serde(skip)]
    pub grown: Vec<(String, String)>,
}

/// Compare two snapshots of the same node (`before` read first). A port or counter missing in
/// `after` is a failure too (a device that disappeared under load).
pub(crate) fn growth(
    before: &CounterSnapshot,
    after: &CounterSnapshot,
    o: GrowthOpts,
) -> PResult<CounterGrowth> {
    if before.node != after.node {
        return Err(PrimError::error(format!(
            "counter_growth: the snapshots are of different nodes ({} and {})",
            before.node, after.node
        )));
    }
    let seconds = after.taken_ms.saturating_sub(before.taken_ms) as f64 / 1000.0;
    let mut out = CounterGrowth {
        node: before.node.clone(),
        seconds,
        ..Default::default()
    };
    for b in &before.ports {
        let Some(a) = after.ports.iter().find(|a| a.port == b.port) else {
            out.failures.push(format!(
                "{} {}: no counters in the second read (the port or device disappeared)",
                out.node, b.port
            ));
            continue;
        };
        for (k, &v0) in &b.counters {
            let Some(&v1) = a.counters.get(k) else {
                continue;
            };
            judge(&mut out, a, k, v0, v1, seconds, o);
        }
    }
    Ok(out)
}

fn judge(
    out: &mut CounterGrowth,
    port: &PortCounters,
    k: &str,
    v0: u64,
    v1: u64,
    seconds: f64,
    o: GrowthOpts,
) {
    let lossless = judgement(k) == Judgement::LosslessDiscard(o.lossless_prio);
    let class = match judgement(k) {
        Judgement::LosslessDiscard(p) if p == o.lossless_prio => Judgement::MustNotGrow,
        Judgement::LosslessDiscard(_) => Judgement::Info,
        j => j,
    };
    let reset = v1 < v0;
    let delta = if reset { v1 } else { v1 - v0 };
    let mut d = Delta {
        port: port.port.clone(),
        counter: k.to_string(),
        before: v0,
        after: v1,
        delta,
        class: judgement_name(class).into(),
        ber: None,
        reset,
    };
    let at = format!("{} {}", out.node, port.port);
    match class {
        Judgement::MustNotGrow => {
            if v0 > 0 {
                out.warnings.push(format!(
                    "{at}: {k} was already {v0} before the run (an earlier fault; clear it or watch that it does not grow)"
                ));
            }
            if delta > 0 {
                out.grown.push((port.port.clone(), k.to_string()));
                out.failures.push(format!(
                    "{at}: {k} grew by +{delta} during the run ({v0} -> {v1}, {} counter; {})",
                    port.source,
                    if lossless {
                        "a discard on the lossless RoCE priority (roce_prio)"
                    } else {
                        super::counter_policy::source(k)
                    }
                ));
            }
        }
        Judgement::Warn if delta > 0 => out.warnings.push(format!(
            "{at}: {k} grew by +{delta} during the run ({v0} -> {v1}): the host's receive/send rings ran short (memory, CPU or ring size on this node), not the fabric"
        )),
        Judgement::Rate => {
            let line_bits = port.speed_mbps.unwrap_or(0) as f64 * 1e6 * seconds;
            if delta > 0 && line_bits > 0.0 {
                let ber = delta as f64 / line_bits;
                d.ber = Some(ber);
                if ber > o.max_pre_fec_ber {
                    out.grown.push((port.port.clone(), k.to_string()));
                    out.failures.push(format!(
                        "{at}: {k} grew by +{delta} in {seconds:.1} s: pre-FEC bit error rate {ber:.1e} above {:.1e} (the link still works; the cable or optics is degrading)",
                        o.max_pre_fec_ber
                    ));
                }
            }
        }
        _ => {}
    }
    if delta > 0 || (class == Judgement::MustNotGrow && v0 > 0) {
        out.deltas.push(d);
    }
}

crate::impl_shape!(Delta, parsed("counter delta"));
crate::impl_shape!(
    CounterGrowth,
    parsed("counter_growth result").many::<Delta>("deltas")
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::health::{CounterSnapshot, PortCounters};

    fn snap(at: u64, port: &str, speed: Option<u64>, c: &[(&str, u64)]) -> CounterSnapshot {
        CounterSnapshot {
            node: "spark-02".into(),
            taken_ms: at,
            ports: vec![PortCounters {
                port: port.into(),
                source: "ethtool -S".into(),
                speed_mbps: speed,
                counters: c.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            }],
        }
    }

    #[test]
    fn discards_on_the_lossless_priority_fail_on_others_are_information() {
        let c = [("rx_prio3_buf_discard", 0), ("rx_prio0_buf_discard", 0)];
        let b = snap(0, "enp1s0f1np1", Some(200000), &c);
        let c = [("rx_prio3_buf_discard", 12), ("rx_prio0_buf_discard", 40)];
        let a = snap(1000, "enp1s0f1np1", Some(200000), &c);
        let g = growth(&b, &a, GrowthOpts::default()).unwrap();
        assert_eq!(g.failures.len(), 1, "{g:?}");
        assert!(g.failures[0].contains("rx_prio3_buf_discard grew by +12"));
        let o = GrowthOpts {
            lossless_prio: 0,
            ..Default::default()
        };
        let g = growth(&b, &a, o).unwrap();
        assert!(
            g.failures[0].contains("rx_prio0_buf_discard grew by +40"),
            "{g:?}"
        );
        // host ring errors warn
        let b = snap(0, "enp1s0f1np1", None, &[("rx_out_of_buffer", 0)]);
        let a = snap(1000, "enp1s0f1np1", None, &[("rx_out_of_buffer", 9)]);
        let g = growth(&b, &a, GrowthOpts::default()).unwrap();
        assert!(
            g.failures.is_empty() && g.warnings[0].contains("+9"),
            "{g:?}"
        );
    }

    #[test]
    fn growth_of_an_error_counter_fails_naming_node_port_counter_and_delta() {
        let b = snap(
            0,
            "enp1s0f1np1",
            Some(200000),
            &[("rx_crc_errors_phy", 0), ("np_cnp_sent", 5)],
        );
        let a = snap(
            60_000,
            "enp1s0f1np1",
            Some(200000),
            &[("rx_crc_errors_phy", 1842), ("np_cnp_sent", 900)],
        );
        let g = growth(&b, &a, GrowthOpts::default()).unwrap();
        assert_eq!(g.failures.len(), 1, "{g:?}");
        let f = &g.failures[0];
        assert!(
            f.contains("spark-02 enp1s0f1np1")
                && f.contains("rx_crc_errors_phy")
                && f.contains("+1842"),
            "{f}"
        );
        assert!(g.warnings.is_empty());
        // congestion counters are recorded, never failed
        let cnp = g
            .deltas
            .iter()
            .find(|d| d.counter == "np_cnp_sent")
            .unwrap();
        assert_eq!((cnp.delta, cnp.class.as_str()), (895, "information"));
    }

    #[test]
    fn a_nonzero_error_counter_before_the_run_warns_with_its_value_and_does_not_fail() {
        let b = snap(0, "rocep1s0f1/1", None, &[("out_of_sequence", 17)]);
        let g = growth(&b, &b.clone(), GrowthOpts::default()).unwrap();
        assert!(g.failures.is_empty(), "{g:?}");
        assert_eq!(g.warnings.len(), 1);
        assert!(
            g.warnings[0].contains("out_of_sequence was already 17"),
            "{:?}",
            g.warnings
        );
    }

    #[test]
    fn corrected_fec_bits_fail_only_above_the_bit_error_rate() {
        // 200 Gbit/s for 10 s = 2e12 line bits: 1e5 corrected bits is 5e-8 (healthy PAM4),
        // 1e7 is 5e-6 (above the 1e-6 default).
        let b = snap(
            0,
            "enp1s0f1np1",
            Some(200000),
            &[("rx_corrected_bits_phy", 12)],
        );
        let healthy = snap(
            10_000,
            "enp1s0f1np1",
            Some(200000),
            &[("rx_corrected_bits_phy", 100_012)],
        );
        let g = growth(&b, &healthy, GrowthOpts::default()).unwrap();
        assert!(g.failures.is_empty(), "{g:?}");
        assert!((g.deltas[0].ber.unwrap() - 5e-8).abs() < 1e-12);
        let bad = snap(
            10_000,
            "enp1s0f1np1",
            Some(200000),
            &[("rx_corrected_bits_phy", 10_000_012)],
        );
        let g = growth(&b, &bad, GrowthOpts::default()).unwrap();
        assert_eq!(g.failures.len(), 1);
        assert!(
            g.failures[0].contains("pre-FEC bit error rate 5.0e-6"),
            "{:?}",
            g.failures
        );
    }

    #[test]
    fn a_counter_reset_between_reads_counts_from_zero_and_a_vanished_port_fails() {
        let b = snap(0, "enp1s0f1np1", None, &[("link_down_events_phy", 9)]);
        let a = snap(1000, "enp1s0f1np1", None, &[("link_down_events_phy", 2)]);
        let g = growth(&b, &a, GrowthOpts::default()).unwrap();
        assert!(g.failures[0].contains("+2"), "{g:?}");
        assert!(g.deltas[0].reset);
        let gone = snap(1000, "enP2p1s0f1np1", None, &[]);
        let g = growth(&b, &gone, GrowthOpts::default()).unwrap();
        assert!(g.failures[0].contains("disappeared"), "{g:?}");
    }
}

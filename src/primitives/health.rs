//! Fabric health: the error counters of a node's fabric ports read before and after the load
//! tests of a run (`health_counters(n)`, `counter_growth(before, after, opts)`), and the
//! comparisons across nodes that the health checks share (`majority`, `version_drift`).
//!
//! Which counters may grow on a healthy link is decided once, in [`super::counter_policy`]
//! (from the mlx5 driver's own counters documentation): Error-typed counters must not grow (a
//! failure naming node, port, counter and delta; non-zero before the run: a warning), FEC
//! corrected bits are judged as a pre-FEC bit error rate, the host's software-ring errors warn,
//! per-priority discards must not grow on the lossless RoCE priority, the rest is recorded or
//! left out of the snapshot.

use super::tools::{ethtool, ethtool_stats, tool, tool_reason};
use super::{check_name, NodeRef, PResult, PrimError};
use crate::util::names::quote;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::counter_policy::{judgement, judgement_name, Judgement};

/// The prefix of the `ethtool -I --show-fec` statistics in a port's counters
/// (`fec_uncorrectable_blocks` must not grow, `fec_corrected_blocks` is information).
pub const FEC_PREFIX: &str = "fec_";

/// The health counters of one port: a netdev (`ethtool -S`) or an RDMA device port
/// (`hw_counters`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PortCounters {
    /// `enp1s0f1np1`, or `rocep1s0f1/1` (device/port).
    pub port: String,
    /// `ethtool -S` or `hw_counters`.
    pub source: String,
    /// The negotiated speed (netdevs; for the corrected-bits rate).
    pub speed_mbps: Option<u64>,
    /// Only the counters the health check judges (`counter_policy::judgement` not `Ignored`).
    pub counters: BTreeMap<String, u64>,
}

/// The health counters of a node at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterSnapshot {
    pub node: String,
    /// When it was read (ms since the Unix epoch, the runner's clock).
    pub taken_ms: u64,
    pub ports: Vec<PortCounters>,
}

pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub(super) fn judged(all: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    all.iter()
        .filter(|(k, _)| judgement(k) != Judgement::Ignored)
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// The RDMA port counters of `dev` port 1 (`rdma statistic show link DEV/1`: the kernel's
/// `hw_counters`). A device without them (not mlx5, no RDMA at all) is an error naming it.
pub fn hw_counters(n: &NodeRef, dev: &str) -> PResult<BTreeMap<String, u64>> {
    check_name("RDMA device", dev)?;
    let cmd = format!("rdma statistic show link {}", quote(&format!("{dev}/1")));
    let o = tool(n, "rdma", &cmd, None, None)?;
    if o.exit_code != Some(0) || o.stdout.trim().is_empty() {
        return Err(PrimError::error(format!(
            "{}: no RDMA hw_counters for {dev} port 1 (`{cmd}`: {}); is {dev} an RDMA device of this node?",
            n.name(),
            tool_reason(&o)
        )));
    }
    let ports = super::parsed(n.name(), &o.stdout, crate::parse::rdma_statistic::parse)?;
    ports
        .into_iter()
        .find(|p| p.device == dev && p.port == 1)
        .map(|p| p.counters)
        .ok_or_else(|| {
            PrimError::error(format!(
                "{}: `{cmd}` printed no counters of {dev}/1",
                n.name()
            ))
        })
}

/// `n.gids(dev)`: the GID table of RDMA device `dev` (`show_gids DEV`, mlnx-tools).
pub fn gids(n: &NodeRef, dev: &str) -> PResult<Vec<crate::parse::show_gids::Gid>> {
    check_name("RDMA device", dev)?;
    let cmd = format!("show_gids {}", quote(dev));
    let o = tool(n, "show_gids", &cmd, None, None)?;
    if o.exit_code != Some(0) && o.stdout.trim().is_empty() {
        return Err(PrimError::error(format!(
            "{}: `{cmd}` failed: {}",
            n.name(),
            tool_reason(&o)
        )));
    }
    super::parsed(n.name(), &o.stdout, crate::parse::show_gids::parse)
}

/// A read-only tool run as root (`sudo -n`: lspci hides LnkCap, ethtool -m and mlnx_qos need
/// root); missing is an error naming it, a failure with nothing printed an error with its
/// reason.
fn as_root(n: &NodeRef, program: &str, cmd: &str) -> PResult<crate::transport::CmdOutput> {
    n.env.need_tool(&n.spec, program);
    let req = crate::transport::CmdRequest {
        command: cmd.to_string(),
        timeout: n.env.command_timeout(&n.spec, None, None),
        env: vec![],
        sudo: true,
    };
    let o = n.env.exec(&n.spec, &req)?;
    super::tools::installed(&o, n.name(), program)?;
    if o.exit_code != Some(0) || o.stdout.trim().is_empty() {
        return Err(PrimError::error(format!(
            "{}: `{cmd}` failed (exit {}): {}",
            n.name(),
            o.exit_code.unwrap_or(-1),
            tool_reason(&o)
        )));
    }
    Ok(o)
}

/// `n.optics(iface)`: the transceiver or cable of `iface` (`ethtool -m`): identity, digital
/// diagnostics and the module's own thresholds.
pub fn optics(n: &NodeRef, iface: &str) -> PResult<crate::parse::ethtool_module::Module> {
    check_name("interface", iface)?;
    let o = as_root(n, "ethtool", &format!("ethtool -m {}", quote(iface)))?;
    super::parsed(n.name(), &o.stdout, crate::parse::ethtool_module::parse)
}

/// `n.fec(iface)`: the FEC of `iface` (`ethtool -I --show-fec IFACE`, ethtool >= 5.13):
/// configured and active encoding and, where the driver counts them, corrected and
/// uncorrectable blocks. A NIC without FEC (`Operation not supported`) or an older ethtool
/// without `-I` is an error naming it.
pub fn fec(n: &NodeRef, iface: &str) -> PResult<crate::parse::show_fec::ShowFec> {
    check_name("interface", iface)?;
    let cmd = format!("ethtool -I --show-fec {}", quote(iface));
    let o = tool(n, "ethtool", &cmd, None, None)?;
    if o.exit_code != Some(0) {
        return Err(PrimError::error(format!(
            "{}: `{cmd}` failed (exit {}): {} (no FEC on this NIC, or ethtool older than 5.13 without -I)",
            n.name(),
            o.exit_code.unwrap_or(-1),
            tool_reason(&o)
        )));
    }
    super::parsed(n.name(), &o.stdout, crate::parse::show_fec::parse)
}

/// `n.package_version(name)`: the installed version of Debian package `name` (`dpkg-query -W
/// -f='${Version}' NAME`, read-only), `None` when the package is not installed. A node without
/// dpkg-query (not Debian/Ubuntu) is an error naming it.
pub fn package_version(n: &NodeRef, name: &str) -> PResult<Option<String>> {
    check_name("package", name)?;
    let cmd = format!("dpkg-query -W -f='${{Version}}' {}", quote(name));
    let o = tool(n, "dpkg-query", &cmd, None, None)?;
    let v = o.stdout.trim();
    if o.exit_code == Some(0) && !v.is_empty() {
        // The reports' tool versions table shows it (package name as the tool).
        crate::run::versions::record(n.name(), name, v);
        return Ok(Some(v.to_string()));
    }
    if o.stderr.contains("no packages found") || o.exit_code == Some(0) {
        return Ok(None);
    }
    Err(PrimError::error(format!(
        "{}: `{cmd}` failed (exit {}): {}",
        n.name(),
        o.exit_code.unwrap_or(-1),
        tool_reason(&o)
    )))
}

/// `n.qos(iface)`: PFC, trust and traffic classes of `iface` (`mlnx_qos -i IFACE`).
pub fn qos(n: &NodeRef, iface: &str) -> PResult<crate::parse::mlnx_qos::MlnxQos> {
    check_name("interface", iface)?;
    let o = as_root(n, "mlnx_qos", &format!("mlnx_qos -i {}", quote(iface)))?;
    super::parsed(n.name(), &o.stdout, crate::parse::mlnx_qos::parse)
}

/// `n.pcie(iface)`: the PCIe link of the NIC behind `iface`: its bus address from `ethtool -i`,
/// then `lspci -vv -s BDF` (as root: LnkCap is hidden from other users).
pub fn pcie(n: &NodeRef, iface: &str) -> PResult<crate::parse::lspci::PciDevice> {
    let d = super::tools::ethtool_driver(n, iface)?;
    let bdf = d.bus_info.unwrap_or_default();
    if bdf.is_empty()
        || !bdf
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
    {
        return Err(PrimError::error(format!(
            "{}: `ethtool -i {iface}` gives no PCI bus address (bus-info {bdf:?}): not a PCIe NIC?",
            n.name()
        )));
    }
    let o = as_root(n, "lspci", &format!("lspci -vv -s {bdf}"))?;
    let devs = super::parsed(n.name(), &o.stdout, crate::parse::lspci::parse)?;
    let want = bdf.trim_start_matches("0000:");
    devs.into_iter()
        .find(|p| p.address.trim_start_matches("0000:") == want)
        .ok_or_else(|| {
            PrimError::error(format!(
                "{}: `lspci -vv -s {bdf}` does not list {bdf}",
                n.name()
            ))
        })
}

/// `health_counters(n)`: the health counters of every fabric interface of `n` (`ethtool -S`,
/// speed from `ethtool`) and of every RDMA device (port 1 `hw_counters`) the inventory lists.
pub fn counters(n: &NodeRef) -> PResult<CounterSnapshot> {
    let mut out = CounterSnapshot {
        node: n.name().to_string(),
        taken_ms: now_ms(),
        ports: vec![],
    };
    if n.spec.interfaces.is_empty() && n.spec.rdma_devices.is_empty() {
        return Err(PrimError::error(format!(
            "{}: the inventory lists no fabric interfaces and no RDMA devices (fields \"interfaces\", \"rdma_devices\"): no counters to read",
            n.name()
        )));
    }
    for iface in &n.spec.interfaces {
        let s = ethtool_stats(n, iface)?;
        let c = judged(&s.counters);
        if c.is_empty() {
            return Err(PrimError::error(format!(
                "{}: `ethtool -S {iface}` shows none of the error counters the health check reads (CRC, symbol, link-down, FEC: mlx5 `*_phy` names): not a ConnectX port? nothing to check",
                n.name()
            )));
        }
        let e = ethtool(n, iface)?;
        let mut source = "ethtool -S".to_string();
        let mut c = c;
        // FEC blocks where the driver counts them; a port without (or an older ethtool) keeps
        // its `ethtool -S` counters: the FEC testcase reports what it cannot read.
        if let Ok(f) = fec(n, iface).map(|f| f.statistics) {
            if !f.is_empty() {
                source.push_str(", ethtool -I --show-fec");
            }
            for (k, v) in f.into_iter().filter(|(k, _)| k.ends_with("_blocks")) {
                c.insert(format!("{FEC_PREFIX}{k}"), v);
            }
        }
        out.ports.push(PortCounters {
            port: iface.clone(),
            source,
            speed_mbps: e.speed_mbps,
            counters: c,
        });
    }
    for dev in &n.spec.rdma_devices {
        out.ports.push(PortCounters {
            port: format!("{dev}/1"),
            source: "hw_counters".into(),
            speed_mbps: None,
            counters: judged(&hw_counters(n, dev)?),
        });
    }
    Ok(out)
}

/// `n.ibv_devinfo()`: the RDMA devices and ports (`ibv_devinfo`: state, active_mtu, ...).
pub fn ibv_devinfo(n: &NodeRef) -> PResult<Vec<crate::parse::ibv_devinfo::Device>> {
    let o = tool(n, "ibv_devinfo", "ibv_devinfo", None, None)?;
    if o.exit_code != Some(0) && o.stdout.trim().is_empty() {
        return Err(PrimError::error(format!(
            "{}: `ibv_devinfo` found no RDMA device ({})",
            n.name(),
            tool_reason(&o)
        )));
    }
    super::parsed(n.name(), &o.stdout, crate::parse::ibv_devinfo::parse)
}

/// Thresholds of [`growth`].
#[derive(Debug, Clone, Copy)]
pub struct GrowthOpts {
    /// Highest pre-FEC bit error rate (corrected bits / line bits) over the interval.
    pub max_pre_fec_ber: f64,
    /// The lossless RoCE priority (node var `roce_prio`): its per-priority discards must not
    /// grow.
    pub lossless_prio: u32,
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
pub struct Delta {
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
pub struct CounterGrowth {
    pub node: String,
    pub seconds: f64,
    /// Each names node, port, counter and delta.
    pub failures: Vec<String>,
    /// Non-zero must-not-grow counters before the run, with their values.
    pub warnings: Vec<String>,
    /// Every judged counter that changed (or was non-zero before), in port order.
    pub deltas: Vec<Delta>,
}

/// Compare two snapshots of the same node (`before` read first). A port or counter missing in
/// `after` is a failure too (a device that disappeared under load).
pub fn growth(
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

/// The value that more than half of `values` have, if one has (`None` when no value has a
/// strict majority: two nodes that differ, or three-way splits).
pub fn majority(values: &[String]) -> Option<String> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for v in values {
        *count.entry(v.as_str()).or_default() += 1;
    }
    count
        .into_iter()
        .find(|(_, c)| 2 * c > values.len())
        .map(|(v, _)| v.to_string())
}

/// One item of the version table of a node (`firmware` of `rocep1s0f1`, `kernel`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Version {
    pub node: String,
    pub item: String,
    pub value: String,
}

/// The verdict of [`version_drift`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// Items whose differences fail, each naming the item, the odd nodes and their values.
    pub failures: Vec<String>,
    /// Items whose differences warn.
    pub warnings: Vec<String>,
    /// item -> (node -> value), for the report.
    pub table: BTreeMap<String, BTreeMap<String, String>>,
}

/// Compare each item across nodes: a difference is a failure when the item is in `fail_items`,
/// else a warning. The message names the expected value (the majority, else "no majority")
/// and each node that differs with its value.
pub fn version_drift(rows: &[Version], fail_items: &[String]) -> Drift {
    let mut out = Drift::default();
    for r in rows {
        out.table
            .entry(r.item.clone())
            .or_default()
            .insert(r.node.clone(), r.value.clone());
    }
    for (item, by_node) in &out.table {
        let values: Vec<String> = by_node.values().cloned().collect();
        if values.iter().all(|v| *v == values[0]) {
            continue;
        }
        let maj = majority(&values);
        let odd: Vec<String> = by_node
            .iter()
            .filter(|(_, v)| maj.as_ref() != Some(*v))
            .map(|(n, v)| format!("{n} has {v}"))
            .collect();
        let msg = match &maj {
            Some(m) => format!("{item} differs: most nodes have {m}; {}", odd.join(", ")),
            None => format!("{item} differs (no majority): {}", odd.join(", ")),
        };
        if fail_items
            .iter()
            .any(|f| item == f || item.starts_with(&format!("{f} ")))
        {
            out.failures.push(msg);
        } else {
            out.warnings.push(msg);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn majority_needs_more_than_half() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(majority(&v(&["a", "a", "b"])), Some("a".into()));
        assert_eq!(majority(&v(&["a", "b"])), None);
        assert_eq!(majority(&v(&["a", "b", "c", "a"])), None);
        assert_eq!(majority(&v(&["x"])), Some("x".into()));
    }

    #[test]
    fn drift_fails_for_listed_items_and_warns_for_the_others() {
        let row = |n: &str, i: &str, v: &str| Version {
            node: n.into(),
            item: i.into(),
            value: v.into(),
        };
        let rows = vec![
            row("s1", "firmware rocep1s0f1", "28.45.4028"),
            row("s2", "firmware rocep1s0f1", "28.45.4028"),
            row("s3", "firmware rocep1s0f1", "28.43.1014"),
            row("s1", "kernel", "6.11.0-1016-nvidia"),
            row("s2", "kernel", "6.11.0-1015-nvidia"),
            row("s1", "driver", "mlx5_core 25.07"),
            row("s2", "driver", "mlx5_core 25.07"),
        ];
        let d = version_drift(&rows, &["firmware".to_string(), "driver".to_string()]);
        assert_eq!(d.failures.len(), 1, "{d:?}");
        assert!(
            d.failures[0].contains("most nodes have 28.45.4028; s3 has 28.43.1014"),
            "{:?}",
            d.failures
        );
        assert_eq!(d.warnings.len(), 1);
        assert!(
            d.warnings[0].contains("kernel differs (no majority)"),
            "{:?}",
            d.warnings
        );
        assert_eq!(d.table["kernel"]["s2"], "6.11.0-1015-nvidia");
    }
}

//! `dmesg` (util-linux, the kernel ring buffer): the link up/down lines network drivers log per
//! netdev, for the link-flap count of `fabcheck health --context healthcheck`. Every other line
//! is skipped (a kernel log is mostly other things). Handles the time stamp `[18865.848172] `
//! (seconds since boot: the first line must have one; later lines without are skipped, as a
//! message's wrapped continuation), printk caller ids `[ T3356] ` after it,
//! and the driver's own prefix (`<driver> <bus id> <netdev>: `):
//!
//! ```text
//! [77131.485189] mlx5_core 0000:04:00.0 ens1f0: Link down            mlx5 (mlx5e_update_carrier)
//! [77337.033686] mlx5_core 0000:04:00.0 ens1f0: Link up
//! [18865.729882] ixgbe 0000:05:00.0 enp5s0: NIC Link is Up 10 Gbps, Flow Control: RX/TX
//! [  336.527739][ T3356] mlx5_core 0000:0b:00.1 enp11s0f1np1: Link down
//! ```
//!
//! InfiniBand ports log no such line (their netdev is IPoIB's): their flaps are the port's
//! LinkDownedCounter.

use super::util::{first_nonblank, regex};
use super::ParseError;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelLog {
    /// The link lines, in the log's order.
    pub events: Vec<LinkEvent>,
    /// The time stamp of the log's last line (seconds since boot): where the next run's
    /// reading starts. `None` without time stamps.
    pub last_time_s: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkEvent {
    /// Seconds since boot (`None` without a time stamp).
    pub time_s: Option<f64>,
    /// The driver that logged it: `mlx5_core`, `ixgbe`.
    pub driver: String,
    /// The device's bus id: `0000:04:00.0`.
    pub bus: String,
    pub netdev: String,
    /// `true` for link up, `false` for link down.
    pub up: bool,
}

pub fn parse(text: &str) -> Result<KernelLog, ParseError> {
    let mut out = KernelLog::default();
    // Not dmesg's: its lines start with the time since boot (nothing at all: no link line).
    let (n, first) = first_nonblank(text);
    if n > 0 && !regex!(r"^\s*\[\s*\d+\.\d+\]").is_match(first) {
        return Err(ParseError::new(
            "dmesg",
            n,
            first,
            "expected dmesg lines, each starting with its time since boot: `[18865.848172] …`",
        ));
    }
    let line_re = regex!(r"^\s*(?:\[\s*(\d+\.\d+)\])?(?:\[\s*[TC]\d+\])?\s*(.*)$");
    let link_re = regex!(
        r"^(\S+) ([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]) (\S+): (?i:(?:NIC )?Link (?:is )?(up|down))\b"
    );
    for line in text.lines() {
        let Some(c) = line_re.captures(line) else {
            continue;
        };
        let time = c.get(1).and_then(|t| t.as_str().parse::<f64>().ok());
        if time.is_some() {
            out.last_time_s = time;
        }
        let Some(l) = link_re.captures(&c[2]) else {
            continue;
        };
        out.events.push(LinkEvent {
            time_s: time,
            driver: l[1].to_string(),
            bus: l[2].to_string(),
            netdev: l[3].to_string(),
            up: l[4].eq_ignore_ascii_case("up"),
        });
    }
    Ok(out)
}

crate::impl_shape!(LinkEvent, parsed("kernel link event"));
crate::impl_shape!(KernelLog, parsed("kernel log").many::<LinkEvent>("events"));

crate::parser!("dmesg", "dmesg", sample: "kernel-log/dmesg-mlx5-lag-flapping-ens1f0-ens1f1.txt");

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/kernel-log/");
        std::fs::read_to_string(format!("{p}{name}")).unwrap()
    }

    #[test]
    fn mlx5_lag_flapping_reads_every_down_and_up_of_both_ports() {
        let k = parse(&fixture("dmesg-mlx5-lag-flapping-ens1f0-ens1f1.txt")).unwrap();
        let downs = |n: &str| k.events.iter().filter(|e| e.netdev == n && !e.up).count();
        assert_eq!((downs("ens1f0"), downs("ens1f1")), (6, 4));
        assert_eq!(k.events.len(), 20);
        assert_eq!(k.events[0].time_s, Some(77131.485189));
        assert_eq!(k.events[0].bus, "0000:04:00.0");
        assert_eq!(k.last_time_s, Some(624053.674747));
    }

    #[test]
    fn other_drivers_wording_and_caller_ids() {
        let k = parse(&fixture("dmesg-tail-ixgbe-up-mlx5-down.txt")).unwrap();
        let v: Vec<(&str, bool)> = k.events.iter().map(|e| (e.netdev.as_str(), e.up)).collect();
        assert_eq!(
            v,
            [
                ("enp5s0", true),
                ("enp1s0f0np0", false),
                ("enp1s0f1np1", false)
            ]
        );
        let k = parse(&fixture("dmesg-arm64-caller-id-mlx5-link-down.txt")).unwrap();
        assert_eq!(k.events.len(), 1);
        assert_eq!(k.events[0].netdev, "enp11s0f1np1");
        assert_eq!(k.events[0].time_s, Some(336.527739));
        // IPv6 "link is not ready" / "link becomes ready" are not the driver's link lines
        let k = parse(&fixture("dmesg-mlx5-boot-down-then-up-cx-40g.txt")).unwrap();
        assert_eq!(k.events.len(), 4);
    }
}

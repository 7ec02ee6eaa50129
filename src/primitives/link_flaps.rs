//! `n.link_flaps(before)`: how often each fabric netdev of the node went down since the last
//! reading, from the kernel log's link lines (`dmesg`, `parse::dmesg`). What the reading ends
//! at (the boot and the time of its last link line) is kept by `fabcheck health` (--state) and
//! given back as `before`, so a flap is counted once, never on every later run.
//!
//! A flap is a "Link down" of a netdev that the log already shows earlier: the first line of a
//! netdev after boot (mlx5 logs "Link down", then "Link up", as it first reports the carrier)
//! is not one, and an admin's `ip link set down` logs no "Link down" on mlx5. InfiniBand ports
//! log no such line (`scripts/node_health.rhai` counts their LinkDownedCounter instead).

use super::tools::as_root;
use super::{parsed, NodeRef, PResult};
use crate::parse::dmesg::{self, LinkEvent};
use serde::{Deserialize, Serialize};

/// The command, run as root: the boot's id on the first line, then the kernel log's link lines
/// (`dmesg` read once alone first, so that a kernel log that cannot be read is an error, not
/// none).
pub(crate) const COMMAND: &str = "cat /proc/sys/kernel/random/boot_id && dmesg >/dev/null && \
     { dmesg | grep -iE 'link (is )?(up|down)'; true; }";

/// Where a reading of the kernel log ended: the next reading counts what came after.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Mark {
    pub boot_id: String,
    /// The time of the last link line read (seconds since boot); `None`: none yet.
    #[serde(default)]
    pub last_time_s: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct NetdevFlaps {
    pub netdev: String,
    /// Flaps since `before` (since boot where the node rebooted or nothing was kept).
    pub flaps: i64,
    /// Flaps since boot, as far as the kernel log reaches back.
    pub flaps_since_boot: i64,
    /// When its last flap was (seconds since boot).
    pub last_flap_s: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct LinkFlaps {
    pub node: String,
    /// What to keep for the next reading.
    pub mark: Mark,
    /// No earlier reading was given: `flaps` counts since boot.
    pub first_reading: bool,
    /// An earlier reading of another boot was given (the node rebooted): since boot.
    pub rebooted: bool,
    /// Every fabric netdev of the node, in the inventory's order.
    pub netdevs: Vec<NetdevFlaps>,
}

crate::impl_shape!(Mark, serialised("kernel log mark"));
crate::impl_shape!(NetdevFlaps, serialised("netdev flaps"));
crate::impl_shape!(
    LinkFlaps,
    serialised("link flaps")
        .one::<Mark>("mark")
        .many::<NetdevFlaps>("netdevs")
);

/// `n.link_flaps(before)`: read the kernel log and count.
pub(crate) fn link_flaps(n: &NodeRef, before: Option<Mark>) -> PResult<LinkFlaps> {
    // as root (`sudo -n` unless fabcheck is root): kernel.dmesg_restrict=1 keeps the log root's
    let o = as_root(n, "dmesg", COMMAND)?;
    let (boot, log) = o.stdout.split_once('\n').unwrap_or((&o.stdout, ""));
    let log = parsed(n.name(), log, dmesg::parse)?;
    let now = Mark {
        boot_id: boot.trim().to_string(),
        last_time_s: log.events.iter().filter_map(|e| e.time_s).reduce(f64::max),
    };
    Ok(count(
        n.name(),
        &log.events,
        now,
        before.as_ref(),
        &n.spec.interfaces,
    ))
}

/// The flaps of each of `netdevs` in `events` after `before` (same boot) or since boot.
pub(crate) fn count(
    node: &str,
    events: &[LinkEvent],
    now: Mark,
    before: Option<&Mark>,
    netdevs: &[String],
) -> LinkFlaps {
    let rebooted = before.is_some_and(|b| b.boot_id != now.boot_id);
    let since = before
        .filter(|_| !rebooted)
        .and_then(|b| b.last_time_s)
        .unwrap_or(f64::NEG_INFINITY);
    let list = netdevs
        .iter()
        .map(|d| {
            let mine: Vec<&LinkEvent> = events.iter().filter(|e| &e.netdev == d).collect();
            // every down but the netdev's first line since boot
            let downs: Vec<&LinkEvent> = mine.iter().skip(1).filter(|e| !e.up).copied().collect();
            let after: Vec<&&LinkEvent> = downs
                .iter()
                .filter(|e| e.time_s.is_none_or(|t| t > since))
                .collect();
            NetdevFlaps {
                netdev: d.clone(),
                flaps: after.len() as i64,
                flaps_since_boot: downs.len() as i64,
                last_flap_s: downs.iter().filter_map(|e| e.time_s).reduce(f64::max),
            }
        })
        .collect();
    LinkFlaps {
        node: node.to_string(),
        mark: now,
        first_reading: before.is_none(),
        rebooted,
        netdevs: list,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(name: &str) -> Vec<LinkEvent> {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/kernel-log/");
        let t = std::fs::read_to_string(format!("{p}{name}")).unwrap();
        dmesg::parse(&t).unwrap().events
    }

    fn mark(boot: &str, t: Option<f64>) -> Mark {
        Mark {
            boot_id: boot.into(),
            last_time_s: t,
        }
    }

    fn flaps(f: &LinkFlaps) -> Vec<(String, i64, i64)> {
        f.netdevs
            .iter()
            .map(|n| (n.netdev.clone(), n.flaps, n.flaps_since_boot))
            .collect()
    }

    #[test]
    fn a_boots_first_down_then_up_is_not_a_flap() {
        let e = log("dmesg-mlx5-boot-down-then-up-cx-40g.txt");
        let nd = ["enp65s0f0".to_string(), "enp65s0f1".to_string()];
        let f = count("n", &e, mark("b", Some(14.5)), None, &nd);
        assert_eq!(
            flaps(&f),
            [("enp65s0f0".into(), 0, 0), ("enp65s0f1".into(), 0, 0)]
        );
        assert!(f.first_reading);
    }

    #[test]
    fn flaps_after_the_last_reading_are_counted_once() {
        let e = log("dmesg-mlx5-lag-flapping-ens1f0-ens1f1.txt");
        let nd = ["ens1f0".to_string(), "ens1f1".to_string()];
        let now = mark("b", Some(85363.543475));
        // the first line of each is a down: 5 of ens1f0's 6 downs and 3 of ens1f1's 4 are flaps
        let all = count("n", &e, now.clone(), None, &nd);
        assert_eq!(
            flaps(&all),
            [("ens1f0".into(), 5, 5), ("ens1f1".into(), 3, 3)]
        );
        // read before at 80000 s: ens1f0 flapped twice since (83100, 83924), ens1f1 three times
        let later = count("n", &e, now.clone(), Some(&mark("b", Some(80000.0))), &nd);
        assert_eq!(
            flaps(&later),
            [("ens1f0".into(), 2, 5), ("ens1f1".into(), 3, 3)]
        );
        // read again at the end: nothing new
        let again = count("n", &e, now.clone(), Some(&now), &nd);
        assert_eq!(
            flaps(&again),
            [("ens1f0".into(), 0, 5), ("ens1f1".into(), 0, 3)]
        );
        // another boot's mark: since this boot
        let reboot = count("n", &e, now, Some(&mark("other", Some(1e9))), &nd);
        assert!(reboot.rebooted);
        assert_eq!(reboot.netdevs[0].flaps, 5);
    }

    #[test]
    fn only_the_nodes_fabric_netdevs_are_counted() {
        let e = log("dmesg-mlx5-lag-flapping-ens1f0-ens1f1.txt");
        let f = count("n", &e, mark("b", None), None, &["ens2f0".to_string()]);
        assert_eq!(flaps(&f), [("ens2f0".into(), 0, 0)]);
    }
}

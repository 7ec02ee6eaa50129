//! `n.ping(ip, opts)`: reachability, loss and round trip of an address (`ping`); the command
//! line and its expected duration are shared with `ping_all`.

use super::tools::{failed, tool};
use super::{check_addr, check_name, parsed, NodeRef, PResult};
use crate::parse;
use crate::util::names::quote;
use serde::Serialize;
use std::time::Duration;

/// Options of `n.ping` (and `n.ping_all`): the script's option keys are these fields.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct PingOpts {
    pub count: Option<i64>,
    /// Seconds to wait for each reply (`-W`).
    pub wait: Option<i64>,
    pub iface: Option<String>,
    pub size: Option<i64>,
    pub dont_fragment: bool,
    pub interval: Option<f64>,
    #[serde(deserialize_with = "crate::util::duration::optional")]
    pub timeout: Option<Duration>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct PingResult {
    #[serde(flatten)]
    pub ping: parse::ping::Ping,
    /// Errors such as "message too long" (MTU) are printed on stderr: kept visible (`()`:
    /// none).
    pub stderr: Option<String>,
}

/// The ping command line for `ip` with options `o` (validated).
pub(crate) fn ping_command(ip: &str, o: &PingOpts) -> PResult<String> {
    check_addr(ip)?;
    let count = o.count.unwrap_or(3).clamp(1, 10_000);
    let mut cmd = format!("ping -n -c {count} -W {}", o.wait.unwrap_or(2).clamp(1, 60));
    // Options in the order of their names (the order recorded transcripts have).
    if o.dont_fragment {
        cmd.push_str(" -M do");
    }
    if let Some(i) = &o.iface {
        check_name("interface", i)?;
        cmd.push_str(&format!(" -I {}", quote(i)));
    }
    if let Some(f) = o.interval {
        cmd.push_str(&format!(" -i {:.3}", f.clamp(0.002, 60.0)));
    }
    if let Some(s) = o.size {
        cmd.push_str(&format!(" -s {}", s.clamp(0, 65507)));
    }
    cmd.push(' ');
    cmd.push_str(&quote(ip));
    Ok(cmd)
}

/// How long a ping with options `o` takes: count × interval (1 s by default) plus the last wait.
pub(crate) fn ping_work(o: &PingOpts) -> Duration {
    Duration::from_secs_f64(
        o.count.unwrap_or(3).clamp(1, 10_000) as f64 * o.interval.unwrap_or(1.0).clamp(0.002, 60.0)
            + o.wait.unwrap_or(2).clamp(1, 60) as f64,
    )
}

/// `n.ping(ip, opts)`: 100 % loss is data (the script asserts on it); an unknown host or a bad
/// option is an error.
pub(crate) fn ping(n: &NodeRef, ip: &str, o: &PingOpts) -> PResult<PingResult> {
    let cmd = ping_command(ip, o)?;
    let o2 = tool(n, "ping", &cmd, o.timeout, Some(ping_work(o)))?;
    if o2.exit_code != Some(0) && o2.exit_code != Some(1) {
        return Err(failed(n, &cmd, &o2));
    }
    let ping = parsed(n.name(), &o2.stdout, parse::ping::parse)?;
    Ok(PingResult {
        ping,
        stderr: Some(o2.stderr.trim().to_string()).filter(|s| !s.is_empty()),
    })
}

crate::impl_shape!(
    PingResult,
    serialised("ping result").flat::<crate::parse::ping::Ping>()
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_command_is_built_from_options() {
        let o = PingOpts {
            count: Some(5),
            iface: Some("enp1s0f1np1".into()),
            size: Some(8972),
            dont_fragment: true,
            interval: Some(0.2),
            ..Default::default()
        };
        assert_eq!(
            ping_command("192.168.100.11", &o).unwrap(),
            "ping -n -c 5 -W 2 -M do -I enp1s0f1np1 -i 0.200 -s 8972 192.168.100.11"
        );
        assert_eq!(
            ping_command("10.0.0.1", &PingOpts::default()).unwrap(),
            "ping -n -c 3 -W 2 10.0.0.1"
        );
        assert!(ping_command("10.0.0.1; reboot", &PingOpts::default()).is_err());
        let bad_iface = PingOpts {
            iface: Some("eth0 -f".into()),
            ..Default::default()
        };
        assert!(ping_command("10.0.0.1", &bad_iface).is_err());
    }
}

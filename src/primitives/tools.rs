//! Node methods that read state through a tool and a parser: `n.ethtool(iface)`,
//! `n.ethtool_driver`, `n.ethtool_stats`, `n.eee`, `n.bond`, `n.addresses`, `n.ibdev2netdev`,
//! `n.rdma_links`, `n.neighbour`, `n.ofed_version`, `n.ping`, `n.file_info`. Arguments are validated and
//! quoted; a missing tool, interface or device is an error naming it and the node.

use super::{check_addr, check_name, parsed, NodeRef, PResult, PrimError};
use crate::parse;
use crate::transport::{CmdOutput, CmdRequest};
use crate::util::names::quote;
use serde::Serialize;
use std::time::Duration;

/// Run a read-only tool command on a node; exit 127 is "tool missing".
pub fn tool(
    n: &NodeRef,
    tool: &str,
    cmd: &str,
    timeout: Option<Duration>,
    work: Option<Duration>,
) -> PResult<CmdOutput> {
    n.env.need_tool(&n.spec, tool);
    let req = CmdRequest {
        command: cmd.to_string(),
        timeout: n.env.command_timeout(&n.spec, timeout, work),
        env: vec![],
        sudo: false,
    };
    // A read-only tool is asked once more when its output did not come back at all, or when
    // it ended well with an empty stdout (these tools always print; SSH multiplexing can lose
    // the end of a command's output under load). Where empty is the real answer (`rdma link`
    // without devices), the second answer is the same.
    let lost = |r: &Result<CmdOutput, crate::transport::TransportError>| match r {
        Err(crate::transport::TransportError::OutputLost { .. }) => true,
        Ok(o) => o.exit_code == Some(0) && o.stdout.is_empty(),
        Err(_) => false,
    };
    let mut r = n.env.exec(&n.spec, &req);
    if lost(&r) {
        r = n.env.exec(&n.spec, &req);
    }
    let o = r?;
    installed(&o, n.name(), tool)?;
    Ok(o)
}

pub fn missing_tool(node: &str, tool: &str) -> PrimError {
    PrimError::error(format!(
        "{node}: `{tool}` is not installed (not on PATH, /usr/sbin or /sbin)"
    ))
}

/// The one exit-127 check: a program that was asked for and is not there is an error naming
/// the program and the node (never a failed measurement).
pub fn installed(o: &CmdOutput, node: &str, program: &str) -> PResult<()> {
    if o.exit_code == Some(127) {
        Err(missing_tool(node, program))
    } else {
        Ok(())
    }
}

/// The reason a tool gave: its first stderr lines (stdout when stderr is empty), up to three
/// joined with " | " (ping says `socktype: SOCK_RAW` first and why on the next lines).
pub fn tool_reason(o: &CmdOutput) -> String {
    let lines = |t: &str| -> Vec<String> {
        t.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(3)
            .map(|l| l.chars().take(200).collect())
            .collect()
    };
    let mut why = lines(&o.stderr);
    if why.is_empty() {
        why = lines(&o.stdout);
    }
    why.join(" | ")
}

fn failed(n: &NodeRef, cmd: &str, o: &CmdOutput) -> PrimError {
    PrimError::error(format!(
        "{}: `{cmd}` failed (exit {}): {}",
        n.name(),
        o.exit_code.unwrap_or(-1),
        tool_reason(o)
    ))
}

/// `ethtool [FLAG] IFACE`, with "interface does not exist" told apart from other failures.
fn ethtool_run(n: &NodeRef, iface: &str, flag: &str) -> PResult<CmdOutput> {
    check_name("interface", iface)?;
    let cmd = if flag.is_empty() {
        format!("ethtool {}", quote(iface))
    } else {
        format!("ethtool {flag} {}", quote(iface))
    };
    let o = tool(n, "ethtool", &cmd, None, None)?;
    if o.exit_code != Some(0) {
        let all = format!("{}\n{}", o.stderr, o.stdout);
        if all.contains("No such device")
            || all.contains("no device matches")
            || all.contains("does not exist")
        {
            return Err(PrimError::error(format!(
                "{}: interface `{iface}` does not exist ({})",
                n.name(),
                tool_reason(&o)
            )));
        }
        return Err(failed(n, &cmd, &o));
    }
    Ok(o)
}

pub fn ethtool(n: &NodeRef, iface: &str) -> PResult<parse::ethtool::Ethtool> {
    let o = ethtool_run(n, iface, "")?;
    parsed(n.name(), &o.stdout, parse::ethtool::parse)
}

pub fn ethtool_driver(n: &NodeRef, iface: &str) -> PResult<parse::ethtool_driver::EthtoolDriver> {
    let o = ethtool_run(n, iface, "-i")?;
    let d = parsed(n.name(), &o.stdout, parse::ethtool_driver::parse)?;
    if let Some(driver) = d.driver.as_deref().filter(|x| !x.is_empty()) {
        let version = format!(
            "{driver} {}, firmware {}",
            d.version.as_deref().unwrap_or_default(),
            d.firmware_version.as_deref().unwrap_or_default()
        );
        crate::run::versions::record(n.name(), &format!("driver/firmware {iface}"), &version);
    }
    Ok(d)
}

pub fn ethtool_stats(n: &NodeRef, iface: &str) -> PResult<parse::ethtool_stats::EthtoolStats> {
    let o = ethtool_run(n, iface, "-S")?;
    parsed(n.name(), &o.stdout, parse::ethtool_stats::parse)
}

/// `ethtool --show-eee`; a device without EEE support at all is `supported: false` (it cannot
/// be enabled or active), with ethtool's line in `error`.
pub fn eee(n: &NodeRef, iface: &str) -> PResult<parse::eee::Eee> {
    check_name("interface", iface)?;
    let cmd = format!("ethtool --show-eee {}", quote(iface));
    let o = tool(n, "ethtool", &cmd, None, None)?;
    if o.exit_code != Some(0) && o.stdout.trim().is_empty() {
        let why = tool_reason(&o);
        if why.contains("Operation not supported") {
            return Ok(parse::eee::Eee {
                interface: Some(iface.to_string()),
                error: Some(why),
                ..Default::default()
            });
        }
        return Err(PrimError::error(format!(
            "{}: `{cmd}` failed: {why}",
            n.name()
        )));
    }
    parsed(n.name(), &o.stdout, parse::eee::parse)
}

/// A tool whose failure with empty stdout is an error, else its stdout is parsed.
pub(super) fn simple<T>(
    n: &NodeRef,
    tool_name: &str,
    cmd: &str,
    f: impl FnOnce(&str) -> Result<T, parse::ParseError>,
) -> PResult<T> {
    let o = tool(n, tool_name, cmd, None, None)?;
    if o.exit_code != Some(0) && o.stdout.trim().is_empty() {
        return Err(failed(n, cmd, &o));
    }
    parsed(n.name(), &o.stdout, f)
}

pub fn bond(n: &NodeRef, name: &str) -> PResult<parse::bonding::Bonding> {
    check_name("bond", name)?;
    let path = format!("/proc/net/bonding/{name}");
    let o = tool(n, "cat", &format!("cat {}", quote(&path)), None, None)?;
    if o.exit_code != Some(0) {
        return Err(PrimError::error(format!(
            "{}: no bond `{name}` ({path}: {})",
            n.name(),
            tool_reason(&o)
        )));
    }
    parsed(n.name(), &o.stdout, parse::bonding::parse)
}

pub fn addresses(n: &NodeRef) -> PResult<Vec<parse::ip_addr::Interface>> {
    simple(n, "ip", "ip -j addr", parse::ip_addr::parse)
}

/// The neighbour entry of `ip` on `iface` (`ip -j neigh show ADDR dev IFACE`): the MAC the
/// address answered from; an empty list when the node has none (never asked, or an address
/// behind a router, whose neighbour is the gateway).
pub fn neighbour(n: &NodeRef, ip: &str, iface: &str) -> PResult<Vec<parse::ip_neigh::Neighbour>> {
    check_addr(ip)?;
    check_name("interface", iface)?;
    let cmd = format!("ip -j neigh show {} dev {}", quote(ip), quote(iface));
    let o = tool(n, "ip", &cmd, None, None)?;
    if o.exit_code != Some(0) {
        return Err(failed(n, &cmd, &o));
    }
    // iproute2 prints `[]` for no entry; an empty answer says the same
    if o.stdout.trim().is_empty() {
        return Ok(vec![]);
    }
    parsed(n.name(), &o.stdout, parse::ip_neigh::parse)
}

pub fn ibdev2netdev(n: &NodeRef) -> PResult<Vec<parse::ibdev2netdev::Mapping>> {
    simple(
        n,
        "ibdev2netdev",
        "ibdev2netdev",
        parse::ibdev2netdev::parse,
    )
}

pub fn rdma_links(n: &NodeRef) -> PResult<Vec<parse::rdma_link::Link>> {
    simple(n, "rdma", "rdma link", parse::rdma_link::parse)
}

pub fn ofed_version(n: &NodeRef) -> PResult<parse::ofed_info::OfedInfo> {
    simple(n, "ofed_info", "ofed_info -s", parse::ofed_info::parse)
}

/// Options of `n.ping`.
#[derive(Debug, Clone, Default)]
pub struct PingOpts {
    pub count: Option<i64>,
    /// Seconds to wait for each reply (`-W`).
    pub wait: Option<i64>,
    pub iface: Option<String>,
    pub size: Option<i64>,
    pub dont_fragment: bool,
    pub interval: Option<f64>,
    pub timeout: Option<Duration>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PingResult {
    #[serde(flatten)]
    pub ping: parse::ping::Ping,
    /// Errors such as "message too long" (MTU) are printed on stderr: kept visible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
}

/// The ping command line for `ip` with options `o` (validated).
pub fn ping_command(ip: &str, o: &PingOpts) -> PResult<String> {
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
pub fn ping_work(o: &PingOpts) -> Duration {
    Duration::from_secs_f64(
        o.count.unwrap_or(3).clamp(1, 10_000) as f64 * o.interval.unwrap_or(1.0).clamp(0.002, 60.0)
            + o.wait.unwrap_or(2).clamp(1, 60) as f64,
    )
}

/// `n.ping(ip, opts)`: 100 % loss is data (the script asserts on it); an unknown host or a bad
/// option is an error.
pub fn ping(n: &NodeRef, ip: &str, o: &PingOpts) -> PResult<PingResult> {
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

#[derive(Debug, Clone, Default, Serialize)]
pub struct FileInfo {
    pub path: String,
    pub owner: String,
    pub group: String,
    /// Octal, 4 digits: `0600`.
    pub mode: String,
    pub size: i64,
    pub sha256: String,
}

/// `n.file_info(path)`; tries `sudo -n` when the file is not readable by the login user
/// (netplan files are root:root 0600).
pub fn file_info(n: &NodeRef, path: &str) -> PResult<FileInfo> {
    if path.is_empty() || path.contains('\0') || path.contains('\n') {
        return Err(PrimError::error(format!("refused path {path:?}")));
    }
    let q = quote(path);
    let cmd = format!("stat -c '%U %G %a %s' -- {q} && sha256sum -- {q}");
    let mut o = tool(n, "stat", &cmd, None, None)?;
    if o.exit_code != Some(0) && o.stderr.contains("Permission denied") {
        let req = CmdRequest {
            command: cmd.clone(),
            timeout: n.env.command_timeout(&n.spec, None, None),
            env: vec![],
            sudo: true,
        };
        o = n.env.exec(&n.spec, &req)?;
    }
    if o.exit_code != Some(0) {
        return Err(PrimError::error(format!(
            "{}: cannot read {path}: {}",
            n.name(),
            tool_reason(&o)
        )));
    }
    let mut lines = o.stdout.lines();
    let st: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let sha = lines
        .next()
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("");
    if st.len() != 4 || sha.len() != 64 {
        return Err(PrimError::error_with(
            format!("{}: unexpected stat/sha256sum output for {path}", n.name()),
            o.stdout.clone(),
        ));
    }
    Ok(FileInfo {
        path: path.to_string(),
        owner: st[0].to_string(),
        group: st[1].to_string(),
        mode: format!("{:0>4}", st[2]),
        size: st[3].parse::<i64>().unwrap_or(-1),
        sha256: sha.to_string(),
    })
}

/// The shell line of `n.which`: `command -v` (PATH; fabcheck's commands also have /usr/sbin
/// and /sbin on it), else the first of `dirs` where the program is executable (`~/` is the
/// login user's home).
pub fn which_command(program: &str, dirs: &[String]) -> PResult<String> {
    super::check_program(program)?;
    let mut ds = Vec::new();
    for d in dirs {
        let rest = d.strip_prefix("~/");
        let path = rest.unwrap_or(d);
        if !crate::util::names::valid_program(path) {
            return Err(PrimError::error(format!(
                "refused directory {d:?}: a path of letters, digits and - _ . / +"
            )));
        }
        ds.push(match rest {
            Some(r) => format!("\"$HOME/{r}\""),
            None => d.clone(),
        });
    }
    let q = format!("'{program}'");
    if ds.is_empty() {
        return Ok(format!("command -v {q}"));
    }
    Ok(format!(
        "command -v {q} || {{ for d in {}; do [ -x \"$d\"/{q} ] && echo \"$d\"/{q} && break; done; }}",
        ds.join(" ")
    ))
}

/// `n.which(program, dirs)`: where `program` is on the node (see [`which_command`]), or ""
/// when it is nowhere. A read-only lookup, so it runs in a dry run too (the path decides the
/// command lines listed); a program not found there is noted for the dry run's preflight.
pub fn which(n: &NodeRef, program: &str, dirs: &[String]) -> PResult<String> {
    let req = CmdRequest {
        command: which_command(program, dirs)?,
        timeout: n.env.command_timeout(&n.spec, None, None),
        env: vec![],
        sudo: false,
    };
    let o = n.env.exec_lookup(&n.spec, &req)?;
    let path = o
        .stdout
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("");
    if path.is_empty() {
        n.env.need_tool(&n.spec, program);
    }
    Ok(path.to_string())
}

/// `n.read_text(path)`: a text file's content (`cat -- PATH`). A read-only lookup, so it runs
/// in a dry run too (a recipe's settings decide the launch the dry run lists); a file that
/// cannot be read is an error naming node, path and cat's words.
pub fn read_text(n: &NodeRef, path: &str) -> PResult<String> {
    if path.trim().is_empty() || path.contains(['\0', '\n']) {
        return Err(PrimError::error(format!(
            "read_text: refused path {path:?}: give the file's path on the node"
        )));
    }
    let req = CmdRequest {
        command: format!("cat -- {}", quote(path)),
        timeout: n.env.command_timeout(&n.spec, None, None),
        env: vec![],
        sudo: false,
    };
    let o = n.env.exec_lookup(&n.spec, &req)?;
    if o.exit_code != Some(0) {
        return Err(PrimError::error(format!(
            "{}: cannot read {path}: {} (exit {}); give a readable file's path",
            n.name(),
            o.stderr.trim(),
            o.exit_code.map_or("none".into(), |c| c.to_string())
        )));
    }
    Ok(o.stdout)
}

/// `n.needs(programs)`: the programs a check will run on the node, declared for `--dry-run`'s
/// preflight (which then looks for them even where the listing stops before their commands).
/// Outside a dry run it does nothing: each command still says for itself when its program is
/// missing.
pub fn needs(n: &NodeRef, programs: &[String]) -> PResult<()> {
    for p in programs {
        super::check_program(p)?;
    }
    for p in programs {
        n.env.need_tool(&n.spec, p);
    }
    Ok(())
}

/// `n.mgmt_address()`: the address fabcheck's own SSH connection to the node really reached (the
/// server side of `$SSH_CONNECTION` on the node), so that peers are sent to an address that works
/// without name resolution. The inventory `host` for local and replayed nodes, or when the
/// node does not say.
pub fn mgmt_address(n: &NodeRef) -> PResult<String> {
    use crate::inventory::TransportKind;
    let kind = n.env.transports.force.as_ref().unwrap_or(&n.spec.transport);
    if !matches!(kind, TransportKind::Ssh) {
        return Ok(n.spec.host.clone());
    }
    let req = CmdRequest {
        command: "printf '%s\\n' \"${SSH_CONNECTION:-}\"".into(),
        timeout: n.env.command_timeout(&n.spec, None, None),
        env: vec![],
        sudo: false,
    };
    let o = n.env.exec(&n.spec, &req)?;
    Ok(o.stdout
        .split_whitespace()
        .nth(2)
        .filter(|a| a.parse::<std::net::IpAddr>().is_ok())
        .map(str::to_string)
        .unwrap_or_else(|| n.spec.host.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_looks_on_path_then_in_the_given_directories() {
        let dirs: Vec<String> = ["/usr/local/bin", "/usr/bin", "~/nccl-tests/build"]
            .map(String::from)
            .to_vec();
        // The line the simulation's transcripts (and nccl.rhai before n.which) send.
        assert_eq!(
            which_command("all_reduce_perf", &dirs).unwrap(),
            r#"command -v 'all_reduce_perf' || { for d in /usr/local/bin /usr/bin "$HOME/nccl-tests/build"; do [ -x "$d"/'all_reduce_perf' ] && echo "$d"/'all_reduce_perf' && break; done; }"#
        );
        assert_eq!(which_command("mpirun", &[]).unwrap(), "command -v 'mpirun'");
        assert!(which_command("x;reboot", &[]).is_err());
        assert!(which_command("x", &["/opt/$(reboot)".into()]).is_err());
    }

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

//! What every tool primitive shares (`tool`: one read-only command with the one exit-127
//! check and a retry of lost output; `as_root`; `tool_reason`), and the node methods that are
//! no one tool's: `n.file_info`, `n.which`, `n.read_text`, `n.needs`, `n.mgmt_address`,
//! `n.package_version`. A tool with a parser has its own file (`primitives/X.rs` for
//! `parse/X.rs`). Arguments are validated and quoted; a missing tool, interface or device is an
//! error naming it and the node.

use super::{check_name, parsed, NodeRef, PResult, PrimError};
use crate::parse;
use crate::run::context::Kept;
use crate::transport::{CmdOutput, CmdRequest};
use crate::util::names::quote;
use serde::Serialize;
use std::time::Duration;

/// Run a read-only tool command on a node; exit 127 is "tool missing".
pub(crate) fn tool(
    n: &NodeRef,
    tool: &str,
    cmd: &str,
    timeout: Option<Duration>,
    work: Option<Duration>,
) -> PResult<CmdOutput> {
    n.need_tool(tool);
    let req = CmdRequest {
        command: cmd.to_string(),
        timeout: n.command_timeout(timeout, work),
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
    let mut r = n.exec(&req);
    if lost(&r) {
        r = n.exec(&req);
    }
    let o = r?;
    if let Err(e) = installed(&o, n.name(), tool) {
        n.keep(Kept::Subject(crate::run::model::Subject {
            part: Some(format!(
                "{}: `{tool}` not installed (or not on the login user's PATH)",
                n.name()
            )),
            ..crate::run::model::Subject::new(crate::run::model::Finding::Other, n.name())
        }));
        return Err(e);
    }
    Ok(o)
}

pub(crate) fn missing_tool(node: &str, tool: &str) -> PrimError {
    PrimError::error(format!(
        "{node}: `{tool}` is not installed (not on PATH, /usr/sbin or /sbin)"
    ))
}

/// The one exit-127 check: a program that was asked for and is not there is an error naming
/// the program and the node (never a failed measurement).
pub(crate) fn installed(o: &CmdOutput, node: &str, program: &str) -> PResult<()> {
    if o.exit_code == Some(127) {
        Err(missing_tool(node, program))
    } else {
        Ok(())
    }
}

/// The reason a tool gave: its first stderr lines (stdout when stderr is empty), up to three
/// joined with " | " (ping says `socktype: SOCK_RAW` first and why on the next lines).
pub(crate) fn tool_reason(o: &CmdOutput) -> String {
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

pub(super) fn failed(n: &NodeRef, cmd: &str, o: &CmdOutput) -> PrimError {
    PrimError::error(format!(
        "{}: `{cmd}` failed (exit {}): {}",
        n.name(),
        o.exit_code.unwrap_or(-1),
        tool_reason(o)
    ))
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

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct FileInfo {
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
pub(crate) fn file_info(n: &NodeRef, path: &str) -> PResult<FileInfo> {
    if path.is_empty() || path.contains('\0') || path.contains('\n') {
        return Err(PrimError::error(format!("refused path {path:?}")));
    }
    let q = quote(path);
    let cmd = format!("stat -c '%U %G %a %s' -- {q} && sha256sum -- {q}");
    let mut o = tool(n, "stat", &cmd, None, None)?;
    if o.exit_code != Some(0) && o.stderr.contains("Permission denied") {
        let req = CmdRequest {
            command: cmd.clone(),
            timeout: n.command_timeout(None, None),
            env: vec![],
            sudo: true,
        };
        o = n.exec(&req)?;
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
pub(crate) fn which_command(program: &str, dirs: &[String]) -> PResult<String> {
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
pub(crate) fn which(n: &NodeRef, program: &str, dirs: &[String]) -> PResult<String> {
    let req = CmdRequest {
        command: which_command(program, dirs)?,
        timeout: n.command_timeout(None, None),
        env: vec![],
        sudo: false,
    };
    let o = n.exec_lookup(&req)?;
    let path = o
        .stdout
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("");
    if path.is_empty() {
        n.need_tool(program);
    }
    Ok(path.to_string())
}

/// `n.read_text(path)`: a text file's content (`cat -- PATH`). A read-only lookup, so it runs
/// in a dry run too (a recipe's settings decide the launch the dry run lists); a file that
/// cannot be read is an error naming node, path and cat's words.
pub(crate) fn read_text(n: &NodeRef, path: &str) -> PResult<String> {
    if path.trim().is_empty() || path.contains(['\0', '\n']) {
        return Err(PrimError::error(format!(
            "read_text: refused path {path:?}: give the file's path on the node"
        )));
    }
    let req = CmdRequest {
        command: format!("cat -- {}", quote(path)),
        timeout: n.command_timeout(None, None),
        env: vec![],
        sudo: false,
    };
    let o = n.exec_lookup(&req)?;
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
pub(crate) fn needs(n: &NodeRef, programs: &[String]) -> PResult<()> {
    for p in programs {
        super::check_program(p)?;
    }
    for p in programs {
        n.need_tool(p);
    }
    Ok(())
}

/// `n.mgmt_address()`: the address fabcheck's own SSH connection to the node really reached (the
/// server side of `$SSH_CONNECTION` on the node), so that peers are sent to an address that works
/// without name resolution. The inventory `host` for local and replayed nodes, or when the
/// node does not say.
pub(crate) fn mgmt_address(n: &NodeRef) -> PResult<String> {
    use crate::inventory::TransportKind;
    let kind = n.env.transports.force.as_ref().unwrap_or(&n.spec.transport);
    if !matches!(kind, TransportKind::Ssh) {
        return Ok(n.spec.host.clone());
    }
    let req = CmdRequest {
        command: "printf '%s\\n' \"${SSH_CONNECTION:-}\"".into(),
        timeout: n.command_timeout(None, None),
        env: vec![],
        sudo: false,
    };
    let o = n.exec(&req)?;
    Ok(o.stdout
        .split_whitespace()
        .nth(2)
        .filter(|a| a.parse::<std::net::IpAddr>().is_ok())
        .map(str::to_string)
        .unwrap_or_else(|| n.spec.host.clone()))
}

/// A read-only tool run as root (`sudo -n`: lspci hides LnkCap, ethtool -m and mlnx_qos need
/// root); missing is an error naming it, a failure with nothing printed an error with its
/// reason.
pub(super) fn as_root(
    n: &NodeRef,
    program: &str,
    cmd: &str,
) -> PResult<crate::transport::CmdOutput> {
    n.need_tool(program);
    let req = crate::transport::CmdRequest {
        command: cmd.to_string(),
        timeout: n.command_timeout(None, None),
        env: vec![],
        sudo: true,
    };
    let o = n.exec(&req)?;
    installed(&o, n.name(), program)?;
    if o.exit_code != Some(0) || o.stdout.trim().is_empty() {
        return Err(failed(n, cmd, &o));
    }
    Ok(o)
}

/// `n.package_version(name)`: the installed version of Debian package `name` (`dpkg-query -W
/// -f='${Version}' NAME`, read-only), `None` when the package is not installed. A node without
/// dpkg-query (not Debian/Ubuntu) is an error naming it.
pub(crate) fn package_version(n: &NodeRef, name: &str) -> PResult<Option<String>> {
    check_name("package", name)?;
    let cmd = format!("dpkg-query -W -f='${{Version}}' {}", quote(name));
    let o = tool(n, "dpkg-query", &cmd, None, None)?;
    let v = o.stdout.trim();
    if o.exit_code == Some(0) && !v.is_empty() {
        // The reports' tool versions table shows it (package name as the tool), read from the
        // command's log by `run::versions::seen_in`.
        return Ok(Some(v.to_string()));
    }
    if o.stderr.contains("no packages found") || o.exit_code == Some(0) {
        return Ok(None);
    }
    Err(failed(n, &cmd, &o))
}

crate::impl_shape!(FileInfo, serialised("file_info result"));

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
}

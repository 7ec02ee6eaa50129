//! `n.ping_all(targets, opts)`: several pings from one node at once, in ONE remote command.
//! Each address gets the ping command of `n.ping` (same options, same parser); they run
//! concurrently under one POSIX shell, each writing its stdout, stderr and exit status to a
//! private temporary directory, which the shell prints in order, each part under a delimiter
//! line, and removes on exit (also when the command's timeout ends it: the shell traps TERM,
//! and `timeout` signals the whole process group, pings included).

use super::ping::{ping_command, ping_work, PingOpts, PingResult};
use super::tools::{installed, tool, tool_reason};
use super::{parsed, NodeRef, PResult, PrimError};
use crate::parse;
use serde::Serialize;

/// Start of every delimiter line (never in ping's own output).
const MARK: &str = "@@fabcheck-ping";

/// One address to ping, with its own source interface and size where given.
#[derive(Debug, Clone, Default)]
pub(crate) struct Target {
    pub ip: String,
    pub iface: Option<String>,
    pub size: Option<i64>,
    /// This target's count and don't-fragment, where they differ from the call's options (a
    /// mesh's pings and its jumbo don't-fragment pings in one command).
    pub count: Option<i64>,
    pub dont_fragment: Option<bool>,
}

/// One address's answer: the ping result of `n.ping`, with the address and interface.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct AddressPing {
    pub ip: String,
    pub iface: Option<String>,
    #[serde(flatten)]
    pub result: PingResult,
}

/// The ping options of one target: `o` with the target's interface and size.
fn target_opts(t: &Target, o: &PingOpts) -> PingOpts {
    PingOpts {
        iface: t.iface.clone().or_else(|| o.iface.clone()),
        size: t.size.or(o.size),
        count: t.count.or(o.count),
        dont_fragment: t.dont_fragment.unwrap_or(o.dont_fragment),
        ..o.clone()
    }
}

/// The one command that runs `cmds` at once and prints their answers in order.
pub(crate) fn command(cmds: &[String]) -> String {
    let mut s = String::from(
        "d=$(mktemp -d) || exit 125; trap 'rm -rf -- \"$d\"' EXIT; trap 'exit 143' HUP INT TERM; ",
    );
    for (i, c) in cmds.iter().enumerate() {
        let k = i + 1;
        s.push_str(&format!(
            "{{ {c} >\"$d/{k}\" 2>\"$d/{k}e\"; echo $? >\"$d/{k}x\"; }} & "
        ));
    }
    let ks: Vec<String> = (1..=cmds.len()).map(|k| k.to_string()).collect();
    // Until every ping has ended, a dot on stderr every 0.2 s: the transport takes a command
    // silent for 2 s for one that left something holding its output, and asks for its exit
    // early, which can cut off the end of its output (see transport/ssh/exec.rs).
    let done: Vec<String> = ks.iter().map(|k| format!("[ -e \"$d/{k}x\" ]")).collect();
    s.push_str(&format!(
        "until {}; do sleep 0.2; printf . >&2; done; \
         wait; for i in {}; do printf '{MARK} %s exit %s\\n' \"$i\" \"$(cat \"$d/${{i}}x\" 2>/dev/null)\"; \
         cat \"$d/$i\"; printf '{MARK} %s stderr\\n' \"$i\"; cat \"$d/${{i}}e\"; done; printf '{MARK} end\\n'",
        done.join(" && "),
        ks.join(" ")
    ));
    s
}

/// One ping's part of the output.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Part {
    pub exit: Option<i64>,
    pub stdout: String,
    pub stderr: String,
}

/// Split the output of [`command`] for `n` pings; a part or the end that did not come back is
/// an error saying which.
pub(crate) fn split(out: &str, n: usize) -> Result<Vec<Part>, SplitError> {
    let mut parts: Vec<Part> = Vec::new();
    let mut rest = out;
    // Text before the first delimiter belongs to nobody (there is none from the shell).
    let mut into: Option<(usize, bool)> = None; // (part index, stderr?)
    let mut ended = false;
    while !rest.is_empty() && !ended {
        let (text, line, next) = match rest.find(MARK) {
            Some(i) => {
                let end = rest[i..]
                    .find('\n')
                    .map(|j| i + j + 1)
                    .unwrap_or(rest.len());
                (
                    &rest[..i],
                    Some(rest[i + MARK.len()..end].trim()),
                    &rest[end..],
                )
            }
            None => (rest, None, ""),
        };
        if let Some((k, err)) = into {
            let p = &mut parts[k];
            if err {
                p.stderr.push_str(text)
            } else {
                p.stdout.push_str(text)
            }
        }
        match line.map(|l| l.split_whitespace().collect::<Vec<_>>()) {
            Some(w) if w == ["end"] => ended = true,
            Some(w) if w.len() >= 2 && w[1] == "exit" => {
                let k = parts.len();
                if w[0] != (k + 1).to_string() {
                    return Err(SplitError::OutOfOrder {
                        came: w[0].to_string(),
                        due: k + 1,
                    });
                }
                parts.push(Part {
                    exit: w.get(2).and_then(|x| x.parse().ok()),
                    ..Part::default()
                });
                into = Some((k, false));
            }
            Some(w) if w.len() == 2 && w[1] == "stderr" && into.is_some() => {
                into = Some((parts.len() - 1, true));
            }
            Some(w) => return Err(SplitError::Delimiter(w.join(" "))),
            None => {}
        }
        rest = next;
    }
    if parts.len() != n || !ended {
        return Err(SplitError::Missing {
            came: parts.len(),
            of: n,
            ended,
        });
    }
    Ok(parts)
}

/// What of the pings' answers did not come back as [`command`] prints them.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SplitError {
    #[error("ping {came} came where ping {due} was due")]
    OutOfOrder { came: String, due: usize },
    #[error("unexpected delimiter `{MARK} {0}`")]
    Delimiter(String),
    #[error("the answers of {came} of {of} pings came back{}", if *ended { "" } else { ", without the end line" })]
    Missing { came: usize, of: usize, ended: bool },
}

/// `n.ping_all(targets, opts)`: every target pinged at once from `n`; a result per target, in
/// order. Loss is data, as with `n.ping`; a ping that could not run is an error naming it.
pub(crate) fn ping_all(n: &NodeRef, targets: &[Target], o: &PingOpts) -> PResult<Vec<AddressPing>> {
    if targets.is_empty() {
        return Ok(vec![]);
    }
    let cmds = targets
        .iter()
        .map(|t| ping_command(&t.ip, &target_opts(t, o)))
        .collect::<PResult<Vec<String>>>()?;
    let cmd = command(&cmds);
    // They run at once: the command takes as long as the longest of them. An answer whose end
    // did not come back (SSH multiplexing lost it) is asked once more, as `tool` does.
    let work = targets
        .iter()
        .map(|t| ping_work(&target_opts(t, o)))
        .max()
        .unwrap_or_else(|| ping_work(o));
    let mut out = tool(n, "ping", &cmd, o.timeout, Some(work))?;
    if out.exit_code == Some(0) && split(&out.stdout, cmds.len()).is_err() {
        out = tool(n, "ping", &cmd, o.timeout, Some(work))?;
    }
    if out.exit_code != Some(0) {
        return Err(PrimError::error(format!(
            "{}: {} pings at once failed (exit {}): {}",
            n.name(),
            cmds.len(),
            out.exit_code.unwrap_or(-1),
            tool_reason(&out)
        )));
    }
    let parts = split(&out.stdout, cmds.len()).map_err(|e| {
        PrimError::error_with(
            format!("{}: {} pings at once: {e}", n.name(), cmds.len()),
            out.stdout.clone(),
        )
    })?;
    let mut res = Vec::with_capacity(parts.len());
    for ((t, c), p) in targets.iter().zip(&cmds).zip(parts) {
        res.push(one(n, &target_opts(t, o), &t.ip, c, p)?);
    }
    Ok(res)
}

/// One target's answer, judged as `n.ping` judges its own.
fn one(n: &NodeRef, o: &PingOpts, ip: &str, cmd: &str, p: Part) -> PResult<AddressPing> {
    let as_output = crate::transport::CmdOutput {
        notices: Vec::new(),
        stdout: p.stdout,
        stderr: p.stderr,
        exit_code: p.exit,
        ..Default::default()
    };
    installed(&as_output, n.name(), "ping")?;
    if p.exit != Some(0) && p.exit != Some(1) {
        return Err(PrimError::error(format!(
            "{}: `{cmd}` failed (exit {}): {}",
            n.name(),
            p.exit
                .map(|x| x.to_string())
                .unwrap_or_else(|| "unknown".into()),
            tool_reason(&as_output)
        )));
    }
    let ping = parsed(n.name(), &as_output.stdout, parse::ping::parse)?;
    Ok(AddressPing {
        ip: ip.to_string(),
        iface: o.iface.clone(),
        result: PingResult {
            ping,
            stderr: Some(as_output.stderr.trim().to_string()).filter(|s| !s.is_empty()),
        },
    })
}

crate::impl_shape!(
    AddressPing,
    serialised("ping_all result").flat::<crate::parse::ping::Ping>()
);

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// An empty directory of this test's own.
    fn tmpdir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("fc-ping-all-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Run `command(cmds)` under sh with TMPDIR `tmp` (and `timeout SECS` when given).
    fn run(cmds: &[&str], tmp: &std::path::Path, secs: Option<&str>) -> std::process::Output {
        let cmds: Vec<String> = cmds.iter().map(|c| c.to_string()).collect();
        let mut c = match secs {
            Some(s) => {
                let mut c = Command::new("timeout");
                c.args([s, "sh", "-c", &command(&cmds)]);
                c
            }
            None => {
                let mut c = Command::new("sh");
                c.args(["-c", &command(&cmds)]);
                c
            }
        };
        c.env("TMPDIR", tmp).output().unwrap()
    }

    #[test]
    fn each_answer_comes_back_whole_in_order_and_the_temporary_files_go() {
        let tmp = tmpdir("order");
        // The second ends first: the order is the targets', not the finishing order.
        let o = run(
            &[
                "sh -c 'sleep 0.3; printf \"one\\ntwo\\n\"; echo warn >&2; exit 1'",
                "sh -c 'printf \"no newline at the end\"; exit 2'",
                "sh -c 'exit 127'",
            ],
            &tmp,
            None,
        );
        assert_eq!(o.status.code(), Some(0));
        let parts = split(&String::from_utf8_lossy(&o.stdout), 3).unwrap();
        assert_eq!(
            parts[0],
            Part {
                exit: Some(1),
                stdout: "one\ntwo\n".into(),
                stderr: "warn\n".into()
            }
        );
        assert_eq!(parts[1].exit, Some(2));
        assert_eq!(parts[1].stdout, "no newline at the end");
        assert_eq!(parts[2].exit, Some(127));
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
        std::fs::remove_dir(&tmp).unwrap();
    }

    #[test]
    fn a_timeout_ends_every_ping_and_removes_the_temporary_files() {
        let tmp = tmpdir("timeout");
        // sleeps of this process's own (another test run on the machine sleeps its own)
        let id = std::process::id();
        let (a, b) = (format!("sleep 30.{id}"), format!("sleep 31.{id}"));
        let o = run(&[&a, &b], &tmp, Some("0.5"));
        assert_eq!(o.status.code(), Some(124));
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
        // the timeout's kill is sent; the processes end as the scheduler lets them (a busy CI
        // machine): wait for them to be gone, bounded, never a fixed sleep
        let left = || {
            Command::new("pgrep")
                .args(["-f", &format!("^sleep 3[01]\\.{id}$")])
                .output()
                .unwrap()
        };
        let start = std::time::Instant::now();
        while !left().stdout.is_empty() && start.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let l = left();
        assert!(
            l.stdout.is_empty(),
            "left running 20 s after the timeout: {:?}",
            l
        );
        std::fs::remove_dir(&tmp).unwrap();
    }

    #[test]
    fn an_answer_that_did_not_come_back_is_named() {
        let full = "@@fabcheck-ping 1 exit 0\nPING\n@@fabcheck-ping 1 stderr\n@@fabcheck-ping 2 exit 1\nx\n@@fabcheck-ping 2 stderr\n@@fabcheck-ping end\n";
        assert_eq!(split(full, 2).unwrap().len(), 2);
        let cut = &full[..full.find("@@fabcheck-ping 2").unwrap()];
        let e = split(cut, 2).unwrap_err().to_string();
        assert!(
            e.contains("1 of 2 pings") && e.contains("without the end line"),
            "{e}"
        );
        let e = split(&full.replace("ping 2 exit", "ping 3 exit"), 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("ping 3 came where ping 2 was due"), "{e}");
    }

    #[test]
    fn each_target_gets_the_ping_command_of_n_ping() {
        let o = PingOpts {
            count: Some(5),
            iface: Some("eth0".into()),
            ..PingOpts::default()
        };
        let t = Target {
            ip: "10.0.0.2".into(),
            iface: Some("eth1".into()),
            size: Some(8972),
            ..Target::default()
        };
        let c = ping_command(&t.ip, &target_opts(&t, &o)).unwrap();
        assert_eq!(c, "ping -n -c 5 -W 2 -I eth1 -s 8972 10.0.0.2");
        // a jumbo don't-fragment ping with its own count, beside the call's plain pings
        let jumbo = Target {
            count: Some(3),
            dont_fragment: Some(true),
            ..t.clone()
        };
        assert_eq!(
            ping_command(&jumbo.ip, &target_opts(&jumbo, &o)).unwrap(),
            "ping -n -c 3 -W 2 -M do -I eth1 -s 8972 10.0.0.2"
        );
        let plain = Target {
            ip: "10.0.0.3".into(),
            ..Target::default()
        };
        assert!(ping_command(&plain.ip, &target_opts(&plain, &o))
            .unwrap()
            .contains("-I eth0 "));
        assert!(command(std::slice::from_ref(&c)).contains(&format!("{{ {c} >\"$d/1\"")));
    }
}

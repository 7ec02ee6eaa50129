//! How commands reach nodes: `ssh` (OpenSSH, multiplexed), `local` (this machine), `replay`
//! (recorded transcripts); `record` wraps any of them and saves every command.

pub(crate) mod cancel;
pub(crate) mod capture;
pub(crate) mod leftovers;
pub(crate) mod local;
pub(crate) mod preamble;
pub(crate) mod recorder;
pub(crate) mod replay;
pub(crate) mod ssh;

use crate::inventory::Node;
pub(crate) use capture::Stream;
use std::time::Duration;

/// A command to run on a node. `command` is a shell command line (run by `sh -c`).
#[derive(Debug, Clone, Default)]
pub struct CmdRequest {
    pub command: String,
    pub timeout: Duration,
    pub env: Vec<(String, String)>,
    pub sudo: bool,
}

#[derive(Debug, Clone, Default)]
pub struct CmdOutput {
    pub stdout: String,
    pub stderr: String,
    /// None when the process was killed by a signal.
    pub exit_code: Option<i64>,
    pub duration: Duration,
    /// What the transport has to tell about reaching the node for this command (a changed host
    /// key that `known_hosts = "off"` accepted, a login shell that prints): the run tells the
    /// console and, for the kinds that belong there, the reports (see [`Notice`]).
    pub notices: Vec<Notice>,
}

/// Something the transport met on the way to a node that the person running fabcheck should
/// know, returned with the output of the command that met it: the transports sit below `run`
/// and tell nobody themselves (`RunEnv` tells the console once per kind and run, and `-v`
/// every node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub kind: NoticeKind,
    /// The whole message, beginning `NODE: `.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoticeKind {
    /// `known_hosts = "off"` accepted a host key that differs from the known one: a warning of
    /// the test whose command connected, too.
    ChangedHostKey,
    /// The node's login shell prints before every command (set aside, not taken as output):
    /// about the node's dotfiles, not any test, so the console only.
    NoisyShell,
    /// `--persist` could not keep the node's master (its directory is not the user's, or open
    /// to others): this run's own master instead; the console only.
    NotKept,
}

impl NoticeKind {
    /// Whether the reports keep it (as a warning of the test whose command met it).
    pub fn for_reports(self) -> bool {
        matches!(self, NoticeKind::ChangedHostKey)
    }
}

/// The connection errors of a node that was never reached, as their messages begin after
/// `NODE: ` (see [`TransportError`]'s `Unreachable`, `Auth` and `HostKey`).
const NOT_REACHED: [&str; 3] = [
    "cannot connect to ",
    "authentication failed for ",
    "host key verification failed for ",
];

/// In a testcase message, the error of a node that was never reached: `(node, reason)`, the
/// reason on one line (`cannot connect to HOST: CAUSE`). None for any other message.
pub(crate) fn not_reached(message: &str) -> Option<(String, String)> {
    NOT_REACHED.iter().find_map(|kind| {
        let at = message.find(&format!(": {kind}"))?;
        let before = &message[..at];
        let start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
            .map_or(0, |i| i + 1);
        let node = &before[start..];
        let reason = message[at + 2..].lines().next().unwrap_or_default().trim();
        (!node.is_empty()).then(|| (node.to_string(), reason.to_string()))
    })
}

/// The last part of a connection error's reason (`Connection refused`, `Permission denied
/// (publickey)`), for a testcase's short message.
pub(crate) fn reason_gist(reason: &str) -> &str {
    reason.rsplit(": ").next().unwrap_or(reason).trim()
}

/// Infrastructure problems: the check could not be made (an `error` outcome, never a failure).
#[derive(Debug, Clone, thiserror::Error)]
pub enum TransportError {
    #[error("{node}: cannot connect to {host}: {cause}")]
    Unreachable {
        node: String,
        host: String,
        cause: String,
    },
    #[error("{node}: authentication failed for {user}@{host}: {cause}")]
    Auth {
        node: String,
        host: String,
        user: String,
        cause: String,
    },
    #[error("{node}: host key verification failed for {host}: {cause}")]
    HostKey {
        node: String,
        host: String,
        cause: String,
    },
    #[error("{node}: connection lost while running `{command}`: {cause}")]
    Dropped {
        node: String,
        command: String,
        cause: String,
    },
    /// `ended`: what the command had left running outside its process group, ended too (see
    /// [`leftovers::ended_note`]); empty when nothing. `printed`: what the command printed
    /// until it was killed (capped head and tail, no exit code) and how long it really ran:
    /// often the one line that explains the hang (`srun: job 8 queued and waiting for
    /// resources`). Build it with [`TransportError::timed_out`].
    #[error("{node}: `{command}` timed out after {timeout}; it was killed on the node{ended}{}", last_words(.printed))]
    Timeout {
        node: String,
        command: String,
        timeout: String,
        ended: String,
        printed: Box<CmdOutput>,
    },
    /// The deadline passed and not even the start line every wrapped command prints first had
    /// come back: the node never showed that it started the command (its sshd stopped or
    /// hung), so nothing is known to have run there, nor to have been killed.
    #[error("{node}: `{command}` got no answer within {timeout}: the node never showed that it started the command (is its sshd stopped or hung?); it may not have run there, and nothing was killed there")]
    NoAnswer {
        node: String,
        command: String,
        timeout: String,
    },
    /// As [`TransportError::NoAnswer`], but the node did answer: its login shell printed
    /// over [`preamble::MAX_PREAMBLE`] (`printed`, in words) without ever starting the command.
    #[error("{node}: `{command}` got no answer within {timeout}: the login shell printed {printed} and never started the command (its start-up files print without end: make ~/.bashrc or /etc/profile.d quiet for non-interactive logins); it may not have run there, and nothing was killed there")]
    ShellFlood {
        node: String,
        command: String,
        timeout: String,
        printed: String,
    },
    #[error("{node}: interrupted")]
    Interrupted { node: String },
    /// Not even the start line every wrapped command prints first came back: the output was
    /// lost on the way, or the node ran something else (a ForceCommand).
    #[error("{node}: `{command}`: no output came back, not even the line fabcheck prints before every command: it was lost on the way (SSH multiplexing under load) or the node did not run the command (a ForceCommand in its sshd_config?)")]
    OutputLost { node: String, command: String },
    #[error("{node}: {message}")]
    Other { node: String, message: String },
    /// `--dry-run`: the command was listed, not sent; there is no answer.
    #[error("{node}: `{command}`: listed, not run (dry run)")]
    NotRun { node: String, command: String },
}

impl TransportError {
    /// `req` on `node` ran into its timeout after printing `stdout`/`stderr` in `ran`.
    pub fn timed_out(
        node: &str,
        req: &CmdRequest,
        stdout: String,
        stderr: String,
        ran: Duration,
    ) -> TransportError {
        TransportError::Timeout {
            node: node.to_string(),
            command: req.command.clone(),
            timeout: human(req.timeout),
            ended: String::new(),
            printed: Box::new(CmdOutput {
                notices: Vec::new(),
                stdout,
                stderr,
                exit_code: None,
                duration: ran,
            }),
        }
    }

    /// A timeout with what the command left running noted (`note`, see
    /// [`leftovers::ended_note`]); any other error as it is.
    pub fn with_ended(self, note: impl FnOnce() -> String) -> TransportError {
        match self {
            TransportError::Timeout {
                node,
                command,
                timeout,
                printed,
                ..
            } => TransportError::Timeout {
                ended: note(),
                node,
                command,
                timeout,
                printed,
            },
            e => e,
        }
    }
}

/// How many of a timed-out command's last output lines its error message quotes.
const LAST_LINES: usize = 3;

/// The end of a timed-out command's message: how long it ran and the last lines it printed
/// (stderr first: where a hang is explained), or that it printed nothing.
fn last_words(printed: &CmdOutput) -> String {
    let lines = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| crate::util::fmt::clean_text(l.trim_end()))
            .filter(|l| !l.trim().is_empty())
            .collect()
    };
    let (err, out) = (lines(&printed.stderr), lines(&printed.stdout));
    let (which, last) = if !err.is_empty() {
        ("stderr", err)
    } else {
        ("stdout", out)
    };
    let ran = human(printed.duration);
    if last.is_empty() {
        return format!(" (it ran {ran} and printed nothing)");
    }
    let tail = &last[last.len().saturating_sub(LAST_LINES)..];
    format!(" (it ran {ran}); last {which}: {}", tail.join(" | "))
}

/// Something that runs commands on nodes. Implementations bound every command by
/// `req.timeout` on the node itself and leave nothing running after a timeout or interrupt.
pub trait Transport: Send + Sync {
    fn run(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError>;
    /// `run`, with every chunk of output also handed to `sink` as it arrives (whole, never
    /// capped: `--record` writes it to files). `stdout`/`stderr` of the result are capped to
    /// a head and a tail ([`capture`]). The default feeds the finished output.
    fn run_streaming(
        &self,
        node: &Node,
        req: &CmdRequest,
        sink: &mut dyn FnMut(Stream, &[u8]),
    ) -> Result<CmdOutput, TransportError> {
        let res = self.run(node, req);
        if let Ok(o) = &res {
            sink(Stream::Stdout, o.stdout.as_bytes());
            sink(Stream::Stderr, o.stderr.as_bytes());
        }
        res
    }
    /// Kill whatever this run still has running on the nodes (interrupt path); the nodes
    /// where that could not be done, with what may be left there.
    fn cleanup(&self) -> Vec<Leftover> {
        Vec::new()
    }
    /// At the end of a run that was not interrupted: end the commands whose end is not known
    /// (their connection dropped, their node stopped answering), as [`Transport::cleanup`].
    fn cleanup_pending(&self) -> Vec<Leftover> {
        Vec::new()
    }
    /// Close connections at the end of a run.
    fn close(&self) {}
    /// Check that a node is reachable without running anything that changes it.
    fn probe(&self, node: &Node) -> Result<(), TransportError> {
        self.run(
            node,
            &CmdRequest {
                command: "true".into(),
                timeout: node.connect_timeout,
                ..Default::default()
            },
        )
        .map(|_| ())
    }
}

/// Environment variable that carries the run marker into every remote command and what it
/// starts.
pub(crate) const RUN_ENV: &str = "FABCHECK_RUN";

/// The marker put into every command line fabcheck starts on a node (`sh -c CMD <marker>`), so
/// that an interrupt can find and kill exactly this run's processes and nothing else.
pub(crate) fn run_marker() -> &'static str {
    static MARKER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MARKER.get_or_init(|| {
        let r = crate::util::random::random_u64() as u32;
        format!("fabcheck-{}-{:x}", std::process::id(), r)
    })
}

/// The full remote command line. The login shell (whatever it is: sh, bash, zsh, fish) only
/// has to run `exec [sudo -n] timeout -k 5 T sh -c 'SCRIPT' MARKER`; SCRIPT, in POSIX sh,
/// prints a start line on both streams (what the login shell printed before it is set aside,
/// see [`preamble`]), reads the command's `env` from stdin when it has one (see
/// [`env_stdin`]: values never appear in any argv on the node, where any user can read them
/// in /proc), puts the sbin directories on PATH and runs the command on a line of its own (a
/// syntax error in it comes after the start lines). `exec`: the login shell does not stay
/// behind as the command's parent. `timeout -k 5` sends TERM at the deadline and KILL 5 s
/// later to the whole process group. The marker (`$0` of SCRIPT) is what the interrupt
/// cleanup looks for on the node; `tag` (see [`leftovers::command_tag`]), in the command's
/// environment, what a timeout looks for.
pub(crate) fn wrap_command(req: &CmdRequest, tag: &str) -> String {
    let secs = req.timeout.as_secs_f64().max(0.1);
    let (a, b) = preamble::start_words(run_marker());
    let start = format!("printf '%s%s\\n' {a} {b}");
    // The env lines are shell code made by env_stdin (export NAME='VALUE'); `eval` is a
    // builtin, so the values stay inside this shell and the environment it passes on.
    let env = if req.env.is_empty() {
        ""
    } else {
        " eval \"$(cat)\";"
    };
    // Tools live in sbin on many nodes, but a non-root login shell has no sbin on its PATH.
    // FABCHECK_RUN and FABCHECK_CMD are inherited by all the command starts (see
    // ssh::cleanup_command and leftovers.rs).
    let script = format!(
        "{start}; {start} >&2;{env} PATH=\"$PATH:/usr/local/sbin:/usr/sbin:/sbin\" {RUN_ENV}=\"$0\" {cmd_env}={tag}; export {RUN_ENV} {cmd_env}\n{}",
        req.command,
        cmd_env = leftovers::CMD_ENV,
        tag = quote(tag),
    );
    let sudo = if req.sudo { "sudo -n " } else { "" };
    format!(
        "exec {sudo}timeout -k 5 {secs:.1} sh -c {} {}",
        quote(&script),
        run_marker()
    )
}

/// What the wrapped command (see [`wrap_command`]) reads on its stdin when it has an `env`:
/// one `export NAME='VALUE'` line per variable, then end of input (the command itself then
/// finds its stdin at its end, as with no input at all). None without an `env`.
pub(crate) fn env_stdin(req: &CmdRequest) -> Option<Vec<u8>> {
    if req.env.is_empty() {
        return None;
    }
    let mut s = String::new();
    for (k, v) in &req.env {
        // Names are checked where the script gives them; one that is not a shell name is
        // left out rather than run as code.
        if crate::util::names::valid_env_name(k) {
            s.push_str(&format!("export {k}={}\n", quote(v)));
        }
    }
    Some(s.into_bytes())
}

/// A program of the wrapper itself (see [`wrap_command`]) missing on the node: `timeout`, or
/// `env`/`sudo` when the command needs them, as the shells, `env` and `sudo` say it. Told as
/// what it is, never as "the tool is not installed".
pub(crate) fn wrapper_program_missing(exit: Option<i64>, stderr: &str) -> Option<String> {
    if !matches!(exit, Some(127) | Some(1)) {
        return None;
    }
    let gone = |p: &str| {
        stderr.lines().map(str::trim).any(|l| {
            (exit == Some(127)
                && (l.contains(&format!("exec: {p}: not found"))
                    || (l.starts_with("env: ") && l.contains(p) && l.contains("No such file"))))
                || l == format!("sudo: {p}: command not found")
        })
    };
    if gone("timeout") {
        Some("the node has no `timeout` (coreutils), which bounds every command fabcheck runs there; install coreutils".into())
    } else if gone("env") {
        Some("the node has no `env` (coreutils), which passes the command's environment; install coreutils".into())
    } else if gone("sudo") {
        Some("the node has no `sudo`, and the command asked for it; install sudo, or run as a user that needs none".into())
    } else {
        None
    }
}

/// `sudo -n` refusing to run a command that asked for sudo (a password needed, no rule for
/// the user, `requiretty`): the command never ran, so this is not its failure. sudo's own
/// line, and what to do.
pub(crate) fn sudo_refused(req: &CmdRequest, exit: Option<i64>, stderr: &str) -> Option<String> {
    if !req.sudo || exit != Some(1) {
        return None;
    }
    const SAYS: [&str; 5] = [
        "sudo: a password is required",
        "sudo: a terminal is required",
        "sudo: sorry, you must have a tty",
        "is not in the sudoers file",
        "is not allowed to execute",
    ];
    let line = stderr
        .lines()
        .map(str::trim)
        .find(|l| SAYS.iter().any(|s| l.contains(s)))?;
    Some(format!(
        "sudo refused to run `{}` ({line}); fabcheck runs `sudo -n`, which never asks for a password: give the node user passwordless sudo (NOPASSWD) for it, or connect as a user that needs none",
        req.command
    ))
}

/// POSIX shell single-quoting: the one implementation, `util::names::quote`.
pub(crate) use crate::util::names::quote;

/// A node that could not be cleaned up: the run's commands that may still run there, and
/// until when at the latest (the node-side cap of the longest: its timeout and `-k 5`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Leftover {
    pub node: String,
    pub commands: Vec<String>,
    /// RFC 3339, UTC.
    pub until: String,
}

impl Leftover {
    /// `NODE: `cmd`, `cmd2`, until T (node-side timeout cap)`, as the console and JUnit say it.
    pub fn line(&self) -> String {
        let cmds: Vec<String> = self.commands.iter().map(|c| format!("`{c}`")).collect();
        format!(
            "{}: {}, until {} (node-side timeout cap)",
            self.node,
            cmds.join(", "),
            self.until
        )
    }
}

/// Human form of a duration for messages: the one formatter, `util::duration`.
pub(crate) use crate::util::duration::human;

/// Turn captured bytes into text without failing on invalid UTF-8.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A command's output as scripts see it (`n.run`, `run_all`): its fields declared once, here;
/// the script's map and the result's shape are both made from it.
#[derive(Debug, Default, serde::Serialize)]
pub struct ScriptOutput {
    pub stdout: String,
    pub stderr: String,
    /// `()` when the process was killed by a signal.
    pub exit_code: Option<i64>,
    pub duration_ms: i64,
}

impl CmdOutput {
    pub fn script_output(&self) -> ScriptOutput {
        ScriptOutput {
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
            exit_code: self.exit_code,
            duration_ms: self.duration.as_millis() as i64,
        }
    }
}

crate::impl_shape!(ScriptOutput, serialised("n.run result"));

impl crate::util::shape::Shaped for CmdOutput {
    fn shape() -> &'static crate::util::shape::Shape {
        <ScriptOutput as crate::util::shape::Shaped>::shape()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_never_reached_is_told_from_its_testcase_message() {
        let e = TransportError::Unreachable {
            node: "dead-04".into(),
            host: "127.0.0.1".into(),
            cause: "failed to connect to the remote host: connect to host 127.0.0.1 port 2: Connection refused\nmore".into(),
        };
        let (node, reason) = not_reached(&format!("{e} at stdlib/x.rhai:3")).unwrap();
        assert_eq!(node, "dead-04");
        assert!(
            reason.starts_with("cannot connect to 127.0.0.1: failed"),
            "{reason}"
        );
        assert!(!reason.contains("more"));
        assert_eq!(
            reason_gist("cannot connect to h: a: Connection refused"),
            "Connection refused"
        );
        let auth = TransportError::Auth {
            node: "gpu-7.x".into(),
            host: "h".into(),
            user: "u".into(),
            cause: "Permission denied (publickey)".into(),
        };
        let (node, _) = not_reached(&format!("gpu-1 -> {auth}")).unwrap();
        assert_eq!(node, "gpu-7.x");
        let other = TransportError::NoAnswer {
            node: "n".into(),
            command: "c".into(),
            timeout: "1s".into(),
        };
        assert_eq!(not_reached(&other.to_string()), None);
        assert_eq!(not_reached("a: `ib_write_bw` is not installed"), None);
    }

    #[test]
    fn wrapped_command_has_node_side_timeout_and_marker() {
        let req = |env: Vec<(String, String)>, sudo| CmdRequest {
            command: "echo hi".into(),
            timeout: Duration::from_secs(30),
            env,
            sudo,
        };
        let m = run_marker();
        let (a, b) = preamble::start_words(m);
        let script = |env: &str| {
            quote(&format!(
                "printf '%s%s\\n' {a} {b}; printf '%s%s\\n' {a} {b} >&2;{env} PATH=\"$PATH:/usr/local/sbin:/usr/sbin:/sbin\" FABCHECK_RUN=\"$0\" FABCHECK_CMD=t-c1; export FABCHECK_RUN FABCHECK_CMD\necho hi"
            ))
        };
        let tail = |env| format!("timeout -k 5 30.0 sh -c {} {m}", script(env));
        let nccl = vec![("NCCL_DEBUG".to_string(), "INFO".to_string())];
        let with_env = " eval \"$(cat)\";";
        assert_eq!(
            wrap_command(&req(nccl.clone(), false), "t-c1"),
            format!("exec {}", tail(with_env))
        );
        assert_eq!(
            wrap_command(&req(vec![], false), "t-c1"),
            format!("exec {}", tail(""))
        );
        assert_eq!(
            wrap_command(&req(nccl.clone(), true), "t-c1"),
            format!("exec sudo -n {}", tail(with_env))
        );
        assert_eq!(
            env_stdin(&req(nccl, false)).as_deref(),
            Some(&b"export NCCL_DEBUG=INFO\n"[..])
        );
        assert_eq!(env_stdin(&req(vec![], false)), None);
    }

    /// Every argv of every process on this machine (as a /proc poller of another user reads
    /// them) that holds `needle`.
    fn argvs_holding(needle: &str) -> Vec<String> {
        let mut seen = Vec::new();
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
                let c = String::from_utf8_lossy(&c).replace('\0', " ");
                if c.contains(needle) {
                    seen.push(c);
                }
            }
        }
        seen
    }

    /// A command's `env` values reach it (spaces, quotes, newlines and all) through stdin, and
    /// never appear in the line the login shell gets nor in any argv while it runs, whatever
    /// the login shell is; the command itself finds its stdin at its end.
    #[test]
    fn env_values_reach_the_command_but_no_argv() {
        use std::io::Write;
        let secret = format!("S3CRET-{}-it's \"x\" $HOME\nline2", std::process::id());
        let req = CmdRequest {
            command: "sleep 0.5; printf '%s|' \"$TOK\"; cat; echo end".into(),
            timeout: Duration::from_secs(10),
            env: vec![("TOK".into(), secret.clone())],
            sudo: false,
        };
        let line = wrap_command(&req, &leftovers::command_tag());
        assert!(!line.contains("S3CRET"), "{line}");
        for shell in ["sh", "bash", "zsh", "fish"] {
            let Ok(mut child) = std::process::Command::new(shell)
                .arg("-c")
                .arg(&line)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
            else {
                crate::util::skip::skip(&format!("the login shell {shell} is not installed"));
                continue;
            };
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(&env_stdin(&req).unwrap()).unwrap();
            drop(stdin);
            let mut leaks = Vec::new();
            while child.try_wait().unwrap().is_none() {
                leaks.extend(argvs_holding("S3CRET"));
                std::thread::sleep(Duration::from_millis(5));
            }
            let o = child.wait_with_output().unwrap();
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(leaks.is_empty(), "{shell}: secret in an argv: {leaks:?}");
            assert!(out.ends_with(&format!("{secret}|end\n")), "{shell}: {out}");
        }
    }

    /// The line runs in a real shell: the start line comes first on both streams, then the
    /// command's output and exit status, and no shell is left waiting as its parent.
    #[test]
    fn wrapped_command_runs_in_every_login_shell() {
        let tag = leftovers::command_tag();
        let w = wrap_command(
            &CmdRequest {
                command:
                    "echo out; echo err >&2; echo $PPID; sh -c 'echo $FABCHECK_RUN $FABCHECK_CMD'; exit 3"
                        .into(),
                timeout: Duration::from_secs(10),
                env: vec![],
                sudo: false,
            },
            &tag,
        );
        let start = preamble::start_line(run_marker());
        // Login shells met on clusters (zsh and fish where installed; .ci/run installs them).
        for shell in ["sh", "bash", "zsh", "fish"] {
            let Ok(child) = std::process::Command::new(shell)
                .arg("-c")
                .arg(&w)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
            else {
                crate::util::skip::skip(&format!("the login shell {shell} is not installed"));
                continue;
            };
            let pid = child.id().to_string();
            let o = child.wait_with_output().expect("wait");
            let out = String::from_utf8_lossy(&o.stdout);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(3), "{shell}: {out} {err}");
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines[..2], [start.as_str(), "out"], "{shell}");
            assert_eq!(err, format!("{start}\nerr\n"), "{shell}");
            // The command's parent (`timeout`) is the process the shell was: `exec` replaced
            // the login shell instead of leaving it waiting.
            assert_eq!(lines[2], pid, "{shell}");
            // What the command starts inherits the run marker and the command's tag.
            assert_eq!(lines[3], format!("{} {tag}", run_marker()), "{shell}");
        }
    }

    /// A node without `timeout` (or `env`) on PATH: the real shells' and env's messages are
    /// recognised, and a command that is itself missing is not mistaken for it.
    #[test]
    fn a_node_without_timeout_is_told_apart_from_a_missing_tool() {
        let run_env = |shell: &str, command: &str, path: &str, env: Vec<(String, String)>| {
            let w = wrap_command(
                &CmdRequest {
                    command: command.into(),
                    timeout: Duration::from_secs(5),
                    env,
                    sudo: false,
                },
                "t-c1",
            );
            std::process::Command::new(shell)
                .arg("-c")
                .arg(&w)
                .env("PATH", path)
                .output()
                .ok()
                .map(|o| {
                    (
                        o.status.code().map(i64::from),
                        String::from_utf8_lossy(&o.stderr).into_owned(),
                    )
                })
        };
        let run = |shell: &str, command: &str, path: &str| run_env(shell, command, path, vec![]);
        let dir = std::env::temp_dir().join(format!("fc-no-timeout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let _ = std::os::unix::fs::symlink("/usr/bin/env", dir.join("env"));
        let env_only = dir.display().to_string();
        for shell in ["/bin/sh", "/bin/bash"] {
            // `env` there but no `timeout`: env's own message.
            let nccl = vec![("NCCL_DEBUG".to_string(), "INFO".to_string())];
            if let Some((code, err)) = run_env(shell, "ethtool eth0", &env_only, nccl) {
                assert_eq!(code, Some(127), "{shell}: {err}");
                let m =
                    wrapper_program_missing(code, &err).unwrap_or_else(|| panic!("{shell}: {err}"));
                assert!(m.contains("no `timeout`"), "{m}");
            }
            // PATH without /usr/bin (the wrapper adds only the sbin directories).
            if let Some((code, err)) = run(shell, "ethtool eth0", "/nonexistent") {
                assert_eq!(code, Some(127), "{shell}: {err}");
                let m =
                    wrapper_program_missing(code, &err).unwrap_or_else(|| panic!("{shell}: {err}"));
                assert!(m.contains("no `timeout`"), "{m}");
            }
            if let Some((code, err)) = run(shell, "no-such-tool-fc --version", "/usr/bin:/bin") {
                assert_eq!(code, Some(127), "{shell}: {err}");
                assert_eq!(wrapper_program_missing(code, &err), None, "{shell}: {err}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Real sudo (1.9) answers from a user without passwordless sudo, and ones that are not a
    /// refusal.
    #[test]
    fn sudo_refusals_are_told_apart_from_the_commands_failure() {
        let req = |sudo| CmdRequest {
            command: "cp -a /etc/netplan /var/tmp/x".into(),
            timeout: Duration::from_secs(5),
            env: vec![],
            sudo,
        };
        let refused = "sudo: a password is required\n";
        let m = sudo_refused(&req(true), Some(1), refused).expect("refusal");
        assert!(
            m.contains("sudo: a password is required")
                && m.contains("NOPASSWD")
                && m.contains("`cp -a /etc/netplan /var/tmp/x`"),
            "{m}"
        );
        let tty = "sudo: sorry, you must have a tty to run sudo\n";
        assert!(sudo_refused(&req(true), Some(1), tty).is_some());
        // Not asked for sudo, another exit, or the command's own failure: not a refusal.
        assert_eq!(sudo_refused(&req(false), Some(1), refused), None);
        assert_eq!(sudo_refused(&req(true), Some(2), refused), None);
        let own = "cp: cannot stat 'x': No such file\n";
        assert_eq!(sudo_refused(&req(true), Some(1), own), None);
    }
}

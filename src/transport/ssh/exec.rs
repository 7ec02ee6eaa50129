//! One command over a node's master: the wrapped line, output streamed into bounded
//! buffers, the deadline and interrupts, and what the exit means ([`classify_exit`]).

use super::super::capture::{Capped, Stream};
use super::super::preamble::Preamble;
use super::super::{
    cancel, human, wrap_command, CmdOutput, CmdRequest, Notice, NoticeKind, TransportError,
};
use super::connect::error_chain;
use super::SshTransport;
use crate::inventory::Node;
use std::time::{Duration, Instant};

/// After a command's exit status has come, output still in flight is read until none came
/// for `LINGER_IDLE`, for `LINGER_MAX` at most (a process the command left on the node may
/// hold its stdout open for ever; sshd waits for it, fabcheck does not).
const LINGER_IDLE: Duration = Duration::from_secs(1);
const LINGER_MAX: Duration = Duration::from_secs(5);
/// Without output for this long, a command's exit status is asked for even though its stdout
/// or stderr is still open (see [`Got::read`]).
const QUIET_BEFORE_WAIT: Duration = Duration::from_secs(2);

/// What the exit of a command over SSH means (see [`classify_exit`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Exit {
    /// The command ended with this exit code (None: killed by a signal, as ssh saw it).
    Code(Option<i64>),
    /// The node's `timeout` ended it at its deadline (exit 124 or 137 after the timeout).
    TimedOut,
    /// Exit 255 of a process-mux client: ssh itself failed, not the command.
    SshFailed,
    /// openssh's "not found" for exit 127: the program is not on the node.
    NotFound,
    /// No exit status came: a signal on the node, or the connection went away under it (only
    /// a live master tells the two apart).
    NoStatus,
    /// Any other openssh error: the connection is gone.
    Failed(String),
}

/// What the exit (or openssh's error instead of one) of a command that ran for `ran` with
/// deadline `timeout` means. Pure: no I/O, unit-tested.
pub(super) fn classify_exit(
    status: &Result<std::process::ExitStatus, openssh::Error>,
    ran: Duration,
    timeout: Duration,
    process_mux: bool,
) -> Exit {
    match status {
        Ok(st) => {
            let code = st.code().map(i64::from);
            // `timeout` exits 124 (TERM worked) or 137 (KILL needed) at the deadline.
            if matches!(code, Some(124) | Some(137)) && ran + Duration::from_millis(200) >= timeout
            {
                Exit::TimedOut
            } else if code == Some(255) && process_mux {
                Exit::SshFailed
            } else {
                Exit::Code(code)
            }
        }
        Err(openssh::Error::Remote(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Exit::NotFound
        }
        Err(openssh::Error::RemoteProcessTerminated) => Exit::NoStatus,
        Err(e) => Exit::Failed(error_chain(e)),
    }
}

/// A stream that printed more than [`super::super::preamble::MAX_PREAMBLE`] without the start
/// line: its output cannot be told from the login shell's, so it is an error, never parsed.
fn flooded(node: &Node, pre: &[Preamble; 2]) -> Option<TransportError> {
    let (i, n) = pre
        .iter()
        .enumerate()
        .find_map(|(i, p)| p.flooded().map(|n| (i, n)))?;
    Some(TransportError::Other {
        node: node.name.clone(),
        message: format!(
            "the node printed {} on {} and never fabcheck's start line, so the command's \
             output cannot be told from what the login shell printed; make the shell quiet \
             for non-interactive logins (~/.bashrc, /etc/profile.d) or remove a ForceCommand",
            crate::util::fmt::human_bytes(n as f64),
            ["stdout", "stderr"][i]
        ),
    })
}

/// Why reading a command's output stopped before its end.
enum Stop {
    Interrupted,
    Deadline,
}

/// The output of one command as it comes: the login shell's preamble set aside, the rest
/// handed to the sink whole and kept in bounded head+tail buffers.
struct Got {
    caps: [Capped; 2],
    pre: [Preamble; 2],
}

impl Got {
    fn new() -> Got {
        // What the login shell prints before the command is set aside (see preamble.rs).
        let start = super::super::preamble::start_line(super::super::run_marker());
        Got {
            caps: [Capped::default(), Capped::default()],
            pre: [Preamble::new(&start), Preamble::new(&start)],
        }
    }

    /// A chunk of stream `i` (0 stdout, 1 stderr) as it came from the node.
    fn push(&mut self, i: usize, chunk: &[u8], sink: &mut dyn FnMut(Stream, &[u8])) {
        let bytes = self.pre[i].push(chunk);
        self.deliver(i, &bytes, sink);
    }

    fn deliver(&mut self, i: usize, bytes: &[u8], sink: &mut dyn FnMut(Stream, &[u8])) {
        if bytes.is_empty() {
            return;
        }
        sink([Stream::Stdout, Stream::Stderr][i], bytes);
        self.caps[i].push(bytes);
    }

    /// The end of both streams: what a preamble filter still held goes out.
    fn finish(&mut self, sink: &mut dyn FnMut(Stream, &[u8])) {
        for i in 0..2 {
            let rest = self.pre[i].finish();
            self.deliver(i, &rest, sink);
        }
    }

    /// The node showed that it started the command: its start line came on either stream.
    fn reached(&self) -> bool {
        self.pre.iter().any(Preamble::started)
    }

    /// The start line every wrapped command prints first never came, and nothing else did.
    fn came_back_empty(&self) -> bool {
        !self.pre[0].started() && self.caps[0].total() == 0
    }

    /// Read the child's output until it exits (and output in flight after it, see
    /// [`LINGER_IDLE`]), an interrupt or the deadline.
    async fn read(
        &mut self,
        mut child: openssh::Child<&openssh::Session>,
        sink: &mut dyn FnMut(Stream, &[u8]),
        mut deadline: std::pin::Pin<&mut tokio::time::Sleep>,
    ) -> Result<Result<std::process::ExitStatus, openssh::Error>, Stop> {
        use tokio::io::AsyncReadExt;
        let mut out = child.stdout().take();
        let mut err = child.stderr().take();
        let wait = child.wait();
        tokio::pin!(wait);
        let mut status = None;
        let mut bo = vec![0u8; 64 * 1024];
        let mut be = vec![0u8; 64 * 1024];
        // After the exit, output still in flight is read while it keeps coming (up to
        // LINGER_IDLE without any, LINGER_MAX in all); something the command left on the node
        // holding its stdout does not hold the run.
        let mut exited_at: Option<tokio::time::Instant> = None;
        let after_exit = |t: tokio::time::Instant| {
            (tokio::time::Instant::now() + LINGER_IDLE).min(t + LINGER_MAX)
        };
        let linger = tokio::time::sleep(Duration::from_secs(3600));
        tokio::pin!(linger);
        // The exit status is asked for only once stdout and stderr are closed, or after
        // QUIET_BEFORE_WAIT without output (something left on the node holds them open): with
        // native-mux, the master stops writing a session's output once its exit has been taken
        // (openssh-rust/openssh#103), so asking early cut off the end of what commands printed
        // (a ping's summary: 13 of 480 step-1 pairs, 8 sessions per connection).
        let mut may_wait = false;
        let quiet = tokio::time::sleep(QUIET_BEFORE_WAIT);
        tokio::pin!(quiet);
        while status.is_none() || out.is_some() || err.is_some() {
            // In this order: output that is there is read before the linger may end the wait
            // (unordered, a poll late by a second under load could drop the command's last
            // output: a healthy ping lost its summary line).
            tokio::select! {
                biased;
                _ = cancel::cancelled() => return Err(Stop::Interrupted),
                _ = &mut deadline => return Err(Stop::Deadline),
                r = async { out.as_mut().expect("open").read(&mut bo).await }, if out.is_some() => match r {
                    Ok(n) if n > 0 => {
                        self.push(0, &bo[..n], sink);
                        if let Some(t) = exited_at { linger.as_mut().reset(after_exit(t)); }
                        quiet.as_mut().reset(tokio::time::Instant::now() + QUIET_BEFORE_WAIT);
                    }
                    _ => out = None,
                },
                r = async { err.as_mut().expect("open").read(&mut be).await }, if err.is_some() => match r {
                    Ok(n) if n > 0 => {
                        self.push(1, &be[..n], sink);
                        if let Some(t) = exited_at { linger.as_mut().reset(after_exit(t)); }
                        quiet.as_mut().reset(tokio::time::Instant::now() + QUIET_BEFORE_WAIT);
                    }
                    _ => err = None,
                },
                r = &mut wait, if status.is_none() && (may_wait || (out.is_none() && err.is_none())) => {
                    status = Some(r);
                    let t = tokio::time::Instant::now();
                    exited_at = Some(t);
                    linger.as_mut().reset(after_exit(t));
                }
                _ = &mut quiet, if !may_wait => may_wait = true,
                _ = &mut linger, if status.is_some() => break,
            }
        }
        Ok(status.expect("loop ends after the exit"))
    }
}

impl SshTransport {
    pub(super) async fn run_async(
        &self,
        node: &Node,
        req: &CmdRequest,
        tag: &str,
        sink: &mut dyn FnMut(Stream, &[u8]),
    ) -> Result<CmdOutput, TransportError> {
        let conn = self.conn(node);
        // Connecting is interruptible too (a node that does not answer holds it for up to
        // connect_timeout); a half-started master is killed by close().
        let session = tokio::select! {
            r = conn.session.get_or_init(|| self.connect(node, &conn.keeper, &conn.notices)) => r.clone()?,
            _ = cancel::cancelled() => {
                return Err(TransportError::Interrupted { node: node.name.clone() });
            }
        };
        let _slot = conn.slots.acquire().await.expect("semaphore open");
        let started = Instant::now();
        let line = wrap_command(req, tag);
        let mut cmd = session.raw_command(&line);
        let env = super::super::env_stdin(req);
        cmd.stdin(match env {
            Some(_) => openssh::Stdio::piped(),
            None => openssh::Stdio::null(),
        })
        .stdout(openssh::Stdio::piped())
        .stderr(openssh::Stdio::piped());
        // The node kills the command at req.timeout (and KILLs 5 s later); wait a little longer.
        // No polling: output, the exit, an interrupt or the deadline, whichever comes first.
        let deadline = tokio::time::sleep(req.timeout + Duration::from_secs(8));
        tokio::pin!(deadline);
        self.sent(node, tag, req);
        let spawned = tokio::select! {
            r = cmd.spawn() => r,
            _ = cancel::cancelled() => return Err(stopped(Stop::Interrupted, node, req, None)),
            _ = &mut deadline => return Err(stopped(Stop::Deadline, node, req, None)),
        };
        let mut got = Got::new();
        let status = match spawned {
            Err(e) => Err(e),
            Ok(mut child) => {
                send_env(&mut child, env).await;
                match got.read(child, sink, deadline.as_mut()).await {
                    Ok(st) => st,
                    Err(why) => return Err(stopped(why, node, req, Some((&mut got, started)))),
                }
            }
        };
        got.finish(sink);
        if let Some(e) = flooded(node, &got.pre) {
            return Err(e);
        }
        let duration = started.elapsed();
        let exit = classify_exit(&status, duration, req.timeout, self.process_mux);
        let came_back_empty = got.came_back_empty();
        if exit == Exit::TimedOut {
            return Err(stopped(
                Stop::Deadline,
                node,
                req,
                Some((&mut got, started)),
            ));
        }
        let [out_cap, err_cap] = got.caps;
        let (stdout, mut stderr) = (out_cap.into_string(), err_cap.into_string());
        let exit_code = exit_code(exit, node, req, &session, &mut stderr).await?;
        // A stdout that ended without the start line and without anything else, for a command
        // that ended well (or without an exit status), did not come back: told as such, never
        // parsed as "no output".
        if came_back_empty && matches!(exit_code, Some(0) | None) {
            return Err(TransportError::OutputLost {
                node: node.name.clone(),
                command: req.command.clone(),
            });
        }
        // Exit 127 because the wrapper's own `timeout` (or `sudo`/`env`) is missing is not
        // "the tool is not installed".
        if let Some(message) = super::super::wrapper_program_missing(exit_code, &stderr)
            .or_else(|| super::super::sudo_refused(req, exit_code, &stderr))
        {
            return Err(TransportError::Other {
                node: node.name.clone(),
                message,
            });
        }
        // Told with a command that came back (one that failed leaves it to the next).
        let noisy = self.noisy_shell(node, &got.pre);
        Ok(CmdOutput {
            notices: noisy.into_iter().collect(),
            stdout,
            stderr,
            exit_code,
            duration,
        })
    }

    /// The first time a node's login shell is seen to print when it starts (the text was set
    /// aside, not taken as the command's output): a notice for the run to tell.
    fn noisy_shell(&self, node: &Node, pre: &[Preamble; 2]) -> Option<Notice> {
        let aside: Vec<&[u8]> = pre
            .iter()
            .map(|p| p.set_aside())
            .filter(|b| !b.is_empty())
            .collect();
        if aside.is_empty() {
            return None;
        }
        let mut seen = self.noisy_shells.lock().unwrap_or_else(|p| p.into_inner());
        if !seen.insert(node.name.clone()) {
            return None;
        }
        let text = String::from_utf8_lossy(aside[0]);
        let first = crate::util::fmt::clean_text(text.lines().next().unwrap_or(""));
        let first: String = first.chars().take(80).collect();
        let bytes = aside.iter().map(|b| b.len()).sum::<usize>();
        Some(Notice {
            kind: NoticeKind::NoisyShell,
            text: format!(
                "{}: the login shell on {} prints before every command ({bytes} bytes, e.g. {first:?}); fabcheck sets it aside, but the shell's start-up files (~/.bashrc, ~/.zshenv, config.fish) should print nothing when not interactive",
                node.name, node.host,
            ),
        })
    }

    /// After a timeout: end what command `tag` left running on the node outside its process
    /// group (see [`crate::transport::leftovers`]); what was ended, as the node printed it.
    pub(super) fn end_command(
        &self,
        node: &Node,
        tag: &str,
        sudo: bool,
    ) -> Result<String, EndError> {
        let session = self
            .conn(node)
            .session
            .get()
            .and_then(|s| s.as_ref().ok().cloned())
            .ok_or(EndError::NoConnection)?;
        let line =
            super::super::leftovers::in_sh(&super::super::leftovers::end_command_script(tag), sudo);
        // Bounded in time and bytes (a login shell that floods is stopped, not read on).
        let out = self
            .rt
            .block_on(super::short::run(&session, &line, END_COMMAND_WITHIN));
        Ok(super::super::text(&out?.stdout))
    }
}

/// The time the clean-up after a timeout may take on the node (it takes about a second:
/// TERM, a second, KILL).
const END_COMMAND_WITHIN: Duration = Duration::from_secs(10);

/// Why what a timed-out command left running could not be looked for.
#[derive(Debug, thiserror::Error)]
pub(super) enum EndError {
    #[error("no connection to the node")]
    NoConnection,
    #[error(transparent)]
    Unanswered(#[from] super::short::Unanswered),
}

/// The error of a command stopped before its end. At the deadline, a command the node
/// showed it started (its start line came: `got`) was killed there by `timeout`, and the
/// error keeps what it printed and how long it ran (what it left outside its group is added
/// by the caller); one the node never showed may never have run there.
fn stopped(
    why: Stop,
    node: &Node,
    req: &CmdRequest,
    got: Option<(&mut Got, Instant)>,
) -> TransportError {
    match (why, got) {
        (Stop::Interrupted, _) => TransportError::Interrupted {
            node: node.name.clone(),
        },
        (Stop::Deadline, Some((got, started))) if got.reached() => {
            let [o, e] = std::mem::take(&mut got.caps);
            TransportError::timed_out(
                &node.name,
                req,
                o.into_string(),
                e.into_string(),
                started.elapsed(),
            )
        }
        (Stop::Deadline, Some((got, _))) if got.pre.iter().any(|p| p.flooded().is_some()) => {
            let n = got
                .pre
                .iter()
                .filter_map(Preamble::flooded)
                .max()
                .unwrap_or(0);
            TransportError::ShellFlood {
                node: node.name.clone(),
                command: req.command.clone(),
                timeout: human(req.timeout),
                printed: format!("over {}", crate::util::fmt::human_bytes(n as f64)),
            }
        }
        (Stop::Deadline, _) => TransportError::NoAnswer {
            node: node.name.clone(),
            command: req.command.clone(),
            timeout: human(req.timeout),
        },
    }
}

/// The command's `env` through the channel's stdin (see [`super::super::env_stdin`]), then
/// the end of its input. A write that fails leaves the command without its environment; it
/// then fails as such, which is better than blocking here.
async fn send_env(child: &mut openssh::Child<&openssh::Session>, env: Option<Vec<u8>>) {
    use tokio::io::AsyncWriteExt;
    let (Some(bytes), Some(mut stdin)) = (env, child.stdin().take()) else {
        return;
    };
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        let _ = stdin.write_all(&bytes).await;
        let _ = stdin.shutdown().await;
    })
    .await;
}

/// Is the master still there (asked twice, 200 ms apart)? A command without an exit status
/// under a live master was killed by a signal on the node.
async fn master_alive(session: &openssh::Session) -> bool {
    if session.check().await.is_err() {
        return false;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    session.check().await.is_ok()
}

/// The command's exit code from what its exit means ([`classify_exit`]), or the transport
/// error it is; `stderr` is completed where openssh left it empty.
async fn exit_code(
    exit: Exit,
    node: &Node,
    req: &CmdRequest,
    session: &openssh::Session,
    stderr: &mut String,
) -> Result<Option<i64>, TransportError> {
    let dropped = |cause: String| TransportError::Dropped {
        node: node.name.clone(),
        command: req.command.clone(),
        cause,
    };
    match exit {
        Exit::Code(code) => Ok(code),
        // Told with its output before the exit code is read (see run_async).
        Exit::TimedOut => Ok(Some(124)),
        Exit::SshFailed => Err(dropped(stderr.trim().to_string())),
        // openssh reports exit 127 as an error: "tool not installed" is told as such.
        Exit::NotFound => {
            if stderr.trim().is_empty() {
                *stderr = format!("{}: command not found (exit 127)", req.command);
            }
            Ok(Some(127))
        }
        Exit::NoStatus => {
            if !master_alive(session).await {
                return Err(dropped(
                    "the SSH connection closed before the command ended".into(),
                ));
            }
            *stderr = "terminated by a signal on the node".into();
            Ok(None)
        }
        Exit::Failed(cause) => Err(dropped(cause)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn exited(code: i32) -> Result<std::process::ExitStatus, openssh::Error> {
        Ok(std::process::ExitStatus::from_raw(code << 8))
    }

    #[test]
    fn exits_are_classified_by_code_time_and_mux() {
        let t = Duration::from_secs(10);
        let ran = |s: u64| Duration::from_secs(s);
        assert_eq!(
            classify_exit(&exited(0), ran(1), t, false),
            Exit::Code(Some(0))
        );
        assert_eq!(
            classify_exit(&exited(3), ran(1), t, false),
            Exit::Code(Some(3))
        );
        // `timeout`'s codes at the deadline are a timeout; the same codes early are the
        // command's own (a tool may exit 124).
        assert_eq!(
            classify_exit(&exited(124), ran(10), t, false),
            Exit::TimedOut
        );
        assert_eq!(
            classify_exit(&exited(137), ran(11), t, false),
            Exit::TimedOut
        );
        assert_eq!(
            classify_exit(&exited(124), ran(2), t, false),
            Exit::Code(Some(124))
        );
        // 255 is ssh's own failure only for a process-mux client.
        assert_eq!(
            classify_exit(&exited(255), ran(1), t, true),
            Exit::SshFailed
        );
        assert_eq!(
            classify_exit(&exited(255), ran(1), t, false),
            Exit::Code(Some(255))
        );
        let signalled = Ok(std::process::ExitStatus::from_raw(libc::SIGKILL));
        assert_eq!(
            classify_exit(&signalled, ran(1), t, false),
            Exit::Code(None)
        );
    }

    #[test]
    fn opensshs_errors_are_not_found_no_status_or_a_lost_connection() {
        let t = Duration::from_secs(10);
        let ran = Duration::from_secs(1);
        let nf = Err(openssh::Error::Remote(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "remote command not found",
        )));
        assert_eq!(classify_exit(&nf, ran, t, false), Exit::NotFound);
        let gone = Err(openssh::Error::RemoteProcessTerminated);
        assert_eq!(classify_exit(&gone, ran, t, false), Exit::NoStatus);
        let other = Err(openssh::Error::Disconnected);
        assert!(matches!(classify_exit(&other, ran, t, false), Exit::Failed(c) if !c.is_empty()));
    }
}

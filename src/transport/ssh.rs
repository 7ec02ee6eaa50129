//! `transport = "ssh"`: OpenSSH through the `openssh` crate. One multiplexed master
//! connection per node (native-mux; `FABCHECK_SSH_MUX=process` switches to process-mux),
//! opened on first use and reused by every command of the run. Commands are bounded on the
//! node (`timeout -k`), at most [`PER_CONNECTION`] run at once per connection (below sshd's
//! default `MaxSessions 10`), at most `min(fanout, MAX_HANDSHAKES)` handshakes are in flight
//! at once, and handshakes that sshd drops (`MaxStartups`) are retried with backoff.

use super::capture::{Capped, Stream};
use super::preamble::Preamble;
use super::{cancel, human, wrap_command, CmdOutput, CmdRequest, Transport, TransportError};
use crate::inventory::{KnownHosts, Node};
use openssh::{KnownHosts as Kh, Session, SessionBuilder};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OnceCell, Semaphore};

/// Concurrent commands per connection.
pub const PER_CONNECTION: usize = 8;
/// Simultaneous SSH handshakes at most (each node has one connection, so sshd's per-server
/// `MaxStartups` is not the limit here; this bounds local CPU and a bastion's load).
pub const MAX_HANDSHAKES: usize = 64;

struct Conn {
    session: OnceCell<Result<Arc<Session>, TransportError>>,
    slots: Semaphore,
    /// A connection to the master's control socket held for the whole run: while it is open
    /// the master never counts as idle; when fabcheck ends in any way (SIGKILL included) the
    /// kernel closes it and the master exits [`MASTER_IDLE_S`] later on its own.
    keeper: Mutex<Option<std::os::unix::net::UnixStream>>,
}

/// After a command's exit status has come, output still in flight is read until none came
/// for `LINGER_IDLE`, for `LINGER_MAX` at most (a process the command left on the node may
/// hold its stdout open for ever; sshd waits for it, fabcheck does not).
const LINGER_IDLE: Duration = Duration::from_secs(1);
const LINGER_MAX: Duration = Duration::from_secs(5);
/// Without output for this long, a command's exit status is asked for even though its stdout
/// or stderr is still open (see `run_async`).
const QUIET_BEFORE_WAIT: Duration = Duration::from_secs(2);

/// `ControlPersist` of every master: idle seconds (no mux client, our keeper included) before
/// it exits by itself.
pub const MASTER_IDLE_S: usize = 3;

/// Handshake attempts when sshd drops them (MaxStartups).
const CONNECT_ATTEMPTS: u32 = 8;
/// Simultaneous handshakes to one SSH server address (sshd's default MaxStartups is 10).
pub const PER_HOST_HANDSHAKES: usize = 8;

/// Exponential backoff with jitter (so retrying clients do not arrive together): ~150 ms,
/// 300 ms, … capped at 3 s, each ±50 %.
fn backoff(attempt: u32) -> Duration {
    let base = (150u64 << attempt.min(5)).min(3000);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0) as u64;
    let jitter = (nanos ^ (nanos >> 7)) % 1000; // 0..999 per mille
    Duration::from_millis(base / 2 + base * jitter / 1000)
}

pub struct SshTransport {
    rt: tokio::runtime::Runtime,
    conns: Mutex<HashMap<String, Arc<Conn>>>,
    handshakes: Arc<Semaphore>,
    host_gates: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Private per-run directory for the control sockets, made on first use.
    control_dir: std::sync::OnceLock<Result<PathBuf, String>>,
    process_mux: bool,
    closed: std::sync::atomic::AtomicBool,
    /// Nodes whose login shell printed before a command (told once per node).
    noisy_shells: Mutex<std::collections::HashSet<String>>,
}

impl SshTransport {
    pub fn new(fanout: usize) -> SshTransport {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("fabcheck-ssh")
            .build()
            .expect("tokio runtime");
        SshTransport {
            rt,
            conns: Mutex::new(HashMap::new()),
            handshakes: Arc::new(Semaphore::new(fanout.clamp(1, MAX_HANDSHAKES))),
            host_gates: Mutex::new(HashMap::new()),
            control_dir: std::sync::OnceLock::new(),
            closed: std::sync::atomic::AtomicBool::new(false),
            noisy_shells: Mutex::new(Default::default()),
            process_mux: std::env::var("FABCHECK_SSH_MUX").is_ok_and(|v| v == "process"),
        }
    }

    fn conn(&self, node: &Node) -> Arc<Conn> {
        let mut m = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(node.name.clone())
            .or_insert_with(|| {
                Arc::new(Conn {
                    session: OnceCell::new(),
                    slots: Semaphore::new(PER_CONNECTION),
                    keeper: Mutex::new(None),
                })
            })
            .clone()
    }

    fn host_gate(&self, host: &str) -> Arc<Semaphore> {
        let mut m = self.host_gates.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(host.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(PER_HOST_HANDSHAKES)))
            .clone()
    }

    /// The run's control directory, made once (see [`make_control_dir`]).
    fn control_dir(&self) -> Result<&PathBuf, String> {
        self.control_dir
            .get_or_init(|| make_control_dir(&std::env::temp_dir()))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn builder(
        &self,
        node: &Node,
        known_hosts: KnownHosts,
        control_dir: &std::path::Path,
    ) -> SessionBuilder {
        let mut b = SessionBuilder::default();
        if let Some(u) = &node.user {
            b.user(u.clone());
        }
        if let Some(p) = node.port {
            b.port(p);
        }
        if let Some(cfg) = &node.ssh_config {
            b.config_file(cfg);
        }
        b.connect_timeout(node.connect_timeout);
        b.server_alive_interval(Duration::from_secs(15));
        b.known_hosts_check(match known_hosts {
            KnownHosts::Strict | KnownHosts::SshConfig => Kh::Strict,
            KnownHosts::AcceptNew => Kh::Add,
            KnownHosts::Off => Kh::Accept,
        });
        b.control_directory(control_dir);
        b.control_persist(openssh::ControlPersist::IdleFor(
            std::num::NonZeroUsize::new(MASTER_IDLE_S).expect("not zero"),
        ));
        b
    }

    async fn connect(
        &self,
        node: &Node,
        keeper: &Mutex<Option<std::os::unix::net::UnixStream>>,
    ) -> Result<Arc<Session>, TransportError> {
        check_destination(node)?;
        let control_dir = self
            .control_dir()
            .map_err(|message| TransportError::Other {
                node: node.name.clone(),
                message,
            })?;
        let known_hosts = match node.known_hosts {
            KnownHosts::SshConfig => ssh_config_known_hosts(node).await,
            k => k,
        };
        let b = self.builder(node, known_hosts, control_dir);
        let mut last = None;
        for attempt in 0..CONNECT_ATTEMPTS {
            if cancel::interrupted() {
                return Err(TransportError::Interrupted {
                    node: node.name.clone(),
                });
            }
            // Two limits: handshakes in flight overall, and per SSH server address (several
            // inventory names for one host, or a bastion, meet that sshd's MaxStartups).
            let permit = self
                .handshakes
                .clone()
                .acquire_owned()
                .await
                .expect("semaphore open");
            let host_permit = self
                .host_gate(&node.host)
                .acquire_owned()
                .await
                .expect("semaphore open");
            let res = if self.process_mux {
                b.connect(&node.host).await
            } else {
                b.connect_mux(&node.host).await
            };
            drop(host_permit);
            drop(permit);
            match res {
                Ok(s) => {
                    // Hold the master (see Conn::keeper); a master that went idle before we
                    // got here is a failed attempt.
                    match std::os::unix::net::UnixStream::connect(s.control_socket()) {
                        Ok(k) => {
                            *keeper.lock().unwrap_or_else(|p| p.into_inner()) = Some(k);
                            return Ok(Arc::new(s));
                        }
                        Err(e) => {
                            drop(s);
                            last = Some(TransportError::Unreachable {
                                node: node.name.clone(),
                                host: node.host.clone(),
                                cause: format!("the SSH master went away at once: {e}"),
                            });
                            continue;
                        }
                    }
                }
                Err(e) => {
                    let mut cause = error_chain(&e);
                    // `LogLevel QUIET` (or FATAL) in an ssh config leaves the master's log
                    // empty: ask ssh once more, with errors on, for its reason.
                    if cause.trim() == "failed to connect to the remote host" {
                        if let Some(why) = self.diagnose(node, known_hosts).await {
                            cause = format!("{cause}: {why}");
                        }
                    }
                    let err = classify_connect_error(node, cause);
                    // sshd's MaxStartups drops handshakes at random: retry those with backoff.
                    let transient = matches!(&err, TransportError::Unreachable { cause, .. } if cause.contains("kex_exchange_identification") || cause.contains("Connection reset") || cause.contains("Connection closed by"));
                    last = Some(err);
                    if !transient {
                        break;
                    }
                    tokio::time::sleep(backoff(attempt)).await;
                }
            }
        }
        Err(last.expect("at least one attempt"))
    }

    /// ssh's own reason for a failed connection when the master's log had none (an ssh
    /// config with `LogLevel QUIET`): one plain `ssh … true` with the same destination,
    /// user, port, config and host-key policy, errors logged; its stderr, if any.
    async fn diagnose(&self, node: &Node, known_hosts: KnownHosts) -> Option<String> {
        let mut c = plain_ssh();
        c.arg("-o").arg("LogLevel=ERROR");
        c.arg("-o").arg("BatchMode=yes");
        c.arg("-o").arg(format!(
            "ConnectTimeout={}",
            node.connect_timeout.as_secs().max(1)
        ));
        c.arg("-o").arg(format!(
            "StrictHostKeyChecking={}",
            match known_hosts {
                KnownHosts::Strict | KnownHosts::SshConfig => "yes",
                KnownHosts::AcceptNew => "accept-new",
                KnownHosts::Off => "no",
            }
        ));
        c.arg("-o")
            .arg("ControlMaster=no")
            .arg("-o")
            .arg("ControlPath=none")
            .arg("-T");
        node_destination(&mut c, node);
        c.arg("true");
        c.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let limit = node.connect_timeout + Duration::from_secs(5);
        let out = tokio::time::timeout(limit, c.output()).await.ok()?.ok()?;
        if out.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&out.stderr);
        let why = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("Warning: Permanently added"))
            .collect::<Vec<_>>()
            .join(" ");
        (!why.is_empty()).then_some(why)
    }

    async fn run_async(
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
            r = conn.session.get_or_init(|| self.connect(node, &conn.keeper)) => r.clone()?,
            _ = cancel::cancelled() => {
                return Err(TransportError::Interrupted { node: node.name.clone() });
            }
        };
        let _slot = conn.slots.acquire().await.expect("semaphore open");
        let started = Instant::now();
        let line = wrap_command(req, tag);
        let mut cmd = session.raw_command(&line);
        cmd.stdin(openssh::Stdio::null())
            .stdout(openssh::Stdio::piped())
            .stderr(openssh::Stdio::piped());
        // The node kills the command at req.timeout (and KILLs 5 s later); wait a little longer.
        // No polling: output, the exit, an interrupt or the deadline, whichever comes first.
        let grace = req.timeout + Duration::from_secs(8);
        let deadline = tokio::time::sleep(grace);
        tokio::pin!(deadline);
        let timed_out = || TransportError::Timeout {
            node: node.name.clone(),
            command: req.command.clone(),
            timeout: human(req.timeout),
            ended: String::new(),
        };
        let interrupted = || TransportError::Interrupted {
            node: node.name.clone(),
        };
        let spawned = tokio::select! {
            r = cmd.spawn() => r,
            _ = cancel::cancelled() => return Err(interrupted()),
            _ = &mut deadline => return Err(timed_out()),
        };
        // Output is streamed into bounded head+tail buffers (and to the sink, whole).
        let mut caps = [Capped::default(), Capped::default()];
        // What the login shell prints before the command is set aside (see preamble.rs).
        let start = super::preamble::start_line(super::run_marker());
        let mut pre = [Preamble::new(&start), Preamble::new(&start)];
        let mut deliver = |i: usize, bytes: &[u8], sink: &mut dyn FnMut(Stream, &[u8])| {
            if !bytes.is_empty() {
                sink(
                    if i == 0 {
                        Stream::Stdout
                    } else {
                        Stream::Stderr
                    },
                    bytes,
                );
                caps[i].push(bytes);
            }
        };
        let status = match spawned {
            Err(e) => Err(e),
            Ok(mut child) => {
                use tokio::io::AsyncReadExt;
                let mut out = child.stdout().take();
                let mut err = child.stderr().take();
                let wait = child.wait();
                tokio::pin!(wait);
                let mut status = None;
                let mut bo = vec![0u8; 64 * 1024];
                let mut be = vec![0u8; 64 * 1024];
                // After the exit, output still in flight is read while it keeps coming (up to
                // LINGER_IDLE without any, LINGER_MAX in all); something the command left on
                // the node holding its stdout does not hold the run.
                let mut exited_at: Option<tokio::time::Instant> = None;
                let after_exit = |t: tokio::time::Instant| {
                    (tokio::time::Instant::now() + LINGER_IDLE).min(t + LINGER_MAX)
                };
                let linger = tokio::time::sleep(Duration::from_secs(3600));
                tokio::pin!(linger);
                // The exit status is asked for only once stdout and stderr are closed, or after
                // QUIET_BEFORE_WAIT without output (something left on the node holds them
                // open): with native-mux, the master stops writing a session's output once its
                // exit has been taken (openssh-rust/openssh#103), so asking early cut off the
                // end of what commands printed (a ping's summary: 13 of 480 step-1 pairs, 8
                // sessions per connection; none with process-mux, none asked this way).
                let mut may_wait = false;
                let quiet = tokio::time::sleep(QUIET_BEFORE_WAIT);
                tokio::pin!(quiet);
                while status.is_none() || out.is_some() || err.is_some() {
                    // In this order: output that is there is read before the linger may end
                    // the wait (unordered, a poll late by a second under load could drop the
                    // command's last output: a healthy ping lost its summary line).
                    tokio::select! {
                        biased;
                        _ = cancel::cancelled() => return Err(interrupted()),
                        _ = &mut deadline => return Err(timed_out()),
                        r = async { out.as_mut().expect("open").read(&mut bo).await }, if out.is_some() => match r {
                            Ok(n) if n > 0 => {
                                deliver(0, &pre[0].push(&bo[..n]), sink);
                                if let Some(t) = exited_at { linger.as_mut().reset(after_exit(t)); }
                                quiet.as_mut().reset(tokio::time::Instant::now() + QUIET_BEFORE_WAIT);
                            }
                            _ => out = None,
                        },
                        r = async { err.as_mut().expect("open").read(&mut be).await }, if err.is_some() => match r {
                            Ok(n) if n > 0 => {
                                deliver(1, &pre[1].push(&be[..n]), sink);
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
                status.expect("loop ends after the exit")
            }
        };
        for (i, p) in pre.iter_mut().enumerate() {
            deliver(i, &p.finish(), sink);
        }
        drop(deliver);
        self.warn_preamble(node, &pre);
        // The start line is the first thing every wrapped command prints: a stdout that ended
        // without it and without anything else, for a command that ended well (or without an
        // exit status), did not come back. Told as such, never parsed as "no output".
        let came_back_empty = !pre[0].started() && caps[0].total() == 0;
        let duration = started.elapsed();
        let [out_cap, err_cap] = caps;
        let result = match status {
            Ok(st) => {
                let code = st.code().map(i64::from);
                // `timeout` exits 124 (TERM worked) or 137 (KILL needed) at the deadline.
                if matches!(code, Some(124) | Some(137))
                    && duration + Duration::from_millis(200) >= req.timeout
                {
                    return Err(timed_out());
                }
                if code == Some(255) && self.process_mux {
                    return Err(TransportError::Dropped {
                        node: node.name.clone(),
                        command: req.command.clone(),
                        cause: err_cap.into_string().trim().to_string(),
                    });
                }
                Ok(CmdOutput {
                    stdout: out_cap.into_string(),
                    stderr: err_cap.into_string(),
                    exit_code: code,
                    duration,
                })
            }
            // openssh reports exit 127 as an error: map it back to the exit code so that
            // "tool not installed" is reported as such.
            Err(openssh::Error::Remote(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut stderr = err_cap.into_string();
                if stderr.trim().is_empty() {
                    stderr = format!("{}: command not found (exit 127)", req.command);
                }
                Ok(CmdOutput {
                    stdout: out_cap.into_string(),
                    stderr,
                    exit_code: Some(127),
                    duration,
                })
            }
            // No exit value: either the command was killed by a signal on the node, or the
            // connection went away under it. Only a live master tells the two apart.
            Err(openssh::Error::RemoteProcessTerminated) => {
                let mut alive = session.check().await.is_ok();
                if alive {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    alive = session.check().await.is_ok();
                }
                if alive {
                    Ok(CmdOutput {
                        stdout: out_cap.into_string(),
                        stderr: "terminated by a signal on the node".into(),
                        exit_code: None,
                        duration,
                    })
                } else {
                    Err(TransportError::Dropped {
                        node: node.name.clone(),
                        command: req.command.clone(),
                        cause: "the SSH connection closed before the command ended".into(),
                    })
                }
            }
            Err(e) => Err(TransportError::Dropped {
                node: node.name.clone(),
                command: req.command.clone(),
                cause: error_chain(&e),
            }),
        };
        if came_back_empty
            && matches!(&result, Ok(o) if o.exit_code == Some(0) || o.exit_code.is_none())
        {
            return Err(TransportError::OutputLost {
                node: node.name.clone(),
                command: req.command.clone(),
            });
        }
        // Exit 127 because the wrapper's own `timeout` (or `sudo`/`env`) is missing is not
        // "the tool is not installed".
        match result {
            Ok(o) => match super::wrapper_program_missing(o.exit_code, &o.stderr)
                .or_else(|| super::sudo_refused(req, o.exit_code, &o.stderr))
            {
                Some(message) => Err(TransportError::Other {
                    node: node.name.clone(),
                    message,
                }),
                None => Ok(o),
            },
            e => e,
        }
    }

    /// Tell once per node that its login shell prints when it starts (the text was set aside,
    /// not taken as the command's output).
    fn warn_preamble(&self, node: &Node, pre: &[Preamble; 2]) {
        let aside: Vec<&[u8]> = pre
            .iter()
            .map(|p| p.set_aside())
            .filter(|b| !b.is_empty())
            .collect();
        if aside.is_empty() {
            return;
        }
        let first_node = {
            let mut seen = self.noisy_shells.lock().unwrap_or_else(|p| p.into_inner());
            if !seen.insert(node.name.clone()) {
                return;
            }
            seen.len() == 1
        };
        let text = String::from_utf8_lossy(aside[0]);
        let first = crate::util::fmt::clean_text(text.lines().next().unwrap_or(""));
        let first: String = first.chars().take(80).collect();
        let bytes = aside.iter().map(|b| b.len()).sum::<usize>();
        // Told once per run (a cluster's nodes usually share their dotfiles); -v names each.
        if first_node {
            tracing::warn!(
                "{}: the login shell on {} prints before every command ({bytes} bytes, e.g. {first:?}); fabcheck sets it aside, but the shell's start-up files (~/.bashrc, ~/.zshenv, config.fish) should print nothing when not interactive (-v names every such node)",
                node.name,
                node.host,
            );
        } else {
            tracing::debug!(
                "{}: the login shell prints before every command ({bytes} bytes, e.g. {first:?})",
                node.name
            );
        }
    }

    /// After a timeout: end what command `tag` left running on the node outside its process
    /// group (see [`super::leftovers`]); what was ended, as the node printed it.
    fn end_command(&self, node: &Node, tag: &str, sudo: bool) -> Result<String, String> {
        let session = self
            .conn(node)
            .session
            .get()
            .and_then(|s| s.as_ref().ok().cloned())
            .ok_or("no connection to the node")?;
        let line = super::leftovers::in_sh(&super::leftovers::end_command_script(tag), sudo);
        let out = self.rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(10), session.raw_command(line).output()).await
        });
        match out {
            Err(_) => Err("the node did not answer within 10 s".into()),
            Ok(Err(e)) => Err(error_chain(&e)),
            Ok(Ok(o)) => Ok(super::text(&o.stdout)),
        }
    }

    fn sessions(&self) -> Vec<(String, Arc<Session>)> {
        let m = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        m.iter()
            .filter_map(|(n, c)| {
                c.session
                    .get()
                    .and_then(|r| r.as_ref().ok())
                    .map(|s| (n.clone(), s.clone()))
            })
            .collect()
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn classify_connect_error(node: &Node, cause: String) -> TransportError {
    let user = node
        .user
        .clone()
        .unwrap_or_else(|| "(ssh default user)".into());
    if cause.contains("Host key verification failed")
        || cause.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
        || cause.contains("No ED25519 host key is known")
        || cause.contains("host key for")
    {
        TransportError::HostKey {
            node: node.name.clone(),
            host: node.host.clone(),
            cause,
        }
    } else if cause.contains("Permission denied")
        || cause.contains("Too many authentication failures")
    {
        TransportError::Auth {
            node: node.name.clone(),
            host: node.host.clone(),
            user,
            cause,
        }
    } else {
        TransportError::Unreachable {
            node: node.name.clone(),
            host: node.host.clone(),
            cause,
        }
    }
}

impl Transport for SshTransport {
    fn run(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        self.run_streaming(node, req, &mut |_, _| {})
    }

    fn run_streaming(
        &self,
        node: &Node,
        req: &CmdRequest,
        sink: &mut dyn FnMut(Stream, &[u8]),
    ) -> Result<CmdOutput, TransportError> {
        let tag = super::leftovers::command_tag();
        let r = self.rt.block_on(self.run_async(node, req, &tag, sink));
        match r {
            Err(TransportError::Timeout {
                node: name,
                command,
                timeout,
                ..
            }) => Err(TransportError::Timeout {
                ended: super::leftovers::ended_note(self.end_command(node, &tag, req.sudo)),
                node: name,
                command,
                timeout,
            }),
            r => r,
        }
    }

    /// Interrupt path: kill this run's processes on every connected node. Every command line
    /// carries the run marker; `timeout` forwards the TERM to the command's process group.
    fn cleanup(&self) {
        let marker = super::run_marker().to_string();
        let sessions = self.sessions();
        self.rt.block_on(async {
            let futs = sessions.iter().map(|(_, s)| {
                let cmd = cleanup_command(&marker);
                async move {
                    let _ =
                        tokio::time::timeout(Duration::from_secs(5), s.raw_command(cmd).output())
                            .await;
                }
            });
            futures_join_all(futs).await;
        });
    }

    fn close(&self) {
        if self.closed.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let conns: Vec<Arc<Conn>> = self
            .conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, c)| c)
            .collect();
        // Let go of the masters first: with our keeper open a master never goes idle.
        for c in &conns {
            c.keeper.lock().unwrap_or_else(|p| p.into_inner()).take();
        }
        let sessions: Vec<Session> = conns
            .into_iter()
            .filter_map(|c| Arc::try_unwrap(c).ok())
            .filter_map(|c| c.session.into_inner())
            .filter_map(|r| r.ok())
            .filter_map(|s| Arc::try_unwrap(s).ok())
            .collect();
        // All masters at once: closing 64 one after another costs seconds.
        self.rt
            .block_on(futures_join_all(sessions.into_iter().map(|s| async move {
                let _ = tokio::time::timeout(Duration::from_secs(2), s.close()).await;
            })));
        if let Some(Ok(dir)) = self.control_dir.get() {
            // Masters (and any master interrupted while connecting) are gone before we return.
            reap_local_ssh(&dir.display().to_string(), Duration::from_secs(1));
            if let Some(outer) = dir.parent() {
                let _ = std::fs::remove_dir_all(outer);
            }
        }
    }
}

impl Drop for SshTransport {
    /// A run that ends without `close()` (a panic unwinding through the CLI) still takes its
    /// masters and control directory with it.
    fn drop(&mut self) {
        self.close();
    }
}

/// `known_hosts` not set in the inventory: what the ssh config says for this host
/// (`StrictHostKeyChecking` as `ssh -G` resolves it, with the node's config file, user and
/// port), so that a config with `StrictHostKeyChecking no` (or `accept-new`) works for fabcheck
/// as it does for ssh. `ask` (ssh's default) and anything unreadable are strict.
async fn ssh_config_known_hosts(node: &Node) -> KnownHosts {
    let mut c = plain_ssh();
    c.arg("-G");
    node_destination(&mut c, node);
    c.stderr(std::process::Stdio::null());
    let out = match tokio::time::timeout(Duration::from_secs(10), c.output()).await {
        Ok(Ok(o)) if o.status.success() => o,
        _ => return KnownHosts::Strict,
    };
    known_hosts_from_ssh_g(&String::from_utf8_lossy(&out.stdout))
}

/// An `ssh` of our own beside the masters (no stdin, killed if fabcheck stops waiting).
fn plain_ssh() -> tokio::process::Command {
    let mut c = tokio::process::Command::new("ssh");
    c.stdin(std::process::Stdio::null()).kill_on_drop(true);
    c
}

/// The node's ssh config file, user and port, then `-- HOST`: the destination as the master
/// reaches it.
fn node_destination(c: &mut tokio::process::Command, node: &Node) {
    if let Some(cfg) = &node.ssh_config {
        c.arg("-F").arg(cfg);
    }
    if let Some(u) = &node.user {
        c.arg("-l").arg(u);
    }
    if let Some(p) = node.port {
        c.arg("-p").arg(p.to_string());
    }
    c.arg("--").arg(&node.host);
}

/// The `stricthostkeychecking` line of `ssh -G` output, as a policy.
pub fn known_hosts_from_ssh_g(resolved: &str) -> KnownHosts {
    let value = resolved.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next()? == "stricthostkeychecking").then(|| w.next().unwrap_or("").to_string())
    });
    match value.as_deref() {
        Some("accept-new") => KnownHosts::AcceptNew,
        Some("no") | Some("off") | Some("false") => KnownHosts::Off,
        _ => KnownHosts::Strict,
    }
}

/// What reaches ssh's command line from the inventory or `-w` must not be read as an option
/// (`-w=-Efoo` would make ssh write its log to `foo`) or carry control characters or blanks.
fn check_destination(node: &Node) -> Result<(), TransportError> {
    let bad = |v: &str| {
        v.is_empty() || v.starts_with('-') || v.chars().any(|c| c.is_control() || c.is_whitespace())
    };
    let refuse = |what: &str, v: &str| TransportError::Other {
        node: node.name.clone(),
        message: format!(
            "refusing SSH {what} {v:?}: it would be read as an option or is malformed"
        ),
    };
    if bad(&node.host) {
        return Err(refuse("host", &node.host));
    }
    if let Some(u) = node.user.as_deref().filter(|u| bad(u)) {
        return Err(refuse("user", u));
    }
    Ok(())
}

/// Make the run's private control directory under `base`: `base/fc-RANDOM` (mkdir 0700, a
/// fresh random name, never an existing path) holding `fc-PID` (the name the socket paths
/// and interrupt checks show). Refuses anything that is not a real directory owned by us
/// and closed to others. Falls back to /tmp where `base` would make the mux socket path
/// (`…/.ssh-connectionXXXXXX/master`) longer than a socket path may be (108 bytes).
pub fn make_control_dir(base: &std::path::Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let pid = std::process::id().to_string();
    let socket_len = |b: &std::path::Path| {
        b.as_os_str().len()
            + "/fc-".len()
            + RANDOM_LEN
            + "/fc-".len()
            + pid.len()
            + "/.ssh-connectionXXXXXX/master".len()
    };
    let mut base = base.to_path_buf();
    if socket_len(&base) >= 108 {
        base = PathBuf::from("/tmp");
    }
    if socket_len(&base) >= 108 {
        return Err(format!(
            "SSH control socket paths under {} would be too long",
            base.display()
        ));
    }
    let mkdir = |p: &std::path::Path| std::fs::DirBuilder::new().mode(0o700).create(p);
    let mut last = String::new();
    for _ in 0..16 {
        let outer = base.join(format!("fc-{}", random_name()));
        match mkdir(&outer) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                last = format!("{} exists", outer.display());
                continue;
            }
            Err(e) => {
                return Err(format!(
                    "cannot create the SSH control directory {}: {e}",
                    outer.display()
                ))
            }
        }
        check_private_dir(&outer)?;
        let inner = outer.join(format!("fc-{pid}"));
        mkdir(&inner).map_err(|e| {
            format!(
                "cannot create the SSH control directory {}: {e}",
                inner.display()
            )
        })?;
        check_private_dir(&inner)?;
        return Ok(inner);
    }
    Err(format!("cannot create an SSH control directory: {last}"))
}

/// A directory we may put control sockets in: not a symlink, a directory, owned by our
/// effective uid, no access for group or others.
pub fn check_private_dir(p: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
    if m.file_type().is_symlink() || !m.is_dir() {
        return Err(format!(
            "refusing SSH control directory {}: not a plain directory",
            p.display()
        ));
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        return Err(format!(
            "refusing SSH control directory {}: owned by uid {}, not {me}",
            p.display(),
            m.uid()
        ));
    }
    if m.mode() & 0o077 != 0 {
        return Err(format!(
            "refusing SSH control directory {}: mode {:o} is open to others",
            p.display(),
            m.mode() & 0o7777
        ));
    }
    Ok(())
}

const RANDOM_LEN: usize = 12;

/// 12 random characters [a-z0-9] from the kernel (a clock/pid mix only if that fails).
fn random_name() -> String {
    use std::io::Read;
    let mut b = [0u8; RANDOM_LEN];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok();
    if !ok {
        let mut x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ (u64::from(std::process::id()) << 32);
        for v in b.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *v = x as u8;
        }
    }
    const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    b.iter()
        .map(|v| ALPHA[*v as usize % ALPHA.len()] as char)
        .collect()
}

/// The node line of the cleanup of an interrupted run, run through `sh -c` whatever the
/// login shell is (see [`super::leftovers::in_sh`]): TERM the process groups of every process
/// whose command line holds the run marker (`timeout` runs each command in a group of its
/// own, so children that do not carry the marker go too), and of every process whose
/// environment holds `FABCHECK_RUN=<marker>` (set for every command, inherited by what it
/// starts: a child that left the group with `setsid` still has it); KILL them a second later.
/// The patterns are the marker with its first character in brackets: they match the run's
/// processes but not the cleanup's own shell or grep, which therefore live on to the KILL step.
pub fn cleanup_command(marker: &str) -> String {
    use super::leftovers::{bracketed, envp_function, in_sh};
    in_sh(
        &format!(
        "{}; \
         d=$(envp); g=; for p in $(pgrep -f -- {p}) $d; do g=\"$g $(ps -o pgid= -p \"$p\")\"; done; \
         [ -n \"$(echo $g $d)\" ] || exit 0; \
         for x in $g; do kill -TERM -\"$x\"; done 2>/dev/null; kill -TERM $d 2>/dev/null; sleep 1; \
         for x in $g; do kill -KILL -\"$x\"; done 2>/dev/null; pkill -KILL -f -- {p}; \
         kill -KILL $d $(envp) 2>/dev/null; true",
        envp_function(super::RUN_ENV, marker),
            p = super::quote(&bracketed(marker)),
        ),
        false,
    )
}

async fn futures_join_all<F: std::future::Future<Output = ()>>(futs: impl Iterator<Item = F>) {
    let mut set = Vec::new();
    for f in futs {
        set.push(f);
    }
    // Small N: run them concurrently by pinning in a local join.
    let mut pinned: Vec<std::pin::Pin<Box<F>>> = set.into_iter().map(Box::pin).collect();
    std::future::poll_fn(|cx| {
        pinned.retain_mut(|f| f.as_mut().poll(cx).is_pending());
        if pinned.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
}

/// Local ssh processes of this run (masters, and process-mux clients): every one has the
/// run's control directory on its command line.
fn local_ssh(control_dir: &str) -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut pids = Vec::new();
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd);
        if cmd.starts_with("ssh\0") && cmd.contains(control_dir) {
            pids.push(pid as i32);
        }
    }
    pids
}

/// Make sure no local ssh process of this run is left: TERM them, wait until they are gone
/// (KILL what is still there after `patience`), so that nothing outlives fabcheck.
fn reap_local_ssh(control_dir: &str, patience: Duration) {
    let signal = |pids: &[i32], sig: i32| {
        for &p in pids {
            // SAFETY: plain kill(2) of a process this run started.
            unsafe {
                libc::kill(p, sig);
            }
        }
    };
    let start = Instant::now();
    let mut pids = local_ssh(control_dir);
    signal(&pids, libc::SIGTERM);
    let mut killed = false;
    while !pids.is_empty() && start.elapsed() < patience * 2 {
        std::thread::sleep(Duration::from_millis(20));
        pids = local_ssh(control_dir);
        if !killed && start.elapsed() >= patience {
            signal(&pids, libc::SIGKILL);
            killed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                let state = s.rsplit(')').next().unwrap_or("").trim_start();
                !state.starts_with('Z')
            })
            .unwrap_or(false)
    }

    /// A run marker of this test process, unlike any real run's.
    fn test_marker(tag: &str) -> String {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        format!("fabcheck-{tag}{}-{nanos:x}", std::process::id())
    }

    /// The cleanup line reaches the node's login shell as it is: whatever that shell is, the
    /// run's processes are killed, also a child that ignores TERM (the KILL step is reached).
    #[test]
    fn cleanup_command_kills_what_ignores_term_in_every_login_shell() {
        // Login shells met on clusters (zsh and fish where installed; .ci/run installs them).
        for shell in ["sh", "bash", "zsh", "fish"] {
            if Command::new(shell).args(["-c", "true"]).status().is_err() {
                continue;
            }
            cleanup_kills_what_ignores_term(shell);
        }
    }

    fn cleanup_kills_what_ignores_term(shell: &str) {
        let marker = test_marker("ut");
        // As on a node: `timeout` (own process group) around `sh -c CMD MARKER`, whose child
        // does not carry the marker and ignores TERM.
        let mut child = Command::new("timeout")
            .args([
                "-k",
                "20",
                "30",
                "sh",
                "-c",
                "trap '' TERM; sleep 31; :",
                &marker,
            ])
            .spawn()
            .unwrap();
        let pg = child.id().to_string();
        let mut sleeper = None;
        for _ in 0..100 {
            let o = Command::new("pgrep")
                .args(["-g", &pg, "-x", "sleep"])
                .output()
                .unwrap();
            if let Some(p) = String::from_utf8_lossy(&o.stdout).split_whitespace().next() {
                sleeper = p.parse::<i32>().ok();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let sleeper = sleeper.expect("sleep started");
        let t = Instant::now();
        let st = Command::new(shell)
            .arg("-c")
            .arg(cleanup_command(&marker))
            .status()
            .unwrap();
        let _ = child.wait();
        let took = t.elapsed();
        std::thread::sleep(Duration::from_millis(200));
        let left = alive(sleeper);
        if left {
            // SAFETY: our own test process.
            unsafe { libc::kill(sleeper, libc::SIGKILL) };
        }
        assert!(st.success(), "{shell}: the cleanup failed: {st:?}");
        assert!(!left, "{shell}: a TERM-ignoring child survived the cleanup");
        assert!(
            took < Duration::from_secs(5),
            "{shell}: cleanup took {took:?}"
        );
    }

    #[test]
    fn control_dirs_are_fresh_private_and_short() {
        let base = std::env::temp_dir();
        let a = make_control_dir(&base).unwrap();
        let b = make_control_dir(&base).unwrap();
        assert_ne!(a, b);
        for d in [&a, &b] {
            check_private_dir(d).unwrap();
            check_private_dir(d.parent().unwrap()).unwrap();
            assert!(d.ends_with(format!("fc-{}", std::process::id())));
            let socket = d.join(".ssh-connectionXXXXXX/master");
            assert!(socket.as_os_str().len() < 108, "{}", socket.display());
            let _ = std::fs::remove_dir_all(d.parent().unwrap());
        }
        // A TMPDIR so long that socket paths would not fit falls back to /tmp.
        let long = base.join("x".repeat(90));
        let c = make_control_dir(&long).unwrap();
        assert!(
            c.display().to_string().starts_with("/tmp/fc-"),
            "{}",
            c.display()
        );
        let _ = std::fs::remove_dir_all(c.parent().unwrap());
    }

    #[test]
    fn planted_links_foreign_and_open_dirs_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir().join(format!("fc-ut-{}", random_name()));
        std::fs::create_dir(&base).unwrap();
        let target = base.join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = base.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = check_private_dir(&link).unwrap_err();
        assert!(e.contains("not a plain directory"), "{e}");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = check_private_dir(&target).unwrap_err();
        assert!(e.contains("open to others"), "{e}");
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::chown(&target, Some(65534), None).unwrap();
            let e = check_private_dir(&target).unwrap_err();
            assert!(e.contains("owned by uid 65534"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&base);
    }

    /// Real `ssh -G` output for each StrictHostKeyChecking value a config may hold.
    #[test]
    fn known_hosts_policy_follows_what_ssh_g_resolves() {
        let dir = std::env::temp_dir().join(format!("fc-kh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = dir.join("config");
        let cases = [
            (Some("yes"), KnownHosts::Strict),
            (Some("ask"), KnownHosts::Strict),
            (None, KnownHosts::Strict),
            (Some("accept-new"), KnownHosts::AcceptNew),
            (Some("no"), KnownHosts::Off),
            (Some("off"), KnownHosts::Off),
        ];
        for (value, want) in cases {
            let text = value
                .map(|v| format!("Host node-x\n  StrictHostKeyChecking {v}\n"))
                .unwrap_or_default();
            std::fs::write(&cfg, text).unwrap();
            let Ok(o) = Command::new("ssh")
                .arg("-G")
                .arg("-F")
                .arg(&cfg)
                .arg("node-x")
                .stdin(std::process::Stdio::null())
                .output()
            else {
                eprintln!("no ssh client: skipped");
                return;
            };
            let out = String::from_utf8_lossy(&o.stdout);
            assert_eq!(known_hosts_from_ssh_g(&out), want, "{value:?}: {out}");
            // And through the node's settings, as a connection resolves it.
            let mut n = Node::bare("node-x");
            n.ssh_config = Some(cfg.clone());
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            assert_eq!(rt.block_on(ssh_config_known_hosts(&n)), want, "{value:?}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A process that left the command's process group (`setsid`) and has no marker on its
    /// command line is found by the marker in its environment, and killed.
    #[test]
    fn cleanup_command_finds_a_detached_child_by_its_environment() {
        let marker = test_marker("ue");
        let mut detached = Command::new("setsid")
            .args(["sleep", "37"])
            .env(super::super::RUN_ENV, &marker)
            .spawn()
            .unwrap();
        let pid = detached.id() as i32;
        std::thread::sleep(Duration::from_millis(200));
        assert!(alive(pid));
        let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap();
        assert!(!cmdline.contains(&marker), "{cmdline}");
        let st = Command::new("sh")
            .arg("-c")
            .arg(cleanup_command(&marker))
            .status()
            .unwrap();
        let _ = detached.wait();
        assert!(!alive(pid), "the detached child survived the cleanup");
        assert!(st.success());
        // Another run's processes are left alone, also when its marker starts with ours.
        let mut other = Command::new("setsid")
            .args(["sleep", "38"])
            .env(super::super::RUN_ENV, format!("{marker}0"))
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let _ = Command::new("sh")
            .arg("-c")
            .arg(cleanup_command(&marker))
            .status();
        assert!(alive(other.id() as i32), "another run's process was killed");
        let _ = other.kill();
        let _ = other.wait();
    }
}

//! `transport = "ssh"`: OpenSSH through the `openssh` crate. One multiplexed master
//! connection per node (native-mux; `FABCHECK_SSH_MUX=process` switches to process-mux),
//! opened on first use and reused by every command of the run. Commands are bounded on the
//! node (`timeout -k`), at most [`PER_CONNECTION`] run at once per connection (below sshd's
//! default `MaxSessions 10`), at most `min(fanout, MAX_HANDSHAKES)` handshakes are in flight
//! at once, and handshakes that sshd drops (`MaxStartups`) are retried with backoff.

use super::{cancel, human, text, wrap_command, CmdOutput, CmdRequest, Transport, TransportError};
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
}

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
    control_dir: PathBuf,
    process_mux: bool,
}

impl SshTransport {
    pub fn new(fanout: usize) -> SshTransport {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("fabcheck-ssh")
            .build()
            .expect("tokio runtime");
        // Short and private: control socket paths are limited to 108 bytes.
        let control_dir = std::env::temp_dir().join(format!("fc-{}", std::process::id()));
        SshTransport {
            rt,
            conns: Mutex::new(HashMap::new()),
            handshakes: Arc::new(Semaphore::new(fanout.clamp(1, MAX_HANDSHAKES))),
            host_gates: Mutex::new(HashMap::new()),
            control_dir,
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

    fn builder(&self, node: &Node) -> SessionBuilder {
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
        b.known_hosts_check(match node.known_hosts {
            KnownHosts::Strict => Kh::Strict,
            KnownHosts::AcceptNew => Kh::Add,
            KnownHosts::Off => Kh::Accept,
        });
        b.control_directory(&self.control_dir);
        b
    }

    async fn connect(&self, node: &Node) -> Result<Arc<Session>, TransportError> {
        let _ = std::fs::create_dir_all(&self.control_dir);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ =
                std::fs::set_permissions(&self.control_dir, std::fs::Permissions::from_mode(0o700));
        }
        let b = self.builder(node);
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
                Ok(s) => return Ok(Arc::new(s)),
                Err(e) => {
                    let err = classify_connect_error(node, &e);
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

    async fn run_async(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        let conn = self.conn(node);
        // Connecting is interruptible too (a node that does not answer holds it for up to
        // connect_timeout); a half-started master is killed by close().
        let session = tokio::select! {
            r = conn.session.get_or_init(|| self.connect(node)) => r.clone()?,
            _ = cancel::cancelled() => {
                return Err(TransportError::Interrupted { node: node.name.clone() });
            }
        };
        let _slot = conn.slots.acquire().await.expect("semaphore open");
        let start = Instant::now();
        let line = wrap_command(req);
        let mut cmd = session.raw_command(&line);
        // The node kills the command at req.timeout (and KILLs 5 s later); wait a little longer.
        // No polling: the output, an interrupt or the deadline, whichever comes first.
        let grace = req.timeout + Duration::from_secs(8);
        let out = tokio::select! {
            r = cmd.output() => r,
            _ = cancel::cancelled() => {
                return Err(TransportError::Interrupted { node: node.name.clone() });
            }
            _ = tokio::time::sleep(grace) => {
                return Err(TransportError::Timeout { node: node.name.clone(), command: req.command.clone(), timeout: human(req.timeout) });
            }
        };
        let duration = start.elapsed();
        match out {
            Ok(o) => {
                let code = o.status.code().map(i64::from);
                // `timeout` exits 124 (TERM worked) or 137 (KILL needed) at the deadline.
                if matches!(code, Some(124) | Some(137))
                    && duration + Duration::from_millis(200) >= req.timeout
                {
                    return Err(TransportError::Timeout {
                        node: node.name.clone(),
                        command: req.command.clone(),
                        timeout: human(req.timeout),
                    });
                }
                if code == Some(255) && self.process_mux {
                    return Err(TransportError::Dropped {
                        node: node.name.clone(),
                        command: req.command.clone(),
                        cause: text(&o.stderr).trim().to_string(),
                    });
                }
                Ok(CmdOutput {
                    stdout: text(&o.stdout),
                    stderr: text(&o.stderr),
                    exit_code: code,
                    duration,
                })
            }
            // openssh reports exit 127 as an error and drops the output: map it back to the
            // exit code so that "tool not installed" is reported as such.
            Err(openssh::Error::Remote(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(CmdOutput {
                    stdout: String::new(),
                    stderr: format!("{}: command not found (exit 127)", req.command),
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
                        stdout: String::new(),
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

fn classify_connect_error(node: &Node, e: &openssh::Error) -> TransportError {
    let cause = error_chain(e);
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
        self.rt.block_on(self.run_async(node, req))
    }

    /// Interrupt path: kill this run's processes on every connected node. Every command line
    /// carries the run marker; `timeout` forwards the TERM to the command's process group.
    fn cleanup(&self) {
        let marker = super::run_marker().to_string();
        let sessions = self.sessions();
        self.rt.block_on(async {
            let futs = sessions.iter().map(|(_, s)| {
                let cmd = format!(
                    "pkill -TERM -f -- {m}; sleep 1; pkill -KILL -f -- {m}; true",
                    m = super::quote(&marker)
                );
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
        let conns: Vec<Arc<Conn>> = self
            .conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, c)| c)
            .collect();
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
                let _ = tokio::time::timeout(Duration::from_secs(5), s.close()).await;
            })));
        kill_local_ssh(&self.control_dir.display().to_string());
        let _ = std::fs::remove_dir_all(&self.control_dir);
    }
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

/// Kill local ssh processes of this run that are still there (a master interrupted while
/// connecting): every one has the run's control directory on its command line.
fn kill_local_ssh(control_dir: &str) {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return;
    };
    let me = std::process::id();
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
            // SAFETY: plain kill(2) of a process this run started.
            unsafe {
                libc::kill(pid as i32, libc::SIGTERM);
            }
        }
    }
}

//! Opening a node's master connection: the builder from the inventory, handshakes bounded
//! and retried, ssh's reason for a failure, the host-key policy of the ssh config.

use super::super::{cancel, Notice, NoticeKind, TransportError};
use super::{SshTransport, MASTER_IDLE_S};
use crate::inventory::{KnownHosts, Node};
use openssh::{KnownHosts as Kh, Session, SessionBuilder};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Handshake attempts when sshd drops them (MaxStartups).
const CONNECT_ATTEMPTS: u32 = 8;

/// Exponential backoff with jitter (so retrying clients do not arrive together): ~150 ms,
/// 300 ms, … capped at 3 s, each ±50 %.
fn backoff(attempt: u32) -> Duration {
    let base = (150u64 << attempt.min(5)).min(3000);
    let jitter = crate::util::random::random_u64() % 1000; // 0..999 per mille
    Duration::from_millis(base / 2 + base * jitter / 1000)
}

impl SshTransport {
    pub(super) fn builder(
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

    /// A new connection to `node` for the interrupt's cleanup (its own master, not kept):
    /// one attempt, bounded by the node's `connect_timeout` and 2 s, during an interrupt too.
    pub(super) async fn connect_fresh(&self, node: &Node) -> Option<Session> {
        check_destination(node).ok()?;
        let control_dir = self.control_dir().ok()?;
        let known_hosts = match node.known_hosts {
            KnownHosts::SshConfig => ssh_config_known_hosts(node).await.ok()?,
            k => k,
        };
        let b = self.builder(node, known_hosts, control_dir);
        let setup = async {
            if self.process_mux {
                b.connect(&node.host).await
            } else {
                b.connect_mux(&node.host).await
            }
        };
        let limit = node.connect_timeout + Duration::from_secs(2);
        match tokio::time::timeout(limit, setup).await {
            Ok(Ok(s)) => Some(s),
            Ok(Err(_)) => None,
            Err(_) => {
                super::cleanup::kill_connecting_ssh(&control_dir.display().to_string(), node);
                None
            }
        }
    }

    pub(super) async fn connect(
        &self,
        node: &Node,
        keeper: &Mutex<Option<std::os::unix::net::UnixStream>>,
        notices: &Mutex<Vec<Notice>>,
        kept: &std::sync::atomic::AtomicBool,
    ) -> Result<Arc<Session>, TransportError> {
        check_destination(node)?;
        let control_dir = self.control_dir().map_err(|e| TransportError::Other {
            node: node.name.clone(),
            message: e.to_string(),
        })?;
        let known_hosts = match node.known_hosts {
            KnownHosts::SshConfig => ssh_config_known_hosts(node).await?,
            k => k,
        };
        let mut b = self.builder(node, known_hosts, control_dir);
        if let Some(idle) = self.persist {
            match super::persist::node_dir(node, known_hosts) {
                Ok(dir) => {
                    if let Some(s) = super::persist::reuse(&dir, self.process_mux).await {
                        if let Ok(s) = hold(node, s, keeper) {
                            kept.store(true, std::sync::atomic::Ordering::SeqCst);
                            return Ok(Arc::new(s));
                        }
                    }
                    b.control_directory(&dir);
                    b.control_persist(openssh::ControlPersist::IdleFor(
                        std::num::NonZeroUsize::new(idle.as_secs().max(1) as usize)
                            .expect("not zero"),
                    ));
                    kept.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                Err(e) => notices
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(Notice {
                        kind: NoticeKind::NotKept,
                        text: format!(
                            "{}: --persist: not kept, this run's own connection instead: {e}",
                            node.name
                        ),
                    }),
            }
        }
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
            let setup = async {
                if self.process_mux {
                    b.connect(&node.host).await
                } else {
                    b.connect_mux(&node.host).await
                }
            };
            let res = tokio::time::timeout(setup_limit(node), setup).await;
            drop(host_permit);
            drop(permit);
            let Ok(res) = res else {
                // A `Match exec`/ProxyCommand that blocks, or a server stalling the handshake:
                // end the ssh that is still setting up, with everything it started.
                super::cleanup::kill_connecting_ssh(&control_dir.display().to_string(), node);
                return Err(TransportError::Unreachable {
                    node: node.name.clone(),
                    host: node.host.clone(),
                    cause: format!("the SSH connection was not set up within {} (connect_timeout {}, twice, and 5 s): a `Match exec` or ProxyCommand in the ssh config that blocks, or a server that stalls the handshake? The connecting ssh was ended with what it started", super::super::human(setup_limit(node)), super::super::human(node.connect_timeout)),
                });
            };
            match res {
                Ok(s) => match hold(node, s, keeper) {
                    Ok(s) => {
                        if known_hosts == KnownHosts::Off {
                            if let Some(m) = changed_host_key(node, &s) {
                                notices.lock().unwrap_or_else(|p| p.into_inner()).push(m);
                            }
                        }
                        return Ok(Arc::new(s));
                    }
                    Err(e) => last = Some(e),
                },
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
        let out = bounded_output(c, setup_limit(node)).await.ok()?;
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
}

pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
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

/// `known_hosts` not set in the inventory: what the ssh config says for this host
/// (`StrictHostKeyChecking` as `ssh -G` resolves it, with the node's config file, user and
/// port), so that a config with `StrictHostKeyChecking no` (or `accept-new`) works for fabcheck
/// `known_hosts` not set in the inventory: what the ssh config says for this host
/// (`StrictHostKeyChecking` as `ssh -G` resolves it, with the node's config file, user and
/// port), so that a config with `StrictHostKeyChecking no` (or `accept-new`) works for fabcheck
/// as it does for ssh. `ask` (ssh's default) and anything unreadable are strict. `ssh -G` runs
/// the config's `Match exec` commands: bounded by the connect timeout, and ended with all it
/// started when it takes longer (an error: the connection would block the same way).
pub(super) async fn ssh_config_known_hosts(node: &Node) -> Result<KnownHosts, TransportError> {
    let mut c = plain_ssh();
    c.arg("-G");
    node_destination(&mut c, node);
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let limit = node.connect_timeout.max(Duration::from_secs(1));
    match bounded_output(c, limit).await {
        Ok(o) if o.status.success() => Ok(known_hosts_from_ssh_g(&String::from_utf8_lossy(
            &o.stdout,
        ))),
        Ok(_) => Ok(KnownHosts::Strict),
        Err(why) => Err(TransportError::Unreachable {
            node: node.name.clone(),
            host: node.host.clone(),
            cause: format!("`ssh -G` (reading the ssh config) {why}: a `Match exec` in the ssh config that blocks? It was ended with what it started"),
        }),
    }
}

/// Hold the master just set up (see `Conn::keeper`); a master that went idle before we got
/// here is a failed attempt.
fn hold(
    node: &Node,
    s: Session,
    keeper: &Mutex<Option<std::os::unix::net::UnixStream>>,
) -> Result<Session, TransportError> {
    match std::os::unix::net::UnixStream::connect(s.control_socket()) {
        Ok(k) => {
            *keeper.lock().unwrap_or_else(|p| p.into_inner()) = Some(k);
            Ok(s)
        }
        Err(e) => Err(TransportError::Unreachable {
            node: node.name.clone(),
            host: node.host.clone(),
            cause: format!("the SSH master went away at once: {e}"),
        }),
    }
}

/// `known_hosts = "off"` let the master in although the node's host key differs from the
/// one known for it (ssh logged its "REMOTE HOST IDENTIFICATION HAS CHANGED" warning): a
/// notice for the command that connected (`CmdOutput::notices`), which the run tells the
/// console and the reports.
fn changed_host_key(node: &Node, session: &Session) -> Option<Notice> {
    let log = session.control_socket().with_file_name("log");
    let text = std::fs::read_to_string(log).ok()?;
    if !text.contains("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        return None;
    }
    let fingerprint = text
        .lines()
        .skip_while(|l| !l.contains("The fingerprint for the"))
        .nth(1)
        .unwrap_or("")
        .trim()
        .trim_end_matches('.');
    let message = format!(
        "{}: the host key of {} has changed ({fingerprint}), and known_hosts = \"off\" accepted it: a machine in the middle would be accepted the same way; check the node's key and set known_hosts = \"strict\" (or \"accept-new\")",
        node.name, node.host
    );
    Some(Notice {
        kind: NoticeKind::ChangedHostKey,
        text: message,
    })
}

/// Longest a master connection's set-up may take: the TCP connection (`connect_timeout`),
/// as much again for the handshake and login, and 5 s.
pub(super) fn setup_limit(node: &Node) -> Duration {
    node.connect_timeout * 2 + Duration::from_secs(5)
}

/// Why a bounded `ssh` of our own gave no output (said after the command's name).
#[derive(Debug, thiserror::Error)]
enum Bounded {
    #[error("could not be started: {0}")]
    NotStarted(std::io::Error),
    #[error("{0}")]
    Failed(std::io::Error),
    #[error("did not finish within {}", super::super::human(*.0))]
    TooLong(Duration),
}

/// Run `c` (in a process group of its own) for its output, for `limit` at most: past it, the
/// whole group is killed (what ssh started for `Match exec` or a ProxyCommand too).
async fn bounded_output(
    mut c: tokio::process::Command,
    limit: Duration,
) -> Result<std::process::Output, Bounded> {
    c.process_group(0);
    let child = c.spawn().map_err(Bounded::NotStarted)?;
    let group = child.id();
    match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(r) => r.map_err(Bounded::Failed),
        Err(_) => {
            if let Some(g) = group {
                // SAFETY: kill(2) of the process group this function created.
                unsafe { libc::kill(-(g as i32), libc::SIGKILL) };
            }
            Err(Bounded::TooLong(limit))
        }
    }
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
pub(super) fn known_hosts_from_ssh_g(resolved: &str) -> KnownHosts {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

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
                crate::util::skip::skip("no ssh client is installed");
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
            let got = rt.block_on(ssh_config_known_hosts(&n)).unwrap();
            assert_eq!(got, want, "{value:?}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

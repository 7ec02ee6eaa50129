//! `transport = "ssh"`: OpenSSH through the `openssh` crate. One multiplexed master
//! connection per node (native-mux; `FABCHECK_SSH_MUX=process` switches to process-mux),
//! opened on first use and reused by every command of the run. Commands are bounded on the
//! node (`timeout -k`), at most [`PER_CONNECTION`] run at once per connection (below sshd's
//! default `MaxSessions 10`), at most `min(fanout, MAX_HANDSHAKES)` handshakes are in flight
//! at once, and handshakes that sshd drops (`MaxStartups`) are retried with backoff.

mod cleanup;
mod connect;
mod control_dir;
mod exec;
mod pending;
mod short;

use cleanup::{cleanup_command, futures_join_all, reap_local_ssh};
use control_dir::make_control_dir;

use super::capture::Stream;
use super::{CmdOutput, CmdRequest, Transport, TransportError};
use crate::inventory::Node;
use openssh::Session;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OnceCell, Semaphore};

/// Concurrent commands per connection.
pub(crate) const PER_CONNECTION: usize = 8;
/// Simultaneous SSH handshakes at most (each node has one connection, so sshd's per-server
/// `MaxStartups` is not the limit here; this bounds local CPU and a bastion's load).
pub(crate) const MAX_HANDSHAKES: usize = 64;

struct Conn {
    session: OnceCell<Result<Arc<Session>, TransportError>>,
    slots: Semaphore,
    /// A connection to the master's control socket held for the whole run: while it is open
    /// the master never counts as idle; when fabcheck ends in any way (SIGKILL included) the
    /// kernel closes it and the master exits [`MASTER_IDLE_S`] later on its own.
    keeper: Mutex<Option<std::os::unix::net::UnixStream>>,
    /// The node, for a fresh connection when this one is gone.
    spec: Node,
    /// Commands sent whose end on the node is not known yet, by command tag.
    pending: Mutex<HashMap<String, pending::Pending>>,
    /// What connecting had to tell the reports, for the output of the next command that
    /// completes on the node.
    notices: Mutex<Vec<crate::transport::Notice>>,
}

/// `ControlPersist` of every master: idle seconds (no mux client, our keeper included) before
/// it exits by itself.
pub(crate) const MASTER_IDLE_S: usize = 3;

/// Simultaneous handshakes to one SSH server address (sshd's default MaxStartups is 10).
pub(crate) const PER_HOST_HANDSHAKES: usize = 8;
pub(crate) struct SshTransport {
    rt: tokio::runtime::Runtime,
    conns: Mutex<HashMap<String, Arc<Conn>>>,
    handshakes: Arc<Semaphore>,
    host_gates: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Private per-run directory for the control sockets, made on first use.
    control_dir: std::sync::OnceLock<Result<PathBuf, control_dir::ControlDirError>>,
    process_mux: bool,
    closed: std::sync::atomic::AtomicBool,
    /// Nodes whose login shell printed before a command (told once per node).
    noisy_shells: Mutex<std::collections::HashSet<String>>,
    /// Ends the masters and removes the control directory if fabcheck is killed (see
    /// [`cleanup::Watchdog`]); started with the control directory.
    watchdog: Mutex<Option<cleanup::Watchdog>>,
}

impl SshTransport {
    pub(crate) fn new(fanout: usize) -> SshTransport {
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
            watchdog: Mutex::new(None),
            process_mux: std::env::var("FABCHECK_SSH_MUX").is_ok_and(|v| v == "process"),
        }
    }

    /// `req` (command `tag`) is being sent to `node`: pending until its end is known.
    fn sent(&self, node: &Node, tag: &str, req: &CmdRequest) {
        let conn = self.conn(node);
        let mut p = conn.pending.lock().unwrap_or_else(|p| p.into_inner());
        p.insert(
            tag.to_string(),
            pending::Pending::new(&req.command, req.timeout),
        );
    }

    fn conn(&self, node: &Node) -> Arc<Conn> {
        let mut m = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(node.name.clone())
            .or_insert_with(|| {
                Arc::new(Conn {
                    session: OnceCell::new(),
                    slots: Semaphore::new(PER_CONNECTION),
                    keeper: Mutex::new(None),
                    spec: node.clone(),
                    pending: Mutex::new(HashMap::new()),
                    notices: Mutex::new(Vec::new()),
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
    fn control_dir(&self) -> Result<&PathBuf, control_dir::ControlDirError> {
        self.control_dir
            .get_or_init(|| {
                let dir = make_control_dir(&std::env::temp_dir())?;
                if let Some(outer) = dir.parent() {
                    *self.watchdog.lock().unwrap_or_else(|p| p.into_inner()) =
                        cleanup::Watchdog::start(outer, super::run_marker());
                }
                Ok(dir)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The node cleanup ([`cleanup_command`]) on every node with a connection (`only_pending`:
    /// on those with a command whose end is not known), all at once: over the node's
    /// connection, else over a fresh one; the nodes where neither worked and a command may
    /// still run, as [`super::Leftover`]s.
    fn clean(&self, only_pending: bool) -> Vec<super::Leftover> {
        let marker = super::run_marker().to_string();
        let conns: Vec<Arc<Conn>> = self
            .conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        let left = Mutex::new(Vec::new());
        self.rt.block_on(async {
            let futs = conns.iter().map(|c| {
                let (marker, left) = (&marker, &left);
                async move {
                    if let Some(l) = self.clean_node(c, marker, only_pending).await {
                        left.lock().unwrap_or_else(|p| p.into_inner()).push(l);
                    }
                }
            });
            futures_join_all(futs).await;
        });
        let mut left = left.into_inner().unwrap_or_else(|p| p.into_inner());
        left.sort_by(|a, b| a.node.cmp(&b.node));
        left
    }

    async fn clean_node(
        &self,
        c: &Conn,
        marker: &str,
        only_pending: bool,
    ) -> Option<super::Leftover> {
        let pending: Vec<pending::Pending> = c
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        let session = c.session.get().and_then(|r| r.as_ref().ok()).cloned();
        if pending.is_empty() && (only_pending || session.is_none()) {
            return None;
        }
        let cmd = cleanup_command(marker);
        let first = match &session {
            Some(s) => cleaned(s, &cmd).await,
            None => Err(short::Unanswered::NoAnswer(Duration::ZERO)),
        };
        let mut done = first.is_ok();
        // A node that answered with a flood (its login shell never reaches a command) would
        // flood a fresh connection too: not asked again.
        let flooded = matches!(first, Err(short::Unanswered::Flooded(_)));
        if !done && !flooded && !pending.is_empty() {
            // The node's connection is gone (its sshd died, the link dropped): a fresh one.
            if let Some(s) = self.connect_fresh(&c.spec).await {
                done = cleaned(&s, &cmd).await.is_ok();
                let _ = tokio::time::timeout(Duration::from_secs(2), s.close()).await;
            }
        }
        if done {
            c.pending.lock().unwrap_or_else(|p| p.into_inner()).clear();
            return None;
        }
        pending::leftover(&c.spec.name, &pending)
    }
}

/// The node cleanup ran over `s` and ended well, within 5 s (and [`short::MAX_BYTES`]).
async fn cleaned(s: &Session, cmd: &str) -> Result<(), short::Unanswered> {
    let a = short::run(s, cmd, Duration::from_secs(5)).await?;
    if a.success {
        Ok(())
    } else {
        Err(short::Unanswered::Ssh("the clean-up failed".into()))
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
        let mut r = self.rt.block_on(self.run_async(node, req, &tag, sink));
        if let Ok(out) = &mut r {
            let conn = self.conn(node);
            let mut notices = conn.notices.lock().unwrap_or_else(|p| p.into_inner());
            // What connecting met comes before what this command met.
            let mut met = std::mem::take(&mut *notices);
            met.append(&mut out.notices);
            out.notices = met;
        }
        // A command sent (see run_async) whose end is known is not pending any more.
        if pending::settled(&r) {
            let conn = self.conn(node);
            let mut p = conn.pending.lock().unwrap_or_else(|p| p.into_inner());
            p.remove(&tag);
        }
        r.map_err(|e| {
            e.with_ended(|| super::leftovers::ended_note(self.end_command(node, &tag, req.sudo)))
        })
    }

    /// Interrupt path: kill this run's processes on every connected node. Every command line
    /// carries the run marker; `timeout` forwards the TERM to the command's process group.
    fn cleanup(&self) -> Vec<super::Leftover> {
        self.clean(false)
    }

    fn cleanup_pending(&self) -> Vec<super::Leftover> {
        self.clean(true)
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
        let watchdog = self
            .watchdog
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(w) = watchdog {
            w.finish();
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

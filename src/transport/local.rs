//! `transport = "local"`: commands run on this machine, in their own process group, killed as
//! a group on timeout or interrupt.

use super::capture::{Capped, Stream};
use super::{cancel, CmdOutput, CmdRequest, Transport, TransportError};
use crate::inventory::Node;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Default)]
pub(crate) struct LocalTransport;

fn kill_group(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a negative pid signals the process group we created.
    unsafe {
        libc::kill(-(pid as i32), sig);
    }
}

/// After the command itself has exited, how long output is still read from processes that it
/// left behind outside its process group (they may hold its stdout open for ever).
pub(crate) const EXIT_GRACE: Duration = Duration::from_millis(500);
/// After TERM at a timeout or interrupt, how long before KILL.
const TERM_GRACE: Duration = Duration::from_secs(3);

/// [`TERM_GRACE`]; tests lengthen it (`FABCHECK_TEST_TERM_GRACE_MS`) to an hour to prove that a
/// second signal shortens it, on a machine however busy.
fn term_grace() -> Duration {
    static GRACE: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *GRACE.get_or_init(|| {
        std::env::var("FABCHECK_TEST_TERM_GRACE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
            .unwrap_or(TERM_GRACE)
    })
}

/// Has `pid` (our child) exited? Does not reap it, so that its process group id stays
/// reserved until the group is killed.
fn exited(pid: u32) -> bool {
    // SAFETY: waitid on our own child with WNOWAIT only inspects it; the struct is zeroed.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        r == 0 && info.si_pid() != 0
    }
}

fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
}

/// A pidfd for our child (readable when it exits), when the kernel has them.
fn pidfd(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open returns a new descriptor that we then own, or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Run `sh -c CMD` locally with a deadline; used by the local transport and by the SSH
/// transport's process fallbacks.
pub(crate) fn run_local(
    node: &str,
    req: &CmdRequest,
    argv: &[String],
) -> Result<CmdOutput, TransportError> {
    run_local_streaming(node, req, argv, &mut |_, _| {})
}

/// [`run_local`] with every chunk of output handed to `sink` as it arrives. The output kept
/// in memory is bounded ([`Capped`]); reading stops once the command has exited (plus
/// [`EXIT_GRACE`]) even if something outside its process group still holds the pipes, and
/// the deadline and an interrupt are honoured whatever the pipes do. The command's `env`
/// reaches it on its stdin ([`super::env_stdin`]: `export` lines, then end of input), never
/// in its environment or argv: `argv` must read it (see [`with_env_from_stdin`]).
pub(crate) fn run_local_streaming(
    node: &str,
    req: &CmdRequest,
    argv: &[String],
    sink: &mut dyn FnMut(Stream, &[u8]),
) -> Result<CmdOutput, TransportError> {
    use std::os::fd::AsRawFd;
    let start = Instant::now();
    let (mut child, mut readers) = spawn(node, req, argv)?;
    let pid = child.id();
    let mut caps = [Capped::default(), Capped::default()];
    let pfd = pidfd(pid);
    let mut buf = vec![0u8; 64 * 1024];
    let deadline = start + req.timeout;
    let mut end = Ending::default();
    loop {
        let now = Instant::now();
        if end.step(pid, now, deadline, readers.iter().all(Option::is_none)) {
            break;
        }
        let ms = end.wait(now, deadline).as_millis().clamp(1, 50) as i32;
        let exit_fd = pfd.as_ref().filter(|_| end.exited_at.is_none());
        let exit_fd = exit_fd.map(|p| p.as_raw_fd());
        read_ready(&mut readers, exit_fd, ms, &mut buf, &mut |i, bytes| {
            sink(STREAMS[i], bytes);
            caps[i].push(bytes);
        });
    }
    drop(readers);
    let status = child.wait().map_err(|e| TransportError::Other {
        node: node.into(),
        message: e.to_string(),
    })?;
    outcome(node, req, end.killed, status, caps, start)
}

const STREAMS: [Stream; 2] = [Stream::Stdout, Stream::Stderr];

type Readers = [Option<Box<dyn ReadFd>>; 2];

/// Start the command in a process group of its own, its `env` on stdin, stdout and stderr
/// non-blocking pipes.
fn spawn(
    node: &str,
    req: &CmdRequest,
    argv: &[String],
) -> Result<(std::process::Child, Readers), TransportError> {
    use std::os::fd::AsRawFd;
    let mut cmd = Command::new(&argv[0]);
    let env = super::env_stdin(req);
    cmd.args(&argv[1..])
        .stdin(match env {
            Some(_) => Stdio::piped(),
            None => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().map_err(|e| TransportError::Other {
        node: node.into(),
        message: format!("cannot start `{}`: {e}", argv[0]),
    })?;
    send_env(child.stdin.take(), env);
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    set_nonblocking(out.as_raw_fd());
    set_nonblocking(err.as_raw_fd());
    Ok((child, [Some(Box::new(out)), Some(Box::new(err))]))
}

/// How a local command is ending: killed (by a timeout or an interrupt), when TERM was sent,
/// when it exited.
#[derive(Default)]
struct Ending {
    killed: Option<&'static str>,
    term_at: Option<Instant>,
    exited_at: Option<Instant>,
}

impl Ending {
    /// Notice the exit, send TERM on a timeout or interrupt and KILL after the grace; true when
    /// reading is over (exited and both pipes closed, or the pipes held past `EXIT_GRACE`).
    fn step(&mut self, pid: u32, now: Instant, deadline: Instant, pipes_closed: bool) -> bool {
        if self.exited_at.is_none() && exited(pid) {
            // Whatever the command left in its group goes too (its leader is not reaped yet,
            // so the group id cannot have been reused).
            kill_group(pid, libc::SIGKILL);
            self.exited_at = Some(now);
        }
        if let Some(t) = self.exited_at {
            // Something outside the group may hold the pipes: stop reading after the grace.
            return pipes_closed || now.duration_since(t) >= EXIT_GRACE;
        }
        if self.killed.is_none() {
            if cancel::interrupted() {
                self.killed = Some("interrupt");
            } else if now >= deadline {
                self.killed = Some("timeout");
            }
            if self.killed.is_some() {
                kill_group(pid, libc::SIGTERM);
                self.term_at = Some(now);
            }
        } else if self
            .term_at
            .is_some_and(|t| now.duration_since(t) >= cancel::grace(term_grace()))
        {
            kill_group(pid, libc::SIGKILL);
            self.term_at = None;
        }
        false
    }

    /// How long to wait for output before checking again (interrupts are a flag).
    fn wait(&self, now: Instant, deadline: Instant) -> Duration {
        let mut wait = Duration::from_millis(50);
        if self.killed.is_none() && self.exited_at.is_none() {
            wait = wait.min(deadline.saturating_duration_since(now));
        }
        if let Some(t) = self.exited_at {
            wait = wait.min((t + EXIT_GRACE).saturating_duration_since(now));
        }
        wait
    }
}

/// Wait up to `ms` for output (or the exit, through `exit_fd`), then drain what is there: a
/// bounded number of reads per stream, so that both streams and the deadline get their turn.
/// A closed or failed stream is set to None.
fn read_ready(
    readers: &mut Readers,
    exit_fd: Option<i32>,
    ms: i32,
    buf: &mut [u8],
    got: &mut dyn FnMut(usize, &[u8]),
) {
    let mut pollfds: Vec<libc::pollfd> = Vec::with_capacity(3);
    let mut which: Vec<usize> = Vec::with_capacity(2);
    for (i, r) in readers.iter().enumerate() {
        if let Some(r) = r {
            pollfds.push(libc::pollfd {
                fd: r.fd(),
                events: libc::POLLIN,
                revents: 0,
            });
            which.push(i);
        }
    }
    if let Some(fd) = exit_fd {
        pollfds.push(libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
    }
    // SAFETY: pollfds is a valid array of pollfd of the given length.
    let n = unsafe { libc::poll(pollfds.as_mut_ptr(), pollfds.len() as libc::nfds_t, ms) };
    if n <= 0 {
        return;
    }
    for (k, &i) in which.iter().enumerate() {
        if pollfds[k].revents == 0 {
            continue;
        }
        for _ in 0..16 {
            let Some(r) = readers[i].as_mut() else { break };
            match r.read(buf) {
                Ok(0) => readers[i] = None,
                Ok(n) => {
                    got(i, &buf[..n]);
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => readers[i] = None,
            }
            break;
        }
    }
}

/// The command's result from how it ended.
fn outcome(
    node: &str,
    req: &CmdRequest,
    killed: Option<&'static str>,
    status: std::process::ExitStatus,
    caps: [Capped; 2],
    start: Instant,
) -> Result<CmdOutput, TransportError> {
    let [out_cap, err_cap] = caps;
    match killed {
        Some("timeout") => Err(TransportError::timed_out(
            node,
            req,
            out_cap.into_string(),
            err_cap.into_string(),
            start.elapsed(),
        )),
        Some(_) => Err(TransportError::Interrupted { node: node.into() }),
        None => {
            use std::os::unix::process::ExitStatusExt;
            let exit_code = status
                .code()
                .map(i64::from)
                .or_else(|| status.signal().map(|s| 128 + i64::from(s)));
            Ok(CmdOutput {
                notices: Vec::new(),
                stdout: out_cap.into_string(),
                stderr: err_cap.into_string(),
                exit_code,
                duration: start.elapsed(),
            })
        }
    }
}

/// Write the command's `env` lines to its stdin and close it, from a thread of its own: a
/// command that does not read (sudo refused, a syntax error) never blocks the run; the write
/// then fails (SIGPIPE is ignored in Rust programs) and the thread ends.
fn send_env(stdin: Option<std::process::ChildStdin>, env: Option<Vec<u8>>) {
    use std::io::Write;
    if let (Some(mut stdin), Some(bytes)) = (stdin, env) {
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
}

/// The `sh -c` script of a command with an `env`: the `export` lines from stdin first (see
/// [`super::env_stdin`]; `eval` is a builtin, so the values stay inside this shell and what it
/// starts, after sudo, which clears the environment), then the command on a line of its own.
fn with_env_from_stdin(req: &CmdRequest) -> String {
    if req.env.is_empty() {
        req.command.clone()
    } else {
        format!("eval \"$(cat)\"\n{}", req.command)
    }
}

/// A readable pipe with its descriptor.
trait ReadFd: Read {
    fn fd(&self) -> i32;
}
impl<T: Read + std::os::fd::AsRawFd> ReadFd for T {
    fn fd(&self) -> i32 {
        self.as_raw_fd()
    }
}

impl Transport for LocalTransport {
    fn run(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        self.run_streaming(node, req, &mut |_, _| {})
    }

    fn run_streaming(
        &self,
        node: &Node,
        req: &CmdRequest,
        sink: &mut dyn FnMut(Stream, &[u8]),
    ) -> Result<CmdOutput, TransportError> {
        use super::leftovers::{command_tag, end_command_script, ended_note, CMD_ENV};
        let tag = command_tag();
        // As on a node: the run marker and the command's tag in the environment of everything
        // the command starts (after sudo, which would drop them); the command's own `env`
        // through stdin (see with_env_from_stdin).
        let mut argv = sudo_prefix(req.sudo);
        argv.extend([
            "env".into(),
            format!("{}={}", super::RUN_ENV, super::run_marker()),
            format!("{CMD_ENV}={tag}"),
            "sh".into(),
            "-c".into(),
            with_env_from_stdin(req),
            super::run_marker().into(),
        ]);
        // The group is killed at a timeout; what left it is found by the command's tag.
        run_local_streaming(&node.name, req, &argv, sink).map_err(|e| {
            e.with_ended(|| {
                let mut end = sudo_prefix(req.sudo);
                end.extend(["sh".into(), "-c".into(), end_command_script(&tag)]);
                let how = CmdRequest {
                    command: "(end what the command left running)".into(),
                    timeout: Duration::from_secs(10),
                    env: vec![],
                    sudo: req.sudo,
                };
                ended_note(run_local(&node.name, &how, &end).map(|o| o.stdout))
            })
        })
    }
}

/// `sudo -n` before a command that needs root, unless fabcheck runs as root.
fn sudo_prefix(sudo: bool) -> Vec<String> {
    // SAFETY: geteuid(2) has no failure mode.
    if sudo && unsafe { libc::geteuid() } != 0 {
        vec!["sudo".into(), "-n".into()]
    } else {
        Vec::new()
    }
}

//! `transport = "local"`: commands run on this machine, in their own process group, killed as
//! a group on timeout or interrupt.

use super::{cancel, human, text, CmdOutput, CmdRequest, Transport, TransportError};
use crate::inventory::Node;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct LocalTransport;

fn kill_group(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a negative pid signals the process group we created.
    unsafe {
        libc::kill(-(pid as i32), sig);
    }
}

/// Run `sh -c CMD` locally with a deadline; used by the local transport and by the SSH
/// transport's process fallbacks.
pub fn run_local(
    node: &str,
    req: &CmdRequest,
    argv: &[String],
) -> Result<CmdOutput, TransportError> {
    let start = Instant::now();
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in &req.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|e| TransportError::Other {
        node: node.into(),
        message: format!("cannot start `{}`: {e}", argv[0]),
    })?;
    let pid = child.id();
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let to = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let te = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let deadline = start + req.timeout;
    let mut killed: Option<&'static str> = None;
    let mut term_at: Option<Instant> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => {
                return Err(TransportError::Other {
                    node: node.into(),
                    message: e.to_string(),
                })
            }
        }
        let now = Instant::now();
        if killed.is_none() {
            if cancel::interrupted() {
                killed = Some("interrupt");
            } else if now >= deadline {
                killed = Some("timeout");
            }
            if killed.is_some() {
                kill_group(pid, libc::SIGTERM);
                term_at = Some(now);
            }
        } else if term_at.is_some_and(|t| now.duration_since(t) > Duration::from_secs(3)) {
            kill_group(pid, libc::SIGKILL);
            term_at = None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Whatever the command left in its group goes too.
    kill_group(pid, libc::SIGKILL);
    let stdout = text(&to.join().unwrap_or_default());
    let stderr = text(&te.join().unwrap_or_default());
    match killed {
        Some("timeout") => Err(TransportError::Timeout {
            node: node.into(),
            command: req.command.clone(),
            timeout: human(req.timeout),
        }),
        Some(_) => Err(TransportError::Interrupted { node: node.into() }),
        None => {
            use std::os::unix::process::ExitStatusExt;
            let exit_code = status
                .code()
                .map(i64::from)
                .or_else(|| status.signal().map(|s| 128 + i64::from(s)));
            Ok(CmdOutput {
                stdout,
                stderr,
                exit_code,
                duration: start.elapsed(),
            })
        }
    }
}

impl Transport for LocalTransport {
    fn run(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        let mut argv: Vec<String> = Vec::new();
        if req.sudo && unsafe { libc::geteuid() } != 0 {
            argv.extend(["sudo".into(), "-n".into()]);
        }
        argv.extend([
            "sh".into(),
            "-c".into(),
            req.command.clone(),
            super::run_marker().into(),
        ]);
        run_local(&node.name, req, &argv)
    }
}

//! Ending what a run leaves: the node-side interrupt cleanup, and the local ssh processes
//! of the run at its end.

use std::time::{Duration, Instant};

/// The node line of the cleanup of an interrupted run, run through `sh -c` whatever the
/// login shell is (see [`crate::transport::leftovers::in_sh`]): TERM the process groups of every process
/// whose command line holds the run marker (`timeout` runs each command in a group of its
/// own, so children that do not carry the marker go too), and of every process whose
/// environment holds `FABCHECK_RUN=<marker>` (set for every command, inherited by what it
/// starts: a child that left the group with `setsid` still has it); KILL them a second later.
/// The patterns are the marker with its first character in brackets: they match the run's
/// processes but not the cleanup's own shell or grep, which therefore live on to the KILL step.
pub(super) fn cleanup_command(marker: &str) -> String {
    use crate::transport::leftovers::{bracketed, envp_function, in_sh};
    in_sh(
        &format!(
        "{}; \
         d=$(envp); g=; for p in $(pgrep -f -- {p}) $d; do g=\"$g $(ps -o pgid= -p \"$p\")\"; done; \
         [ -n \"$(echo $g $d)\" ] || exit 0; \
         for x in $g; do kill -TERM -\"$x\"; done 2>/dev/null; kill -TERM $d 2>/dev/null; sleep 1; \
         for x in $g; do kill -KILL -\"$x\"; done 2>/dev/null; pkill -KILL -f -- {p}; \
         kill -KILL $d $(envp) 2>/dev/null; true",
        envp_function(crate::transport::RUN_ENV, marker),
            p = crate::transport::quote(&bracketed(marker)),
        ),
        false,
    )
}

pub(super) async fn futures_join_all<F: std::future::Future<Output = ()>>(
    futs: impl Iterator<Item = F>,
) {
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
pub(super) fn reap_local_ssh(control_dir: &str, patience: Duration) {
    let signal = kill_all;
    let start = Instant::now();
    // What they started (a `Match exec` still running, a ProxyCommand) goes too.
    let mut pids = with_descendants(local_ssh(control_dir));
    signal(&pids, libc::SIGTERM);
    let mut killed = false;
    while !pids.is_empty() && start.elapsed() < patience * 2 {
        std::thread::sleep(Duration::from_millis(20));
        pids = with_descendants(local_ssh(control_dir));
        if !killed && start.elapsed() >= patience {
            signal(&pids, libc::SIGKILL);
            killed = true;
        }
    }
}

/// `(pid, parent pid)` of every process on this machine.
fn parents() -> Vec<(i32, i32)> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<i32>().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // "pid (comm) state ppid …": comm may hold spaces and parentheses.
            let ppid = stat
                .rsplit(')')
                .next()?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some((pid, ppid))
        })
        .collect()
}

/// `roots` and every process below them.
fn with_descendants(roots: Vec<i32>) -> Vec<i32> {
    let all = parents();
    let mut found = roots;
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(all.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    found
}

fn kill_all(pids: &[i32], sig: i32) {
    for &p in pids {
        // SAFETY: plain kill(2) of a process this run started (or one of its children).
        unsafe {
            libc::kill(p, sig);
        }
    }
}

/// End the ssh of this run still setting up `node`'s master (our own child: a master that is
/// set up has forked away from us), and everything it started (`Match exec`, ProxyCommand).
pub(super) fn kill_connecting_ssh(control_dir: &str, node: &crate::inventory::Node) {
    let me = std::process::id() as i32;
    let port = node.port.map(|p| format!("\0-p\0{p}\0"));
    let ours: Vec<i32> = parents()
        .into_iter()
        .filter(|(_, pp)| *pp == me)
        .map(|(p, _)| p)
        .filter(|p| {
            let Ok(cmd) = std::fs::read(format!("/proc/{p}/cmdline")) else {
                return false;
            };
            let cmd = String::from_utf8_lossy(&cmd);
            cmd.starts_with("ssh\0")
                && cmd.contains(control_dir)
                && cmd.ends_with(&format!("\0{}\0", node.host))
                && port.as_ref().is_none_or(|p| cmd.contains(p.as_str()))
        })
        .collect();
    kill_all(&with_descendants(ours), libc::SIGKILL);
}

/// A small local process of its own (`sh`, its own process group, deaf to INT/TERM/HUP) that
/// outlives fabcheck only to clean up after it: it waits for the end of its stdin, a pipe
/// whose only writer is fabcheck, so it wakes when fabcheck ends in any way (SIGKILL too).
/// It then, for every master still there, all nodes at once, runs the interrupt's node
/// cleanup ([`cleanup_command`]) through it, bounded by [`WATCHDOG_NODE_S`] (a dead node or a
/// stopped sshd costs that, never more), so that no process of the run is left on the node,
/// and tells the master to exit (`ssh -O exit`: a master with a command still running would
/// otherwise stay until that command ends, up to its timeout); then it removes the run's
/// control directory. After a normal end it finds nothing to do (no control directory is left).
pub(super) struct Watchdog {
    child: std::process::Child,
}

/// Seconds the watchdog gives the node cleanup on each node (all nodes at once): the cleanup
/// itself takes about a second (TERM, a second, KILL).
pub(super) const WATCHDOG_NODE_S: u32 = 4;

/// The watchdog's script: `$FC_DIR` the run's control directory, `$FC_CLEANUP` the node line
/// of [`cleanup_command`], `$FC_NODE_S` the bound of each node's cleanup. The ssh clients
/// reach the nodes only through a master's socket (`ControlMaster=no`, no config, no agent,
/// `BatchMode`): never a new connection, never a question.
const WATCHDOG: &str = "trap '' INT TERM HUP; cat >/dev/null; \
    ctl() { s=$1; shift; timeout -k 1 \"$FC_NODE_S\" ssh -F /dev/null -o ControlPath=\"$s\" \
    -o ControlMaster=no -o BatchMode=yes \"$@\" </dev/null >/dev/null 2>&1; }; \
    for s in \"$FC_DIR\"/*/.ssh-connection*/master; do [ -S \"$s\" ] && \
    { ctl \"$s\" fabcheck-watchdog \"$FC_CLEANUP\"; ctl \"$s\" -O exit fabcheck-watchdog; } & \
    done; wait; rm -rf -- \"$FC_DIR\"";

impl Watchdog {
    /// Watch over the run's control directory `outer` and the nodes of run `marker` (both
    /// reach the watchdog in its environment, not on its command line: a search for the run's
    /// ssh processes, or for its marker, by command line does not find it).
    pub(super) fn start(outer: &std::path::Path, marker: &str) -> Option<Watchdog> {
        use std::os::unix::process::CommandExt;
        std::process::Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG)
            .arg("fabcheck-watchdog")
            .env("FC_DIR", outer)
            .env("FC_CLEANUP", cleanup_command(marker))
            .env("FC_NODE_S", WATCHDOG_NODE_S.to_string())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .ok()
            .map(|child| Watchdog { child })
    }

    /// The run ended well: let the watchdog go (end of its stdin) and wait for it, 2 s at most.
    pub(super) fn finish(mut self) {
        drop(self.child.stdin.take());
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::{Duration, Instant};

    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                let state = s.rsplit(')').next().unwrap_or("").trim_start();
                !state.starts_with('Z')
            })
            .unwrap_or(false)
    }

    /// Wait (bounded) until `pid` runs `sleep` (`setsid` has exec'd it): waited for, never a
    /// pause.
    fn sleeping(pid: i32) {
        let t = Instant::now();
        while !std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.starts_with(b"sleep\0"))
        {
            assert!(
                t.elapsed() < Duration::from_secs(120),
                "the sleep never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
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
                crate::util::skip::skip(&format!("the login shell {shell} is not installed"));
                continue;
            }
            cleanup_kills_what_ignores_term(shell);
        }
    }

    fn cleanup_kills_what_ignores_term(shell: &str) {
        let marker = test_marker("ut");
        // As on a node: `timeout` (own process group) around `sh -c CMD MARKER`, whose child
        // does not carry the marker and ignores TERM.
        // The command lasts an hour (its own `timeout` too): only the cleanup's KILL ends it
        // within the bound, far above the second the cleanup takes, however busy the machine.
        let bound = Duration::from_secs(120);
        let mut child = Command::new("timeout")
            .args([
                "-k",
                "20",
                "3600",
                "sh",
                "-c",
                "trap '' TERM; sleep 3601; :",
                &marker,
            ])
            .spawn()
            .unwrap();
        let pg = child.id().to_string();
        let mut sleeper = None;
        let t = Instant::now();
        while sleeper.is_none() && t.elapsed() < bound {
            let o = Command::new("pgrep")
                .args(["-g", &pg, "-x", "sleep"])
                .output()
                .unwrap();
            sleeper = String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .next()
                .and_then(|p| p.parse::<i32>().ok());
            std::thread::sleep(Duration::from_millis(20));
        }
        let Some(sleeper) = sleeper else {
            let _ = child.kill();
            panic!("{shell}: the sleep never started");
        };
        let st = Command::new(shell)
            .arg("-c")
            .arg(cleanup_command(&marker))
            .status()
            .unwrap();
        // Gone (not a zombie) within the bound, polled: never a fixed pause.
        let t = Instant::now();
        while alive(sleeper) && t.elapsed() < bound {
            std::thread::sleep(Duration::from_millis(20));
        }
        let left = alive(sleeper);
        if left {
            // SAFETY: our own test process.
            unsafe { libc::kill(sleeper, libc::SIGKILL) };
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(st.success(), "{shell}: the cleanup failed: {st:?}");
        assert!(
            !left,
            "{shell}: a TERM-ignoring child survived the cleanup by {bound:?}"
        );
    }

    /// A process that left the command's process group (`setsid`) and has no marker on its
    /// command line is found by the marker in its environment, and killed.
    #[test]
    fn cleanup_command_finds_a_detached_child_by_its_environment() {
        let marker = test_marker("ue");
        // The sleeps last an hour: one that ends, ends by a signal.
        let mut detached = Command::new("setsid")
            .args(["sleep", "3637"])
            .env(crate::transport::RUN_ENV, &marker)
            .spawn()
            .unwrap();
        let pid = detached.id() as i32;
        sleeping(pid);
        let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap();
        assert!(!cmdline.contains(&marker), "{cmdline}");
        let st = Command::new("sh")
            .arg("-c")
            .arg(cleanup_command(&marker))
            .status()
            .unwrap();
        let t = Instant::now();
        while matches!(detached.try_wait(), Ok(None)) && t.elapsed() < Duration::from_secs(120) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let ended = detached.try_wait().unwrap();
        let _ = detached.kill();
        let _ = detached.wait();
        use std::os::unix::process::ExitStatusExt;
        assert!(
            ended.is_some_and(|e| e.signal().is_some()),
            "the detached child survived the cleanup"
        );
        assert!(st.success());
        // Another run's processes are left alone, also when its marker starts with ours.
        let mut other = Command::new("setsid")
            .args(["sleep", "3638"])
            .env(crate::transport::RUN_ENV, format!("{marker}0"))
            .spawn()
            .unwrap();
        sleeping(other.id() as i32);
        let _ = Command::new("sh")
            .arg("-c")
            .arg(cleanup_command(&marker))
            .status();
        assert!(alive(other.id() as i32), "another run's process was killed");
        let _ = other.kill();
        let _ = other.wait();
    }
}

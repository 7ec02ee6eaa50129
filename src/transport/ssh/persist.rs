//! `--persist[=DURATION]`: SSH masters kept alive across runs (OpenSSH `ControlPersist`), in a
//! private directory of the user's: `$XDG_RUNTIME_DIR/fabcheck-persist`, else
//! `/tmp/fabcheck-persist-UID` (0700, owned by the user, refused otherwise). Each node's masters
//! live in a subdirectory named by a hash of what the connection was made with (inventory name,
//! host, user, port, ssh config, host-key policy): a later run with the same settings reuses a
//! master after a liveness check bounded to [`PROBE`]; a socket that is dead, slow, not a
//! socket, or not the user's is discarded, never waited on. `fabcheck disconnect` ends them all;
//! left alone, each exits after DURATION without a client.

use super::control_dir::{check_private_dir, ControlDirError};
use crate::inventory::{KnownHosts, Node};
use openssh::Session;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// The longest a kept master may take to answer its liveness check.
pub(crate) const PROBE: Duration = Duration::from_secs(1);

static PERSIST: OnceLock<Option<Duration>> = OnceLock::new();

/// `--persist[=DURATION]` of this process (set once, by the CLI, before any transport).
pub(crate) fn set(d: Option<Duration>) {
    let _ = PERSIST.set(d);
}

/// The idle time of kept masters, or None: masters end with the run (the default).
pub(crate) fn duration() -> Option<Duration> {
    PERSIST.get().copied().flatten()
}

/// The directory of kept masters (not made).
pub(crate) fn base_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("fabcheck-persist"),
        // SAFETY: geteuid has no preconditions.
        None => PathBuf::from(format!("/tmp/fabcheck-persist-{}", unsafe {
            libc::geteuid()
        })),
    }
}

fn mkdir_private(p: &Path) -> Result<(), ControlDirError> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(p) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(ControlDirError::Create {
                path: p.display().to_string(),
                message: e.to_string(),
            })
        }
    }
    check_private_dir(p)
}

/// FNV-1a, 64 bits: a name that stays the same from one run (and build) to the next.
fn fnv(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The node's directory of kept masters (made private, checked with its parent): its name is
/// what the connection is made with, so other settings never reuse it.
pub(crate) fn node_dir(node: &Node, known_hosts: KnownHosts) -> Result<PathBuf, ControlDirError> {
    let base = base_dir();
    mkdir_private(&base)?;
    let port = node.port.map(|p| p.to_string()).unwrap_or_default();
    let cfg = node
        .ssh_config
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let kh = format!("{known_hosts:?}");
    let key = fnv(&[
        &node.name,
        &node.host,
        node.user.as_deref().unwrap_or(""),
        &port,
        &cfg,
        &kh,
    ]);
    let dir = base.join(key);
    mkdir_private(&dir)?;
    Ok(dir)
}

/// The control sockets under `dir` (`.ssh-connectionXXXX/master`, as the openssh crate names
/// them), with their own directory.
fn sockets(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return vec![];
    };
    rd.flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".ssh-connection"))
        })
        .map(|d| (d.join("master"), d))
        .collect()
}

/// Why the socket at `p` must not be used (None: a socket of this user in a private
/// directory of this user).
fn refused(p: &Path) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    // Its folder (the openssh crate's, 0755 under the user's 0700 node directory): the
    // user's, a real directory, writable by nobody else; and so is every folder above it.
    let mut dir = p.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(base_dir())) {
        let Ok(m) = std::fs::symlink_metadata(d) else {
            return Some(format!("{} cannot be read", d.display()));
        };
        if m.file_type().is_symlink() || !m.is_dir() {
            return Some(format!("{} is not a plain directory", d.display()));
        }
        if m.uid() != me {
            return Some(format!(
                "{} is owned by uid {}, not {me}",
                d.display(),
                m.uid()
            ));
        }
        if m.mode() & 0o022 != 0 {
            return Some(format!(
                "{} is writable by others (mode {:o})",
                d.display(),
                m.mode() & 0o7777
            ));
        }
        dir = d.parent();
    }
    let m = std::fs::symlink_metadata(p).ok()?;
    if !m.file_type().is_socket() {
        return Some(format!("{} is not a socket", p.display()));
    }
    if m.uid() != me {
        return Some(format!(
            "{} is owned by uid {}, not {me}",
            p.display(),
            m.uid()
        ));
    }
    None
}

/// A live kept master of `dir`, resumed; every other socket there discarded (its directory
/// removed: a dead master's, one that did not answer within [`PROBE`], one not the user's).
pub(crate) async fn reuse(dir: &Path, process_mux: bool) -> Option<Session> {
    let mut found = None;
    for (sock, sub) in sockets(dir) {
        if found.is_some() || !sock.exists() || refused(&sock).is_some() {
            discard(&sub);
            continue;
        }
        let s = if process_mux {
            Session::resume(sock.clone().into_boxed_path(), None)
        } else {
            Session::resume_mux(sock.clone().into_boxed_path(), None)
        };
        match tokio::time::timeout(PROBE, s.check()).await {
            Ok(Ok(())) => found = Some(s),
            _ => {
                // detach: never ask it to exit (that could wait too); its socket goes away
                let _ = s.detach();
                discard(&sub);
            }
        }
    }
    found
}

/// Remove a kept master's directory (its socket with it); a directory that is not a plain
/// directory is only unlinked.
fn discard(sub: &Path) {
    match std::fs::symlink_metadata(sub) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(sub);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(sub);
        }
        Err(_) => {}
    }
}

/// Why `fabcheck disconnect` left the kept masters' folder alone.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DisconnectError {
    #[error("{0}: not touched")]
    NotPrivate(ControlDirError),
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

/// `fabcheck disconnect`: every kept master of this user asked to exit (`ssh -O exit`, 2 s at
/// most each) and the directory removed. The masters ended, and why the directory was left
/// alone when it was.
pub(crate) fn disconnect() -> Result<usize, DisconnectError> {
    let base = base_dir();
    if !base.exists() {
        return Ok(0);
    }
    check_private_dir(&base).map_err(DisconnectError::NotPrivate)?;
    let io = |e: std::io::Error| DisconnectError::Io {
        path: base.display().to_string(),
        message: e.to_string(),
    };
    let mut ended = 0;
    for e in std::fs::read_dir(&base).map_err(io)?.flatten() {
        for (sock, _) in sockets(&e.path()) {
            if sock.exists() && refused(&sock).is_none() && exit_master(&sock) {
                ended += 1;
            }
        }
    }
    std::fs::remove_dir_all(&base).map_err(io)?;
    Ok(ended)
}

/// `ssh -S SOCK -O exit`, bounded to 2 s; whether the master said it exits.
fn exit_master(sock: &Path) -> bool {
    let child = std::process::Command::new("ssh")
        .arg("-S")
        .arg(sock)
        .args(["-o", "BatchMode=yes", "-O", "exit", "fabcheck-kept-master"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return st.success(),
            Ok(None) if start.elapsed() < Duration::from_secs(2) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_changes_with_every_setting() {
        let a = fnv(&["lab01", "10.0.0.1", "fclab", "", "", "Strict"]);
        assert_eq!(a, fnv(&["lab01", "10.0.0.1", "fclab", "", "", "Strict"]));
        assert_ne!(a, fnv(&["lab01", "10.0.0.1", "root", "", "", "Strict"]));
        assert_ne!(a, fnv(&["lab01", "10.0.0.1", "fclab", "", "", "Off"]));
        // the parts are separated: moving a character from one to the next is another key
        assert_ne!(fnv(&["ab", "c"]), fnv(&["a", "bc"]));
    }

    #[test]
    fn a_socket_that_is_not_a_socket_is_refused() {
        let d = std::env::temp_dir().join(format!("fc-persist-test-{}", std::process::id()));
        mkdir_private(&d).unwrap();
        let f = d.join("master");
        std::fs::write(&f, "").unwrap();
        assert!(refused(&f).unwrap().contains("not a socket"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}

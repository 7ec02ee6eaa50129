//! `--persist[=DURATION]` and `fabcheck disconnect` (issue 49 item 3) on the lab's real
//! sshd: a kept master is reused by the next run (the node sees the same one TCP connection, so
//! no new handshake), refused when its socket or folder is not the user's, and gone after
//! `disconnect`. Each test keeps its masters under a private XDG_RUNTIME_DIR of its own.

use crate::common::lab::Lab;
use crate::common::{Fab, Outcome};
use std::path::{Path, PathBuf};

const SET: &str = "lab[01-04]";

/// A short private XDG_RUNTIME_DIR (socket paths are limited to 108 bytes); the masters under
/// it ended and it removed when dropped.
struct Xdg(PathBuf);

impl Xdg {
    fn new(tag: &str) -> Xdg {
        use std::os::unix::fs::DirBuilderExt;
        let p = PathBuf::from(format!("/tmp/fcp-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::DirBuilder::new().mode(0o700).create(&p).unwrap();
        Xdg(p)
    }

    fn base(&self) -> PathBuf {
        self.0.join("fabcheck-persist")
    }

    /// PIDs of the ssh masters kept under this directory.
    fn masters(&self) -> Vec<String> {
        let o = std::process::Command::new("pgrep")
            .args(["-f", &format!("ssh -E {}/", self.0.display())])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .map(String::from)
            .collect()
    }

    fn fab(&self, args: &[&str]) -> Outcome {
        Fab::new()
            .env("XDG_RUNTIME_DIR", &self.0.display().to_string())
            .args(args)
            .run()
    }

    fn exec(&self, lab: &Lab) -> Outcome {
        let inv = lab.inventory();
        self.fab(&[
            "exec",
            "--persist=1h",
            "-i",
            &inv,
            "-w",
            SET,
            "--",
            "hostname",
        ])
    }
}

impl Drop for Xdg {
    fn drop(&mut self) {
        for pid in self.masters() {
            let _ = std::process::Command::new("kill").arg(&pid).status();
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The SSH connections lab01's sshd has established: their client address:port.
fn connections(lab: &Lab) -> Vec<String> {
    let (c, out) = lab.exec(
        "lab01",
        "ss -Htn state established '( sport = :22 )' | awk '{print $4}'",
    );
    assert_eq!(c, 0, "{out}");
    let mut v: Vec<String> = out.split_whitespace().map(String::from).collect();
    v.sort();
    v
}

/// `cond` true within [`crate::common::HANG`] (a master's exit closes its connection a moment
/// later; a master nobody ended stays for its `--persist` duration, an hour here).
fn eventually(cond: impl FnMut() -> bool) -> bool {
    crate::common::comes(crate::common::HANG, cond)
}

fn sockets(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(sockets(&p));
            } else if p.file_name().is_some_and(|n| n == "master") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_persisted_master_is_reused_and_gone_after_disconnect() {
    let Some(lab) = Lab::ensure(16, "a_persisted_master_is_reused") else {
        return;
    };
    let xdg = Xdg::new("reuse");
    let before = connections(&lab);
    xdg.exec(&lab).code(0);
    let first = connections(&lab);
    let new: Vec<&String> = first.iter().filter(|c| !before.contains(c)).collect();
    assert_eq!(
        new.len(),
        1,
        "one new connection to lab01: {before:?} -> {first:?}"
    );
    assert_eq!(xdg.masters().len(), 4, "a master kept per node");
    // the second run: the same one connection, none new (no handshake)
    xdg.exec(&lab).code(0);
    assert_eq!(
        connections(&lab),
        first,
        "the second run opened a new connection"
    );
    assert_eq!(xdg.masters().len(), 4);
    let o = xdg.fab(&["disconnect"]);
    o.code(0);
    assert!(
        o.stdout.contains("4 kept SSH connection(s) ended"),
        "{}",
        o.stdout
    );
    assert!(
        eventually(|| !connections(&lab).contains(new[0])),
        "lab01 still has the kept connection after disconnect"
    );
    assert!(
        eventually(|| xdg.masters().is_empty()),
        "{:?}",
        xdg.masters()
    );
    assert!(!xdg.base().exists(), "the kept masters' folder is removed");
}

#[test]
fn a_kept_master_that_is_not_the_users_is_never_reused() {
    let Some(lab) = Lab::ensure(16, "a_kept_master_that_is_not_the_users") else {
        return;
    };
    let xdg = Xdg::new("foreign");
    let before = connections(&lab);
    xdg.exec(&lab).code(0);
    let first = connections(&lab);
    assert_eq!(first.len(), before.len() + 1, "{before:?} -> {first:?}");
    // lab01's kept socket handed to another user: refused, a new connection instead
    let socks: Vec<PathBuf> = sockets(&xdg.base());
    assert_eq!(socks.len(), 4, "{socks:?}");
    for s in &socks {
        std::os::unix::fs::chown(s, Some(65534), Some(65534)).unwrap();
    }
    xdg.exec(&lab).code(0);
    let second = connections(&lab);
    assert_eq!(
        second.len(),
        first.len() + 1,
        "a socket of another user was reused: {first:?} -> {second:?}"
    );
    for s in &socks {
        assert!(!s.exists(), "{} was not discarded", s.display());
    }
    // the folder open to others: nothing kept, the run's own connections, said on the console
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(xdg.base(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = xdg.exec(&lab);
    o.code(0);
    let said = format!("{}{}", o.stdout, o.stderr);
    assert!(said.contains("--persist: not kept"), "{said}");
    assert!(said.contains("open to others"), "{said}");
    let o = xdg.fab(&["disconnect"]);
    assert_eq!(
        o.code, 1,
        "disconnect refuses a folder open to others: {}",
        o.stderr
    );
    assert!(o.stderr.contains("not touched"), "{}", o.stderr);
}

#[test]
fn a_dead_kept_master_is_replaced_and_kept_masters_expire_by_themselves() {
    let Some(lab) = Lab::ensure(16, "a_dead_kept_master_is_replaced") else {
        return;
    };
    let xdg = Xdg::new("expire");
    let inv = lab.inventory();
    let run = |persist: &str| {
        xdg.fab(&["exec", persist, "-i", &inv, "-w", SET, "--", "hostname"])
            .code(0);
    };
    run("--persist=1h");
    let kept = xdg.masters();
    assert_eq!(kept.len(), 4, "{kept:?}");
    // the kept masters die (their sockets stay behind): the next run connects anew
    for pid in &kept {
        assert!(std::process::Command::new("kill")
            .arg(pid)
            .status()
            .unwrap()
            .success());
    }
    assert!(eventually(|| xdg.masters().is_empty()));
    run("--persist=2s");
    let again = xdg.masters();
    assert_eq!(again.len(), 4, "{again:?}");
    assert!(
        again.iter().all(|p| !kept.contains(p)),
        "{kept:?} -> {again:?}"
    );
    // left alone, they exit 2 s after the run's end (their ControlPersist)
    assert!(
        eventually(|| xdg.masters().is_empty()),
        "kept masters still alive {:?} after a --persist=2s run: {:?}",
        crate::common::HANG,
        xdg.masters()
    );
}

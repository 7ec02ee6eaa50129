//! The namespace lab (tests/lab/lab.sh): real sshd nodes for integration tests. Without root
//! a lab test skips with a visible notice; with `CI` set a skipped lab test is a failure.
//!
//! The lab lives in a network namespace of its own (`fclab-net`): the host keeps no bridge and
//! no route. While a `Lab` lives, its test's thread is inside that namespace (setns is per
//! thread), so fabcheck, ssh and srun started by the test reach the nodes; other tests' threads
//! stay on the host's network. When the test binary exits, the lab is torn down (and the lab
//! user removed) unless `FCLAB_KEEP=1`.
#![allow(dead_code)]

use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, Once};

/// Lab tests of one test binary share the lab: they take turns.
static TURN: Mutex<()> = Mutex::new(());

/// Lab tests of different test runs (a second clone's `cargo test`, another worktree) share
/// the one lab too: they take turns through this lock file, held while a `Lab` lives.
const RUNS_LOCK: &str = "/run/fclab.tests.lock";

/// The lab's network namespace (tests/lab/lab.sh `LAB_NS_PATH`).
const LAB_NETNS: &str = "/run/netns/fclab-net";

/// Registers the teardown of the lab at the exit of this test binary, once.
static TEARDOWN: Once = Once::new();

pub struct Lab {
    pub dir: PathBuf,
    pub n: usize,
    pub variant: Variant,
    /// The test thread's own network namespace, entered again when the `Lab` is dropped.
    host_netns: Option<std::fs::File>,
    _turn: MutexGuard<'static, ()>,
    _runs: std::fs::File,
}

/// A lab set up differently from the default (tests/lab/README.md, "Variants"). The default
/// value is the default lab.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variant {
    /// Nodes resolve only their own name: no /etc/hosts entries for the other lab nodes inside
    /// the nodes (`lab.sh --no-names`); peers are reached by address.
    pub no_names: bool,
    /// The lab user's `~/.ssh/config` holds this text, and its `known_hosts` starts empty
    /// (`lab.sh --user-ssh-config TEXT`), e.g. `"StrictHostKeyChecking no"`.
    pub user_ssh_config: Option<String>,
    /// The lab user's login shell is bash and its `~/.bashrc` prints a banner on stdout and
    /// module chatter on stderr (`lab.sh --noisy-shell`).
    pub noisy_shell: bool,
    /// A real Slurm cluster over the nodes: munged and slurmctld on the root side, one slurmd
    /// per node, `select/linear` (`lab.sh --slurm`); root-side Slurm commands need
    /// `SLURM_CONF=DIR/slurm.conf`.
    pub slurm: bool,
}

impl Variant {
    /// lab.sh options selecting this variant (none for the default lab).
    pub fn args(&self) -> Vec<String> {
        let mut a = Vec::new();
        if self.no_names {
            a.push("--no-names".to_string());
        }
        if let Some(c) = &self.user_ssh_config {
            a.push("--user-ssh-config".to_string());
            a.push(c.clone());
        }
        if self.noisy_shell {
            a.push("--noisy-shell".to_string());
        }
        if self.slurm {
            a.push("--slurm".to_string());
        }
        a
    }
}

fn script() -> PathBuf {
    super::repo().join("tests/lab/lab.sh")
}

/// Waits for the lab tests of any other test run on this machine to finish with the lab.
fn lock_runs() -> std::fs::File {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(RUNS_LOCK)
        .unwrap_or_else(|e| panic!("open {RUNS_LOCK}: {e}"));
    f.lock().unwrap_or_else(|e| panic!("lock {RUNS_LOCK}: {e}"));
    f
}

fn lab_dir() -> PathBuf {
    PathBuf::from(std::env::var("FCLAB_DIR").unwrap_or_else(|_| "/tmp/fclab".into()))
}

/// Moves the calling thread into the network namespace `path`; returns its previous one.
fn enter_netns(path: &str) -> std::fs::File {
    let own = std::fs::File::open("/proc/thread-self/ns/net")
        .unwrap_or_else(|e| panic!("open /proc/thread-self/ns/net: {e}"));
    set_netns(path);
    own
}

fn set_netns(path: &str) {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {path}: {e}"));
    // SAFETY: setns on an open namespace file descriptor; affects only the calling thread.
    let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(rc, 0, "setns {path}: {}", std::io::Error::last_os_error());
}

/// At exit of the test binary: `lab.sh down` (under the runs lock, so a lab test of another
/// run finishes first; its next `ensure` builds a new lab), unless FCLAB_KEEP is set.
extern "C" fn teardown_at_exit() {
    let keep = std::env::var("FCLAB_KEEP").is_ok_and(|v| !v.is_empty() && v != "0");
    if keep {
        eprintln!(
            "NOTICE: FCLAB_KEEP is set: the test lab stays up (tests/lab/lab.sh down removes it)"
        );
        return;
    }
    let _runs = lock_runs();
    let _ = Command::new("bash")
        .arg(script())
        .args(["down", "--dir"])
        .arg(lab_dir())
        .env("FCLAB_QUIET", "1")
        .status();
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl Lab {
    /// A healthy default lab of `n` nodes, or None (skip) when this is not root.
    pub fn ensure(n: usize, test: &str) -> Option<Lab> {
        Self::ensure_variant(n, &Variant::default(), test)
    }

    /// A healthy lab of `n` nodes set up as `variant` (rebuilt when the lab in place is another
    /// variant or size), or None (skip) when this is not root. Dropping a variant lab rebuilds
    /// the default lab, so tests (and older checkouts' lab.sh, which cannot tell variants
    /// apart) that come next find the lab they expect.
    pub fn ensure_variant(n: usize, variant: &Variant, test: &str) -> Option<Lab> {
        let turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
        if !is_root() {
            super::skip(&format!(
                "lab test `{test}` needs root (ip netns, sshd in namespaces)"
            ));
            return None;
        }
        TEARDOWN.call_once(|| {
            // SAFETY: registers a plain function to run at process exit.
            unsafe { libc::atexit(teardown_at_exit) };
        });
        let runs = lock_runs();
        let dir = lab_dir();
        let st = Command::new("bash")
            .arg(script())
            .args(["ensure", &n.to_string(), "--dir"])
            .arg(&dir)
            .args(variant.args())
            .env("FCLAB_QUIET", "1")
            .status()
            .expect("run lab.sh");
        assert!(st.success(), "lab.sh ensure {n} {variant:?} failed");
        let host_netns = Some(enter_netns(LAB_NETNS));
        Some(Lab {
            dir,
            n,
            variant: variant.clone(),
            host_netns,
            _turn: turn,
            _runs: runs,
        })
    }

    pub fn inventory(&self) -> String {
        self.dir.join("inventory.toml").display().to_string()
    }

    pub fn sh(&self, args: &[&str]) -> (i32, String) {
        let o = Command::new("bash")
            .arg(script())
            .args(args)
            .arg("--dir")
            .arg(&self.dir)
            .env("FCLAB_QUIET", "1")
            .output()
            .expect("run lab.sh");
        (
            o.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        )
    }

    pub fn kill_sshd(&self, node: &str) {
        let (c, out) = self.sh(&["kill-sshd", node]);
        assert_eq!(c, 0, "kill-sshd {node}: {out}");
    }

    pub fn start_sshd(&self, node: &str) {
        let (c, out) = self.sh(&["start-sshd", node]);
        assert_eq!(c, 0, "start-sshd {node}: {out}");
    }

    /// Processes of the lab user on a node, except sshd: "PID CMDLINE" lines.
    pub fn pids(&self, node: &str) -> String {
        self.sh(&["pids", node]).1.trim().to_string()
    }

    /// Run a command as root inside a node.
    pub fn exec(&self, node: &str, cmd: &str) -> (i32, String) {
        self.sh(&["exec", node, "sh", "-c", cmd])
    }

    pub fn node(&self, i: usize) -> String {
        if self.n > 99 {
            format!("lab{i:03}")
        } else {
            format!("lab{i:02}")
        }
    }

    /// Install a shim program into every node's PATH (DIR/shims/bin is first on it).
    pub fn shim(&self, name: &str, body: &str) {
        let p = self.dir.join("shims/bin").join(name);
        std::fs::write(&p, body).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    pub fn remove_shims(&self) {
        if let Ok(rd) = std::fs::read_dir(self.dir.join("shims/bin")) {
            for e in rd.flatten() {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // back on the host's network first: lab.sh up replaces the lab's namespace
        if let Some(own) = self.host_netns.take() {
            // SAFETY: setns on the thread's own saved namespace descriptor.
            let rc = unsafe { libc::setns(own.as_raw_fd(), libc::CLONE_NEWNET) };
            if rc != 0 {
                eprintln!(
                    "setns back to the host network: {}",
                    std::io::Error::last_os_error()
                );
            }
        }
        self.remove_shims();
        if self.variant != Variant::default() {
            let (c, out) = self.sh(&["up", &self.n.to_string()]);
            if c != 0 {
                eprintln!(
                    "lab.sh up {} (back to the default lab) failed: {out}",
                    self.n
                );
            }
            return;
        }
        // Leave every sshd running for the next test.
        let (_, status) = self.sh(&["status"]);
        for line in status.lines().filter(|l| l.contains("sshd not running")) {
            if let Some(node) = line.split_whitespace().next() {
                let _ = self.sh(&["start-sshd", node]);
            }
        }
    }
}

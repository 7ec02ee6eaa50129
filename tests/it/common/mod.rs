//! Integration-test harness: runs the built `fabcheck` binary through a small fluent builder
//! (in the style of `just`'s tests) and reads back its reports.
#![allow(dead_code)]

#[path = "../../../src/util/skip.rs"]
mod skip_rule;
pub(crate) use skip_rule::skip;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The fabcheck under test: this checkout's, or `FABCHECK_TEST_BIN` (to show that a new test
/// fails with another build, e.g. main's).
pub fn bin() -> PathBuf {
    std::env::var_os("FABCHECK_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_fabcheck")))
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A folder every user can enter, for what another user (the lab user on the nodes, `nobody`)
/// must read or run: the checkout may be inside a folder only root enters (root's home is
/// 0700 on Debian and Ubuntu, a `mktemp -d` too). Made once per test binary under the temp
/// folder (0755), removed when the test binary exits. A temp folder other users cannot reach
/// (`TMPDIR` inside a 0700 folder) is said up front, exactly.
pub fn reachable_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let d = std::env::temp_dir().join(format!("fabcheck-reachable-{}", std::process::id()));
        for a in d.ancestors().skip(1) {
            let mode = std::fs::metadata(a)
                .map(|m| m.permissions().mode())
                .unwrap_or(0);
            assert!(
                mode & 0o001 != 0,
                "{} is mode {:o}: the lab user and `nobody` cannot enter it, so the tests that \
                 hand them fabcheck or a capture cannot work; run with TMPDIR=/tmp (or any \
                 folder every user can enter)",
                a.display(),
                mode & 0o7777
            );
        }
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        extern "C" fn remove() {
            if let Some(d) = DIR.get() {
                let _ = std::fs::remove_dir_all(d);
            }
        }
        // SAFETY: registers a plain function to run at process exit.
        unsafe { libc::atexit(remove) };
        d
    })
}

/// `from` copied into [`reachable_dir`] as `name`, readable (and, when `from` is, runnable) by
/// every user.
pub fn reachable_copy(from: &Path, name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let to = reachable_dir().join(name);
    if !to.exists() {
        let tmp = reachable_dir().join(format!(".{name}.{:?}", std::thread::current().id()));
        std::fs::copy(from, &tmp).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
        let runnable = std::fs::metadata(from).unwrap().permissions().mode() & 0o111 != 0;
        let mode = if runnable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode)).unwrap();
        std::fs::rename(&tmp, &to).unwrap();
    }
    to
}

/// The fabcheck under test where another user can run it (see [`reachable_dir`]).
pub fn reachable_bin() -> PathBuf {
    reachable_copy(&bin(), "fabcheck")
}

/// Wait until `done` holds (checked every 20 ms), at most `within`: a test waits for what it
/// needs (a file a script touched, a process there or gone), never a fixed sleep that a busy
/// 2-core CI machine can outlast. Panics naming `what` after `within`.
pub fn eventually(within: std::time::Duration, what: &str, done: impl FnMut() -> bool) {
    assert!(comes(within, done), "{what}: not within {within:?}");
}

/// The bound for what takes seconds when it works and for ever when the fault a test guards is
/// back (the test makes that side an hour long: a remote `sleep 3600`, a report pause of an
/// hour): far above the seconds, which a busy 2-core CI machine stretches tenfold, and a small
/// fraction of the hang. Never a performance figure (those are printed by scripts/bench_*.sh).
pub const HANG: std::time::Duration = std::time::Duration::from_secs(120);

/// `child`'s end and its output, waited for at most `within` (stdout and stderr are read as
/// they come): past it the child is killed and the test fails naming `what`, so a hang fails
/// the test instead of holding the suite for the hour it would last.
pub fn output_within(
    child: std::process::Child,
    within: std::time::Duration,
    what: &str,
) -> std::process::Output {
    Watched::of(child).output_within(within, what)
}

/// Send `sig` to `pid` and wait until it has been delivered (no longer pending in
/// `/proc/PID/status`): a signal sent next is a delivery of its own, never merged by the kernel
/// into this one while it is still pending (a double Ctrl-C, GNU `timeout`'s two signals), with
/// no pause that a busy machine could outlast.
pub fn signal_delivered(pid: u32, sig: i32) {
    // SAFETY: signalling a process this test started.
    unsafe { libc::kill(pid as i32, sig) };
    let bit = 1u64 << (sig - 1);
    let pending = || {
        let Ok(st) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            return false;
        };
        st.lines()
            .filter_map(|l| {
                let v = l.strip_prefix("SigPnd:").or(l.strip_prefix("ShdPnd:"))?;
                u64::from_str_radix(v.trim(), 16).ok()
            })
            .any(|m| m & bit != 0)
    };
    eventually(HANG, "the signal was delivered", || !pending());
}

/// Whether `done` comes to hold within `within` (checked every 20 ms): [`eventually`] for a
/// test that asserts what it finds itself.
pub fn comes(within: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let t = std::time::Instant::now();
    while !done() {
        if t.elapsed() >= within {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

/// A capture of `tests/fixtures` where the lab user can read it (see [`reachable_dir`]).
pub fn reachable_fixture(rel: &str) -> String {
    let name = rel.replace('/', "__");
    reachable_copy(&repo().join("tests/fixtures").join(rel), &name)
        .display()
        .to_string()
}

/// The shared JUnit schema (Jenkins xunit, 2018-04 revision); looked up beside the checkout.
pub fn junit_schema() -> Option<PathBuf> {
    let candidates = [
        repo().join("../shared/junit/jenkins-xunit-junit-10-2018-04.xsd"),
        repo().join("tests/junit/jenkins-xunit-junit-10-2018-04.xsd"),
    ];
    candidates.into_iter().find(|p| p.exists())
}

pub struct Fab {
    dir: tempdir::TempDir,
    args: Vec<String>,
    env: Vec<(String, String)>,
    junit: bool,
    json: bool,
    umask: Option<u32>,
}

pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub junit: Option<String>,
    pub json: Option<Value>,
    pub dir: PathBuf,
    _keep: Option<tempdir::TempDir>,
}

pub mod lab;

type Stream = (
    std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    std::thread::JoinHandle<()>,
);

/// A running fabcheck whose output is read as it comes (see [`Fab::spawn_watched`]).
pub struct Watched {
    child: std::process::Child,
    out: Stream,
    err: Stream,
}

impl Watched {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Wait until stdout holds `needle`, at most `within`; whether it came.
    pub fn wait_stdout(&self, needle: &str, within: std::time::Duration) -> bool {
        comes(within, || {
            String::from_utf8_lossy(&self.out.0.lock().unwrap()).contains(needle)
        })
    }

    /// Wait until stderr holds `needle` `times` times, at most `within`; whether it came.
    pub fn wait_stderr(&self, needle: &str, times: usize, within: std::time::Duration) -> bool {
        comes(within, || {
            String::from_utf8_lossy(&self.err.0.lock().unwrap())
                .matches(needle)
                .count()
                >= times
        })
    }

    /// Read `child`'s stdout and stderr (piped) as they come.
    pub fn of(mut child: std::process::Child) -> Watched {
        let read = |mut r: Box<dyn std::io::Read + Send>| {
            let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let b = buf.clone();
            let h = std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = r.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    b.lock().unwrap().extend_from_slice(&chunk[..n]);
                }
            });
            (buf, h)
        };
        let out = read(Box::new(child.stdout.take().expect("stdout piped")));
        let err = read(Box::new(child.stderr.take().expect("stderr piped")));
        Watched { child, out, err }
    }

    /// Wait for the end at most `within` (see [`output_within`]); its output.
    pub fn output_within(
        mut self,
        within: std::time::Duration,
        what: &str,
    ) -> std::process::Output {
        let ended = comes(within, || self.child.try_wait().unwrap().is_some());
        if !ended {
            let _ = self.child.kill();
            let _ = self.child.wait();
            let err = String::from_utf8_lossy(&self.err.0.lock().unwrap()).into_owned();
            panic!("{what}: still running after {within:?} (killed); its stderr: {err}");
        }
        self.output()
    }

    /// Wait for the end; its output as `wait_with_output` gives it.
    pub fn output(self) -> std::process::Output {
        let Watched {
            mut child,
            out,
            err,
        } = self;
        let status = child.wait().unwrap();
        let take = |(buf, h): Stream| {
            let _ = h.join();
            let v = std::mem::take(&mut *buf.lock().unwrap());
            v
        };
        std::process::Output {
            status,
            stdout: take(out),
            stderr: take(err),
        }
    }
}

pub mod tempdir {
    use std::path::{Path, PathBuf};
    pub struct TempDir(PathBuf);
    impl TempDir {
        pub fn new(tag: &str) -> TempDir {
            let n = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            let p = std::env::temp_dir()
                .join(format!("fabcheck-test-{tag}-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
        pub fn path(&self) -> &Path {
            &self.0
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Peak resident memory (KiB) of fabcheck itself: `VmHWM` of the process, sampled every few
/// milliseconds once it has exec'd the fabcheck binary. Not wait4's `ru_maxrss`: the child is
/// forked from this test binary, and its pre-exec copy of the harness's memory (large while
/// many tests run at once) counts in `ru_maxrss` — a busy test run read 150 MiB for a 26 MiB
/// fabcheck.
pub fn run_measuring_rss(f: &Fab) -> (Outcome, u64) {
    let mut child = f
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run fabcheck");
    let proc_dir = PathBuf::from(format!("/proc/{}", child.id()));
    let mut peak = 0u64;
    let status = loop {
        if std::fs::read_link(proc_dir.join("exe")).is_ok_and(|e| e == bin()) {
            let hwm = std::fs::read_to_string(proc_dir.join("status"))
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find(|l| l.starts_with("VmHWM:"))
                        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                });
            peak = peak.max(hwm.unwrap_or(0));
        }
        if let Some(st) = child.try_wait().expect("wait for fabcheck") {
            break st;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let out = std::process::Output {
        status,
        stdout: vec![],
        stderr: vec![],
    };
    (f.outcome(out), peak)
}

impl Fab {
    pub fn new() -> Fab {
        Fab {
            dir: tempdir::TempDir::new("run"),
            args: vec![],
            env: vec![],
            junit: false,
            json: false,
            umask: None,
        }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Write a file into the test's temp dir (scripts, inventories).
    pub fn file(self, name: &str, content: &str) -> Fab {
        let p = self.dir.path().join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, content).unwrap();
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, a: I) -> Fab {
        self.args.extend(a.into_iter().map(|s| {
            s.as_ref()
                .replace("{dir}", &self.dir.path().display().to_string())
        }));
        self
    }

    pub fn env(mut self, k: &str, v: &str) -> Fab {
        self.env.push((k.into(), v.into()));
        self
    }

    /// Run fabcheck under this umask (file modes of the reports).
    pub fn umask(mut self, mask: u32) -> Fab {
        self.umask = Some(mask);
        self
    }

    /// Ask for JUnit and JSON reports (read back into the outcome).
    pub fn reports(mut self) -> Fab {
        self.junit = true;
        self.json = true;
        self
    }

    pub fn command(&self) -> Command {
        let mut c = Command::new(bin());
        c.args(&self.args)
            .current_dir(self.dir.path())
            .env("CI", "true")
            // A test run inside a Slurm allocation: fabcheck is not (srun lines stay as tested).
            .env_remove("SLURM_JOB_ID")
            .env_remove("SLURM_JOB_USER")
            .stdin(Stdio::null());
        if self.junit {
            c.arg("--junit").arg(self.dir.path().join("out/junit.xml"));
        }
        if self.json {
            c.arg("--json").arg(self.dir.path().join("out/result.json"));
        }
        for (k, v) in &self.env {
            c.env(k, v);
        }
        if let Some(mask) = self.umask {
            use std::os::unix::process::CommandExt;
            // SAFETY: umask is async-signal-safe and cannot fail.
            unsafe {
                c.pre_exec(move || {
                    libc::umask(mask as libc::mode_t);
                    Ok(())
                });
            }
        }
        c
    }

    /// Start fabcheck with its stdout and stderr read as they come, so that a test can wait
    /// for a line (a testcase's `PASS`) before it signals the run.
    pub fn spawn_watched(&self) -> Watched {
        Watched::of(self.spawn())
    }

    /// Run it to its end, at most `within` (see [`output_within`]).
    pub fn run_within(&self, within: std::time::Duration, what: &str) -> Outcome {
        self.outcome(output_within(self.spawn(), within, what))
    }

    /// Start fabcheck with stdout and stderr piped (for tests that signal it while it runs).
    pub fn spawn(&self) -> std::process::Child {
        self.command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start fabcheck")
    }

    pub fn run(mut self) -> Outcome {
        let out = self.command().output().expect("run fabcheck");
        let mut o = self.outcome(out);
        o._keep = Some(std::mem::replace(
            &mut self.dir,
            tempdir::TempDir::new("spent"),
        ));
        o
    }

    pub fn outcome(&self, out: std::process::Output) -> Outcome {
        let junit = std::fs::read_to_string(self.dir.path().join("out/junit.xml")).ok();
        let json = std::fs::read_to_string(self.dir.path().join("out/result.json"))
            .ok()
            .map(|s| serde_json::from_str(&s).expect("result.json is JSON"));
        Outcome {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            junit,
            json,
            dir: self.dir.path().to_path_buf(),
            _keep: None,
        }
    }
}

impl Outcome {
    pub fn tests(&self) -> Vec<Value> {
        let j = self.json.as_ref().expect("a JSON report");
        j["suites"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["tests"].as_array().unwrap().clone())
            .collect()
    }

    /// The warnings of the test with this exact name (`warn(...)` lines), in order.
    pub fn warnings(&self, name: &str) -> Vec<String> {
        self.test(name)["warnings"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|w| w.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The test with this exact name (panics with the list of names when absent).
    pub fn test(&self, name: &str) -> Value {
        let all = self.tests();
        all.iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| {
                panic!(
                    "no test named {name:?}; have {:?}\nstdout:\n{}\nstderr:\n{}",
                    all.iter().map(|t| t["name"].clone()).collect::<Vec<_>>(),
                    self.stdout,
                    self.stderr
                )
            })
    }

    /// The row of `node` in the HTML report's node × rail heat map of `metric` (a base name:
    /// `rdma_write_gbps`), from `<tr` to `</tr>` (a run given `--html {dir}/out/report.html`).
    pub fn heat_row(&self, metric: &str, node: &str) -> Option<String> {
        let html = std::fs::read_to_string(self.dir.join("out/report.html")).unwrap_or_default();
        heat_row(&html, metric, node)
    }

    /// The HTML report's pair-matrix cells marked as the odd one out (`v-odd`), each the text
    /// from the cell's attributes on (a run given `--html {dir}/out/report.html`).
    pub fn odd_matrix_cells(&self) -> Vec<String> {
        let html = std::fs::read_to_string(self.dir.join("out/report.html")).unwrap_or_default();
        html.split("<td class=\"num cell v-odd\"")
            .skip(1)
            .map(str::to_string)
            .collect()
    }

    pub fn status(&self, name: &str) -> String {
        self.test(name)["status"].as_str().unwrap().to_string()
    }

    pub fn message(&self, name: &str) -> String {
        self.test(name)["message"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    pub fn code(&self, expected: i32) -> &Outcome {
        assert_eq!(
            self.code, expected,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// The JUnit file validates against Jenkins' xunit schema (xmllint) and loads in Python's
    /// junitparser; returns the junitparser summary line.
    pub fn junit_is_valid(&self) -> String {
        let path = self.dir.join("out/junit.xml");
        assert!(
            path.exists(),
            "no JUnit written\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        validate_junit(&path)
    }
}

pub fn validate_junit(path: &Path) -> String {
    let schema = junit_schema().expect("the JUnit schema (../shared/junit) is present");
    let x = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(path)
        .output()
        .expect("xmllint is installed (libxml2-utils)");
    assert!(
        x.status.success(),
        "JUnit does not validate:\n{}\n{}",
        String::from_utf8_lossy(&x.stderr),
        std::fs::read_to_string(path).unwrap_or_default()
    );
    let py = "import sys, junitparser\nx = junitparser.JUnitXml.fromfile(sys.argv[1])\nn = 0\nfor s in x:\n    for c in s:\n        n += 1\nprint('junitparser cases', n)\n";
    let p = Command::new("python3")
        .arg("-c")
        .arg(py)
        .arg(path)
        .output()
        .expect("python3");
    assert!(
        p.status.success(),
        "junitparser cannot load the JUnit: {}",
        String::from_utf8_lossy(&p.stderr)
    );
    String::from_utf8_lossy(&p.stdout).trim().to_string()
}

/// A replayed node's answer to the five-step script's lookup of `all_reduce_perf`: nowhere.
pub const NO_ALL_REDUCE_PERF: &str = r#"[[command]]
command = """command -v 'all_reduce_perf' || { for d in /usr/local/bin /usr/bin "$HOME/nccl-tests/build"; do [ -x "$d"/'all_reduce_perf' ] && echo "$d"/'all_reduce_perf' && break; done; }"""
stdout = ""
exit_code = 1
"#;

/// Step 3 of the five-step script on [`REPLAY_PAIR_INV`], both nodes giving `answers` (a
/// transcript), with `extra` arguments (`--dry-run`).
pub fn step_3_on_replay_pair(answers: &str, extra: &[&str]) -> Outcome {
    let script = repo().join("scripts/five_step_acceptance.rhai");
    let script = script.display().to_string();
    let mut args = vec![
        "run",
        &script,
        "-i",
        "inv.toml",
        "--filter",
        "step 3",
        "--set",
        "nccl_min_busbw_gbs=20",
    ];
    args.extend(extra);
    Fab::new()
        .file("inv.toml", REPLAY_PAIR_INV)
        .file("t/a.toml", answers)
        .file("t/b.toml", answers)
        .args(args)
        .reports()
        .run()
}

/// An inventory of two replayed nodes `a` and `b` (one fabric address each) answering from
/// `t/a.toml` and `t/b.toml` in the run's directory.
pub const REPLAY_PAIR_INV: &str = r#"
[defaults]
transport = "replay"
replay_dir = "t"
[[node]]
name = "a"
fabric_ips = ["192.168.100.10"]
[[node]]
name = "b"
fabric_ips = ["192.168.100.11"]
"#;

/// The row of `node` in the node × rail heat map of `metric` of an HTML report, from `<tr` to
/// `</tr>`.
pub fn heat_row(html: &str, metric: &str, node: &str) -> Option<String> {
    let at = html.find(&format!("<div class=\"hm\" data-metric=\"{metric}\">"))?;
    let map = &html[at..at + html[at..].find("</table>")?];
    let row = map.find(&format!(" data-node=\"{node}\""))?;
    let start = map[..row].rfind("<tr")?;
    let end = row + map[row..].find("</tr>")?;
    Some(map[start..end].to_string())
}

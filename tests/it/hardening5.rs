//! Hardening, fifth round (issue 50): discover's writer (item 1), localise with nothing
//! measured (item 2), `--baseline`/`compare`/`parse` reading (item 6), the results folder made
//! first (item 4); the parsers' bounded cost (item 3) is `parse_linear.rs`. Each test fails on
//! the main before it (checked with `FABCHECK_TEST_BIN` pointing at that build; for localise,
//! with that build's script too).

use crate::common::{repo, skip, Fab, Outcome};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn discover_defaults() -> String {
    repo()
        .join("examples/sim/discover-defaults.toml")
        .display()
        .to_string()
}

/// `fabcheck discover spark-01 -i DEFAULTS -o OUT [extra…]` on the simulation.
fn discover_to(dir: &Path, out: &str, extra: &[&str]) -> Outcome {
    let mut args = vec![
        "discover".to_string(),
        "spark-01".into(),
        "-i".into(),
        discover_defaults(),
        "-o".into(),
        out.replace("{dir}", dir.to_str().unwrap()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Fab::new().args(args).run()
}

/// The line discover prints for each node it read.
fn read_a_node(o: &Outcome) -> bool {
    o.stderr.contains("spark-01: ")
}

#[test]
fn discover_output_that_is_a_link_fifo_device_or_folder_is_refused_before_any_node_is_read() {
    let f = Fab::new();
    let d = f.dir().to_path_buf();
    std::fs::write(d.join("victim"), "precious").unwrap();
    std::os::unix::fs::symlink(d.join("victim"), d.join("link.toml")).unwrap();
    // The `-o /dev/stdout` of the issue, without touching the host's /dev/stdout.
    std::os::unix::fs::symlink("/proc/self/fd/1", d.join("fd1.toml")).unwrap();
    let fifo = std::ffi::CString::new(d.join("fifo.toml").to_str().unwrap()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::create_dir(d.join("dir.toml")).unwrap();
    let mut cases = vec![
        ("link.toml", "symbolic link"),
        ("fd1.toml", "symbolic link"),
        ("fifo.toml", "FIFO"),
        ("dir.toml", "folder"),
    ];
    if is_root() {
        // The `-o /dev/null` of the issue: a test-made /dev/null (char device 1,3).
        let dev = std::ffi::CString::new(d.join("null.toml").to_str().unwrap()).unwrap();
        // SAFETY: valid path; makedev(1, 3) is /dev/null.
        let r = unsafe { libc::mknod(dev.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
        assert_eq!(r, 0);
        cases.push(("null.toml", "device"));
    } else {
        skip("the device case needs root (mknod)");
    }
    for (name, what) in &cases {
        let o = discover_to(&d, &format!("{{dir}}/{name}"), &["--force"]);
        assert_eq!(o.code, 2, "{name}: exit {}\n{}", o.code, o.stderr);
        assert!(
            o.stderr.contains(what) && o.stderr.contains("regular file or a new name"),
            "{name}: {}",
            o.stderr
        );
        assert!(o.stderr.contains("`-o -`"), "{name}: {}", o.stderr);
        assert!(
            !read_a_node(&o),
            "{name}: a node was read first:\n{}",
            o.stderr
        );
    }
    assert_eq!(
        std::fs::read_to_string(d.join("victim")).unwrap(),
        "precious"
    );
    let t = |n: &str| std::fs::symlink_metadata(d.join(n)).unwrap().file_type();
    assert!(t("link.toml").is_symlink() && t("fd1.toml").is_symlink());
    assert!(t("fifo.toml").is_fifo());
    assert!(t("dir.toml").is_dir());
    if is_root() {
        assert!(t("null.toml").is_char_device(), "the device was replaced");
    }
    // Without --force, a link is refused for what it is (not "give --force").
    let o = discover_to(&d, "{dir}/link.toml", &[]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("symbolic link"), "{}", o.stderr);
}

#[test]
fn discover_dash_means_stdout() {
    for extra in [&[][..], &["--force"][..]] {
        let f = Fab::new();
        let d = f.dir().to_path_buf();
        let o = discover_to(&d, "-", extra);
        o.code(0);
        assert!(o.stdout.contains("name = \"spark-01\""), "{}", o.stdout);
        assert!(
            !o.dir.join("-").exists() && !d.join("-").exists(),
            "a file named - was written"
        );
    }
}

#[test]
fn discover_never_replaces_another_users_file_nor_follows_their_link() {
    if !is_root() {
        skip("it needs root to plant another user's file and link");
        return;
    }
    let f = Fab::new();
    let d = f.dir().to_path_buf();
    std::fs::write(d.join("theirs.toml"), "# theirs\n").unwrap();
    std::os::unix::fs::chown(d.join("theirs.toml"), Some(65534), Some(65534)).unwrap();
    let o = discover_to(&d, "{dir}/theirs.toml", &["--force"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("another user"), "{}", o.stderr);
    assert!(!read_a_node(&o), "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(d.join("theirs.toml")).unwrap(),
        "# theirs\n"
    );
    // Another user's link on the way to the folder is not followed.
    std::fs::create_dir(d.join("rootonly")).unwrap();
    std::fs::create_dir(d.join("nbdir")).unwrap();
    std::os::unix::fs::chown(d.join("nbdir"), Some(65534), Some(65534)).unwrap();
    std::os::unix::fs::symlink(d.join("rootonly"), d.join("nbdir/sub")).unwrap();
    std::os::unix::fs::lchown(d.join("nbdir/sub"), Some(65534), Some(65534)).unwrap();
    let o = discover_to(&d, "{dir}/nbdir/sub/found.toml", &["--force"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("belongs to another user"), "{}", o.stderr);
    assert!(!read_a_node(&o), "{}", o.stderr);
    assert!(!d.join("rootonly/found.toml").exists());
    // This user's own link is followed, and the inventory written there.
    std::os::unix::fs::symlink(d.join("rootonly"), d.join("mine")).unwrap();
    let o = discover_to(&d, "{dir}/mine/found.toml", &[]);
    o.code(0);
    let text = std::fs::read_to_string(d.join("rootonly/found.toml")).unwrap();
    assert!(text.contains("name = \"spark-01\""), "{text}");
}

/// The localise tests below run iperf3 pairs on `local` nodes (this machine, fabric addresses
/// 127.0.0.N): their servers listen on TCP port 5201, so they take turns.
static IPERF3_PORT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A fake `iperf3` on PATH for `local` nodes. A server (`-s`) is a plain listener on the port
/// that ends after one connection (the pair's readiness probe sees it listening); a client
/// runs `client` (shell), then connects once to release the server, and exits with its status.
fn iperf3_shim(dir: &Path, client: &str) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let text = format!(
        r#"#!/bin/bash
port=$(echo " $* " | sed -n 's/.* -p \([0-9]*\) .*/\1/p')
case " $* " in
*" -c "*) ;;
*) exec python3 -c 'import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", int(sys.argv[1]))); s.listen(1); c, _ = s.accept(); c.close()' "$port" ;;
esac
ip=$(echo " $* " | sed -n 's/.* -c \([^ ]*\) .*/\1/p')
{client}
rc=$?
exec 3<>/dev/tcp/$ip/$port 2>/dev/null
exit $rc
"#
    );
    let p = bin.join("iperf3");
    std::fs::write(&p, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `n` local nodes n1..nN with fabric addresses 127.0.0.1..N.
fn local_nodes(n: usize) -> String {
    let mut s = String::from("[defaults]\ntransport = \"local\"\n");
    for i in 1..=n {
        s.push_str(&format!(
            "[[node]]\nname = \"n{i}\"\nfabric_ips = [\"127.0.0.{i}\"]\n"
        ));
    }
    s
}

const LOCALISE: &str = "localise: bad node or link";

fn run_localise(nodes: usize, client: &str, sets: &[&str]) -> Outcome {
    let f = Fab::new().file("inv.toml", &local_nodes(nodes));
    let path = iperf3_shim(f.dir(), client);
    let mut args = vec![
        "run".to_string(),
        repo().join("scripts/localise.rhai").display().to_string(),
        "-i".into(),
        "inv.toml".into(),
        "--set".into(),
        "duration=1".into(),
    ];
    for s in sets {
        args.push("--set".into());
        args.push(s.to_string());
    }
    f.env("PATH", &path).args(args).reports().run()
}

/// The iperf3 client commands a testcase sent (its command log in the JSON report).
fn iperf3_clients(o: &Outcome) -> usize {
    o.test(LOCALISE)["commands"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter(|x| {
                    x["command"]
                        .as_str()
                        .is_some_and(|c| c.starts_with("iperf3 -c "))
                })
                .count()
        })
        .unwrap_or(0)
}

/// The real iperf3 3.12 answer of a client that cannot connect (tests/fixtures).
fn refused_json() -> String {
    repo()
        .join("tests/fixtures/lab/iperf3-3.12-J-connection-refused.json")
        .display()
        .to_string()
}

#[test]
fn localise_with_nothing_measured_is_an_error_naming_the_pairs_errors() {
    let _turn = IPERF3_PORT.lock().unwrap_or_else(|p| p.into_inner());
    // Every client fails as a firewall would make it: iperf3's own JSON error, exit 1.
    let o = run_localise(3, &format!("cat {}; false", refused_json()), &[]);
    assert_eq!(o.status(LOCALISE), "error", "{}", o.stdout);
    o.code(1);
    let msg = o.message(LOCALISE);
    assert!(msg.contains("0 of 3 pairs measured"), "{msg}");
    assert!(msg.contains("Connection refused"), "{msg}");
    for pair in ["n1 - n2", "n2 - n3", "n3 - n1"] {
        assert!(msg.contains(pair), "{pair}: {msg}");
    }
}

#[test]
fn localise_stops_at_an_iperf3_args_that_iperf3_refuses() {
    let _turn = IPERF3_PORT.lock().unwrap_or_else(|p| p.into_inner());
    // The client is the real iperf3, which refuses the option itself.
    let Some(real) = ["/usr/bin/iperf3", "/usr/local/bin/iperf3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0");
        assert!(!ci, "iperf3 is not installed and CI is set");
        skip("iperf3 is not installed");
        return;
    };
    let o = run_localise(4, &format!("{real} \"$@\""), &["iperf3_args=--bogus-opt"]);
    assert_eq!(o.status(LOCALISE), "error", "{}", o.stdout);
    o.code(1);
    let msg = o.message(LOCALISE);
    assert!(msg.contains("iperf3_args \"--bogus-opt\""), "{msg}");
    assert!(msg.contains("unrecognized option '--bogus-opt'"), "{msg}");
    // Stopped after the first pair (both directions), not after the ring of 4.
    assert_eq!(iperf3_clients(&o), 2, "{msg}");
}

/// Runs every `fabs` at once; a run still going after `guard` is killed and reported as hung
/// (the guard only ends a hang: each run is judged on its exit code and message).
fn run_all_guarded(fabs: Vec<Fab>, guard: std::time::Duration) -> Vec<(Option<i32>, String)> {
    use std::io::Read;
    let mut kids: Vec<(Fab, std::process::Child)> = fabs
        .into_iter()
        .map(|f| {
            let c = f.spawn();
            (f, c)
        })
        .collect();
    let start = std::time::Instant::now();
    let mut out = vec![None; kids.len()];
    while out.iter().any(Option::is_none) {
        for (i, (_, k)) in kids.iter_mut().enumerate() {
            if out[i].is_none() {
                if let Some(st) = k.try_wait().unwrap() {
                    out[i] = Some(st.code());
                } else if start.elapsed() > guard {
                    let _ = k.kill();
                    let _ = k.wait();
                    out[i] = Some(None);
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    kids.iter_mut()
        .zip(out)
        .map(|((_, k), code)| {
            let mut e = String::new();
            let _ = k.stderr.take().unwrap().read_to_string(&mut e);
            (code.flatten(), e)
        })
        .collect()
}

#[test]
fn baseline_compare_and_parse_refuse_a_fifo_at_once_and_cap_a_file() {
    let make = || {
        let f = Fab::new().file("s.rhai", "test(\"a\", || { assert(true); });\n");
        let fifo = std::ffi::CString::new(f.dir().join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        // Sparse files just over the caps (256 MiB for a result, 64 MiB for a capture).
        let big = std::fs::File::create(f.dir().join("big")).unwrap();
        big.set_len((256 << 20) + 1).unwrap();
        f
    };
    let cases: Vec<(&[&str], &str)> = vec![
        (
            &["run", "s.rhai", "--no-results", "--baseline", "fifo"],
            "FIFO",
        ),
        (&["compare", "fifo"], "FIFO"),
        (&["parse", "ethtool", "fifo"], "FIFO"),
        (
            &["run", "s.rhai", "--no-results", "--baseline", "big"],
            "larger than 256MiB",
        ),
        (&["compare", "big"], "larger than 256MiB"),
        (&["parse", "ethtool", "big"], "larger than 64MiB"),
    ];
    let fabs = cases.iter().map(|(a, _)| make().args(*a)).collect();
    let got = run_all_guarded(fabs, crate::common::HANG);
    for ((args, what), (code, stderr)) in cases.iter().zip(got) {
        assert_eq!(code, Some(2), "{args:?}: hung or wrong exit; {stderr}");
        assert!(stderr.contains(what), "{args:?}: {stderr}");
    }
}

const PASSING: &str = "test(\"a\", || { assert(true); });\n";
const LOCAL_INV: &str = "[[node]]\nname = \"n1\"\nhost = \"localhost\"\ntransport = \"local\"\n";

#[test]
fn a_results_folder_that_cannot_be_made_stops_the_run_before_the_first_test() {
    // A regular file where the results folder's parent should be: no user can make it.
    let o = Fab::new()
        .file("s.rhai", PASSING)
        .file("inv.toml", LOCAL_INV)
        .file("taken", "a file, not a folder\n")
        .args([
            "run",
            "s.rhai",
            "-i",
            "inv.toml",
            "--results",
            "{dir}/taken",
        ])
        .run();
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("cannot make the results folder") && o.stderr.contains("--no-results"),
        "{}",
        o.stderr
    );
    assert!(!o.stdout.contains("1 tests"), "a test ran:\n{}", o.stdout);
}

/// Issue 47 "Also": under Slurm or cron the working directory may not take the default
/// results folder (here `nobody` in a folder of root's); the run goes on, green stays green,
/// and the warning says what to give. A name taken by a file stays a refusal (exit 2).
#[test]
fn the_default_results_folder_in_an_unwritable_directory_is_a_warning_and_the_run_goes_on() {
    if !is_root() {
        skip("it needs root to run fabcheck as nobody in a folder of root's");
        return;
    }
    let dir = std::env::temp_dir().join(format!("fc-rodir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("s.rhai"), PASSING).unwrap();
    std::fs::write(dir.join("inv.toml"), LOCAL_INV).unwrap();
    let bin = crate::common::reachable_bin();
    let o = std::process::Command::new("runuser")
        .args(["-u", "nobody", "--", "sh", "-c"])
        .arg(format!(
            "cd {} && {} run s.rhai -i inv.toml",
            dir.display(),
            bin.display()
        ))
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("1 passed"), "{out}");
    assert!(
        err.contains("warning: no results folder") && err.contains("--results DIR"),
        "{err}"
    );
    let o = Fab::new()
        .file("s.rhai", PASSING)
        .file("inv.toml", LOCAL_INV)
        .file(
            "fabcheck-results",
            "a file where the default folder would go\n",
        )
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .run();
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
}

#[test]
fn explicit_reports_keep_a_green_run_green_without_a_results_folder() {
    let o = Fab::new()
        .file("s.rhai", PASSING)
        .file("inv.toml", LOCAL_INV)
        .file("taken", "a file, not a folder\n")
        .args([
            "run",
            "s.rhai",
            "-i",
            "inv.toml",
            "--results",
            "{dir}/taken",
            "--junit",
            "{dir}/r.xml",
        ])
        .run();
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("warning: no results folder"),
        "{}",
        o.stderr
    );
    assert!(o.dir.join("r.xml").is_file());
}

#[test]
fn another_users_link_at_the_results_folder_is_not_followed() {
    if !is_root() {
        skip("it needs root to plant another user's link");
        return;
    }
    let f = Fab::new()
        .file("s.rhai", PASSING)
        .file("inv.toml", LOCAL_INV);
    let d = f.dir().to_path_buf();
    std::fs::create_dir(d.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(d.join("elsewhere"), d.join("fabcheck-results")).unwrap();
    std::os::unix::fs::lchown(d.join("fabcheck-results"), Some(65534), Some(65534)).unwrap();
    let o = f.args(["run", "s.rhai", "-i", "inv.toml"]).run();
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("belongs to another user"), "{}", o.stderr);
    assert!(!o.stdout.contains("1 tests"), "a test ran:\n{}", o.stdout);
    assert_eq!(std::fs::read_dir(d.join("elsewhere")).unwrap().count(), 0);
}

#[test]
fn a_long_script_name_still_gets_its_results_folder() {
    // 250 characters and `.rhai`: the longest name a Linux folder entry takes (255 bytes).
    let name = format!("{}.rhai", "s".repeat(250));
    let o = Fab::new()
        .file(&name, PASSING)
        .file("inv.toml", LOCAL_INV)
        .args(["run", &name, "-i", "inv.toml"])
        .run();
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let runs: Vec<_> = std::fs::read_dir(o.dir.join("fabcheck-results"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(runs.len(), 1);
    assert!(runs[0].path().join("result.json").is_file());
}

/// A script that sends one command to its node (so a transcript line is written).
const ONE_COMMAND: &str = "test(\"a\", || { nodes()[0].run(\"echo recorded\"); });\n";

#[test]
fn record_never_appends_to_an_earlier_transcript() {
    let f = Fab::new()
        .file("s.rhai", ONE_COMMAND)
        .file("inv.toml", LOCAL_INV)
        .file("rec/n1.jsonl", "an earlier run's line\n");
    let o = f
        .args(["run", "s.rhai", "-i", "inv.toml", "--record", "rec"])
        .args(["--no-results"])
        .run();
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("n1.jsonl") && o.stderr.contains("earlier recording"),
        "{}",
        o.stderr
    );
    assert_eq!(
        std::fs::read_to_string(o.dir.join("rec/n1.jsonl")).unwrap(),
        "an earlier run's line\n"
    );
    // A fresh folder: the run's own transcript, 0600.
    let f = Fab::new()
        .file("s.rhai", ONE_COMMAND)
        .file("inv.toml", LOCAL_INV);
    let o = f
        .args(["run", "s.rhai", "-i", "inv.toml", "--record", "rec"])
        .args(["--no-results"])
        .run();
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let t = std::fs::read_to_string(o.dir.join("rec/n1.jsonl")).unwrap();
    assert!(t.contains("echo recorded"), "{t}");
    use std::os::unix::fs::PermissionsExt;
    let m = std::fs::metadata(o.dir.join("rec/n1.jsonl")).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o600);
}

#[test]
fn record_never_goes_through_another_users_link() {
    if !is_root() {
        skip("it needs root to plant another user's link");
        return;
    }
    let f = Fab::new()
        .file("s.rhai", ONE_COMMAND)
        .file("inv.toml", LOCAL_INV);
    let d = f.dir().to_path_buf();
    std::fs::create_dir(d.join("rootonly")).unwrap();
    std::fs::create_dir(d.join("nbdir")).unwrap();
    std::os::unix::fs::chown(d.join("nbdir"), Some(65534), Some(65534)).unwrap();
    // `nobody` points its link at a folder only root can write: the link's target is `rec`,
    // or a folder on the way to it.
    std::os::unix::fs::symlink(d.join("rootonly"), d.join("nbdir/rec")).unwrap();
    std::os::unix::fs::lchown(d.join("nbdir/rec"), Some(65534), Some(65534)).unwrap();
    for rec in ["nbdir/rec", "nbdir/rec/sub"] {
        let o = Fab::new()
            .args(["run", &d.join("s.rhai").display().to_string()])
            .args(["-i", &d.join("inv.toml").display().to_string()])
            .args([
                "--record",
                &d.join(rec).display().to_string(),
                "--no-results",
            ])
            .run();
        assert_eq!(o.code, 2, "{rec}: {}\n{}", o.stdout, o.stderr);
        assert!(o.stderr.contains("belongs to another user"), "{}", o.stderr);
        assert_eq!(
            std::fs::read_dir(d.join("rootonly")).unwrap().count(),
            0,
            "{rec}: something was written through the link"
        );
    }
}

/// A folder of shims for `local` nodes: `ip` answers with `json` (whatever it is asked).
fn ip_shim(dir: &Path, json: &str) -> String {
    let bin = dir.join("shim-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("ip.json"), json).unwrap();
    let script = format!("#!/bin/sh\ncat '{}'\n", bin.join("ip.json").display());
    std::fs::write(bin.join("ip"), script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("ip"), std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The real `ip -j addr` of a lab namespace host (lo, and fab0 holding 10.213.0.11).
fn real_ip_capture() -> String {
    std::fs::read_to_string(repo().join("tests/fixtures/lab/ip-j-addr-netns.json")).unwrap()
}

/// `fabcheck discover n1 -i DEFAULTS [extra…] -o {dir}/found.toml` for a `local` node whose
/// `ip` is the shim.
fn discover_local(defaults: &str, json: &str, extra: &[&str]) -> Outcome {
    let f = Fab::new().file("defaults.toml", defaults);
    let path = ip_shim(f.dir(), json);
    f.env("PATH", &path)
        .args([
            "discover",
            "n1",
            "-i",
            "{dir}/defaults.toml",
            "-o",
            "{dir}/found.toml",
        ])
        .args(extra)
        .run()
}

/// The written inventory loads (a dry run of a one-line script on it).
fn loads(o: &Outcome) -> Outcome {
    Fab::new()
        .file("s.rhai", PASSING)
        .args(["run", "s.rhai", "--dry-run", "--no-results", "-i"])
        .args([o.dir.join("found.toml").display().to_string()])
        .run()
}

#[test]
fn discover_says_a_node_with_only_the_ssh_nic_is_a_problem_real_ip_capture_shim() {
    // The capture's only interface besides lo holds the address SSH reached (here: the host).
    let defaults =
        "[defaults]\ntransport = \"local\"\n[[node]]\nname = \"n1\"\nhost = \"10.213.0.11\"\n";
    let o = discover_local(defaults, &real_ip_capture(), &[]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("n1: PROBLEM: no fabric interface") && o.stderr.contains("--fabric fab0"),
        "{}",
        o.stderr
    );
    let text = std::fs::read_to_string(o.dir.join("found.toml")).unwrap();
    assert!(text.contains("# PROBLEM: no fabric interface"), "{text}");
    // Named with --fabric (a glob): the rail is written, with a warning that SSH shares it.
    let o = discover_local(defaults, &real_ip_capture(), &["--fabric", "fab*,ib9"]);
    assert_eq!(o.code, 1, "ib9 matches nothing: {}", o.stderr);
    assert!(
        o.stderr.contains("--fabric ib9: no interface"),
        "{}",
        o.stderr
    );
    let o = discover_local(defaults, &real_ip_capture(), &["--fabric", "fab*"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let text = std::fs::read_to_string(o.dir.join("found.toml")).unwrap();
    assert!(text.contains("interfaces = [\"fab0\"]"), "{text}");
    assert!(text.contains("fabric_ips = [\"10.213.0.11\"]"), "{text}");
    assert!(text.contains("WARNING fab0: named by --fabric"), "{text}");
    loads(&o).code(0);
    // A word that is no interface name is a usage error.
    let o = discover_local(defaults, &real_ip_capture(), &["--fabric", "fab0;reboot"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
}

#[test]
fn discover_leaves_out_what_the_loader_refuses_mutated_real_ip_capture_shim() {
    // The real capture's fab0, copied and mutated (synthesised from it, not captured): a name
    // with an escape sequence, a host name as an address, an MTU out of range, a name listed
    // twice, an address on two rails.
    let real: serde_json::Value = serde_json::from_str(&real_ip_capture()).unwrap();
    let fab0 = real[1].clone();
    let with = |name: &str, addr: &str, mtu: u64| {
        let mut i = fab0.clone();
        i["ifname"] = name.into();
        i["mtu"] = mtu.into();
        i["addr_info"][0]["local"] = addr.into();
        i
    };
    let ifaces = serde_json::json!([
        real[0],
        with("fab0\u{1b}]0;owned\u{7}\u{1b}[2J", "10.213.0.20", 9000),
        with("fab1", "spark-02", 70000),
        with("fab1", "10.213.0.12", 9000),
        with("fab2", "10.213.0.11", 9000),
        with("fab3", "10.213.0.11", 9000),
    ]);
    let defaults = "[defaults]\ntransport = \"local\"\n[defaults.vars]\n\"site name\" = \"lab\"\n\
                    [[node]]\nname = \"n1\"\nhost = \"localhost\"\n";
    let o = discover_local(defaults, &ifaces.to_string(), &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("inventory written"), "{}", o.stderr);
    assert!(
        !o.stderr.contains('\u{1b}'),
        "an escape reached the console"
    );
    let text = std::fs::read_to_string(o.dir.join("found.toml")).unwrap();
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "a control character in the file:\n{text:?}"
    );
    assert!(
        text.contains("interfaces = [\"fab1\", \"fab2\", \"fab3\"]"),
        "{text}"
    );
    assert!(text.contains("fabric_ips = [\"10.213.0.11\"]"), "{text}");
    for why in [
        "left out interface \"fab0\\u{1b}]0;owned",
        "left out a second fab1: the node listed it twice",
        "fab1: left out address \"spark-02/24\": not an IP address",
        "fab1: left out MTU 70000: out of range",
        "fab3: left out address 10.213.0.11/24: another rail of this node has it too",
    ] {
        assert!(text.contains(why), "{why}:\n{text}");
    }
    assert!(text.contains("\"site name\" = \"lab\""), "{text}");
    loads(&o).code(0);
}

/// First day (issue 50): every usage error exits 2, never 1 (nor 0): bad flags and values of
/// every command, a `--set` key no script reads in `list` as in `run`, a script name that is
/// not UTF-8 (named, not clap's bare "invalid UTF-8 was detected").
#[test]
fn every_usage_error_exits_2() {
    let f = Fab::new()
        .file("s.rhai", PASSING)
        .file("inv.toml", LOCAL_INV);
    let cases: &[&[&str]] = &[
        &["run"],
        &["run", "--bogus", "s.rhai"],
        &["run", "s.rhai", "--set", "x"],
        &["run", "s.rhai", "--set", "bogus=1"],
        &["run", "s.rhai", "--fanout", "abc"],
        &["run", "s.rhai", "--timeout", "abc"],
        &["run", "nosuch.rhai"],
        &["run", "s.rhai", "-i", "nosuch.toml"],
        &["run", "s.rhai", "--filter", "nomatch", "-i", "inv.toml"],
        &["list", "s.rhai", "--set", "bogus=1"],
        &["list", "s.rhai", "-w", "x["],
        &["check", "nosuch.rhai"],
        &["exec", "-w", "a[", "--", "true"],
        &["nodes", "-i", "nosuch.toml"],
        &["parse", "ethtool", "nosuch"],
        &["compare", "s.rhai"],
        &["discover"],
        &["discover", "a["],
        &["discover", "n1", "--fabric", "a b"],
        &["doc", "extra"],
        &["bogus"],
    ];
    for args in cases {
        let mut c = f.command();
        c.args(*args);
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("error"), "{args:?}: {err}");
    }
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::OsStr::from_bytes(b"s\xff.rhai");
    for cmd in ["run", "check", "list"] {
        let mut c = f.command();
        c.arg(cmd).arg(name);
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(err.contains("argument 2 (s\u{fffd}.rhai"), "{cmd}: {err}");
    }
}

/// Low (issue 50): `FABCHECK_PROGRESS_SECS` of 1.8e19 and more is clamped (it panicked a
/// thread); `--set confirm` outside 0–10 is a usage error before the run (it was capped
/// silently); `fabcheck list` passes test names through the console's sanitiser.
#[test]
fn progress_secs_clamps_confirm_is_checked_and_list_is_sanitised() {
    let s = "test(\"a\", #{ confirm: param(\"confirm\", 1) }, || { assert(true); });\n";
    let o = Fab::new()
        .file("s.rhai", s)
        .file("inv.toml", LOCAL_INV)
        .env("FABCHECK_PROGRESS_SECS", "1.8e19")
        .args(["run", "s.rhai", "-i", "inv.toml", "--no-results"])
        .run();
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    for bad in ["11", "-1", "2.5"] {
        let o = Fab::new()
            .file("s.rhai", s)
            .file("inv.toml", LOCAL_INV)
            .args(["run", "s.rhai", "-i", "inv.toml", "--no-results"])
            .args(["--set", &format!("confirm={bad}")])
            .run();
        assert_eq!(o.code, 2, "confirm={bad}: {}\n{}", o.stdout, o.stderr);
        assert!(
            o.stderr.contains("whole number from 0 to 10"),
            "{}",
            o.stderr
        );
    }
    let evil = "test(\"x \\x1b]0;owned\\x07\\x1b[2J\\u202ey\", || { assert(true); });\n";
    let o = Fab::new()
        .file("e.rhai", evil)
        .args(["list", "e.rhai"])
        .run();
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("x y"), "{:?}", o.stdout);
    assert!(
        !o.stdout.contains('\u{1b}') && !o.stdout.contains('\u{202e}'),
        "{:?}",
        o.stdout
    );
}

/// Low (issue 50): a TOML error the parser gives no words for (`a = `) still says what is
/// wrong; two report options naming one new file through a linked folder are a usage error.
#[test]
fn a_toml_error_has_words_and_one_report_through_a_linked_folder_is_one_file() {
    let o = Fab::new()
        .file("bad.toml", "a = ")
        .args(["nodes", "-i", "bad.toml"])
        .run();
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("bad.toml:1:5: not valid TOML here"),
        "{}",
        o.stderr
    );
    let f = Fab::new()
        .file("s.rhai", PASSING)
        .file("inv.toml", LOCAL_INV);
    std::fs::create_dir(f.dir().join("out")).unwrap();
    std::os::unix::fs::symlink(f.dir().join("out"), f.dir().join("ln")).unwrap();
    let o = f
        .args(["run", "s.rhai", "-i", "inv.toml", "--no-results"])
        .args(["--junit", "out/r.xml", "--json", "ln/r.xml"])
        .run();
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("are the same file"), "{}", o.stderr);
    assert!(!o.dir.join("out/r.xml").exists());
}

/// Low (issue 50): when the results folder's reports cannot be written (a full disk; here a
/// file size limit of 1 byte, RLIMIT_FSIZE with SIGXFSZ ignored, which fails every write the
/// same way), every failed report is named, not the first alone, and the empty run folder is
/// not left behind.
#[test]
fn every_report_that_cannot_be_written_is_named() {
    let f = Fab::new()
        .file("s.rhai", PASSING)
        .file("inv.toml", LOCAL_INV);
    let mut c = f.command();
    c.args(["run", "s.rhai", "-i", "inv.toml"]);
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit and signal are async-signal-safe; nothing else runs in the child.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: 1,
                rlim_max: 1,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            Ok(())
        });
    }
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for name in ["junit.xml", "result.json", "report.html"] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("error: cannot write") && l.contains(name)),
            "{name} not named:\n{err}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(f.dir().join("fabcheck-results"))
        .unwrap()
        .flatten()
        .collect();
    assert!(left.is_empty(), "an empty run folder was left: {left:?}");
}

/// "Read-only unless --allow-changes": a real run sends no command of a test marked as
/// changing nodes (every command sent is in the `--record` transcript), and with
/// `--allow-changes` it does (the check could fail). The shipped five-step's step 5 is checked
/// the same way on the lab (`lab_shipped::five_step_on_the_lab`).
#[test]
fn a_run_sends_no_command_of_a_skipped_change() {
    let s = "test(\"reads\", || { node(\"n1\").run(\"echo read-only\"); });\n\
             test(\"changes\", #{ changes: true }, || { node(\"n1\").run(\"touch changed-it\"); });\n";
    for (allow, sent) in [(false, false), (true, true)] {
        let mut f = Fab::new()
            .file("s.rhai", s)
            .file("inv.toml", LOCAL_INV)
            .args([
                "run",
                "s.rhai",
                "-i",
                "inv.toml",
                "--no-results",
                "--record",
                "rec",
            ]);
        if allow {
            f = f.args(["--allow-changes"]);
        }
        let o = f.run();
        assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
        let t = std::fs::read_to_string(o.dir.join("rec/n1.jsonl")).unwrap();
        assert!(t.contains("echo read-only"), "{t}");
        assert_eq!(
            t.contains("touch changed-it"),
            sent,
            "--allow-changes {allow}: {t}"
        );
        assert_eq!(o.dir.join("changed-it").exists(), sent);
    }
}

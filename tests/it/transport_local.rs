//! The local transport (issue 14): bounded output, deadlines and interrupts that hold while
//! something outside the command's process group keeps its stdout open, `--record` files that
//! do not follow planted links, replay files confined to the transcript directory.

use crate::common::{self, skip};
use common::Fab;

const INV: &str = "[defaults]\ntransport = \"local\"\n[[node]]\nname = \"a\"\n";

#[test]
fn a_flood_of_output_keeps_memory_bounded() {
    // 300 MB of `y\n`: the whole of it used to be held (and copied) in memory.
    let s = "test(\"flood\", || { let r = node(\"a\").run(\"yes | head -c 300000000\", #{ timeout: \"60s\" }); assert(r.stdout.len() < 2000000, `stdout kept: ${r.stdout.len()}`); assert(r.stdout.contains(\"bytes of output cut\"), \"marker\"); print(r.stdout.len()); });\n";
    let f = Fab::new()
        .file("inv.toml", INV)
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .reports();
    let (o, rss_kib) = common::run_measuring_rss(&f);
    o.code(0);
    eprintln!("peak RSS of fabcheck: {} MiB", rss_kib / 1024);
    assert!(rss_kib < 64 * 1024, "peak RSS {rss_kib} KiB");
}

#[test]
fn a_holder_outside_the_group_does_not_outlast_the_command_or_its_timeout() {
    // The holder and the timed-out command last an hour: waiting for either is a hang that
    // the bound (a small fraction of it) catches, however busy the machine.
    let token = unique_token("holder");
    let _reap = Reaper(token.clone());
    let s = format!(
        "test(\"exits\", || {{ let r = node(\"a\").run(\"FC_TEST_TOKEN={token} setsid sleep 3600 & echo started\", #{{ timeout: \"2h\" }}); assert_eq(r.stdout.trimmed(), \"started\", \"out\"); }});\n\
         test(\"times out\", || {{ node(\"a\").run(\"FC_TEST_TOKEN={token} setsid sleep 3600 & echo started; sleep 3600\", #{{ timeout: \"2s\" }}); }});\n"
    );
    let f = Fab::new()
        .file("inv.toml", INV)
        .file("s.rhai", &s)
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .reports();
    let o = f.run_within(common::HANG, "the run waited for the holder of its stdout");
    o.code(1);
    assert_eq!(o.status("exits"), "pass", "{}", o.message("exits"));
    assert_eq!(o.status("times out"), "error");
    assert!(
        o.message("times out").contains("timed out after 2s"),
        "{}",
        o.message("times out")
    );
}

#[test]
fn ctrl_c_is_honoured_while_a_holder_outside_the_group_keeps_stdout() {
    let token = unique_token("held");
    let _reap = Reaper(token.clone());
    let s = format!(
        "test(\"held\", #{{ timeout: \"2h\" }}, || {{ node(\"a\").run(\"export FC_TEST_TOKEN={token}; setsid sleep 3600 & echo started; touch started; sleep 3600\", #{{ timeout: \"2h\" }}); }});\n"
    );
    let f = Fab::new()
        .file("inv.toml", INV)
        .file("s.rhai", &s)
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .reports();
    let child = f.spawn();
    // Ctrl-C once the holder is there (the command touched `started`), not after a pause.
    let started = f.dir().join("started");
    crate::common::eventually(common::HANG, "the held command started", || {
        started.exists()
    });
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = common::output_within(child, common::HANG, "Ctrl-C waited for the holder");
    let o = f.outcome(out);
    o.code(3);
    assert_eq!(o.status("held"), "error", "{}", o.message("held"));
}

#[test]
fn record_keeps_everything_in_private_files_and_follows_no_planted_link() {
    let s = "test(\"big\", || { let r = node(\"a\").run(\"seq 1 400000\"); assert(r.stdout.contains(\"bytes of output cut\"), \"capped in memory\"); });\n";
    let f = Fab::new().file("inv.toml", INV).file("s.rhai", s);
    let rec = f.dir().join("rec");
    std::fs::create_dir_all(&rec).unwrap();
    let victim = f.dir().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, rec.join("a.jsonl")).unwrap();
    let o = f
        .args(["run", "s.rhai", "-i", "inv.toml", "--record"])
        .args([rec.display().to_string()])
        .reports()
        .run();
    // Issue 36: the planted link is refused before the run (exit 2), not silently skipped.
    o.code(2);
    assert!(o.stderr.contains("symbolic link"), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // Without it: the full output goes to its own 0600 file, written as it came.
    std::fs::remove_file(rec.join("a.jsonl")).unwrap();
    let f = Fab::new().file("inv.toml", INV).file("s.rhai", s);
    let o = f
        .args(["run", "s.rhai", "-i", "inv.toml", "--record"])
        .args([rec.display().to_string()])
        .reports()
        .run();
    o.code(0);
    std::fs::remove_file(rec.join("a.jsonl")).unwrap();
    let full: Vec<_> = std::fs::read_dir(&rec)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".stdout"))
        .collect();
    assert_eq!(full.len(), 1, "{full:?}");
    use std::os::unix::fs::PermissionsExt;
    let m = full[0].metadata().unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o600);
    let text = std::fs::read_to_string(full[0].path()).unwrap();
    assert_eq!(text.lines().count(), 400000);
    assert!(text.ends_with("400000\n"));
}

#[test]
fn replay_refuses_captured_files_outside_the_transcript_directory() {
    let f = Fab::new().file("secret", "root only\n").file(
        "t/a.toml",
        "[[command]]\ncommand = \"cat x\"\nstdout_file = \"../secret\"\n",
    );
    let s = "test(\"x\", || { print(node(\"a\").run(\"cat x\").stdout); });\n";
    let o = f
        .file("inv.toml", INV)
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-i", "inv.toml", "--replay", "{dir}/t"])
        .reports()
        .run();
    o.code(1);
    assert_eq!(o.status("x"), "error");
    assert!(
        o.message("x").contains("outside the transcript directory")
            && o.message("x").contains("../secret"),
        "{}",
        o.message("x")
    );
    assert!(!o.junit.clone().unwrap_or_default().contains("root only"));
}

#[test]
fn replay_refuses_a_fifo_at_once_with_an_error_naming_it() {
    // A transcript that points at a FIFO (no writer) used to block the run for ever: `open`
    // waits for a writer, and neither `--timeout` nor SIGTERM got it out.
    let f = Fab::new().file(
        "t/a.toml",
        "[[command]]\ncommand = \"cat x\"\nstdout_file = \"pipe\"\n",
    );
    let fifo =
        std::ffi::CString::new(f.dir().join("t/pipe").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let s = "test(\"x\", || { print(node(\"a\").run(\"cat x\").stdout); });\n";
    let f = f
        .file("inv.toml", INV)
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-i", "inv.toml", "--replay", "{dir}/t"])
        .reports();
    let o = f.run_within(common::HANG, "the run blocked on the FIFO");
    o.code(1);
    assert_eq!(o.status("x"), "error");
    let m = o.message("x");
    assert!(m.contains("pipe") && m.contains("FIFO"), "{m}");
}

#[test]
fn a_node_name_that_looks_like_an_option_never_reaches_ssh() {
    let s = "test(\"x\", || { nodes()[0].run(\"true\"); });\n";
    let o = Fab::new()
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-w=-Efoo"])
        .reports()
        .run();
    assert!(!o.dir.join("foo").exists(), "ssh read -Efoo as an option");
    assert_ne!(o.code, 0);
    if o.json.is_some() {
        let m = o.message("x");
        assert!(m.contains("refusing SSH host"), "{m}");
    }
}

/// Processes of this test only: those whose environment holds `FC_TEST_TOKEN=<token>`.
fn with_token(token: &str) -> Vec<u32> {
    let needle = format!("FC_TEST_TOKEN={token}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
                .unwrap_or(false)
        })
        .filter(|pid| {
            // A zombie is gone for good (its parent has not reaped it yet).
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    !s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                })
                .unwrap_or(false)
        })
        .collect()
}

/// A token unique to this test, for the environment of the processes it starts.
fn unique_token(tag: &str) -> String {
    format!(
        "{tag}-{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    )
}

/// Kills what carries the token when the test ends, passed or failed (its hour-long sleeps).
struct Reaper(String);

impl Drop for Reaper {
    fn drop(&mut self) {
        for p in with_token(&self.0) {
            // SAFETY: a process this test started (it carries the test's token).
            unsafe { libc::kill(p as i32, libc::SIGKILL) };
        }
    }
}

/// A run of `sleep 3600` (ignoring TERM and INT, so that only the KILL after the grace period
/// ends it) whose command carries a token unique to this test; returns the run and the token.
/// Waiting for the command to end by itself is a hang of an hour.
fn sleeping_run(tag: &str) -> (Fab, String) {
    let token = unique_token(tag);
    let s = format!(
        "test(\"first\", || {{ metric(\"x\", 1.0, \"u\"); }});\n\
         test(\"sleeps\", #{{ timeout: \"2h\" }}, || {{ node(\"a\").run(\"trap '' TERM INT; FC_TEST_TOKEN={token} sleep 3600\", #{{ timeout: \"2h\" }}); }});\n"
    );
    let f = Fab::new()
        .file("inv.toml", INV)
        .file("s.rhai", &s)
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .reports();
    (f, token)
}

/// Wait (bounded) until the test's `sleep 3600` runs.
fn wait_for_token(token: &str) {
    common::eventually(common::HANG, "the sleep started", || {
        !with_token(token).is_empty()
    });
}

/// After an interrupted run: exit 3, both reports complete and well-formed, nothing of the
/// run left.
fn assert_interrupted_cleanly(o: &common::Outcome, token: &str, label: &str) {
    o.code(3);
    assert_eq!(o.status("first"), "pass", "{label}");
    assert_eq!(o.test("first")["metrics"][0]["name"], "x", "{label}");
    assert_ne!(o.status("sleeps"), "pass", "{label}");
    assert_eq!(o.json.as_ref().unwrap()["interrupted"], true, "{label}");
    // The two tests and the diagnosis testcase of the interrupted (red) one.
    assert_eq!(o.junit_is_valid(), "junitparser cases 3", "{label}");
    assert!(
        with_token(token).is_empty(),
        "{label}: the run's `sleep 3600` outlived fabcheck: {:?}",
        with_token(token)
    );
}

#[test]
fn two_or_more_signals_in_a_row_still_give_reports_and_end_the_commands() {
    // Ctrl-C pressed twice, three times, or INT then TERM (a CI job that kills twice): a later
    // signal may shorten the grace period, never skip the reports or the cleanup.
    let cases: [(&str, &[i32]); 3] = [
        ("INT INT", &[libc::SIGINT, libc::SIGINT]),
        ("INT INT INT", &[libc::SIGINT, libc::SIGINT, libc::SIGINT]),
        ("INT TERM", &[libc::SIGINT, libc::SIGTERM]),
    ];
    for (label, signals) in cases {
        let (f, token) = sleeping_run("twice");
        let _reap = Reaper(token.clone());
        // One signal alone would wait an hour before its KILL: only the second one's short
        // grace ends the command that ignores TERM within the bound.
        let f = f.env("FABCHECK_TEST_TERM_GRACE_MS", "3600000");
        let child = f.spawn();
        wait_for_token(&token);
        for &sig in signals {
            common::signal_delivered(child.id(), sig);
        }
        let out = common::output_within(
            child,
            common::HANG,
            &format!("{label}: the second signal did not shorten the grace"),
        );
        let o = f.outcome(out);
        assert!(
            !o.stderr.contains("still not finished"),
            "{label}: {}",
            o.stderr
        );
        assert_interrupted_cleanly(&o, &token, label);
    }
}

#[test]
fn gnu_timeout_signalling_child_and_group_still_gives_reports() {
    // `timeout -s INT T fabcheck …` signals fabcheck, then its own process group (fabcheck
    // again): two signals. The kernel merges the second into the first when it is still
    // pending, so this fails on the old code only some of the time (the test above is the
    // deterministic one); it proves the real invocation works.
    if std::process::Command::new("timeout")
        .arg("--version")
        .output()
        .is_err()
    {
        skip("GNU timeout is not installed");
        return;
    }
    let (f, token) = sleeping_run("gnutimeout");
    let _reap = Reaper(token.clone());
    let fab = f.command();
    let mut c = std::process::Command::new("timeout");
    c.args(["--preserve-status", "-s", "INT", "4"])
        .arg(fab.get_program())
        .args(fab.get_args())
        .current_dir(f.dir())
        .env("CI", "true")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    wait_for_token(&token);
    let out = common::output_within(child, common::HANG, "timeout -s INT: the run went on");
    let o = f.outcome(out);
    assert_interrupted_cleanly(&o, &token, "timeout -s INT");
}

/// Issue 23, item 3: a command that times out is ended with everything it started, also what
/// left its process group (`setsid`, one of them ignoring TERM), and the message names what was
/// ended; what another command of the run left running (no timeout) is not touched.
#[test]
fn a_timeout_ends_what_the_command_detached_and_says_so() {
    let (_, token) = sleeping_run("detached");
    let other = format!("{token}-other");
    let s = format!(
        "test(\"keeps\", || {{ node(\"a\").run(\"FC_TEST_TOKEN={other} setsid sleep 43 >/dev/null 2>&1 & sleep 0.5\", #{{ timeout: \"2h\" }}); }});\n\
         test(\"times out\", || {{ node(\"a\").run(\"export FC_TEST_TOKEN={token}; setsid sleep 41 & setsid sh -c 'trap \\\"\\\" TERM; sleep 42' & sleep 40\", #{{ timeout: \"2s\" }}); }});\n\
         test(\"plain\", || {{ node(\"a\").run(\"sleep 30\", #{{ timeout: \"1s\" }}); }});\n"
    );
    let o = Fab::new()
        .file("inv.toml", INV)
        .file("s.rhai", &s)
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .reports()
        .run();
    let left = with_token(&token);
    let kept = with_token(&other);
    for p in left.iter().chain(&kept) {
        unsafe { libc::kill(*p as i32, libc::SIGKILL) };
    }
    o.code(1);
    assert_eq!(o.status("keeps"), "pass", "{}", o.message("keeps"));
    assert!(
        left.is_empty(),
        "detached children outlived the timeout: {left:?}"
    );
    assert_eq!(kept.len(), 1, "another command's detached child was ended");
    let m = o.message("times out");
    assert_eq!(o.status("times out"), "error", "{m}");
    assert!(m.contains("timed out after 2s"), "{m}");
    assert!(m.contains("left 3 process(es) running"), "{m}");
    assert!(m.contains("sleep 41") && m.contains("sleep 42"), "{m}");
    // Nothing left behind: nothing more is said.
    let m = o.message("plain");
    assert!(
        m.contains("timed out after 1s") && !m.contains("left"),
        "{m}"
    );
}

/// `exec --timeout` is the command's timeout, whatever its length: outside a test no hidden
/// test deadline caps it (it used to be cut to 600 s). `-v` shows each command's timeout.
#[test]
fn exec_honours_a_timeout_past_ten_minutes() {
    for (asked, shown) in [("700s", "(timeout 700s)"), ("1h", "(timeout 3600s)")] {
        let o = Fab::new()
            .args([
                "-v",
                "exec",
                "-w",
                "localhost",
                "--timeout",
                asked,
                "--",
                "echo",
                "hi",
            ])
            .run();
        o.code(0);
        assert!(o.stdout.contains("hi"), "{}", o.stdout);
        assert!(o.stderr.contains(shown), "{asked}: {}", o.stderr);
    }
}

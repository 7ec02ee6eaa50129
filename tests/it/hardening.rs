//! Bad input everywhere: clear errors with file:line and a hint, exit 2 or an error outcome;
//! nothing lost, secrets not printed, runaway scripts stopped.

use crate::common::{self, skip};
use common::Fab;

#[test]
fn unknown_group_and_empty_nodeset_are_usage_errors() {
    let inv = "[[node]]\nname = \"spark-[01-02]\"\n[groups]\nfabric = \"spark-[01-02]\"\n";
    let o = Fab::new()
        .file("inv.toml", inv)
        .file("s.rhai", "test(\"a\", || {});\n")
        .args(["run", "s.rhai", "-i", "inv.toml", "-w", "@gpus"])
        .run();
    o.code(2);
    assert!(
        o.stderr.contains("unknown group `@gpus`") && o.stderr.contains("known groups: fabric"),
        "{}",
        o.stderr
    );
    let o = Fab::new()
        .file("s.rhai", "test(\"a\", || {});\n")
        .args(["run", "s.rhai", "-w", ","])
        .run();
    o.code(2);
    assert!(o.stderr.contains("names no node"), "{}", o.stderr);
    let o = Fab::new()
        .file("s.rhai", "test(\"a\", || {});\n")
        .args(["run", "s.rhai", "-w", "spark-[05-01]"])
        .run();
    o.code(2);
    assert!(o.stderr.contains("runs backwards"), "{}", o.stderr);
}

#[test]
fn duplicate_node_names_name_both_lines() {
    let inv = "[[node]]\nname = \"spark-[01-03]\"\n\n[[node]]\nname = \"spark-02\"\n";
    let o = Fab::new()
        .file("inv.toml", inv)
        .args(["nodes", "-i", "inv.toml"])
        .run();
    o.code(2);
    assert!(
        o.stderr.contains("inv.toml:5:")
            && o.stderr
                .contains("`spark-02` is declared twice (first at line 2)"),
        "{}",
        o.stderr
    );
}

#[test]
fn unreadable_script_and_missing_script_are_usage_errors() {
    let o = Fab::new().args(["run", "nope.rhai"]).run();
    o.code(2);
    assert!(
        o.stderr
            .contains("nope.rhai: no such script file or directory"),
        "{}",
        o.stderr
    );
    let f = Fab::new();
    std::fs::create_dir_all(f.dir().join("dir.rhai/inner")).unwrap();
    let o = f.args(["check", "dir.rhai/inner"]).run();
    o.code(2);
    assert!(o.stderr.contains("no *.rhai script"), "{}", o.stderr);
    let o = Fab::new()
        .file("bad.rhai", "\u{0}\u{1}garbage((")
        .args(["check", "bad.rhai"])
        .run();
    o.code(2);
    assert!(o.stderr.contains("bad.rhai:1:"), "{}", o.stderr);
}

#[test]
fn wrong_argument_types_are_errors_with_the_signature() {
    let s = "test(\"types\", || { assert_ge(\"fast\", 90, \"bandwidth\"); });\ntest(\"arity\", || { nodes()[0].ping(5); });\ntest(\"option\", || { nodes()[0].run(\"true\", #{ timout: \"1s\" }); });\n";
    let o = Fab::new()
        .file("t.rhai", s)
        .args(["run", "t.rhai"])
        .reports()
        .run();
    o.code(1);
    assert_eq!(o.status("types"), "error");
    assert!(
        o.message("types").contains("\"fast\"") && o.message("types").contains("not a number"),
        "{}",
        o.message("types")
    );
    assert_eq!(o.status("arity"), "error");
    assert!(
        o.message("arity")
            .contains("`ping` cannot be called on a node with an integer"),
        "{}",
        o.message("arity")
    );
    assert!(
        o.message("option")
            .contains("unknown run option `timout` (did you mean `timeout`?)"),
        "{}",
        o.message("option")
    );
}

#[test]
fn runaway_recursion_and_huge_strings_are_stopped_with_a_clear_error() {
    let s = "fn deep(x) { deep(x + 1) }\ntest(\"recursion\", || { deep(0); });\ntest(\"string bomb\", || { let s = \"xxxxxxxx\"; loop { s += s; } });\ntest(\"still runs\", || {});\n";
    let o = Fab::new()
        .file("r.rhai", s)
        .args(["run", "r.rhai"])
        .reports()
        .run();
    o.code(1);
    assert_eq!(o.status("recursion"), "error");
    assert!(
        o.message("recursion")
            .to_lowercase()
            .contains("stack overflow")
            || o.message("recursion").contains("too deep"),
        "{}",
        o.message("recursion")
    );
    assert_eq!(o.status("string bomb"), "error");
    assert!(
        o.message("string bomb").to_lowercase().contains("string"),
        "{}",
        o.message("string bomb")
    );
    assert_eq!(o.status("still runs"), "pass");
}

#[test]
fn secrets_in_env_options_stay_out_of_reports() {
    let s = "test(\"secret\", || { let r = nodes()[0].run(\"test -n \\\"$API_TOKEN\\\" && echo set\", #{ env: #{ API_TOKEN: \"s3cr3t-value-42\" } }); assert_eq(r.stdout.trimmed(), \"set\", \"env reached the command\"); });\n";
    let f = Fab::new().file("s.rhai", s);
    let rec = f.dir().join("rec");
    let o = f
        .args(["run", "s.rhai", "--record"])
        .args([rec.display().to_string()])
        .reports()
        .run();
    o.code(0);
    assert!(
        !o.junit.clone().unwrap().contains("s3cr3t"),
        "secret in JUnit"
    );
    assert!(
        !serde_json::to_string(o.json.as_ref().unwrap())
            .unwrap()
            .contains("s3cr3t"),
        "secret in JSON"
    );
    assert!(
        !std::fs::read_to_string(rec.join("localhost.jsonl"))
            .unwrap()
            .contains("s3cr3t"),
        "secret in the transcript"
    );
}

#[test]
fn ten_megabytes_of_output_stay_out_of_junit_but_in_the_transcript() {
    let s = "test(\"flood\", || { let r = nodes()[0].run(\"head -c 10485760 /dev/zero | tr '\\\\0' y\"); assert(r.stdout.len() < 1100000, \"output is capped in memory (issue 14)\"); assert(r.stdout.contains(\"bytes of output cut\"), \"cut marker\"); });\n";
    let f = Fab::new().file("f.rhai", s);
    let rec = f.dir().join("rec");
    let o = f
        .args(["run", "f.rhai", "--record"])
        .args([rec.display().to_string()])
        .reports()
        .run();
    o.code(0);
    o.junit_is_valid();
    let junit_len = o.junit.as_ref().unwrap().len();
    assert!(junit_len < 64 * 1024, "JUnit is {junit_len} bytes");
    // The transcript keeps the full output (large streams in their own file beside it).
    let transcript = std::fs::read_to_string(rec.join("localhost.jsonl")).unwrap();
    let recorded: u64 = std::fs::read_dir(&rec)
        .unwrap()
        .flatten()
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(
        transcript.contains("stdout_file") && recorded > 10_000_000,
        "the transcript keeps the full output"
    );
}

const TWO_TESTS: &str =
    "test(\"one\", || { metric(\"x\", 1.0, \"u\"); });\ntest(\"two\", || { fail(\"no\"); });\n";

/// Run [`TWO_TESTS`] with a pause of `delay_ms` before the reports are written, send
/// `signals` (each once the one before it was delivered) once the pause has begun: the outcome
/// and the run (its directory lives as long as it). The run must end within
/// [`common::HANG`] of the signals (it is killed and the test fails otherwise).
fn signalled_while_writing_reports(
    delay_ms: u64,
    signals: &[i32],
    env: &[(&str, &str)],
) -> (common::Outcome, Fab) {
    use std::io::{BufRead, Read};
    let mut f = Fab::new()
        .file("r.rhai", TWO_TESTS)
        .args(["run", "r.rhai"])
        .env("FABCHECK_TEST_REPORT_DELAY_MS", &delay_ms.to_string())
        .reports();
    for (k, v) in env {
        f = f.env(k, v);
    }
    let mut child = f.spawn();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "no report pause: {seen}"
        );
        seen.push_str(&line);
        if line.contains("writing reports in") {
            break;
        }
    }
    for &sig in signals {
        common::signal_delivered(child.id(), sig);
    }
    let mut stdout = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let rest = std::thread::spawn(move || {
        let _ = err.read_to_string(&mut seen);
        seen
    });
    if !common::comes(common::HANG, || child.try_wait().unwrap().is_some()) {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "still running {:?} after the signals (killed)",
            common::HANG
        );
    }
    let status = child.wait().unwrap();
    let o = f.outcome(std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: rest.join().unwrap().into_bytes(),
    });
    (o, f)
}

/// Both reports are there and complete: every test, its outcome and the metric.
fn assert_complete_reports(o: &common::Outcome, name: &str) {
    o.code(3);
    assert_eq!(o.status("one"), "pass", "{name}");
    assert_eq!(o.status("two"), "failure", "{name}");
    assert_eq!(o.test("one")["metrics"][0]["name"], "x", "{name}");
    // The two tests and the diagnosis testcase of the failed one.
    assert_eq!(o.junit_is_valid(), "junitparser cases 3", "{name}");
}

#[test]
fn interrupt_while_reports_are_written_exits_3_with_complete_reports() {
    for (sig, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let (o, _f) = signalled_while_writing_reports(3000, &[sig], &[]);
        assert_complete_reports(&o, name);
    }
}

#[test]
fn a_second_signal_while_reports_are_written_still_gives_complete_reports() {
    // It used to exit at once: no report at all.
    let (o, _f) = signalled_while_writing_reports(2000, &[libc::SIGINT, libc::SIGINT], &[]);
    assert_complete_reports(&o, "INT INT");
}

#[test]
fn after_a_second_signal_a_run_held_by_something_outside_ends_at_the_last_resort() {
    // The report pause stands for something that holds the run (a blocked filesystem): past
    // the last-resort bound after the second signal, fabcheck exits 3 and says why.
    // The pause lasts an hour: only the last resort ends the run within the bound.
    let (o, _f) = signalled_while_writing_reports(
        3_600_000,
        &[libc::SIGINT, libc::SIGTERM],
        &[("FABCHECK_TEST_LAST_RESORT_MS", "1500")],
    );
    o.code(3);
    assert!(
        o.stderr
            .contains("still not finished 1.5 s after the second signal"),
        "{}",
        o.stderr
    );
}

#[test]
fn import_cycles_are_errors_not_stack_overflows() {
    let o = Fab::new()
        .file(
            "self.rhai",
            "import \"self\" as me;\ntest(\"x\", || { assert(true); });\n",
        )
        .args(["check", "self.rhai"])
        .run();
    o.code(2);
    assert!(
        o.stderr.contains("import cycle: \"self\" imports \"self\""),
        "{}",
        o.stderr
    );
    let o = Fab::new()
        .file("a.rhai", "import \"b\" as b;\nfn fa() { 1 }\n")
        .file("b.rhai", "import \"a\" as a;\nfn fb() { 2 }\n")
        .file(
            "main.rhai",
            "import \"a\" as a;\ntest(\"y\", || { assert(true); });\n",
        )
        .args(["run", "main.rhai"])
        .run();
    o.code(2);
    assert!(
        o.stderr.contains("\"a\" imports \"b\" imports \"a\""),
        "{}",
        o.stderr
    );
}

#[test]
fn a_print_flood_keeps_reports_small_and_valid() {
    // ~400 MB printed: the test's output keeps head and tail, the reports stay small.
    let s = "test(\"flood\", || { let s = \"0123456789\"; for i in 0..17 { s += s; } for i in 0..300 { print(s); } assert(true); });\n";
    let o = Fab::new()
        .file("f.rhai", s)
        .args(["run", "f.rhai", "--html", "{dir}/r.html"])
        .reports()
        .run();
    o.code(0);
    let junit = o.junit.clone().unwrap_or_default();
    assert!(junit.len() < 1_000_000, "JUnit is {} bytes", junit.len());
    let html = std::fs::metadata(o.dir.join("r.html")).unwrap().len();
    assert!(html < 1_000_000, "HTML is {html} bytes");
    o.junit_is_valid();
}

#[test]
fn reports_never_write_through_planted_links() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fab::new().file("s.rhai", "test(\"a\", || { assert(true); });\n");
    let victim = f.dir().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    // A link where the report goes, and links at every temp name the old scheme used.
    std::os::unix::fs::symlink(&victim, f.dir().join("r.xml")).unwrap();
    for pid in 1..400 {
        let _ = std::os::unix::fs::symlink(&victim, f.dir().join(format!(".r.json.{pid}.tmp")));
    }
    let args = [
        "run",
        "s.rhai",
        "--junit",
        "{dir}/r.xml",
        "--json",
        "{dir}/r.json",
    ];
    // Issue 36: a link at the report path is refused (exit 2), neither followed nor replaced.
    let o = f.umask(0o077).args(args).run();
    o.code(2);
    assert!(o.stderr.contains("symbolic link"), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(o.dir.join("r.xml")).unwrap();
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    // Without the link at the name, the planted temp names change nothing.
    std::fs::remove_file(o.dir.join("r.xml")).unwrap();
    let mut f = Fab::new().file("s.rhai", "test(\"a\", || { assert(true); });\n");
    for pid in 1..400 {
        let _ = std::os::unix::fs::symlink(&victim, f.dir().join(format!(".r.json.{pid}.tmp")));
    }
    f = f.umask(0o077).args(args);
    let o = f.run();
    o.code(0);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let mode = std::fs::metadata(o.dir.join("r.json"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "a new report under umask 077 is private");
}

#[test]
fn huge_timeouts_are_not_panics() {
    let s = "test(\"t\", || { let r = nodes()[0].run(\"true\", #{ timeout: 9223372036854775807 }); assert_eq(r.exit_code, 0, \"ran\"); });\n";
    let o = Fab::new()
        .file("t.rhai", s)
        .args(["run", "t.rhai"])
        .reports()
        .run();
    assert!(o.code == 0 || o.code == 1, "exit {}: {}", o.code, o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

#[test]
fn env_values_never_reach_reports_or_transcripts() {
    let s = "test(\"env\", || {\n    let r = nodes()[0].run(\"test -n \\\"$NCCL_IB_TOKEN\\\" && echo token-set\", #{ env: #{ NCCL_IB_TOKEN: \"s3cret-t0ken\" } });\n    assert_eq(r.stdout.trimmed(), \"token-set\", \"the variable reached the command\");\n});\n";
    let o = Fab::new()
        .file("e.rhai", s)
        .args([
            "run",
            "e.rhai",
            "--html",
            "{dir}/r.html",
            "--record",
            "{dir}/rec",
        ])
        .reports()
        .run();
    o.code(0);
    let mut all = o.junit.clone().unwrap_or_default();
    all.push_str(&o.json.as_ref().map(|j| j.to_string()).unwrap_or_default());
    all.push_str(&std::fs::read_to_string(o.dir.join("r.html")).unwrap());
    for e in std::fs::read_dir(o.dir.join("rec")).unwrap().flatten() {
        if e.path().is_file() {
            all.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    assert!(
        !all.contains("s3cret-t0ken"),
        "a variable's value reached a report or transcript"
    );
    assert!(!o.stdout.contains("s3cret-t0ken") && !o.stderr.contains("s3cret-t0ken"));
}

/// 300 nodes under a per-user process limit of 60: threads that cannot be spawned leave their
/// work to the others; no `expect("spawn …")` abort, every testcase reported.
#[test]
fn a_thread_limit_degrades_fan_out_instead_of_aborting() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0
        || std::process::Command::new("runuser")
            .arg("--help")
            .output()
            .is_err()
    {
        skip("it needs root and runuser");
        return;
    }
    let dir = std::env::temp_dir().join(format!("fc-ulimit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    std::fs::write(
        dir.join("s.rhai"),
        "test_each(nodes(), \"n\", |n| { assert(true); });\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("inv.toml"),
        "[defaults]\ntransport = \"local\"\n[[node]]\nname = \"n[1-300]\"\n",
    )
    .unwrap();
    // `nobody` runs a copy it can reach (the checkout may be in a folder only root enters).
    let bin = common::reachable_bin();
    let o = std::process::Command::new("runuser")
        .args(["-u", "nobody", "--", "sh", "-c"])
        .arg(format!(
            "ulimit -u 60; cd {d} && {b} run s.rhai -i inv.toml -q --json out.json",
            d = dir.display(),
            b = bin.display()
        ))
        .output()
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(json["suites"][0]["tests"].as_array().unwrap().len(), 300);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Processes whose command line mentions `needle` (this test's own temp path).
fn processes_mentioning(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(needle))
        .collect()
}

#[test]
fn two_signals_while_connecting_leave_no_control_dir_and_no_local_ssh() {
    // Nodes that accept the TCP connection and never answer (ssh waits for their banner): the
    // run is interrupted twice while its masters connect. The second signal used to exit at
    // once, leaving the control directory and the connecting ssh processes.
    // Two nodes are two addresses (one SSH destination is one node): 127.0.0.1 and
    // 127.0.0.2, both on the loopback, where the listener on every address answers.
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let inv = format!(
        "[defaults]\nport = {port}\nconnect_timeout = \"1h\"\nknown_hosts = \"off\"\nssh_config = \"ssh_config\"\n[[node]]\nname = \"a\"\nhost = \"127.0.0.1\"\n[[node]]\nname = \"b\"\nhost = \"127.0.0.2\"\n"
    );
    let f = Fab::new()
        .file("inv.toml", &inv)
        .file("ssh_config", "# empty: not the user's config\n")
        .file("tmp/.keep", "")
        .file(
            "c.rhai",
            "test_each(nodes(), \"reach\", |n| { n.run(\"true\"); });\n",
        )
        .args(["run", "c.rhai", "-i", "inv.toml"])
        .reports();
    // The run's control directories go under this test's own TMPDIR, and nowhere else.
    let tmp = f.dir().join("tmp");
    let f = f.env("TMPDIR", &tmp.display().to_string());
    // The nodes' connect timeout is an hour: a run that waits for it is caught by the bound.
    let mut child = f.spawn();
    if !common::comes(common::HANG, || {
        accepted.load(std::sync::atomic::Ordering::SeqCst) >= 2
    }) {
        let _ = child.kill();
        panic!("fabcheck never connected");
    }
    for sig in [libc::SIGINT, libc::SIGINT] {
        common::signal_delivered(child.id(), sig);
    }
    let out = common::output_within(child, common::HANG, "interrupted while connecting");
    let o = f.outcome(out);
    let needle = tmp.display().to_string();
    let left_dirs: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("fc-"))
        .collect();
    let left_ssh = processes_mentioning(&needle);
    o.code(3);
    // The two tests, and the diagnosis testcase when the signals came after a test was red.
    let diagnosed = o.json.as_ref().unwrap()["diagnosis"]
        .as_array()
        .is_some_and(|d| !d.is_empty());
    assert_eq!(
        o.junit_is_valid(),
        format!("junitparser cases {}", 2 + usize::from(diagnosed))
    );
    assert_eq!(o.json.as_ref().unwrap()["interrupted"], true);
    assert!(left_dirs.is_empty(), "control dirs left: {left_dirs:?}");
    assert!(left_ssh.is_empty(), "local ssh left: {left_ssh:?}");
}

//! Hardening, fourth round (issue 36): report paths, script and inventory reading, dry-run
//! env, console text, nesting depth, `--record`, SIGHUP. Each test fails on the main before it.

use crate::common::{skip, Fab};

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

const PASSING: &str = "test(\"a\", || { assert(true); });\n";

#[test]
fn report_paths_that_are_links_fifos_or_devices_are_refused_not_replaced() {
    let f = Fab::new().file("s.rhai", PASSING);
    let d = f.dir().to_path_buf();
    std::fs::write(d.join("victim"), "precious").unwrap();
    std::os::unix::fs::symlink(d.join("victim"), d.join("link.xml")).unwrap();
    std::os::unix::fs::symlink("/proc/self/fd/1", d.join("fd1.xml")).unwrap();
    let fifo = std::ffi::CString::new(d.join("fifo.xml").to_str().unwrap()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    // Not `/dev/stdout` itself: run against an older build (FABCHECK_TEST_BIN), that would
    // replace the host's /dev/stdout; `fd1.xml` is the same link.
    let mut cases = vec!["{dir}/link.xml", "{dir}/fd1.xml", "{dir}/fifo.xml"];
    if is_root() {
        let dev = std::ffi::CString::new(d.join("null.xml").to_str().unwrap()).unwrap();
        // SAFETY: valid path; makedev(1, 3) is /dev/null.
        let r = unsafe { libc::mknod(dev.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
        assert_eq!(r, 0);
        cases.push("{dir}/null.xml");
    } else {
        skip("the device case needs root (mknod)");
    }
    for c in cases {
        let f2 = Fab::new().file("s.rhai", PASSING);
        let o = f2
            .args([
                "run",
                "s.rhai",
                "--junit",
                &c.replace("{dir}", d.to_str().unwrap()),
            ])
            .run();
        assert_eq!(o.code, 2, "{c}: exit {}\n{}", o.code, o.stderr);
        assert!(
            o.stderr.contains("regular file or a new name"),
            "{c}: {}",
            o.stderr
        );
    }
    assert_eq!(
        std::fs::read_to_string(d.join("victim")).unwrap(),
        "precious"
    );
    for n in ["link.xml", "fd1.xml"] {
        assert!(std::fs::symlink_metadata(d.join(n))
            .unwrap()
            .file_type()
            .is_symlink());
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(d.join("fifo.xml"))
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_link_owned_by_another_user_on_the_report_folder_path_is_not_followed() {
    if !is_root() {
        skip("it needs root to plant another user's link");
        return;
    }
    let f = Fab::new().file("s.rhai", PASSING);
    let d = f.dir().to_path_buf();
    std::fs::create_dir(d.join("rootonly")).unwrap();
    std::fs::create_dir(d.join("nbdir")).unwrap();
    std::os::unix::fs::chown(d.join("nbdir"), Some(65534), Some(65534)).unwrap();
    std::os::unix::fs::symlink(d.join("rootonly"), d.join("nbdir/sub")).unwrap();
    std::os::unix::fs::lchown(d.join("nbdir/sub"), Some(65534), Some(65534)).unwrap();
    let o = f
        .args(["run", "s.rhai", "--junit", "{dir}/nbdir/sub/victim.xml"])
        .run();
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("belongs to another user"), "{}", o.stderr);
    assert!(!o.dir.join("rootonly/victim.xml").exists());
    // A link of this user (root here) on the way is followed.
    std::os::unix::fs::symlink(d.join("rootonly"), d.join("mine")).unwrap();
    let o = Fab::new()
        .file("s.rhai", PASSING)
        .args([
            "run",
            "s.rhai",
            "--junit",
            &format!("{}/mine/r.xml", d.display()),
        ])
        .run();
    o.code(0);
    assert!(d.join("rootonly/r.xml").exists());
}

#[test]
fn the_same_file_for_two_reports_is_a_usage_error() {
    let o = Fab::new()
        .file("s.rhai", PASSING)
        .args([
            "run",
            "s.rhai",
            "--junit",
            "{dir}/r.out",
            "--json",
            "{dir}/./r.out",
        ])
        .run();
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("same file"), "{}", o.stderr);
    assert!(!o.dir.join("r.out").exists());
    let o = Fab::new()
        .file("s.rhai", PASSING)
        .args(["run", "s.rhai", "--json", "r.html", "--html", "r.html"])
        .run();
    assert_eq!(o.code, 2, "{}", o.stderr);
}

#[test]
fn a_zero_timeout_is_a_usage_error_in_run_and_exec() {
    for args in [
        vec!["run", "s.rhai", "--timeout", "0"],
        vec!["run", "s.rhai", "--timeout", "0s"],
        vec!["exec", "-w", "localhost", "--timeout", "0ms", "--", "true"],
    ] {
        let o = Fab::new().file("s.rhai", PASSING).args(args.clone()).run();
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(
            o.stderr.contains("timeout of zero"),
            "{args:?}: {}",
            o.stderr
        );
    }
}

#[test]
fn a_missing_report_folder_is_made_and_the_console_says_so() {
    let o = Fab::new()
        .file("s.rhai", PASSING)
        .args(["run", "s.rhai", "--junit", "{dir}/new/deeper/r.xml"])
        .run();
    o.code(0);
    assert!(o.dir.join("new/deeper/r.xml").is_file());
    assert!(
        o.stderr.contains("note: the folder")
            && o.stderr.contains("new/deeper")
            && o.stderr.contains("made the folder"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_dry_run_lists_env_names_never_values() {
    let s = "test(\"env\", || { nodes()[0].run(\"echo hi\", #{ env: #{ AUTH: \"S3CRETauth\", NCCL_IB_CRED: \"S3CRETcred\", PASSWD: \"S3CRETpw\" } }); });\n";
    let o = Fab::new()
        .file("s.rhai", s)
        .args(["run", "s.rhai", "--dry-run", "--html", "{dir}/r.html"])
        .reports()
        .run();
    let html = std::fs::read_to_string(o.dir.join("r.html")).unwrap();
    let json = o.json.as_ref().expect("JSON").to_string();
    let junit = o.junit.clone().expect("JUnit");
    for (what, text) in [
        ("stdout", &o.stdout),
        ("stderr", &o.stderr),
        ("JUnit", &junit),
        ("JSON", &json),
        ("HTML", &html),
    ] {
        assert!(!text.contains("S3CRET"), "{what} shows a value:\n{text}");
    }
    let listed = format!("{}{}", o.stdout, o.stderr);
    assert!(
        listed.contains("env AUTH=… NCCL_IB_CRED=… PASSWD=… echo hi"),
        "{listed}"
    );
}

#[test]
fn escape_codes_and_bidi_overrides_in_test_and_metric_names_never_reach_the_console_raw() {
    let s = r#"test("evil\x1b]0;owned\x07\x1b[2J\u202eSSAP\u0085 name", || {
    metric("bw\x1b[31m\u202e", 1.0, "Gb\x9bs");
    assert(false, "fails\x1b[5m");
});
"#;
    let o = Fab::new().file("s.rhai", s).args(["run", "s.rhai"]).run();
    o.code(1);
    for bad in ['\u{1b}', '\u{7}', '\u{202e}', '\u{85}', '\u{9b}'] {
        assert!(
            !o.stdout.contains(bad),
            "{:?} on the console: {:?}",
            bad,
            o.stdout
        );
    }
    assert!(o.stdout.contains("FAIL  evil"), "{}", o.stdout);
    assert!(o.stdout.contains("SSAP name"), "{}", o.stdout);
}

/// Run fabcheck, killing it after [`crate::common::HANG`] (a hang is a failure, not a stuck
/// test run).
fn run_within(f: &Fab) -> (i32, String) {
    let out = crate::common::output_within(
        f.spawn(),
        crate::common::HANG,
        &format!("fabcheck in {:?}", f.dir()),
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn mkfifo(p: &std::path::Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_named_script_reads_only_itself_and_its_imports_not_every_rhai_beside_it() {
    let f = Fab::new()
        .file(
            "dir/s.rhai",
            "import \"m\" as m;\ntest(\"a\", || { assert_eq(m::two(), 2, \"imported\"); });\n",
        )
        .file("dir/m.rhai", "fn two() { 2 }\n");
    mkfifo(&f.dir().join("dir/zz.rhai"));
    std::os::unix::fs::symlink("/dev/zero", f.dir().join("dir/yy.rhai")).unwrap();
    let f = f.args(["run", "dir/s.rhai"]);
    let (code, out) = run_within(&f);
    assert_eq!(code, 0, "{out}");
    // An import that is a FIFO or /dev/zero: an error naming it, at once.
    for (bad, what) in [("zz", "FIFO"), ("yy", "device")] {
        let f = Fab::new().file(
            "dir/t.rhai",
            &format!("import \"{bad}\" as b;\ntest(\"a\", || {{}});\n"),
        );
        mkfifo(&f.dir().join("dir/zz.rhai"));
        std::os::unix::fs::symlink("/dev/zero", f.dir().join("dir/yy.rhai")).unwrap();
        let f = f.args(["run", "dir/t.rhai"]);
        let (code, out) = run_within(&f);
        assert_eq!(code, 2, "{out}");
        assert!(out.contains(what) && out.contains(bad), "{bad}: {out}");
    }
    // A named script that is a FIFO, and a script over the cap.
    let f = Fab::new().file("big.rhai", &"// padding\n".repeat(900_000));
    mkfifo(&f.dir().join("p.rhai"));
    let f = f.args(["run", "p.rhai", "big.rhai"]);
    let (code, out) = run_within(&f);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("FIFO") && out.contains("larger than 8MiB"),
        "{out}"
    );
}

#[test]
fn an_inventory_that_is_a_fifo_dev_zero_or_huge_is_refused_at_once() {
    let f = Fab::new();
    mkfifo(&f.dir().join("inv.toml"));
    let (code, out) = run_within(&f.args(["nodes", "-i", "inv.toml"]));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("FIFO"), "{out}");
    let (code, out) = run_within(&Fab::new().args(["nodes", "-i", "/dev/zero"]));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("device"), "{out}");
    let big = format!("# {}\n", "x".repeat(17 << 20));
    let f = Fab::new().file("big.toml", &big);
    let (code, out) = run_within(&f.args(["nodes", "-i", "big.toml"]));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("larger than 16MiB"), "{out}");
}

const LOCAL_INV: &str = "[[node]]\nname = \"n1\"\nhost = \"localhost\"\ntransport = \"local\"\n";

#[test]
fn sighup_is_handled_like_term_reports_written_exit_3() {
    let f = Fab::new()
        .file("inv.toml", LOCAL_INV)
        .file(
            "s.rhai",
            "test(\"quick\", || { assert(true); });\ntest(\"slow\", #{ timeout: \"2h\" }, || { node(\"n1\").run(\"touch started; sleep 3600\", #{ timeout: \"2h\" }); });\n",
        )
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .reports();
    let child = f.spawn();
    // The signal comes once the slow test runs (its command touched `started`), not after a
    // guessed pause.
    let started = f.dir().join("started");
    crate::common::eventually(crate::common::HANG, "the slow test started", || {
        started.exists()
    });
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    // The command lasts an hour: a run that ignored the SIGHUP is caught by the bound.
    let out = crate::common::output_within(child, crate::common::HANG, "the run after SIGHUP");
    let o = f.outcome(out);
    assert_eq!(o.code, 3, "{}", o.stderr);
    assert_eq!(o.json.as_ref().expect("JSON written")["interrupted"], true);
    assert_eq!(o.status("quick"), "pass");
    o.junit_is_valid();
}

#[test]
fn exec_strips_control_sequences_unless_raw() {
    let cmd = "printf 'a\\033]0;title\\007\\033[2Jb\\000c\\033]52;c;cHduZWQ=\\007d\\n'";
    let o = Fab::new()
        .file("inv.toml", LOCAL_INV)
        .args(["exec", "-i", "inv.toml", "-w", "n1", "--", cmd])
        .run();
    o.code(0);
    assert!(o.stdout.contains("abcd"), "{:?}", o.stdout);
    for bad in ['\u{1b}', '\u{7}', '\u{0}'] {
        assert!(!o.stdout.contains(bad), "{bad:?} in {:?}", o.stdout);
    }
    let o = Fab::new()
        .file("inv.toml", LOCAL_INV)
        .args(["exec", "-i", "inv.toml", "-w", "n1", "--raw", "--", cmd])
        .run();
    o.code(0);
    assert!(o.stdout.contains("\u{1b}]0;title\u{7}"), "{:?}", o.stdout);
}

#[test]
fn record_into_a_link_or_another_users_file_is_an_error_not_silent() {
    let inv = LOCAL_INV;
    let s = "test(\"t\", || { node(\"n1\").run(\"true\"); });\n";
    let f = Fab::new().file("inv.toml", inv).file("r.rhai", s);
    std::fs::create_dir(f.dir().join("rec")).unwrap();
    std::fs::write(f.dir().join("victim"), "precious").unwrap();
    std::os::unix::fs::symlink(f.dir().join("victim"), f.dir().join("rec/n1.jsonl")).unwrap();
    let o = f
        .args(["run", "r.rhai", "-i", "inv.toml", "--record", "rec"])
        .run();
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("--record") && o.stderr.contains("n1.jsonl"),
        "{}",
        o.stderr
    );
    assert_eq!(
        std::fs::read_to_string(o.dir.join("victim")).unwrap(),
        "precious"
    );
    if is_root() {
        let f = Fab::new().file("inv.toml", inv).file("r.rhai", s);
        std::fs::create_dir(f.dir().join("rec")).unwrap();
        std::fs::write(f.dir().join("rec/n1.jsonl"), "").unwrap();
        std::os::unix::fs::chown(f.dir().join("rec/n1.jsonl"), Some(65534), Some(65534)).unwrap();
        let o = f
            .args(["run", "r.rhai", "-i", "inv.toml", "--record", "rec"])
            .run();
        assert_eq!(o.code, 2, "{}", o.stderr);
        assert!(o.stderr.contains("another user"), "{}", o.stderr);
    } else {
        skip("the other user's transcript case needs root (chown)");
    }
}

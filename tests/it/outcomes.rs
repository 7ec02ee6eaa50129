//! The core runner on the local transport: outcomes, exit codes, reports, diagnostics.

use crate::common;
use common::Fab;

fn outcomes() -> common::Outcome {
    let script =
        std::fs::read_to_string(common::repo().join("tests/scripts/core_outcomes.rhai")).unwrap();
    Fab::new()
        .file("core_outcomes.rhai", &script)
        .args([
            "run",
            "core_outcomes.rhai",
            "--set",
            "n=5",
            "--set",
            "flag=true",
        ])
        .reports()
        .run()
}

#[test]
fn every_outcome_of_the_test_model() {
    let o = outcomes();
    o.code(1);
    assert_eq!(o.status("passes with a metric"), "pass");
    assert_eq!(o.status("assertion fails"), "failure");
    let m = o.message("assertion fails");
    assert!(
        m.contains("expected >= 90")
            && m.contains("actual 80.5")
            && m.contains("core_outcomes.rhai:13"),
        "{m}"
    );
    assert_eq!(o.status("skipped with reason"), "skipped");
    assert!(o.message("skipped with reason").contains("no RDMA device"));
    assert_eq!(o.status("missing binary is an error"), "error");
    assert!(o
        .message("missing binary is an error")
        .contains("command not found"));
    assert_eq!(o.status("nonzero exit from sh fails"), "failure");
    assert!(
        o.message("nonzero exit from sh fails")
            .contains("exited with 3: oops"),
        "{}",
        o.message("nonzero exit from sh fails")
    );
    assert_eq!(o.status("run returns data"), "pass");
    assert_eq!(o.status("script runtime error"), "error");
    assert!(
        o.message("script runtime error")
            .contains("core_outcomes.rhai:37"),
        "{}",
        o.message("script runtime error")
    );
    assert_eq!(o.status("runaway loop times out"), "error");
    assert!(o.message("runaway loop times out").contains("timed out"));
    assert_eq!(o.status("hung command times out"), "error");
    assert!(o.message("hung command times out").contains("timed out"));
    assert_eq!(o.status("null value is an error, not a pass"), "error");
    assert_eq!(o.status("per node [localhost]"), "pass");
    assert_eq!(o.status("flaky retried"), "failure");
    assert_eq!(
        o.test("flaky retried")["attempts"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(o.status("param missing skips"), "skipped");
    assert!(o
        .message("param missing skips")
        .contains("--set batch_size="));
    assert_eq!(o.status("param typed"), "pass");
    assert_eq!(o.status("warn does not fail"), "pass");
    assert_eq!(
        o.test("warn does not fail")["warnings"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // A pass that made no assertion, recorded no metric and ran no command says so.
    assert_eq!(o.status("checks nothing"), "pass");
    let w = o.test("checks nothing")["warnings"].to_string();
    assert!(w.contains("checked nothing"), "{w}");
    assert!(
        o.stdout.contains("checked nothing"),
        "console: {}",
        o.stdout
    );
    assert!(o
        .junit
        .as_deref()
        .unwrap_or_default()
        .contains("checked nothing"));
    assert!(!o.test("warn does not fail")["warnings"]
        .to_string()
        .contains("checked nothing"));
    // A test registered in a loop sees its own iteration's value, not the last one.
    assert_eq!(o.test("loop capture 1")["metrics"][0]["value"], 1.0);
    assert_eq!(o.test("loop capture 2")["metrics"][0]["value"], 2.0);
    // metrics in JSON and as JUnit testsuite properties
    let t = o.test("passes with a metric");
    assert_eq!(t["metrics"][0]["name"], "rail_gbps");
    assert_eq!(t["metrics"][0]["value"], 95.5);
    let junit = o.junit.clone().unwrap();
    assert!(
        junit.contains(r#"<property name="passes with a metric/rail_gbps" value="95.5"/>"#),
        "{junit}"
    );
    assert!(
        junit.contains("<failure message=\"per-rail bandwidth"),
        "failure element for assertions"
    );
    assert!(
        junit.contains("<error message=\"fabcheck_no_such_binary")
            || junit.contains("<error message=\"localhost: `fabcheck_no_such_binary"),
        "error element for infrastructure"
    );
    assert!(junit.contains("printed by the script"));
    let summary = o.junit_is_valid();
    // 18 tests and the `diagnosis` testcase of their reds.
    assert!(summary.contains("cases 19"), "{summary}");
}

#[test]
fn all_pass_or_skip_is_exit_0() {
    Fab::new()
        .file(
            "ok.rhai",
            "test(\"a\", || { assert(true, \"t\"); });\ntest(\"b\", || { skip(\"later\"); });\n",
        )
        .args(["run", "ok.rhai"])
        .reports()
        .run()
        .code(0);
}

#[test]
fn check_reports_syntax_errors_with_a_code_frame() {
    let o = Fab::new()
        .file("bad.rhai", "test(\"a\", || {\n    let y = (1 + ;\n});\n")
        .args(["check", "bad.rhai"])
        .run();
    o.code(2);
    assert!(o.stderr.contains("bad.rhai:2:18"), "{}", o.stderr);
    assert!(
        o.stderr.contains("let y = (1 + ;") && o.stderr.contains('^'),
        "{}",
        o.stderr
    );
}

#[test]
fn check_reports_unknown_functions_with_a_suggestion() {
    let o = Fab::new()
        .file(
            "typo.rhai",
            "let f = nodes();\ntest(\"a\", || {\n    asert_eq(1, 1, \"x\");\n});\n",
        )
        .args(["check", "typo.rhai"])
        .run();
    o.code(2);
    assert!(
        o.stderr.contains("unknown function `asert_eq`") && o.stderr.contains("typo.rhai:3:5"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("did you mean `assert_eq`"),
        "{}",
        o.stderr
    );
    // and `run` refuses to start such a script
    Fab::new()
        .file("typo.rhai", "asert(true, \"x\");\n")
        .args(["run", "typo.rhai"])
        .reports()
        .run()
        .code(2);
}

#[test]
fn bad_inventory_is_exit_2_with_file_and_line() {
    let o = Fab::new()
        .file(
            "inv.toml",
            "[defaults]\nuser = \"nvidia\"\n\n[[node]]\nname = \"spark-01\"\nspeeed = 3\n",
        )
        .file("s.rhai", "test(\"a\", || {});\n")
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .run();
    o.code(2);
    assert!(
        o.stderr.contains("inv.toml:6:1") && o.stderr.contains("speeed"),
        "{}",
        o.stderr
    );
}

#[test]
fn filter_and_list() {
    let s = "test(\"step 1: ping\", || {});\ntest(\"step 2: ssh\", || { fail(\"no\"); });\n";
    let o = Fab::new()
        .file("s.rhai", s)
        .args(["run", "s.rhai", "--filter", "step 1"])
        .reports()
        .run();
    o.code(0);
    assert_eq!(o.tests().len(), 1);
    let l = Fab::new().file("s.rhai", s).args(["list", "s.rhai"]).run();
    l.code(0);
    assert_eq!(l.stdout, "s\tstep 1: ping\ns\tstep 2: ssh\n");
}

#[test]
fn list_of_a_script_whose_top_level_throws_is_not_exit_0() {
    // Only the tests declared before the throw can be listed: an incomplete listing that
    // exits 0 looks like the whole plan.
    let s =
        "test(\"before\", || {});\nthrow \"inventory has no rail map\";\ntest(\"after\", || {});\n";
    let l = Fab::new().file("s.rhai", s).args(["list", "s.rhai"]).run();
    l.code(1);
    assert!(
        l.stderr.contains("s.rhai") && l.stderr.contains("inventory has no rail map"),
        "{}",
        l.stderr
    );
    assert_eq!(l.stdout, "s\tbefore\n");
    // A top-level `skip` is not an error.
    let s = "test(\"one\", || {});\nskip(\"not on this cluster\");\n";
    Fab::new()
        .file("s.rhai", s)
        .args(["list", "s.rhai"])
        .run()
        .code(0);
}

#[test]
fn test_each_runs_nodes_concurrently() {
    // Four local nodes; each waits until all four have started: only true concurrency passes.
    let inv = "[defaults]\ntransport = \"local\"\n[[node]]\nname = \"n[1-4]\"\n";
    let script = r#"
test_each(nodes(), "barrier", |n| {
    let d = param("dir");
    n.sh(`touch ${d}/${n.name}; i=0; while [ $(ls ${d} | wc -l) -lt 4 ]; do i=$((i+1)); [ $i -gt 100 ] && exit 9; sleep 0.05; done`);
});
"#;
    let f = Fab::new().file("inv.toml", inv).file("s.rhai", script);
    let d = f.dir().join("barrier");
    std::fs::create_dir_all(&d).unwrap();
    let o = f
        .args(["run", "s.rhai", "-i", "inv.toml", "--set"])
        .args([format!("dir={}", d.display())])
        .reports()
        .run();
    o.code(0);
    assert_eq!(o.tests().len(), 4);
    // One classname per script (Jenkins would split `s.n3` into a package per node); the
    // node is in the test name.
    assert_eq!(o.test("barrier [n3]")["classname"], "s");
    assert_eq!(o.test("barrier [n3]")["node"], "n3");
    assert!(o
        .junit
        .as_deref()
        .unwrap_or_default()
        .contains("skipped=\"0\""));
}

#[test]
fn duplicate_names_stay_unique_in_junit() {
    let o = Fab::new()
        .file("d.rhai", "test(\"same\", || {});\ntest(\"same\", || {});\n")
        .args(["run", "d.rhai"])
        .reports()
        .run();
    o.code(0);
    assert_eq!(o.tests()[1]["name"], "same (2)");
}

#[test]
fn same_script_name_in_two_folders_stays_unique_in_junit() {
    let o = Fab::new()
        .file("a/check.rhai", "test(\"same\", || {});\n")
        .file("b/check.rhai", "test(\"same\", || { fail(\"b\"); });\n")
        .args(["run", "a/check.rhai", "b/check.rhai"])
        .reports()
        .run();
    o.code(1);
    assert_eq!(o.status("same"), "pass");
    assert_eq!(o.status("same (2)"), "failure");
    let junit = o.junit.clone().unwrap();
    assert!(
        junit.contains("classname=\"check\" name=\"same\"")
            || junit.contains("name=\"same\" classname=\"check\""),
        "{junit}"
    );
    assert!(junit.contains("same (2)"), "{junit}");
    o.junit_is_valid();
}

#[test]
fn hostile_output_keeps_junit_well_formed() {
    let script = r#"
test("hostile", || {
    let r = nodes()[0].run("sh hostile.sh");
    fail("show the output");
});
"#;
    let sh = r"printf '\033[31mred\033[0m ]]> <&> \001\002 \377\376 bad utf8'; printf '\000nul'; head -c 3000000 /dev/zero | tr '\0' x";
    let o = Fab::new()
        .file("h.rhai", script)
        .file("hostile.sh", sh)
        .args(["run", "h.rhai"])
        .reports()
        .run();
    o.code(1);
    o.junit_is_valid();
    let junit = o.junit.clone().unwrap();
    assert!(
        junit.len() < 400_000,
        "JUnit stays small: {} bytes",
        junit.len()
    );
    assert!(
        junit.contains("bytes cut by fabcheck"),
        "cap marker present"
    );
    assert!(!junit.contains('\u{1b}'));
}

#[test]
fn record_then_replay_gives_the_same_outcomes() {
    let inv = "[defaults]\ntransport = \"local\"\n[[node]]\nname = \"a\"\n";
    let script = "test(\"uname\", || { let r = node(\"a\").run(\"echo recorded-$((6*7))\"); assert_eq(r.stdout.trimmed(), \"recorded-42\", \"out\"); });\n";
    let f = Fab::new().file("inv.toml", inv).file("s.rhai", script);
    let rec = f.dir().join("rec");
    let o = f
        .args(["run", "s.rhai", "-i", "inv.toml", "--record"])
        .args([rec.display().to_string()])
        .reports()
        .run();
    o.code(0);
    assert!(rec.join("a.jsonl").exists());
    let replayed = Fab::new()
        .file("inv.toml", inv)
        .file("s.rhai", script)
        .args(["run", "s.rhai", "-i", "inv.toml", "--replay"])
        .args([rec.display().to_string()])
        .reports()
        .run();
    replayed.code(0);
    // An unknown command names the nearest recorded ones.
    let other = "test(\"x\", || { node(\"a\").run(\"echo recorded-43\"); });\n";
    let r = Fab::new()
        .file("inv.toml", inv)
        .file("s.rhai", other)
        .args(["run", "s.rhai", "-i", "inv.toml", "--replay"])
        .args([rec.display().to_string()])
        .reports()
        .run();
    r.code(1);
    assert!(
        r.message("x")
            .contains("nearest recorded: `echo recorded-$((6*7))`"),
        "{}",
        r.message("x")
    );
}

#[test]
fn top_level_error_is_reported_not_lost() {
    let o = Fab::new()
        .file(
            "t.rhai",
            "test(\"before\", || {});\nlet n = node(\"nope\");\n",
        )
        .args(["run", "t.rhai"])
        .reports()
        .run();
    o.code(1);
    assert_eq!(o.status("(script top level)"), "error");
    assert!(o
        .message("(script top level)")
        .contains("`nope` is not in the inventory"));
    assert_eq!(o.status("before"), "pass");
    o.junit_is_valid();
}

#[test]
fn dry_run_prints_commands_and_runs_nothing() {
    let s = "test(\"writes\", || { nodes()[0].run(\"touch marker-file\"); });\ntest(\"tool\", || { nodes()[0].ethtool(\"eth0\"); });\n";
    let o = Fab::new()
        .file("d.rhai", s)
        .args(["run", "d.rhai", "--dry-run"])
        .reports()
        .run();
    assert!(
        o.stderr.contains("[dry-run] localhost: touch marker-file"),
        "{}",
        o.stderr
    );
    assert!(
        !o.dir.join("marker-file").exists(),
        "a dry run ran the command"
    );
    assert_eq!(o.status("writes"), "skipped");
    assert_eq!(o.status("reachable [localhost]"), "pass");
    // The test is listed (skipped); whether ethtool is there is the preflight's to say: an
    // error naming it when it is missing.
    assert_eq!(o.status("tool"), "skipped");
    let installed = std::process::Command::new("sh")
        .args(["-c", "PATH=$PATH:/usr/sbin:/sbin command -v ethtool"])
        .status()
        .unwrap()
        .success();
    assert_eq!(
        o.status("tools [localhost]"),
        if installed { "pass" } else { "error" }
    );
    if !installed {
        assert!(o.message("tools [localhost]").contains("missing `ethtool`"));
    }
}

#[test]
fn check_finds_misspelled_methods_and_module_functions() {
    let s = "import \"link\" as link;\ntest(\"x\", || {\n    let n = nodes()[0];\n    n.ethtol(\"eth0\");\n    link::sped(n, \"eth0\", 0);\n});\n";
    let o = Fab::new()
        .file("bad.rhai", s)
        .args(["check", "bad.rhai"])
        .run();
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("unknown method `.ethtol(…)`")
            && o.stderr.contains("did you mean `.ethtool(…)`?"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("bad.rhai:4:"), "{}", o.stderr);
    assert!(
        o.stderr.contains("unknown function `link::sped`")
            && o.stderr.contains("did you mean `link::speed`?"),
        "{}",
        o.stderr
    );
}

#[test]
fn trim_chains_and_bad_calls_are_told_in_script_terms() {
    let s = "test(\"trim chains\", || { assert_eq(\" 42 \\n\".trim().parse_int(), 42, \"trimmed\"); });\ntest(\"bad call\", || { let v = \"5\".make_upper().parse_int(); });\n";
    let o = Fab::new()
        .file("t.rhai", s)
        .args(["run", "t.rhai"])
        .reports()
        .run();
    assert_eq!(
        o.status("trim chains"),
        "pass",
        "{}",
        o.message("trim chains")
    );
    let m = o.message("bad call");
    assert!(
        m.starts_with("`parse_int` cannot be called on nothing"),
        "{m}"
    );
    assert!(!m.contains("no function matches"), "{m}");
}

#[test]
fn nodes_takes_w_and_exec_w_localhost_runs_here() {
    let o = Fab::new().args(["nodes", "-w", "spark-[01-03]"]).run();
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.stdout
            .lines()
            .filter(|l| l.starts_with("spark-0"))
            .count(),
        3,
        "{}",
        o.stdout
    );
    // localhost on the local transport: no ssh involved, the command runs here.
    let o = Fab::new()
        .args(["exec", "-w", "localhost", "--", "echo", "here-$((40+2))"])
        .run();
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("here-42"), "{}", o.stdout);
}

#[test]
fn print_is_visible_for_the_top_level_and_with_v() {
    let s = "print(\"top-level says hi\");\ntest(\"t\", || { print(\"inside the test\"); assert(true); });\n";
    let o = Fab::new()
        .file("p.rhai", s)
        .args(["run", "p.rhai"])
        .reports()
        .run();
    o.code(0);
    assert!(o.stdout.contains("top-level says hi"), "{}", o.stdout);
    assert!(
        !o.stdout.contains("inside the test"),
        "without -v a test's print stays in the reports"
    );
    assert!(o
        .junit
        .as_deref()
        .unwrap_or_default()
        .contains("inside the test"));
    let o = Fab::new()
        .file("p.rhai", s)
        .args(["run", "p.rhai", "-v"])
        .run();
    assert!(o.stdout.contains("[t] inside the test"), "{}", o.stdout);
}

/// A caught `error()`/`fail()` reads as its message (`${e}`, `e.to_string()`), not as the name of
/// an internal type: a stdlib check that gathers what it could not read says what went wrong.
#[test]
fn a_caught_outcome_reads_as_its_message() {
    let s = r#"test("caught", || {
    let got = [];
    try { error("mlnx_qos missing on n1"); } catch (e) { got.push(`${e}`); got.push(e.to_string()); }
    try { fail("pfc differs"); } catch (e) { got.push(`${e}`); }
    fail(got.reduce(|a, x| a + " | " + x, ""));
});
"#;
    let o = Fab::new()
        .file("c.rhai", s)
        .args(["run", "c.rhai"])
        .reports()
        .run();
    let m = o.message("caught");
    assert!(
        m.matches("mlnx_qos missing on n1").count() == 2 && m.contains("pfc differs"),
        "{m}"
    );
    assert!(!m.contains("Signal"), "{m}");
}

/// Issue 48 item 1: the running test is a value each evaluation carries (Rhai's tag), not a
/// thread's: tests run at once keep their own printed lines, debug lines, notes and commands
/// (a node the test looks up itself records into it), and a runaway loop in
/// an `at_once` call stops at its test's deadline.
#[test]
fn concurrent_tests_record_into_their_own_test_and_at_once_keeps_the_deadline() {
    let inv = "[[node]]\nname = \"a\"\ntransport = \"local\"\n[[node]]\nname = \"b\"\ntransport = \"local\"\n[[node]]\nname = \"c\"\ntransport = \"local\"\n";
    let script = r#"
print("top level");
test_each(nodes(), "own", |n| {
    for i in 0..20 {
        print(`line ${n.name} ${i}`);
        node("a").run(`echo ${n.name}`);
    }
    debug(n.name);
    note(`note ${n.name}`);
    assert(true);
});
test("spins at once", #{ timeout: "700ms" }, || {
    at_once([1, 2], |i| { let x = 0; loop { x += i; } });
});
"#;
    let o = Fab::new()
        .file("inv.toml", inv)
        .file("own.rhai", script)
        .args(["run", "own.rhai", "-i", "inv.toml", "--fanout", "3"])
        .reports()
        .run();
    for n in ["a", "b", "c"] {
        let t = o.test(&format!("own [{n}]"));
        assert_eq!(t["status"], "pass", "{t}");
        let out = t["output"].as_str().unwrap();
        let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("line ")).collect();
        assert_eq!(lines.len(), 20, "{out}");
        assert!(
            lines.iter().all(|l| l.starts_with(&format!("line {n} "))),
            "{out}"
        );
        assert!(
            out.contains("[debug ") && out.contains(&format!("\"{n}\"")),
            "{out}"
        );
        assert!(!out.contains("top level"), "{out}");
        let commands = t["commands"].as_array().unwrap();
        assert_eq!(commands.len(), 20, "{t}");
        assert!(
            commands.iter().all(|c| c["command"]
                .as_str()
                .unwrap()
                .ends_with(&format!("echo {n}"))),
            "{t}"
        );
        assert!(t["notes"].to_string().contains(&format!("note {n}")), "{t}");
    }
    assert_eq!(o.status("spins at once"), "error");
    assert!(
        o.message("spins at once").contains("timed out"),
        "{}",
        o.message("spins at once")
    );
}

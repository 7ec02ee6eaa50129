//! Bad input everywhere: clear errors with file:line and a hint, exit 2 or an error outcome;
//! nothing lost, secrets not printed, runaway scripts stopped.

mod common;
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
        o.message("arity").contains("ping (Node, i64)")
            || o.message("arity").contains("ping(Node, i64)"),
        "{}",
        o.message("arity")
    );
    assert!(
        o.message("option").contains("unknown run option `timout`"),
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

#[test]
fn interrupt_while_reports_are_written_exits_3_with_complete_reports() {
    use std::io::{BufRead, Read};
    use std::time::{Duration, Instant};
    let s =
        "test(\"one\", || { metric(\"x\", 1.0, \"u\"); });\ntest(\"two\", || { fail(\"no\"); });\n";
    for (sig, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let f = Fab::new()
            .file("r.rhai", s)
            .args(["run", "r.rhai"])
            .env("FABCHECK_TEST_REPORT_DELAY_MS", "3000")
            .reports();
        let mut child = f
            .command()
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
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
        unsafe { libc::kill(child.id() as i32, sig) };
        let t = Instant::now();
        let mut stdout = Vec::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_end(&mut stdout)
            .unwrap();
        err.read_to_string(&mut seen).unwrap();
        let status = child.wait().unwrap();
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{name}: exit took {:?}",
            t.elapsed()
        );
        let o = f.outcome(std::process::Output {
            status,
            stdout,
            stderr: seen.into_bytes(),
        });
        o.code(3);
        // Both reports are there and complete: every test, its outcome and the metric.
        assert_eq!(o.status("one"), "pass", "{name}");
        assert_eq!(o.status("two"), "failure", "{name}");
        assert_eq!(o.test("one")["metrics"][0]["name"], "x", "{name}");
        assert_eq!(o.junit_is_valid(), "junitparser cases 2", "{name}");
    }
}

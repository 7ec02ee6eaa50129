//! Inventory limits (issue 14): node sets too large to expand, durations past 30 days, `-w`
//! names that are not host names. Each is exit 2 with a clear error, never a panic or an abort.
//! Load time of large inventories is measured by scripts/bench_inventory.sh, not here.

use crate::common;
use common::Fab;

#[test]
fn a_node_set_of_ten_billion_names_is_exit_2_not_an_abort() {
    // This used to allocate 240 GB and abort ("memory allocation ... failed").
    let o = Fab::new().args(["nodes", "a[0-99999]b[0-99999]"]).run();
    o.code(2);
    assert!(
        o.stderr.contains("names 10000000000 nodes") && o.stderr.contains("at most 1000000"),
        "{}",
        o.stderr
    );
    let o = Fab::new()
        .file("s.rhai", "test(\"t\", || {});\n")
        .args(["run", "s.rhai", "-w", "a[0-99999]b[0-99999]"])
        .run();
    o.code(2);
    assert!(o.stderr.contains("at most 1000000"), "{}", o.stderr);
}

#[test]
fn timeouts_past_30_days_are_exit_2() {
    for t in ["1e300", "18446744073709551615"] {
        let o = Fab::new()
            .file("s.rhai", "test(\"t\", || {});\n")
            .args(["run", "s.rhai", "--timeout", t])
            .run();
        o.code(2);
        assert!(
            o.stderr.contains(t) && o.stderr.contains("30days"),
            "{t}: {}",
            o.stderr
        );
        assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    }
    let o = Fab::new()
        .args([
            "exec",
            "-w",
            "localhost",
            "--timeout",
            "1e300",
            "--",
            "true",
        ])
        .run();
    o.code(2);
    assert!(o.stderr.contains("30days"), "{}", o.stderr);
}

#[test]
fn an_inventory_command_timeout_past_30_days_is_exit_2_with_the_line() {
    let o = Fab::new()
        .file(
            "inv.toml",
            "[defaults]\ncommand_timeout = \"1e300\"\n[[node]]\nname = \"spark-01\"\n",
        )
        .args(["nodes", "-i", "inv.toml"])
        .run();
    o.code(2);
    assert!(
        o.stderr.contains("inv.toml:3:")
            && o.stderr.contains("command_timeout")
            && o.stderr.contains("30days"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_script_timeout_past_30_days_is_that_tests_error_and_the_node_still_works() {
    let s = r#"
let n = node("localhost");
test("huge", || { n.run("true", #{ timeout: "1e300" }); });
test("after", || { assert_eq(n.sh("echo ok").trimmed(), "ok", "echo"); });
"#;
    let o = Fab::new()
        .file("s.rhai", s)
        .args(["run", "s.rhai"])
        .reports()
        .run();
    o.code(1);
    assert_eq!(o.status("huge"), "error");
    assert!(
        o.message("huge").contains("30days"),
        "{}",
        o.message("huge")
    );
    assert_eq!(o.status("after"), "pass", "{}", o.message("after"));
}

#[test]
fn w_names_get_the_host_check_and_never_reach_ssh_as_options() {
    // `-w=-Efoo` used to be passed to ssh, which read it as `-E foo` (log to file `foo`).
    for w in ["-w=-Efoo", "-w=a,-oProxyCommand"] {
        let o = Fab::new().args(["exec", w, "--", "true"]).run();
        o.code(2);
        assert!(
            o.stderr.contains("not a valid host name"),
            "{w}: {}",
            o.stderr
        );
        assert!(!o.dir.join("foo").exists(), "ssh wrote its log to ./foo");
    }
    let o = Fab::new()
        .file("s.rhai", "test(\"t\", || {});\n")
        .args(["run", "s.rhai", "-w=-Efoo"])
        .run();
    o.code(2);
    assert!(o.stderr.contains("not a valid host name"), "{}", o.stderr);
}

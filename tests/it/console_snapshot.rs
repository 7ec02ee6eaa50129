//! The console is pinned: what the one event stream (`run::observer::Event`) shows for a run
//! and for a dry run, against golden files (`tests/golden/console/`; `FABCHECK_BLESS=1 cargo
//! test --test it console_snapshot` regenerates them after an intended change: review the
//! diff). Durations and timestamps are masked; everything else is exact.

use crate::common::{self, Fab};

const INVENTORY: &str = "[[node]]\nname = \"n1\"\nhost = \"localhost\"\ntransport = \"local\"\n\n[[node]]\nname = \"n2\"\nhost = \"localhost\"\ntransport = \"local\"\n";

/// Every kind of line: a top-level print, a pass, a failure with its message, a skip, a
/// note and a test's warning, pairs in rounds and the deprecated `test_pairs` order (a run
/// warning on stderr).
const SCRIPT: &str = r#"print("top-level line");
test("passes", || { assert(true, "ok"); });
test("fails", || { assert_eq(1, 2, "link count"); });
test("skips", || { skip("no RDMA device"); });
test("notes", || { note("one rail is idle"); warn("firmware differs"); });
test_pairs(nodes(), "pair", |a, b| { assert(a != b, "distinct"); }, #{ pattern: "ring" });
"#;

fn masked(text: &str) -> String {
    let secs = regex::Regex::new(r"\(\d+\.\ds\)").unwrap();
    secs.replace_all(text, "(N.Ns)").into_owned()
}

fn golden(name: &str, actual: &str) {
    let path = common::repo().join("tests/golden/console").join(name);
    if std::env::var_os("FABCHECK_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        want == actual,
        "console output differs from tests/golden/console/{name} (FABCHECK_BLESS=1 regenerates it):\n--- golden\n{want}\n--- actual\n{actual}"
    );
}

fn fab(extra: &[&str]) -> Fab {
    let mut args = vec!["run", "s.rhai", "-i", "inv.toml", "--no-results"];
    args.extend(extra);
    Fab::new()
        .file("inv.toml", INVENTORY)
        .file("s.rhai", SCRIPT)
        .args(args)
}

#[test]
fn a_run_on_the_console_is_exactly_the_golden_text() {
    let o = fab(&[]).run();
    assert_eq!(o.code, 1, "{}", o.stderr);
    golden("run.stdout.txt", &masked(&o.stdout));
    golden("run.stderr.txt", &masked(&o.stderr));
}

#[test]
fn a_dry_run_on_the_console_is_exactly_the_golden_text() {
    let o = fab(&["--dry-run"]).run();
    assert_eq!(o.code, 0, "{}", o.stderr);
    golden("dry-run.stdout.txt", &masked(&o.stdout));
    golden("dry-run.stderr.txt", &masked(&o.stderr));
}

/// A real run's rounds are the same events as a dry run's listing, shown with -v.
#[test]
fn rounds_are_shown_with_verbose() {
    let quiet = fab(&[]).run();
    assert!(!quiet.stderr.contains("round 1/2"), "{}", quiet.stderr);
    let v = fab(&["-v"]).run();
    assert!(
        v.stderr.contains("round 1/2: n1 -> n2") && v.stderr.contains("round 2/2: n2 -> n1"),
        "{}",
        v.stderr
    );
}

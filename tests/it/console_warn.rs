//! WARN lines on stderr (issue 23 item 10): plain text when stderr is not a terminal.

use crate::common::Fab;

/// stderr is a pipe here (as in CI or `2>run.log`): a WARN line (here: `--record` cannot
/// write a node's file, a directory stands in its place) is there, with no ANSI escape (on
/// main it carried colour codes).
#[test]
fn warn_lines_carry_no_ansi_escapes_when_stderr_is_not_a_terminal() {
    let o = Fab::new()
        .file(
            "inv.toml",
            "[[node]]\nname = \"n1\"\nhost = \"localhost\"\ntransport = \"local\"\n",
        )
        .file(
            "r.rhai",
            "test(\"t\", || { node(\"n1\").run(\"true\"); });\n",
        )
        .file("rec/n1.jsonl/.keep", "")
        .args(["run", "r.rhai", "-i", "inv.toml", "--record", "rec"])
        .run();
    assert!(
        o.stderr.contains("WARN") && o.stderr.contains("--record rec"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains('\u{1b}'), "{:?}", o.stderr);
}

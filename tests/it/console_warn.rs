//! WARN lines on stderr (issue 23 item 10): plain text when stderr is not a terminal.

use crate::common::Fab;

/// stderr is a pipe here (as in CI or `2>run.log`): the line that says `--record` cannot
/// write a node's file (a directory stands in its place) carries no ANSI escape (on main it
/// was a WARN with colour codes). Since issue 36 it is an error before the run (exit 2), not
/// a warning after which the run passed without that node's transcript.
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
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("error:") && o.stderr.contains("--record rec"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains('\u{1b}'), "{:?}", o.stderr);
}

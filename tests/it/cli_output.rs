//! Exact output of commands whose text users read or parse: `fabcheck doc` against a golden
//! file (regenerate with `FABCHECK_BLESS=1 cargo test cli_output` after an intended change and
//! review the diff).

use crate::common::{self, Fab};

fn golden(name: &str, actual: &str) {
    let path = common::repo().join("tests/golden").join(name);
    if std::env::var_os("FABCHECK_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if want != actual {
        let first = want
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from tests/golden/{name} at line {}:\n  golden: {:?}\n  actual: {:?}\n(FABCHECK_BLESS=1 regenerates it)",
            first + 1,
            want.lines().nth(first),
            actual.lines().nth(first)
        );
    }
}

#[test]
fn doc_output_is_exactly_the_golden_reference() {
    let o = Fab::new().args(["doc"]).run();
    assert_eq!(o.code, 0, "{}", o.stderr);
    golden("doc.md", &o.stdout);
    // What users look for is there: option lists and returned fields.
    assert!(o
        .stdout
        .contains("- `n.eee(iface)` — options: none; returns: active,"));
    assert!(o.stdout.contains("strict_host_key"));
}

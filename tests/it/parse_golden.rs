//! Golden files for the parsers (issue 34 item 5): every fixture named in
//! `tests/golden/parse/MANIFEST.tsv` is parsed with its kind (as `fabcheck parse KIND FILE` does)
//! and the JSON is compared with `tests/golden/parse/<fixture>.<kind>.json`, the way hurl keeps an
//! expected output beside each case. The hand-read assertions of the values that matter stay in
//! `parse_fixtures.rs`; these files catch every other field that changes.
//!
//! After an intended parser change: `FABCHECK_BLESS=1 cargo test --test it parse_golden`, then
//! review with `git diff tests/golden/parse` before committing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn golden_dir() -> PathBuf {
    root().join("tests/golden/parse")
}

/// (fixture path under tests/fixtures, kind) rows of the manifest.
fn manifest() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(golden_dir().join("MANIFEST.tsv")).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let (p, k) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("MANIFEST.tsv:{}: expected `path<TAB>kind`", i + 1));
            (p.to_string(), k.trim().to_string())
        })
        .collect()
}

fn golden_path(fixture: &str, kind: &str) -> PathBuf {
    golden_dir().join(format!("{fixture}.{kind}.json"))
}

/// What `fabcheck parse` would print for the fixture: the parsed JSON, or the parse error.
fn render(fixture: &str, kind: &str) -> String {
    let p = root().join("tests/fixtures").join(fixture);
    let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let text = String::from_utf8_lossy(&bytes);
    let v = match fabcheck::parse::parse(kind, &text) {
        Ok(v) => v,
        Err(e) => serde_json::json!({ "error": e.to_string() }),
    };
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}

fn first_difference(a: &str, b: &str) -> String {
    let (mut la, mut lb) = (a.lines(), b.lines());
    for n in 1.. {
        match (la.next(), lb.next()) {
            (None, None) => break,
            (x, y) if x == y => continue,
            (x, y) => return format!("line {n}: golden {x:?}, now {y:?}"),
        }
    }
    "no line differs (trailing newline?)".into()
}

#[test]
fn every_manifest_fixture_parses_as_its_golden_file_says() {
    let bless = std::env::var_os("FABCHECK_BLESS").is_some();
    let rows = manifest();
    assert!(
        rows.len() >= 100,
        "the manifest lists {} fixtures",
        rows.len()
    );
    let mut differ = Vec::new();
    for (fixture, kind) in &rows {
        let now = render(fixture, kind);
        let g = golden_path(fixture, kind);
        if bless {
            std::fs::create_dir_all(g.parent().unwrap()).unwrap();
            std::fs::write(&g, &now).unwrap();
            continue;
        }
        match std::fs::read_to_string(&g) {
            Ok(old) if old == now => {}
            Ok(old) => differ.push(format!(
                "{fixture} ({kind}): {}",
                first_difference(&old, &now)
            )),
            Err(_) => differ.push(format!(
                "{fixture} ({kind}): no golden file {}",
                g.display()
            )),
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} parser outputs differ from tests/golden/parse (after an intended change: \
         FABCHECK_BLESS=1 cargo test --test it parse_golden, then review git diff):\n  {}",
        differ.len(),
        rows.len(),
        differ.join("\n  ")
    );
}

fn golden_files(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            golden_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.insert(p);
        }
    }
}

#[test]
fn no_golden_file_is_left_without_its_manifest_row() {
    let wanted: BTreeSet<PathBuf> = manifest().iter().map(|(f, k)| golden_path(f, k)).collect();
    let mut found = BTreeSet::new();
    golden_files(&golden_dir(), &mut found);
    let stale: Vec<_> = found.difference(&wanted).collect();
    assert!(
        stale.is_empty(),
        "golden files without a MANIFEST.tsv row (remove them): {stale:?}"
    );
}

#[test]
fn a_changed_parser_output_is_caught_and_named() {
    // The comparison itself: a golden file that differs in one value is reported with its line.
    let (fixture, kind) = manifest().into_iter().next().unwrap();
    let now = render(&fixture, &kind);
    let tampered = now.replacen(':', ": 1 +", 1);
    let d = first_difference(&tampered, &now);
    assert!(d.starts_with("line "), "{d}");
    assert_ne!(tampered, now);
}

//! Every `--set` key the docs document is one fabcheck accepts (issue 48 item 2): the docs are
//! read — docs/scripts.md's generated table of every key (`src/run/settings.rs`), each shipped
//! script's own section of it, and every other page's `--set KEY` — and each key is tried in a
//! dry run of the script the docs name, on the simulated two-Spark cluster. Keys read by the
//! run's own code (the diagnosis's `odd_one_out`) do what the docs say; unknown keys are refused.

use crate::common::{repo, Fab, Outcome};
use std::collections::{BTreeMap, BTreeSet};

const SHIPPED: [&str; 6] = [
    "fabric_baseline.rhai",
    "fabric_health.rhai",
    "five_step_acceptance.rhai",
    "localise.rhai",
    "node_health.rhai",
    "second_cable_checklist.rhai",
];

fn docs(name: &str) -> String {
    std::fs::read_to_string(repo().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// One row of docs/scripts.md's generated table: the example value and the scripts that read
/// the key (empty: every run).
struct Row {
    example: String,
    scripts: Vec<String>,
}

/// The generated table of docs/scripts.md (`## Every \`--set\` key`).
fn table() -> BTreeMap<String, Row> {
    let text = docs("docs/scripts.md");
    let at = text
        .find("## Every `--set` key")
        .expect("docs/scripts.md has the table of every --set key");
    let row = regex::Regex::new(r"^\| `([a-z0-9_]+)` \| `([^`]*)` \|(.*)$").unwrap();
    let mut out = BTreeMap::new();
    for line in text[at..].lines() {
        let Some(c) = row.captures(line) else {
            continue;
        };
        let cells: Vec<&str> = c[3].split(" | ").map(str::trim).collect();
        // type, unit, default, read by, from, what
        let read_by = cells[3];
        let scripts = if read_by.contains("every run") || read_by.contains("stdlib ") {
            Vec::new()
        } else {
            read_by.split(", ").map(str::to_string).collect()
        };
        out.insert(
            c[1].to_string(),
            Row {
                example: c[2].to_string(),
                scripts,
            },
        );
    }
    assert!(
        out.len() > 60,
        "{} rows in docs/scripts.md's table",
        out.len()
    );
    out
}

/// The keys a piece of the docs documents as `--set` options: `--set KEY` (followed by `=` or a
/// closing backtick) anywhere, and `` `KEY=VALUE` `` in a paragraph that mentions `--set`; with
/// `inputs_tables` (a script's own section), also the keys of an inputs table's first column
/// (`| `a`, `b` | …`) and of a paragraph's first sentence that starts with "Inputs".
fn documented(text: &str, inputs_tables: bool) -> BTreeSet<String> {
    let set = regex::Regex::new(r"--set ([a-z][a-z0-9_]*)[=`]").unwrap();
    let assign = regex::Regex::new(r"`([a-z][a-z0-9_]*)=[^`\s]*`").unwrap();
    let first_cell = regex::Regex::new(r"^\| ((?:`[a-z][a-z0-9_]*`(?:, )?)+) \|").unwrap();
    let key = regex::Regex::new(r"`([a-z][a-z0-9_]*)`").unwrap();
    let mut out = BTreeSet::new();
    for para in text.split("\n\n") {
        out.extend(set.captures_iter(para).map(|c| c[1].to_string()));
        if para.contains("--set") {
            out.extend(assign.captures_iter(para).map(|c| c[1].to_string()));
        }
        if inputs_tables {
            // "Inputs: `rounds` (1), `confirm` (3), …." — its first sentence.
            if let Some(rest) = para.trim_start().strip_prefix("Inputs") {
                let sentence = rest.split(". ").next().unwrap_or("");
                out.extend(key.captures_iter(sentence).map(|k| k[1].to_string()));
            }
            for line in para.lines() {
                if let Some(c) = first_cell.captures(line) {
                    out.extend(key.captures_iter(&c[1]).map(|k| k[1].to_string()));
                }
            }
        }
    }
    out
}

/// docs/scripts.md's section of each shipped script (`### scripts/NAME.rhai` up to the next
/// heading of level 3 or less) and the keys it documents.
fn per_script_sections() -> BTreeMap<String, BTreeSet<String>> {
    let text = docs("docs/scripts.md");
    let mut out = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        let heading = line.starts_with("# ") || line.starts_with("## ") || line.starts_with("### ");
        if heading {
            if let Some((name, body)) = current.take() {
                out.insert(name, documented(&body, true));
            }
            if let Some(name) = line.strip_prefix("### scripts/") {
                current = Some((name.trim().to_string(), String::new()));
            }
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    if let Some((name, body)) = current {
        out.insert(name, documented(&body, true));
    }
    out
}

fn dry_run(script: &str, sets: &[(String, String)]) -> Outcome {
    let mut args = vec![
        "run".to_string(),
        repo().join("scripts").join(script).display().to_string(),
        "-i".into(),
        repo()
            .join("examples/sim/two-sparks.toml")
            .display()
            .to_string(),
        "--dry-run".into(),
        "--no-results".into(),
    ];
    for (k, v) in sets {
        args.extend(["--set".to_string(), format!("{k}={v}")]);
    }
    Fab::new().args(args).run()
}

/// Every key documented as a `--set` option — a row of the generated table, a key of a shipped
/// script's section of docs/scripts.md, a `--set KEY` of any other page — is a row of the table,
/// and a dry run of each script the docs name, given all of its keys at once, accepts them.
#[test]
fn every_documented_key_is_accepted_in_a_dry_run_of_the_script_the_docs_name() {
    let table = table();
    let mut problems = Vec::new();
    let mut per_script: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (k, row) in &table {
        let scripts: Vec<String> = if row.scripts.is_empty() {
            SHIPPED.iter().map(|s| s.to_string()).collect()
        } else {
            row.scripts.clone()
        };
        for s in scripts {
            per_script.entry(s).or_default().insert(k.clone());
        }
    }
    let sections = per_script_sections();
    assert_eq!(
        sections.keys().collect::<Vec<_>>(),
        SHIPPED.iter().collect::<Vec<_>>(),
        "docs/scripts.md has a section per shipped script"
    );
    for (script, keys) in &sections {
        assert!(keys.len() >= 3, "{script}: {keys:?}");
        for k in keys {
            if !table.contains_key(k) {
                problems.push(format!(
                    "docs/scripts.md ({script}) documents `{k}`: no row"
                ));
            }
            per_script
                .entry(script.clone())
                .or_default()
                .insert(k.clone());
        }
    }
    let mut pages: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| format!("docs/{}", e.file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".md") && p != "docs/scripts.md")
        .collect();
    pages.push("README.md".into());
    pages.sort();
    let mut elsewhere = 0;
    for page in &pages {
        for k in documented(&docs(page), false) {
            elsewhere += 1;
            if !table.contains_key(&k) {
                problems.push(format!("{page} documents `--set {k}`: no row"));
            }
        }
    }
    // The issue's own examples, documented in docs/diagnosis.md as options of every run.
    for k in [
        "odd_one_out",
        "odd_min_peers",
        "odd_min_drop",
        "odd_mad_factor",
    ] {
        assert!(
            documented(&docs("docs/diagnosis.md"), false).contains(k),
            "{k}"
        );
    }
    assert!(
        elsewhere > 30,
        "{elsewhere} --set mentions outside docs/scripts.md"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for (script, keys) in &per_script {
        assert!(SHIPPED.contains(&script.as_str()), "the docs name {script}");
        let sets: Vec<(String, String)> = keys
            .iter()
            .map(|k| (k.clone(), table[k].example.clone()))
            .collect();
        let o = dry_run(script, &sets);
        assert!(
            o.code != 2 && !o.stderr.contains("--set "),
            "{script} refused a documented key (exit {}):\n{}",
            o.code,
            o.stderr
        );
        assert!(o.stdout.contains("dry run"), "{script}: {}", o.stdout);
    }
}

/// A key nobody reads is refused before anything runs, with the closest key; a key of another
/// shipped script names the script that reads it.
#[test]
fn an_unknown_set_key_is_refused_with_did_you_mean() {
    let o = dry_run("fabric_health.rhai", &[("odd_min_peer".into(), "3".into())]);
    o.code(2);
    assert!(
        o.stderr
            .contains("--set odd_min_peer=3: no script reads `odd_min_peer`")
            && o.stderr.contains("did you mean `odd_min_peers`"),
        "{}",
        o.stderr
    );
    let o = dry_run(
        "five_step_acceptance.rhai",
        &[("ibdiagnet".into(), "true".into())],
    );
    o.code(2);
    assert!(
        o.stderr.contains(
            "`ibdiagnet` is read by fabric_health.rhai, not by five_step_acceptance.rhai"
        ),
        "{}",
        o.stderr
    );
    let o = dry_run(
        "fabric_health.rhai",
        &[("odd_min_peers".into(), "many".into())],
    );
    o.code(2);
    assert!(
        o.stderr.contains("`odd_min_peers` must be a number"),
        "{}",
        o.stderr
    );
}

/// The odd-one-out knobs reach the diagnosis: on the scenario whose rail is 15 % below its
/// three peers (4 comparable results), the note is there by default and gone with
/// `odd_one_out=false`, with `odd_min_peers=5` and with `odd_min_drop=0.2`. They were refused
/// (exit 2, "no script reads") before issue 48.
#[test]
fn the_odd_one_out_knobs_of_every_run_reach_the_diagnosis() {
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run".to_string(),
            repo()
                .join("scripts/fabric_baseline.rhai")
                .display()
                .to_string(),
            "-i".into(),
            repo()
                .join("examples/sim/two-sparks.toml")
                .display()
                .to_string(),
            "--scenario".into(),
            "rail-15pct-below-peers".into(),
            "--set".into(),
            "rdma_pct=80".into(),
        ];
        for e in extra {
            a.extend(["--set".to_string(), e.to_string()]);
        }
        let o = Fab::new().args(a).reports().run();
        o.code(0);
        let d = o.json.as_ref().expect("--json")["diagnosis"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        d.iter().filter(|x| x["rule"] == "odd_one_out").count()
    };
    assert_eq!(run(&[]), 1);
    assert_eq!(run(&["odd_one_out=false"]), 0);
    assert_eq!(run(&["odd_min_peers=5"]), 0);
    assert_eq!(run(&["odd_min_drop=0.2"]), 0);
    assert_eq!(run(&["odd_min_peers=4", "odd_min_drop=0.1"]), 1);
}

//! `fabcheck doc`: reference of every script function, generated from the engine.

use super::common::{build_env, usage, EnvOptions};
use super::EXIT_OK;
use crate::inventory::Inventory;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// A Rust signature from the engine in the words of a script author.
fn script_signature(sig: &str) -> String {
    let mut s = sig.to_string();
    for (from, to) in [
        ("core::result::Result<(),alloc::boxed::Box<rhai::types::error::EvalAltResult>>", "()"),
        ("alloc::collections::btree::map::BTreeMap<smartstring::SmartString<smartstring::config::LazyCompact>,rhai::types::dynamic::Dynamic>", "map"),
        ("alloc::vec::Vec<rhai::types::dynamic::Dynamic>", "array"),
        ("fabcheck::primitives::NodeRef", "Node"),
        ("&mut fabcheck::engine::signal::Signal", "outcome"),
        ("rhai::types::dynamic::Dynamic", "Dynamic"),
        ("types::dynamic::Dynamic", "Dynamic"),
        ("alloc::string::String", "string"),
    ] {
        s = s.replace(from, to);
    }
    static RESULT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RESULT.get_or_init(|| {
        regex::Regex::new(
            r"core::result::Result<(.*),alloc::boxed::Box<rhai::types::error::EvalAltResult>>",
        )
        .expect("regex")
    });
    s = re.replace(&s, "$1").into_owned();
    s.replace("&mut Node", "Node").replace(" -> ()", "")
}

/// Every function the engine has, as script signatures, sorted (the dry run's stand-in and a
/// result's own map-like functions left out: see "Options and returned fields").
fn signatures() -> Result<Vec<String>, i32> {
    let env = build_env(Inventory::local(), EnvOptions::dry(BTreeMap::new())).map_err(usage)?;
    let reg = Arc::new(std::sync::Mutex::new(
        crate::engine::testdef::Registry::default(),
    ));
    let engine = crate::engine::new_engine(&env, reg, Path::new("."), Default::default());
    let mut sigs: Vec<String> = engine
        .gen_fn_signatures(false)
        .iter()
        .filter(|s| !s.starts_with("parse::"))
        // Rhai's own print/debug, shadowed to record into the call's test (bindings/print.rs).
        .filter(|s| !s.starts_with("print(") && !s.starts_with("debug("))
        .filter(|s| !s.contains("(_: &mut map"))
        .map(|s| script_signature(s))
        // The dry run's stand-in answer is not for scripts to call (README: --dry-run).
        .filter(|s| !s.contains("dry-runanswer"))
        .collect();
    sigs.sort();
    sigs.dedup();
    Ok(sigs)
}

/// What function `name` does, from its declaration (`bindings/results.rs`): `as ib_write_bw,
/// for ib_read_bw` for the other names of one declaration.
fn description(name: &str) -> Option<String> {
    let d = crate::engine::bindings::decl(name)?;
    Some(if d.names[0] == name {
        d.doc.to_string()
    } else {
        format!("as {}, for {name}", d.names[0])
    })
}

/// Node properties, Rhai's own conversions and comparisons of nodes: described by the model
/// (README), not declared.
fn undeclared(name: &str) -> bool {
    name.starts_with("get$") || matches!(name, "==" | "!=" | "to_string" | "to_debug")
}

pub fn doc() -> i32 {
    let sigs = match signatures() {
        Ok(s) => s,
        Err(code) => return code,
    };
    println!("# fabcheck script functions\n\nGenerated from the engine (`fabcheck doc`). See docs/script-api.md for the test model.\n");
    let mut last = String::new();
    for s in sigs {
        let name = s.split('(').next().unwrap_or("").to_string();
        let desc = description(&name)
            .filter(|_| !undeclared(&name))
            .map(|d| format!(" — {d}"))
            .unwrap_or_default();
        if name.starts_with("get$") {
            println!("- `n.{}` (node property)", name.trim_start_matches("get$"));
        } else if name != last {
            println!("- `{s}`{desc}");
        } else {
            println!("- `{s}`");
        }
        last = name;
    }
    println!("\n## Options and returned fields\n");
    println!(
        "An unknown option key is an error (with \"did you mean\"). Every `timeout` follows the"
    );
    println!("timeout policy (docs/reliability.md). A result reads like a map (`r.field`, `r[\"field\"]`,");
    println!("`\"field\" in r`, `r.keys()`, `r.values()`, `r.len()`, printing, `r.to_json()`; `r.to_map()`");
    println!(
        "is a plain copy) but has exactly the fields listed: reading another is an error (with"
    );
    println!("\"did you mean\"); a listed field without a value reads `()`. In a `--dry-run` a");
    println!("listed field not known yet reads a stand-in; reading another is the same error.\n");
    for (call, opts, fields) in crate::engine::bindings::reference() {
        let o = if opts.is_empty() {
            "none".to_string()
        } else {
            opts.join(", ")
        };
        let f = if fields.is_empty() {
            "nothing".to_string()
        } else {
            fields.join(", ")
        };
        println!("- `{call}` — options: {o}; returns: {f}");
    }
    println!("\n## Results inside results\n");
    for (name, fields) in crate::engine::bindings::nested_kinds() {
        println!("- {name}: {}", fields.join(", "));
    }
    println!("\n## Parsers (`parse::KIND(text)`, same as `fabcheck parse KIND`)\n");
    for p in crate::parse::parsers() {
        println!("- `parse::{}(text)` — `{}`: {}", p.name(), p.kind, p.input);
    }
    println!("\n## stdlib modules (`import \"NAME\" as NAME;`)\n");
    for (name, src) in crate::engine::stdlib::EMBEDDED {
        let fns: Vec<&str> = src
            .lines()
            .filter_map(|l| l.trim().strip_prefix("fn "))
            .map(|l| l.trim_end_matches('{').trim())
            .collect();
        println!("- `{name}`: {}", fns.join(", "));
    }
    print!("\n{SETTINGS_HEADING}{}", settings_table());
    EXIT_OK
}

/// The heading of `fabcheck doc`'s last section; docs/scripts.md carries the table below it.
const SETTINGS_HEADING: &str = "## `--set` keys\n\n";

/// Every `--set` key of `run::settings` as a markdown table, sorted by name.
fn settings_table() -> String {
    use crate::run::settings::{Source, SETTINGS};
    let mut out = String::from(
        "Every key fabcheck reads from `--set KEY=VALUE` (declared once, `src/run/settings.rs`). \
         A key that no script of the run reads is refused (exit 2, with \"did you mean\"), and so \
         is a value of the wrong type; a key of a shipped script is read only where that script \
         runs; a key of a stdlib module or of the run itself, in every run. A user's own script \
         adds the keys it reads itself (`param(\"KEY\", default)`). Expectations (`n.expect`) \
         show the platform profiles' values.\n\n\
         | key | e.g. | type | unit | default | read by | from | what |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for s in SETTINGS {
        let mut default = s.default.to_string();
        if s.source == Source::Expect {
            let profiles: Vec<String> = crate::run::profile::PROFILES
                .into_iter()
                .filter_map(|p| {
                    crate::run::profile::expectations(p)
                        .into_iter()
                        .find(|(k, _, _)| *k == s.name)
                        .map(|(_, v, _)| format!("{p} {v}"))
                })
                .collect();
            if !profiles.is_empty() {
                default = format!("profile: {}; else {default}", profiles.join(", "));
            }
        }
        let readers: Vec<String> = s.readers.iter().map(|r| r.shown()).collect();
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} | {} | {} | {} |\n",
            s.name,
            s.example,
            s.kind.name(),
            s.unit,
            default,
            readers.join(", "),
            s.source.shown(),
            s.doc
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fabcheck doc` describes every function from its one declaration: a function registered
    /// without one (or with an empty text) is found here, not by a reader of the reference.
    /// One row per key, none of whose cells breaks the table.
    #[test]
    fn the_settings_table_has_a_row_per_key() {
        let t = settings_table();
        let rows: Vec<&str> = t.lines().filter(|l| l.starts_with("| `")).collect();
        assert_eq!(rows.len(), crate::run::settings::SETTINGS.len());
        for r in &rows {
            assert_eq!(r.matches(" | ").count(), 7, "{r}");
        }
        assert!(t.contains(
            "| `pcie_width` | `16` | number | lanes | profile: dgx-spark 4, dgx-h100-class 16, dgx-b300-class 16; else the NIC's LnkCap width |"
        ));
    }

    #[test]
    fn every_script_function_is_declared_with_its_text() {
        let sigs = signatures().unwrap_or_default();
        assert!(sigs.len() > 50, "{} signatures", sigs.len());
        let missing: Vec<&String> = sigs
            .iter()
            .filter(|s| {
                let name = s.split('(').next().unwrap_or("");
                !undeclared(name) && description(name).is_none_or(|d| d.is_empty())
            })
            .collect();
        assert!(
            missing.is_empty(),
            "declare in bindings/results.rs: {missing:?}"
        );
        assert!(!undeclared("ping") && undeclared("get$name"));
    }
}

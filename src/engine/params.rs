//! Which `--set` keys a run reads, and of what type: the keys of the table
//! (`run::settings::SETTINGS`) read where these scripts run — by a shipped script that runs, by
//! a stdlib module or by the run's own Rust code — and, for a user's own script, the keys it
//! reads itself, found from the `param("KEY", DEFAULT)` and `n.expect("KEY")` calls of its text
//! and of the modules beside it. A key nothing reads, or a value of the wrong type, is a usage
//! error before anything runs (not a silently kept default).

use crate::run::settings::{self, Kind, SETTINGS};
use crate::util::suggest::did_you_mean;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamType {
    Number,
    Bool,
    Any,
}

impl From<Kind> for ParamType {
    fn from(k: Kind) -> ParamType {
        match k {
            Kind::Number => ParamType::Number,
            Kind::Bool => ParamType::Bool,
            Kind::Text => ParamType::Any,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Declared {
    /// Key → the type the table gives it, else the type its defaults imply.
    pub keys: BTreeMap<String, ParamType>,
    /// Keys that may be read through a variable (`param(key, …)`): every key-like string
    /// literal of those sources (a user's script or module; a shipped script's keys are rows).
    pub maybe: BTreeSet<String>,
    /// Keys of the table read only by shipped scripts this run does not run, and those scripts.
    pub elsewhere: BTreeMap<String, Vec<&'static str>>,
    /// The file names of the run's scripts.
    pub running: Vec<String>,
}

/// What a run of these scripts (file name, text) and the modules beside them reads: the
/// table's rows read in this run, and the keys the texts read themselves.
pub(crate) fn for_run(scripts: &[(String, String)], modules: &[String]) -> Declared {
    let files: Vec<&str> = scripts.iter().map(|(f, _)| f.as_str()).collect();
    let mut d = Declared::default();
    for (file, text) in scripts {
        scan(text, !settings::shipped(file), &mut d);
    }
    for m in modules {
        scan(m, true, &mut d);
    }
    for s in SETTINGS {
        if s.read_in(&files) {
            d.keys.insert(s.name.to_string(), s.kind.into());
        } else if !d.keys.contains_key(s.name) && !d.maybe.contains(s.name) {
            d.elsewhere.insert(s.name.to_string(), s.scripts());
        }
    }
    d.running = files.iter().map(|f| f.to_string()).collect();
    d
}

fn type_of(default: &str) -> ParamType {
    let d = default.trim();
    if d == "true" || d == "false" {
        ParamType::Bool
    } else if d.parse::<f64>().is_ok() {
        ParamType::Number
    } else {
        ParamType::Any
    }
}

fn expect_call() -> &'static regex::Regex {
    static EXPECT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    EXPECT.get_or_init(|| regex::Regex::new(r#"\.expect\(\s*"([A-Za-z0-9_.-]+)""#).expect("regex"))
}

/// The keys `sources` read themselves (`param(` and `.expect("KEY"` calls), as [`for_run`]
/// finds them in a user's script.
#[cfg(test)]
pub(crate) fn declared(sources: &[String]) -> Declared {
    let mut d = Declared::default();
    for src in sources {
        scan(src, true, &mut d);
    }
    d
}

/// Add the `param(` and `.expect("KEY"` keys of `src` to `d`; with `dynamic`, a `param(key, …)`
/// through a variable adds every key-like literal of `src` as a maybe.
fn scan(src: &str, dynamic: bool, d: &mut Declared) {
    static CALL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static LIT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let call = CALL.get_or_init(|| {
        regex::Regex::new(
            r#"\bparam\(\s*(?:"([A-Za-z0-9_.-]+)"\s*(?:,\s*([^,()]+?|\(\))\s*[,)])?)?"#,
        )
        .expect("regex")
    });
    let lit = LIT.get_or_init(|| regex::Regex::new(r#""([a-z][a-z0-9_]{1,40})""#).expect("regex"));
    let mut through_variable = false;
    for c in call.captures_iter(src) {
        match c.get(1) {
            Some(k) => {
                let kind = c
                    .get(2)
                    .map(|v| type_of(v.as_str()))
                    .unwrap_or(ParamType::Any);
                d.keys
                    .entry(k.as_str().to_string())
                    .and_modify(|e| {
                        if *e != kind {
                            *e = ParamType::Any;
                        }
                    })
                    .or_insert(kind);
            }
            None => through_variable = true,
        }
    }
    // `n.expect("KEY")` reads `--set KEY` first (primitives::profile): declared too.
    for c in expect_call().captures_iter(src) {
        d.keys.entry(c[1].to_string()).or_insert(ParamType::Any);
    }
    if through_variable && dynamic {
        d.maybe
            .extend(lit.captures_iter(src).map(|c| c[1].to_string()));
    }
}

/// Check `--set` values against what the scripts read; the error names the key and the value.
pub(crate) fn check(
    sets: &BTreeMap<String, serde_json::Value>,
    d: &Declared,
) -> Result<(), SetError> {
    for (k, v) in sets {
        match d.keys.get(k) {
            Some(ParamType::Number) if !v.is_number() => {
                return Err(SetError::typed(k, v, "a number"))
            }
            Some(ParamType::Number) => {
                if let Some((lo, hi)) = crate::run::settings::whole_range(k) {
                    if !v.as_i64().is_some_and(|x| (lo..=hi).contains(&x)) {
                        return Err(SetError::Range {
                            key: k.clone(),
                            value: shown(v),
                            lo,
                            hi,
                        });
                    }
                }
            }
            Some(ParamType::Bool) if !v.is_boolean() => {
                return Err(SetError::typed(k, v, "true or false"))
            }
            Some(_) => {}
            None if d.maybe.contains(k) => {}
            None if d.elsewhere.contains_key(k) => {
                return Err(SetError::Elsewhere {
                    key: k.clone(),
                    value: shown(v),
                    readers: d.elsewhere[k].join(", "),
                    running: d.running.join(", "),
                })
            }
            None => {
                let known: Vec<&str> = d.keys.keys().map(String::as_str).collect();
                // The keys of this run first; else any key of the table (the next error says
                // which script reads it).
                let mut hint = did_you_mean(k, known.iter().copied());
                if hint.is_empty() {
                    hint = did_you_mean(k, SETTINGS.iter().map(|s| s.name));
                }
                return Err(SetError::Unread {
                    key: k.clone(),
                    value: shown(v),
                    hint,
                    read: if known.is_empty() {
                        "nothing".to_string()
                    } else {
                        known.join(", ")
                    },
                });
            }
        }
    }
    Ok(())
}

/// A `--set KEY=VALUE` the scripts do not read, or not of the type they read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetError {
    #[error("--set {key}={value}: `{key}` must be {must}")]
    Type {
        key: String,
        value: String,
        must: &'static str,
    },
    #[error("--set {key}={value}: `{key}` must be a whole number from {lo} to {hi}")]
    Range {
        key: String,
        value: String,
        lo: i64,
        hi: i64,
    },
    #[error("--set {key}={value}: no script reads `{key}`{hint}; the scripts read: {read} (`fabcheck doc` lists every --set key)")]
    Unread {
        key: String,
        value: String,
        hint: String,
        read: String,
    },
    #[error("--set {key}={value}: `{key}` is read by {readers}, not by {running} (`fabcheck doc` lists every --set key)")]
    Elsewhere {
        key: String,
        value: String,
        readers: String,
        running: String,
    },
}

impl SetError {
    fn typed(key: &str, v: &serde_json::Value, must: &'static str) -> SetError {
        SetError::Type {
            key: key.to_string(),
            value: shown(v),
            must,
        }
    }
}

fn shown(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(kv: &[(&str, serde_json::Value)]) -> BTreeMap<String, serde_json::Value> {
        kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn keys_and_types_from_param_calls() {
        let src = r#"let p = param("rdma_pct", 90); if param("nccl", true) == false {} let r = param("recipe", common::x()); let w = param("workload", ());"#;
        let d = declared(&[src.to_string()]);
        assert_eq!(d.keys["rdma_pct"], ParamType::Number);
        assert_eq!(d.keys["nccl"], ParamType::Bool);
        assert_eq!(d.keys["recipe"], ParamType::Any);
        assert_eq!(d.keys["workload"], ParamType::Any);
        let e = check(&sets(&[("rdma_pc", 50.into())]), &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `rdma_pct`"), "{e}");
        let e = check(&sets(&[("nccl", "flase".into())]), &d)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--set nccl=flase") && e.contains("true or false"),
            "{e}"
        );
        let e = check(&sets(&[("rdma_pct", "ninety".into())]), &d)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--set rdma_pct=ninety") && e.contains("number"),
            "{e}"
        );
        assert!(check(
            &sets(&[("rdma_pct", 80.into()), ("recipe", "/x".into())]),
            &d
        )
        .is_ok());
    }

    fn run_of(file: &str, text: &str) -> Declared {
        for_run(&[(file.to_string(), text.to_string())], &[])
    }

    /// Issue 48: `odd_one_out` and `odd_min_peers`, read by the run's Rust code (the
    /// diagnosis), were refused as "no script reads" on every shipped script; `link_layer`
    /// (`n.link_layer()`, stdlib infiniband) is read whatever script runs.
    #[test]
    fn keys_the_run_itself_reads_are_accepted_with_every_script() {
        for file in [
            "fabric_health.rhai",
            "five_step_acceptance.rhai",
            "my_own.rhai",
        ] {
            let d = run_of(file, "test(\"x\", || {});");
            for (k, v) in [
                ("odd_one_out", serde_json::json!(false)),
                ("odd_min_peers", serde_json::json!(5)),
                ("link_layer", serde_json::json!("infiniband")),
                ("gpus_per_node", serde_json::json!(8)),
            ] {
                assert!(check(&sets(&[(k, v)]), &d).is_ok(), "{file}: {k}");
            }
            let e = check(&sets(&[("odd_min_peers", "many".into())]), &d).unwrap_err();
            assert!(e.to_string().contains("must be a number"), "{e}");
        }
    }

    /// A shipped script's key is read where that script runs; elsewhere the error names the
    /// script that reads it. An unknown key is refused with the closest key.
    #[test]
    fn a_shipped_scripts_key_is_refused_where_that_script_does_not_run() {
        let health = run_of("fabric_health.rhai", "");
        assert!(check(&sets(&[("ibdiagnet", true.into())]), &health).is_ok());
        let e = check(&sets(&[("ibdiagnet", "yes".into())]), &health).unwrap_err();
        assert!(e.to_string().contains("true or false"), "{e}");
        let five = run_of("five_step_acceptance.rhai", "");
        let e = check(&sets(&[("ibdiagnet", true.into())]), &five)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "`ibdiagnet` is read by fabric_health.rhai, not by five_step_acceptance.rhai"
            ),
            "{e}"
        );
        let e = check(&sets(&[("odd_min_peer", 3.into())]), &five)
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `odd_min_peers`"), "{e}");
        // A shipped script read through a variable (localise's int_param) adds no literal.
        let localise = run_of("localise.rhai", "fn f(k) { param(k, 1) } f(\"hostname\");");
        assert!(check(&sets(&[("rounds", 2.into())]), &localise).is_ok());
        assert!(check(&sets(&[("hostname", 2.into())]), &localise).is_err());
    }

    /// A user's own script keeps its own keys; the table's type wins where a row applies.
    #[test]
    fn a_user_scripts_own_keys_are_accepted() {
        let d = run_of(
            "site.rhai",
            "let b = param(\"batch\", 8); let n = param(\"nodes\", 3);",
        );
        assert!(check(&sets(&[("batch", 16.into())]), &d).is_ok());
        assert!(check(&sets(&[("batch", "x".into())]), &d).is_err());
        assert!(check(&sets(&[("nodes", "spark-01".into())]), &d).is_ok());
        let m = for_run(
            &[("site.rhai".into(), String::new())],
            &["fn f() { param(\"beside\", true) }".to_string()],
        );
        assert!(check(&sets(&[("beside", false.into())]), &m).is_ok());
        assert!(check(&sets(&[("beside", false.into())]), &run_of("site.rhai", "")).is_err());
    }

    /// The keys a shipped file reads: `param("K"`, the scripts' own wrappers of it
    /// (`num_param("K"`, `input("K"`), `.expect("K"` and `.link_layer()`; comment lines left out.
    fn keys_read_by(text: &str) -> BTreeSet<String> {
        let re =
            regex::Regex::new(r#"(?:param|input)\(\s*"([a-z0-9_]+)"|\.expect\(\s*"([a-z0-9_]+)""#)
                .expect("regex");
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut keys: BTreeSet<String> = re
            .captures_iter(&code)
            .filter_map(|c| c.get(1).or(c.get(2)))
            .map(|m| m.as_str().to_string())
            .collect();
        if code.contains(".link_layer()") {
            keys.insert("link_layer".into());
        }
        keys
    }

    fn shipped_files() -> Vec<(settings::Reader, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        for dir in ["scripts", "stdlib"] {
            let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "rhai"))
                .collect();
            files.sort();
            for p in files {
                let name: &'static str = Box::leak(
                    p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                        .into_boxed_str(),
                );
                let reader = if dir == "scripts" {
                    settings::Reader::Script(name)
                } else {
                    settings::Reader::Stdlib(name.trim_end_matches(".rhai"))
                };
                out.push((reader, std::fs::read_to_string(&p).unwrap()));
            }
        }
        out
    }

    /// The table cannot drift from the scripts: every key a shipped script or stdlib module
    /// reads is a row naming that file among its readers, and every row's readers read it (a
    /// Rust reader names the key in its file).
    #[test]
    fn every_key_a_shipped_script_reads_is_a_row_that_names_it() {
        let files = shipped_files();
        assert!(files.len() >= 12, "{} files", files.len());
        let mut missing = Vec::new();
        for (reader, text) in &files {
            for k in keys_read_by(text) {
                match settings::SETTINGS.iter().find(|s| s.name == k) {
                    Some(s) if s.readers.contains(reader) => {}
                    Some(_) => missing.push(format!("{k}: add {reader:?} to its readers")),
                    None => missing.push(format!("{k} ({reader:?}): add a row")),
                }
            }
        }
        for s in SETTINGS {
            for r in s.readers {
                let reads = match r {
                    settings::Reader::Run(path) => {
                        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
                        std::fs::read_to_string(root.join(path))
                            .unwrap_or_default()
                            .contains(&format!("\"{}\"", s.name))
                    }
                    _ => files
                        .iter()
                        .any(|(f, text)| f == r && keys_read_by(text).contains(s.name)),
                };
                if !reads {
                    missing.push(format!("{}: {r:?} does not read it", s.name));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "run::settings and the scripts differ:\n{}",
            missing.join("\n")
        );
    }

    #[test]
    fn dynamic_keys_accept_literals_of_that_source() {
        let src = r#"fn answer(n, key) { param(key, ()) } answer(n, "batch_size");"#;
        let d = declared(&[src.to_string()]);
        assert!(check(&sets(&[("batch_size", 32.into())]), &d).is_ok());
        assert!(check(&sets(&[("batch_sise", 32.into())]), &d).is_err());
    }
}

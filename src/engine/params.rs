//! Which `--set` keys the scripts read, and of what type: found from the `param("KEY", DEFAULT)`
//! calls in the scripts, the stdlib and modules beside the scripts. A key nothing reads, or a
//! value of the wrong type, is a usage error before anything runs (not a silently kept default).

use crate::util::suggest::did_you_mean;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamType {
    Number,
    Bool,
    Any,
}

#[derive(Debug, Default)]
pub(crate) struct Declared {
    /// Key → the type its defaults imply.
    pub keys: BTreeMap<String, ParamType>,
    /// Keys that may be read through a variable (`param(key, …)`): every key-like string
    /// literal of those sources.
    pub maybe: BTreeSet<String>,
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

/// Scan sources for `param(` and `.expect("KEY"` calls.
pub(crate) fn declared(sources: &[String]) -> Declared {
    static CALL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static LIT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let call = CALL.get_or_init(|| {
        regex::Regex::new(
            r#"\bparam\(\s*(?:"([A-Za-z0-9_.-]+)"\s*(?:,\s*([^,()]+?|\(\))\s*[,)])?)?"#,
        )
        .expect("regex")
    });
    let lit = LIT.get_or_init(|| regex::Regex::new(r#""([a-z][a-z0-9_]{1,40})""#).expect("regex"));
    let mut d = Declared::default();
    for src in sources {
        let mut dynamic = false;
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
                None => dynamic = true,
            }
        }
        // `n.expect("KEY")` reads `--set KEY` first (primitives::profile): declared too.
        for c in expect_call().captures_iter(src) {
            d.keys.entry(c[1].to_string()).or_insert(ParamType::Any);
        }
        // `n.link_layer()` reads `--set link_layer` first (primitives::profile).
        if src.contains(".link_layer()") {
            d.keys
                .entry("link_layer".to_string())
                .or_insert(ParamType::Any);
        }
        if dynamic {
            d.maybe
                .extend(lit.captures_iter(src).map(|c| c[1].to_string()));
        }
    }
    d
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
            Some(ParamType::Bool) if !v.is_boolean() => {
                return Err(SetError::typed(k, v, "true or false"))
            }
            Some(_) => {}
            None if d.maybe.contains(k) => {}
            None => {
                let known: Vec<&str> = d.keys.keys().map(String::as_str).collect();
                return Err(SetError::Unread {
                    key: k.clone(),
                    value: shown(v),
                    hint: did_you_mean(k, known.iter().copied()),
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
    #[error("--set {key}={value}: no script reads `{key}`{hint}; the scripts read: {read}")]
    Unread {
        key: String,
        value: String,
        hint: String,
        read: String,
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

    /// `--set link_layer=infiniband` is read by `n.link_layer()` (docs/infiniband.md): it was
    /// refused as "no script reads `link_layer`".
    #[test]
    fn link_layer_is_read_where_a_script_asks_the_link_layer() {
        let d = declared(&["fn is_ib(n) { n.link_layer().value == \"infiniband\" }".to_string()]);
        assert!(check(&sets(&[("link_layer", "infiniband".into())]), &d).is_ok());
        let d = declared(&["let x = param(\"mtu\", 9000);".to_string()]);
        assert!(check(&sets(&[("link_layer", "infiniband".into())]), &d).is_err());
    }

    #[test]
    fn dynamic_keys_accept_literals_of_that_source() {
        let src = r#"fn answer(n, key) { param(key, ()) } answer(n, "batch_size");"#;
        let d = declared(&[src.to_string()]);
        assert!(check(&sets(&[("batch_size", 32.into())]), &d).is_ok());
        assert!(check(&sets(&[("batch_sise", 32.into())]), &d).is_err());
    }
}

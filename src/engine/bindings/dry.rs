//! `--dry-run`'s stand-in for an answer that was not asked. A primitive whose commands were
//! only listed returns a [`DryValue`] (or, where its plan knows part of the result, a map whose
//! unknown fields are `DryValue`s), so that the test goes on listing commands — but never takes
//! a branch on a value nobody measured:
//!
//! - a `DryValue` knows the kind of result it stands for (`results.rs`): reading a field that
//!   kind does not declare is the typo error of a real result (`record.rs`), which a dry run
//!   counts as an error ([`Outcome::ScriptError`]); where the plan knows part of the result
//!   the stand-in is a typed record whose unknown fields are `DryValue`s of their kind;
//! - fields, indexes, arithmetic and string methods of a `DryValue` are `DryValue`s (those of
//!   arithmetic and methods no longer of a result kind: any field reads);
//! - `== ()` is false and `!= ()` true (a read is assumed to give a value);
//! - as text (`${v}`, `"…" + v`) every stand-in reads the same, [`TEXT`]: two texts made from
//!   answers not asked are equal (the healthy path: driver strings alike, no error words);
//! - assertions and `metric` on a `DryValue` are assumed to hold (nothing to check yet);
//! - any other comparison, `!`, `if`/`while` on it, looping over it or passing it where a
//!   real value is needed stops the test: the listing ends there, saying on what answer.

use super::record;
use crate::engine::signal::{self, Outcome, RhaiErr};
use crate::primitives::PrimError;
use crate::util::shape::{Nest, Returns};
use rhai::{Dynamic, Engine, NativeCallContext, INT};
use std::sync::Arc;

/// What a script sees for an answer that a dry run did not ask.
#[derive(Clone)]
pub(crate) struct DryValue {
    /// Whose answer it stands for: "the answer of `ethtool enp1s0f1np1` on spark-01".
    pub origin: Arc<str>,
    /// The kind of result it stands for, where known: reading a field that kind does not
    /// declare is the same error as on a real result. `None` for a value derived from it.
    pub kind: Option<Returns>,
}

impl DryValue {
    /// The stand-in for a part of this one, of kind `kind`.
    fn part(&self, kind: Option<Returns>) -> DryValue {
        DryValue {
            origin: self.origin.clone(),
            kind,
        }
    }
}

/// A loop over a stand-in stops the test (how many items there are is not known).
impl IntoIterator for DryValue {
    type Item = Result<Dynamic, RhaiErr>;
    type IntoIter = std::iter::Once<Self::Item>;
    fn into_iter(self) -> Self::IntoIter {
        std::iter::once(Err(signal::throw(
            Outcome::DryRun,
            format!("{}{}, {STOPPED}", signal::LOOP_STOP, self.origin),
            None,
            rhai::Position::NONE,
        )))
    }
}

/// A stand-in as text: one text for all of them, so that texts built from them compare equal.
pub(crate) const TEXT: &str = "<not known in a dry run>";

pub(crate) use signal::{DRY_STOPPED as STOPPED, DRY_TYPE_NAME as TYPE_NAME};

pub(crate) fn is(v: &Dynamic) -> bool {
    v.is::<DryValue>()
}

fn of(origin: &str, kind: Option<Returns>) -> Dynamic {
    Dynamic::from(DryValue {
        origin: origin.into(),
        kind,
    })
}

/// The kind of result held by a field that holds results.
fn nested(n: Nest) -> Returns {
    match n {
        Nest::One(s) => Returns::One(s),
        Nest::Many(s) => Returns::List(s),
    }
}

/// The kind of `kind`'s part under `key` (a field, a node name) or at an index (`None`).
fn part_kind(kind: Option<Returns>, key: Option<&str>) -> Option<Returns> {
    match (kind?, key) {
        (Returns::One(s), Some(k)) => s.nested(k).map(nested),
        (Returns::ByNode(s), Some(_)) | (Returns::List(s), None) => Some(Returns::One(s)),
        _ => None,
    }
}

/// The script value of a dry-run primitive returning `returns`: what its plan knows (typed),
/// a `DryValue` of the right kind for the rest.
pub(crate) fn stand_in(e: &PrimError, returns: Returns) -> Dynamic {
    fn fill(v: Dynamic, origin: &str, kind: Option<Returns>) -> Dynamic {
        if v.is_unit() {
            return of(origin, kind);
        }
        if v.is_map() {
            let m = v.cast::<rhai::Map>();
            let m = m.into_iter().map(|(k, x)| {
                let kind = part_kind(kind, Some(k.as_str()));
                (k, fill(x, origin, kind))
            });
            return Dynamic::from_map(m.collect());
        }
        if v.is_array() {
            let a = v.cast::<rhai::Array>();
            let kind = part_kind(kind, None);
            return Dynamic::from_array(a.into_iter().map(|x| fill(x, origin, kind)).collect());
        }
        v
    }
    match e
        .known
        .as_ref()
        .and_then(|k| rhai::serde::to_dynamic(k).ok())
    {
        Some(v) => record::typed(fill(v, &e.message, Some(returns)), returns),
        None => of(&e.message, Some(returns)),
    }
}

/// `v.field` / `v[key]`: a stand-in for that part, or the typo error of a real result.
fn field(ctx: &NativeCallContext, v: &DryValue, key: &str) -> Result<Dynamic, RhaiErr> {
    match v.kind {
        Some(Returns::One(s)) if !s.has(key) => Err(record::no_such_field(ctx, s, key)),
        kind => Ok(Dynamic::from(v.part(part_kind(kind, Some(key))))),
    }
}

/// The test's next step depends on an answer the dry run does not have: stop listing.
fn stop(ctx: &NativeCallContext, what: &str, v: &DryValue) -> RhaiErr {
    signal::throw(
        Outcome::DryRun,
        format!(
            "{what} at {} needs {}, {STOPPED}",
            signal::at(ctx),
            v.origin
        ),
        None,
        ctx.call_position(),
    )
}

/// The first `DryValue` among `args`, if any (assertions and metrics on one are assumed to
/// hold).
pub(crate) fn any(args: &[&Dynamic]) -> bool {
    args.iter().any(|a| is(a))
}

/// The type's operators and map-like functions (not script functions of their own): the
/// machinery every declared function's result relies on, registered first by
/// `api::register_all`.
pub(super) fn register(engine: &mut Engine) {
    engine.register_type_with_name::<DryValue>(TYPE_NAME);
    engine.register_iterator_result::<DryValue, Dynamic>();
    engine.register_fn("to_string", |_: &mut DryValue| TEXT.to_string());
    engine.register_fn("to_debug", |v: &mut DryValue| format!("<{}>", v.origin));
    engine.register_indexer_get(|ctx: NativeCallContext, v: &mut DryValue, k: &str| {
        field(&ctx, v, k)
    });
    engine.register_indexer_get(|v: &mut DryValue, _k: INT| v.part(part_kind(v.kind, None)));
    for op in ["+", "-", "*", "/", "%", "**"] {
        engine.register_fn(op, |a: DryValue, _b: Dynamic| a.part(None));
        engine.register_fn(op, |_a: Dynamic, b: DryValue| b.part(None));
    }
    // Text joined with a stand-in stays text (a message, a log line).
    engine.register_fn("+", |a: rhai::ImmutableString, _: DryValue| {
        format!("{a}{TEXT}")
    });
    engine.register_fn("+", |_: DryValue, b: rhai::ImmutableString| {
        format!("{TEXT}{b}")
    });
    engine.register_fn("-", |a: DryValue| a.part(None));
    // `== ()` / `!= ()` are answered (a read gives a value); every other comparison stops.
    for (op, unit) in [("==", Some(false)), ("!=", Some(true))]
        .into_iter()
        .chain(["<", "<=", ">", ">="].map(|op| (op, None)))
    {
        let compare = move |ctx: &NativeCallContext, v: &DryValue, other: &Dynamic| match unit {
            Some(answer) if other.is_unit() => Ok(answer),
            _ => Err(stop(ctx, &format!("`{op}`"), v)),
        };
        engine.register_fn(
            op,
            move |ctx: NativeCallContext, a: DryValue, b: Dynamic| compare(&ctx, &a, &b),
        );
        engine.register_fn(
            op,
            move |ctx: NativeCallContext, a: Dynamic, b: DryValue| compare(&ctx, &b, &a),
        );
    }
    engine.register_fn(
        "!",
        |ctx: NativeCallContext, a: DryValue| -> Result<bool, RhaiErr> {
            Err(stop(&ctx, "`!`", &a))
        },
    );
    engine.register_fn(
        "get",
        |ctx: NativeCallContext, v: &mut DryValue, k: &str| field(&ctx, v, k),
    );
    register_methods(engine);
}

/// Methods of text, numbers and collections: on a stand-in they give a stand-in.
fn register_methods(engine: &mut Engine) {
    for name in [
        "len",
        "trimmed",
        "to_lower",
        "to_upper",
        "parse_int",
        "parse_float",
        "to_int",
        "to_float",
        "abs",
        "round",
        "floor",
        "ceiling",
        "keys",
        "values",
        "chars",
        "trim",
        "is_empty",
    ] {
        engine.register_fn(name, |v: &mut DryValue| v.part(None));
    }
    for name in [
        "split",
        "contains",
        "starts_with",
        "ends_with",
        "index_of",
        "get",
        "filter",
        "map",
        "some",
        "all",
        "sub_string",
        "pad",
    ] {
        engine.register_fn(name, |v: &mut DryValue, _a: Dynamic| v.part(None));
    }
    for name in ["sub_string", "replace", "reduce", "split"] {
        engine.register_fn(name, |v: &mut DryValue, _a: Dynamic, _b: Dynamic| {
            v.part(None)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> Engine {
        let mut e = Engine::new();
        register(&mut e);
        record::register(&mut e);
        use crate::util::shape::Returned;
        type ByNode = std::collections::BTreeMap<String, crate::run::CmdOutput>;
        e.register_fn("answer", || of("the answer of `ethtool x` on n1", None));
        let kinds = [
            ("ethtool_answer", crate::parse::ethtool::Ethtool::returns()),
            (
                "addresses_answer",
                Vec::<crate::parse::ip_addr::Interface>::returns(),
            ),
            ("run_all_answer", ByNode::returns()),
        ];
        for (f, kind) in kinds {
            e.register_fn(f, move || of("the answer of `x` on n1", Some(kind)));
        }
        e.register_fn("port_answer", move || {
            let mut e = PrimError::dry_run("n1", "ib_write_bw_port n1 -> n2 (qsfp1)");
            e.known = Some(serde_json::json!({"port": "qsfp1", "total_gbps": null,
                "rails": [{"device": "rocep1s0f1", "bw_avg_gbps": null}]}));
            stand_in(&e, crate::primitives::pair::PortResult::returns())
        });
        e.register_fn("hop_to", |to: &str| to.len() as INT);
        e
    }

    fn eval(src: &str) -> Result<Dynamic, String> {
        use crate::engine::signal::{classify, Ending};
        engine()
            .eval::<Dynamic>(src)
            .map_err(|e| match classify(&e, "") {
                Ending::Signal(s) => s.message,
                Ending::Runtime(m) | Ending::Terminated(m) => m,
            })
    }

    #[test]
    fn reads_and_arithmetic_go_on_without_a_value() {
        let v = eval("let e = answer(); let s = e.speed_mbps / 1000.0 * 90 / 100; s").unwrap();
        assert!(is(&v), "{v:?}");
        assert!(
            eval("let e = answer(); e.speed_mbps == ()")
                .unwrap()
                .as_bool()
                == Ok(false)
        );
        assert!(eval("let e = answer(); e.rows[0] != ()").unwrap().as_bool() == Ok(true));
        let text = eval("let e = answer(); `speed ${e.speed_mbps}` + \" Mb/s\"").unwrap();
        assert_eq!(text.to_string(), format!("speed {TEXT} Mb/s"));
        // Texts made from different answers are alike (the healthy path of a consistency check).
        let same = eval("let a = answer(); let b = answer(); `v=${a.driver}` == `v=${b.version}`");
        assert_eq!(same.unwrap().as_bool(), Ok(true));
        assert!(is(
            &eval("answer().stdout.trimmed().split(\"\\n\")").unwrap()
        ));
    }

    #[test]
    fn a_branch_on_an_unknown_answer_stops_naming_it() {
        for src in [
            "let e = answer(); if e.speed_mbps < 200000 { 1 } else { 2 }",
            "let e = answer(); if e.speed_mbps == 100000 { 1 } else { 2 }",
            "let e = answer(); if 0 >= e.loss_pct { 1 } else { 2 }",
            "let h = answer(); if !h.ok { 1 } else { 2 }",
            "let h = answer(); if h.ok { 1 } else { 2 }",
            "let r = answer(); let s = 0; for x in r.rows { s += 1; } s",
            "let r = answer(); if r.stdout.trimmed() == \"\" { 1 }",
            // A stand-in where a real value is needed: an address not known yet.
            "let a = answer(); hop_to(a.address)",
        ] {
            let err = engine().eval::<Dynamic>(src).expect_err(src);
            assert!(crate::engine::signal::is_dry_stop(&err), "{src}: {err}");
            let text = eval(src).expect_err(src);
            assert!(
                text.contains(STOPPED) || text.contains("dry-run answer"),
                "{src}: {text}"
            );
        }
    }

    #[test]
    fn known_parts_of_a_planned_result_are_real_and_typed() {
        let port = eval("let p = port_answer(); [p.port, p.rails[0].device]").unwrap();
        assert_eq!(port.to_string(), r#"["qsfp1", "rocep1s0f1"]"#);
        assert!(is(&eval("port_answer().total_gbps").unwrap()));
        assert!(is(&eval("port_answer().rails[0].bw_avg_gbps").unwrap()));
        let typo = eval("port_answer().rails[0].bw_avg_gpbs").unwrap_err();
        assert!(typo.contains("did you mean `bw_avg_gbps`"), "{typo}");
    }

    #[test]
    fn a_stand_in_of_a_known_kind_refuses_a_misspelt_field_like_a_real_result() {
        for (src, want) in [
            ("ethtool_answer().speed_mpbs", "did you mean `speed_mbps`"),
            (
                "ethtool_answer()[\"speed_mpbs\"]",
                "did you mean `speed_mbps`",
            ),
            (
                "ethtool_answer().get(\"link_detcted\")",
                "did you mean `link_detected`",
            ),
            ("addresses_answer()[0].ifnmae", "did you mean `ifname`"),
            (
                "run_all_answer()[\"spark-01\"].stdotu",
                "did you mean `stdout`",
            ),
        ] {
            let err = engine().eval::<Dynamic>(src).expect_err(src);
            assert!(!crate::engine::signal::is_dry_stop(&err), "{src}: {err}");
            let text = eval(src).unwrap_err();
            assert!(text.contains(want), "{src}: {text}");
        }
        // Declared fields, and anything read from a derived value, go on as stand-ins.
        for src in [
            "ethtool_answer().speed_mbps / 1000",
            "addresses_answer()[0].ifname",
            "run_all_answer()[\"spark-01\"].stdout.trimmed()",
            "answer().anything.at_all",
        ] {
            assert!(is(&eval(src).expect(src)), "{src}");
        }
    }
}

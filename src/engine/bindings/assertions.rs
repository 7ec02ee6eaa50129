//! `assert`, `assert_eq`, `assert_ge`, `assert_le`, `assert_within`, `fail`, `skip`, `warn`,
//! `metric`, `param`. Failure messages carry expected and actual values and the script
//! file:line of the assertion.

use super::dry::{self, DryValue};
use super::Opts;
use crate::engine::signal::{self, RhaiErr};
use crate::run::context;
use crate::run::model::Metric;

pub const METRIC_OPTS: &[&str] = &[
    "tolerance_pct",
    "higher_is_better",
    "threshold",
    "reference",
    "node",
    "rail",
    "size_bytes",
    "peer",
];
use rhai::{Dynamic, Engine, Map, NativeCallContext};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `file:line` of a call, for messages.
pub(crate) fn at(ctx: &NativeCallContext) -> String {
    let file = ctx
        .call_source()
        .map(str::to_string)
        .unwrap_or_else(context::file);
    match ctx.call_position().line() {
        Some(l) => format!("{file}:{l}"),
        None => file,
    }
}

/// A value as a person reads it in a message: strings quoted, `()` as null.
pub fn show(v: &Dynamic) -> String {
    if let Some(r) = super::record::as_map(v) {
        r.to_string()
    } else if v.is_unit() {
        "null".into()
    } else if v.is_string() {
        format!("{:?}", v.to_string())
    } else if v.is_float() {
        let f = v.as_float().unwrap_or(f64::NAN);
        let s = format!("{f:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        v.to_string()
    }
}

/// An assertion was evaluated: the test checked something.
fn tick() {
    context::with(|c| c.checks += 1);
}

fn num(v: &Dynamic) -> Option<f64> {
    if let Ok(i) = v.as_int() {
        return Some(i as f64);
    }
    v.as_float().ok()
}

fn fail(ctx: &NativeCallContext, msg: &str, what: String) -> RhaiErr {
    let text = if msg.is_empty() {
        what
    } else {
        format!("{msg}: {what}")
    };
    signal::failure(format!("{text} at {}", at(ctx)), ctx.call_position())
}

/// A missing value (`null` from a parser, no metric) means the check could not be made.
fn need_num(ctx: &NativeCallContext, v: &Dynamic, role: &str, msg: &str) -> Result<f64, RhaiErr> {
    num(v).ok_or_else(|| {
        let m = if msg.is_empty() {
            String::new()
        } else {
            format!("{msg}: ")
        };
        signal::error(
            format!(
                "{m}{role} value is {} ({}), not a number; the check could not be made at {}",
                show(v),
                v.type_name(),
                at(ctx)
            ),
            ctx.call_position(),
        )
    })
}

fn values_equal(ctx: &NativeCallContext, a: &Dynamic, b: &Dynamic) -> bool {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return x == y;
    }
    if a.type_id() != b.type_id() {
        return false;
    }
    ctx.call_native_fn::<bool>("==", (a.clone(), b.clone()))
        .unwrap_or_else(|_| a.to_string() == b.to_string())
}

/// `assert_ge` (`at_least`) or `assert_le`: `actual` against `limit`, both numbers.
fn bound(
    ctx: &NativeCallContext,
    actual: Dynamic,
    limit: Dynamic,
    msg: &str,
    at_least: bool,
) -> Result<(), RhaiErr> {
    tick();
    if dry::any(&[&actual, &limit]) {
        return Ok(());
    }
    let a = need_num(ctx, &actual, "actual", msg)?;
    let (role, op) = if at_least {
        ("minimum", ">=")
    } else {
        ("maximum", "<=")
    };
    let m = need_num(ctx, &limit, role, msg)?;
    if (at_least && a >= m) || (!at_least && a <= m) {
        Ok(())
    } else {
        Err(fail(
            ctx,
            msg,
            format!("expected {op} {}, actual {}", show(&limit), show(&actual)),
        ))
    }
}

/// Every assertion, outcome, metric, parameter and string helper of the script API.
pub fn register(engine: &mut Engine, params: Arc<BTreeMap<String, Dynamic>>) {
    register_asserts(engine);
    register_outcomes(engine);
    register_metric(engine);
    register_params(engine, params);
    register_strings(engine);
}

/// `assert`, `assert_eq`, `assert_ge`, `assert_le`, `assert_within`. In a dry run an
/// assertion on an answer not asked is assumed to hold (the listing goes on).
fn register_asserts(engine: &mut Engine) {
    register_bounds(engine);
    engine.register_fn("assert", |_: DryValue, _: &str| tick());
    engine.register_fn("assert", |_: DryValue| tick());
    engine.register_fn(
        "assert",
        |ctx: NativeCallContext, cond: bool, msg: &str| -> Result<(), RhaiErr> {
            tick();
            if cond {
                Ok(())
            } else {
                Err(fail(&ctx, msg, "expected true, got false".into()))
            }
        },
    );
    engine.register_fn(
        "assert",
        |ctx: NativeCallContext, cond: bool| -> Result<(), RhaiErr> {
            tick();
            if cond {
                Ok(())
            } else {
                Err(fail(&ctx, "assertion", "expected true, got false".into()))
            }
        },
    );
    engine.register_fn(
        "assert_eq",
        |ctx: NativeCallContext,
         actual: Dynamic,
         expected: Dynamic,
         msg: &str|
         -> Result<(), RhaiErr> {
            tick();
            if dry::any(&[&actual, &expected]) || values_equal(&ctx, &actual, &expected) {
                Ok(())
            } else {
                Err(fail(
                    &ctx,
                    msg,
                    format!("expected {}, actual {}", show(&expected), show(&actual)),
                ))
            }
        },
    );
}

/// `assert_ge`, `assert_le`, `assert_within`: numbers against a bound; a value that is not a
/// number (null from a parser) is an error, never a pass.
fn register_bounds(engine: &mut Engine) {
    engine.register_fn(
        "assert_ge",
        |ctx: NativeCallContext, actual: Dynamic, min: Dynamic, msg: &str| {
            bound(&ctx, actual, min, msg, true)
        },
    );
    engine.register_fn(
        "assert_le",
        |ctx: NativeCallContext, actual: Dynamic, max: Dynamic, msg: &str| {
            bound(&ctx, actual, max, msg, false)
        },
    );
    engine.register_fn(
        "assert_within",
        |ctx: NativeCallContext,
         actual: Dynamic,
         reference: Dynamic,
         tol: Dynamic,
         msg: &str|
         -> Result<(), RhaiErr> {
            tick();
            if dry::any(&[&actual, &reference, &tol]) {
                return Ok(());
            }
            let a = need_num(&ctx, &actual, "actual", msg)?;
            let r = need_num(&ctx, &reference, "reference", msg)?;
            let t = need_num(&ctx, &tol, "tolerance", msg)?;
            let dev = if r == 0.0 {
                if a == 0.0 {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                (a - r).abs() / r.abs() * 100.0
            };
            if dev <= t {
                Ok(())
            } else {
                Err(fail(
                    &ctx,
                    msg,
                    format!(
                        "expected {} ± {}%, actual {} ({:.1}% off)",
                        show(&reference),
                        show(&tol),
                        show(&actual),
                        dev
                    ),
                ))
            }
        },
    );
}

/// `fail`, `skip`, `error`, `warn`.
fn register_outcomes(engine: &mut Engine) {
    engine.register_fn(
        "fail",
        |ctx: NativeCallContext, msg: &str| -> Result<(), RhaiErr> {
            Err(signal::failure(
                format!("{msg} at {}", at(&ctx)),
                ctx.call_position(),
            ))
        },
    );
    engine.register_fn(
        "skip",
        |ctx: NativeCallContext, reason: &str| -> Result<(), RhaiErr> {
            Err(signal::skip(reason, ctx.call_position()))
        },
    );
    engine.register_fn(
        "error",
        |ctx: NativeCallContext, msg: &str| -> Result<(), RhaiErr> {
            Err(signal::error(
                format!("{msg} at {}", at(&ctx)),
                ctx.call_position(),
            ))
        },
    );
    // A caught outcome (`try { … } catch (e)`) reads as its message: `${e}`, `e.to_string()`.
    engine.register_fn("to_string", |s: &mut signal::Signal| s.message.clone());
    engine.register_fn("to_debug", |s: &mut signal::Signal| s.message.clone());
    engine.register_fn("warn", |ctx: NativeCallContext, msg: &str| {
        let line = format!("{msg} at {}", at(&ctx));
        if context::with(|c| c.warnings.push(line.clone())).is_none() {
            tracing::warn!("{line}");
        }
    });
}

/// `metric(name, value, unit[, opts])`.
fn register_metric(engine: &mut Engine) {
    fn record(
        ctx: &NativeCallContext,
        name: &str,
        value: Dynamic,
        unit: &str,
        opts: Option<Map>,
    ) -> Result<(), RhaiErr> {
        let pos = ctx.call_position();
        // A dry run has no number yet: nothing to record.
        if dry::is(&value) || opts.as_ref().is_some_and(|o| o.values().any(dry::is)) {
            return Ok(());
        }
        let v = need_num(ctx, &value, &format!("metric {name}:"), "")?;
        let mut m = Metric::new(name, v, unit);
        let o = Opts::new(opts, "metric", METRIC_OPTS, pos)?;
        m.tolerance_pct = o.float("tolerance_pct")?;
        if o.get_raw("higher_is_better").is_some() {
            m.higher_is_better = o.bool("higher_is_better")?;
        }
        m.threshold = o.float("threshold")?;
        m.reference = o.float("reference")?;
        m.node = o.str_or_display("node")?;
        m.rail = o.str_or_display("rail")?;
        m.size_bytes = o.int("size_bytes")?.map(|s| s.max(0) as u64);
        m.peer = o.str_or_display("peer")?;
        // Inside a test_pairs test a metric belongs to its pair unless it says otherwise.
        if let Some((a, b)) = context::with(|c| c.pair.clone()).flatten() {
            if m.node.is_none() && m.peer.is_none() {
                m.node = Some(a);
                m.peer = Some(b);
            }
        }
        // A number on the wrong side of its threshold fails the test (after the test's own
        // assertions had their say: the first of them wins the message).
        let missed = m.threshold.filter(|&t| !m.meets(t)).map(|t| {
            format!(
                "metric {name} = {} {unit} is {} its threshold {} {unit} at {}",
                crate::util::fmt::fmt_num(v),
                if m.higher_is_better { "below" } else { "above" },
                crate::util::fmt::fmt_num(t),
                at(ctx)
            )
        });
        context::with(|c| {
            c.metrics.retain(|x| x.name != m.name);
            c.metrics.push(m);
            if let Some(f) = missed {
                c.deferred_failures.push(f);
            }
        });
        Ok(())
    }
    engine.register_fn(
        "metric",
        |ctx: NativeCallContext, name: &str, value: Dynamic, unit: &str| {
            record(&ctx, name, value, unit, None)
        },
    );
    engine.register_fn(
        "metric",
        |ctx: NativeCallContext, name: &str, value: Dynamic, unit: &str, opts: Map| {
            record(&ctx, name, value, unit, Some(opts))
        },
    );
}

/// `param(key)`, `param(key, default)`.
fn register_params(engine: &mut Engine, params: Arc<BTreeMap<String, Dynamic>>) {
    let p = params.clone();
    engine.register_fn(
        "param",
        move |ctx: NativeCallContext, key: &str| -> Result<Dynamic, RhaiErr> {
            p.get(key).cloned().ok_or_else(|| {
                signal::skip(
                    format!("missing input: give --set {key}=VALUE"),
                    ctx.call_position(),
                )
            })
        },
    );
    let p = params;
    engine.register_fn("param", move |key: &str, default: Dynamic| -> Dynamic {
        p.get(key).cloned().unwrap_or(default)
    });
}

/// `log`, `note`, `trim`, `trimmed`, `shell_quote`.
fn register_strings(engine: &mut Engine) {
    // A line the engineer must see: on the console under the test's result, and in the reports.
    engine.register_fn("note", |msg: &str| {
        context::with(|c| c.notes.push(msg.to_string()));
        context::log_line(msg);
    });
    engine.register_fn("log", |msg: &str| context::log_line(msg));
    // Rhai's trim() trims in place and returns (), so `n.sh(c).trim().parse_int()` failed with
    // "no function matches parse_int (())". fabcheck's trim() trims in place AND returns the
    // string; trimmed() returns a trimmed copy. (to_lower/to_upper already return a copy.)
    engine.register_fn(
        "trim",
        |s: &mut rhai::ImmutableString| -> rhai::ImmutableString {
            let t: rhai::ImmutableString = s.trim().into();
            *s = t.clone();
            t
        },
    );
    engine.register_fn("trimmed", |s: &str| s.trim().to_string());
    // The quoting of every command fabcheck builds (fish-safe backslashes), for scripts'.
    engine.register_fn("shell_quote", |s: &str| crate::util::names::quote(s));
}

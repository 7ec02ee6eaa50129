//! `assert`, `assert_eq`, `assert_ge`, `assert_le`, `assert_within`, `fail`, `skip`, `warn`,
//! `metric`, `param`. Failure messages carry expected and actual values and the script
//! file:line of the assertion.

use super::api::{recorded, test_log, Api, Binder, BINDINGS};
use super::dry::{self, DryValue};
use super::options;
use super::record::show;
use super::values::number;
use crate::engine::signal::{self, at, RhaiErr};
use crate::run::model::Metric;
use crate::run::observer::Event;

/// The options of `metric(name, value, unit, opts)`: the keys a script may give.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct MetricArgs {
    tolerance_pct: Option<f64>,
    higher_is_better: Option<bool>,
    threshold: Option<f64>,
    reference: Option<f64>,
    #[serde(deserialize_with = "options::shown")]
    node: Option<String>,
    #[serde(deserialize_with = "options::shown")]
    rail: Option<String>,
    size_bytes: Option<i64>,
    #[serde(deserialize_with = "options::shown")]
    peer: Option<String>,
}
use rhai::{Dynamic, Engine, Map, NativeCallContext};
use std::collections::BTreeMap;
use std::sync::Arc;

/// An assertion was evaluated: the test the call runs in checked something.
fn tick(ctx: &NativeCallContext) {
    recorded(ctx, |c| c.checks += 1);
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
    number(v).ok_or_else(|| {
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
    if let (Some(x), Some(y)) = (number(a), number(b)) {
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
    tick(ctx);
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

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

/// Every assertion, outcome, metric, parameter and string helper of the script API.
fn register(api: &mut Api) {
    let params: BTreeMap<String, Dynamic> = api
        .env
        .params
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                rhai::serde::to_dynamic(v).unwrap_or(Dynamic::UNIT),
            )
        })
        .collect();
    register_asserts(api);
    register_outcomes(api);
    register_metric(api);
    register_params(api, Arc::new(params));
    register_strings(api);
}

/// `assert`, `assert_eq`, `assert_ge`, `assert_le`, `assert_within`. In a dry run an
/// assertion on an answer not asked is assumed to hold (the listing goes on).
fn register_asserts(api: &mut Api) {
    register_bounds(api);
    api.function("assert(cond, msg)")
        .doc("fail unless the condition holds")
        .register(register_assert);
    api.function("assert_eq(actual, expected, msg)")
        .doc("fail unless actual == expected (numbers compare by value)")
        .register(register_assert_eq);
}

fn register_assert(engine: &mut Engine, name: &str) {
    engine.register_fn(name, |ctx: NativeCallContext, _: DryValue, _: &str| {
        tick(&ctx)
    });
    engine.register_fn(name, |ctx: NativeCallContext, _: DryValue| tick(&ctx));
    engine.register_fn(
        name,
        |ctx: NativeCallContext, cond: bool, msg: &str| -> Result<(), RhaiErr> {
            tick(&ctx);
            if cond {
                Ok(())
            } else {
                Err(fail(&ctx, msg, "expected true, got false".into()))
            }
        },
    );
    engine.register_fn(
        name,
        |ctx: NativeCallContext, cond: bool| -> Result<(), RhaiErr> {
            tick(&ctx);
            if cond {
                Ok(())
            } else {
                Err(fail(&ctx, "assertion", "expected true, got false".into()))
            }
        },
    );
}

fn register_assert_eq(engine: &mut Engine, name: &str) {
    engine.register_fn(
        name,
        |ctx: NativeCallContext,
         actual: Dynamic,
         expected: Dynamic,
         msg: &str|
         -> Result<(), RhaiErr> {
            tick(&ctx);
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
fn register_bounds(api: &mut Api) {
    api.function("assert_ge(actual, min, msg)")
        .doc("fail unless actual >= min; a null actual is an error")
        .register(|e, name| {
            e.register_fn(
                name,
                |ctx: NativeCallContext, actual: Dynamic, min: Dynamic, msg: &str| {
                    bound(&ctx, actual, min, msg, true)
                },
            );
        });
    api.function("assert_le(actual, max, msg)")
        .doc("fail unless actual <= max; a null actual is an error")
        .register(|e, name| {
            e.register_fn(
                name,
                |ctx: NativeCallContext, actual: Dynamic, max: Dynamic, msg: &str| {
                    bound(&ctx, actual, max, msg, false)
                },
            );
        });
    api.function("assert_within(actual, reference, tolerance_pct, msg)")
        .doc("fail unless actual is within tolerance_pct % of reference")
        .register(register_within);
}

fn register_within(engine: &mut Engine, name: &str) {
    engine.register_fn(
        name,
        |ctx: NativeCallContext,
         actual: Dynamic,
         reference: Dynamic,
         tol: Dynamic,
         msg: &str|
         -> Result<(), RhaiErr> {
            tick(&ctx);
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
fn register_outcomes(api: &mut Api) {
    api.function("fail(msg)")
        .doc("fail the test with a message")
        .register(|e, name| {
            e.register_fn(
                name,
                |ctx: NativeCallContext, msg: &str| -> Result<(), RhaiErr> {
                    Err(signal::failure(
                        format!("{msg} at {}", at(&ctx)),
                        ctx.call_position(),
                    ))
                },
            );
        });
    api.function("skip(reason)")
        .doc("skip the test with a reason")
        .register(|e, name| {
            e.register_fn(
                name,
                |ctx: NativeCallContext, reason: &str| -> Result<(), RhaiErr> {
                    Err(signal::skip(reason, ctx.call_position()))
                },
            );
        });
    api.function("error(msg)")
        .doc("end the test as an error (the check could not be made)")
        .register(|e, name| {
            e.register_fn(
                name,
                |ctx: NativeCallContext, msg: &str| -> Result<(), RhaiErr> {
                    Err(signal::error(
                        format!("{msg} at {}", at(&ctx)),
                        ctx.call_position(),
                    ))
                },
            );
        });
    // A caught outcome (`try { … } catch (e)`) reads as its message: `${e}`, `e.to_string()`.
    let engine = api.engine();
    engine.register_fn("to_string", |s: &mut signal::Signal| s.message.clone());
    engine.register_fn("to_debug", |s: &mut signal::Signal| s.message.clone());
    let observer = api.env.observer.clone();
    api.function("warn(msg)")
        .doc("record a warning (does not fail)")
        .register(|e, name| {
            let observer = observer.clone();
            e.register_fn(name, move |ctx: NativeCallContext, msg: &str| {
                let line = format!("{msg} at {}", at(&ctx));
                // Outside a test (the script's top level): the run's warning, on the console.
                if recorded(&ctx, |c| c.warnings.push(line.clone())).is_none() {
                    observer.event(&Event::Warning { line: &line });
                }
            });
        });
}

/// `metric(name, value, unit[, opts])`.
fn register_metric(api: &mut Api) {
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
        let o: MetricArgs = options::read(opts, "metric", pos)?;
        m.tolerance_pct = o.tolerance_pct;
        if let Some(h) = o.higher_is_better {
            m.higher_is_better = h;
        }
        m.threshold = o.threshold;
        m.reference = o.reference;
        m.node = o.node;
        m.rail = o.rail;
        m.size_bytes = o.size_bytes.map(|s| s.max(0) as u64);
        m.peer = o.peer;
        // Inside a test_pairs test a metric belongs to its pair unless it says otherwise.
        if let Some((a, b)) = recorded(ctx, |c| c.pair.clone()).flatten() {
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
        recorded(ctx, |c| {
            c.metrics.retain(|x| x.name != m.name);
            c.metrics.push(m);
            if let Some(f) = missed {
                c.deferred_failures.push(f);
            }
        });
        Ok(())
    }
    api.function("metric(name, value, unit, opts)")
        .options::<MetricArgs>()
        .doc("record a number for reports and --baseline; past its `threshold` it fails the test")
        .register(|e, f| {
            e.register_fn(
                f,
                |ctx: NativeCallContext, name: &str, value: Dynamic, unit: &str| {
                    record(&ctx, name, value, unit, None)
                },
            );
            e.register_fn(
                f,
                |ctx: NativeCallContext, name: &str, value: Dynamic, unit: &str, opts: Map| {
                    record(&ctx, name, value, unit, Some(opts))
                },
            );
        });
}

/// `param(key)`, `param(key, default)`.
fn register_params(api: &mut Api, params: Arc<BTreeMap<String, Dynamic>>) {
    api.function("param(key, default)")
        .plain("the value")
        .doc("a --set value: param(key) (missing: the test is skipped) or param(key, default)")
        .register(|e, name| register_param(e, name, &params));
}

fn register_param(engine: &mut Engine, name: &str, params: &Arc<BTreeMap<String, Dynamic>>) {
    let p = params.clone();
    engine.register_fn(
        name,
        move |ctx: NativeCallContext, key: &str| -> Result<Dynamic, RhaiErr> {
            p.get(key).cloned().ok_or_else(|| {
                signal::skip(
                    format!("missing input: give --set {key}=VALUE"),
                    ctx.call_position(),
                )
            })
        },
    );
    let p = params.clone();
    engine.register_fn(name, move |key: &str, default: Dynamic| -> Dynamic {
        p.get(key).cloned().unwrap_or(default)
    });
}

/// `log`, `note`, `trim`, `trimmed`, `shell_quote`.
fn register_strings(api: &mut Api) {
    api.function("log(line)")
        .doc("add a line to the test's output")
        .register(|e, name| {
            e.register_fn(name, |ctx: NativeCallContext, msg: &str| {
                if let Some(l) = test_log(&ctx) {
                    l.log_line(msg);
                }
            });
        });
    api.function("note(line)")
        .doc("a line the engineer must see: on the console under the test's result, and in the reports")
        .register(|e, name| {
            e.register_fn(name, |ctx: NativeCallContext, msg: &str| {
                if let Some(l) = test_log(&ctx) {
                    l.with(|c| c.notes.push(msg.to_string()));
                    l.log_line(msg);
                }
            });
        });
    // Rhai's trim() trims in place and returns (), so `n.sh(c).trim().parse_int()` failed with
    // "no function matches parse_int (())". fabcheck's trim() trims in place AND returns the
    // string; trimmed() returns a trimmed copy. (to_lower/to_upper already return a copy.)
    api.function("trim(s)")
        .plain("the string")
        .doc("trim a string in place and return it")
        .register(|e, name| {
            e.register_fn(
                name,
                |s: &mut rhai::ImmutableString| -> rhai::ImmutableString {
                    let t: rhai::ImmutableString = s.trim().into();
                    *s = t.clone();
                    t
                },
            );
        });
    api.function("trimmed(s)")
        .plain("a string")
        .doc("a trimmed copy of a string")
        .register(|e, name| {
            e.register_fn(name, |s: &str| s.trim().to_string());
        });
    // The quoting of every command fabcheck builds (fish-safe backslashes), for scripts'.
    api.function("shell_quote(s)")
        .plain("a string")
        .doc("a string as one word of a POSIX shell or fish command line: unchanged when safe, else single-quoted")
        .register(|e, name| {
            e.register_fn(name, |s: &str| crate::util::names::quote(s));
        });
}

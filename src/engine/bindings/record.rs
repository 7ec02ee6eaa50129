//! Typed results: what a primitive or parser returns reaches scripts as a [`Record`], which reads
//! like a map (`r.field`, `r["field"]`, `"field" in r`, `r.keys()`, printing, `type_of` says
//! "map") but refuses a field its kind does not declare: `e.speed_mpbs` ends the test as an
//! error with "did you mean `speed_mbps`", never `()` compared to a number and a silent pass.
//! A declared field that is absent or null reads `()`. `r.to_map()` gives a plain map.
//! A counter map inside a result (`counters`, `optional_counters`: keys are the driver's or the
//! kernel's counter names) is a [`Keyed`] map: reading a key it does not have is an error naming
//! the closest keys it has (`counters["rx_crc_error_phy"]`), never `()` compared to 0 and a FAIL
//! "actual null"; `"name" in counters` tests for a counter a driver may not have.

use crate::engine::signal::{self, RhaiErr};
use crate::util::shape::{Nest, Returns, Shape};
use crate::util::suggest::{did_you_mean, edit_distance};
use rhai::{Array, Dynamic, Engine, Map, NativeCallContext};

#[derive(Clone)]
pub(crate) struct Record {
    pub shape: &'static Shape,
    pub map: Map,
}

/// A converted value (`rhai::serde::to_dynamic` of a result) typed as `r` declares.
pub(crate) fn typed(v: Dynamic, r: Returns) -> Dynamic {
    match r {
        Returns::One(s) => wrap(v, s),
        Returns::List(s) => each(v, s),
        Returns::ByNode(s) => match v.try_cast::<Map>() {
            Some(m) => Dynamic::from_map(m.into_iter().map(|(k, x)| (k, wrap(x, s))).collect()),
            None => Dynamic::UNIT,
        },
        Returns::Plain(_) => v,
    }
}

fn each(v: Dynamic, s: &'static Shape) -> Dynamic {
    if !v.is_array() {
        return v;
    }
    let a: Array = v.cast::<Array>().into_iter().map(|x| wrap(x, s)).collect();
    Dynamic::from_array(a)
}

/// Fields of results that are maps keyed by counter names (see [`Keyed`]).
const KEYED: &[&str] = &["counters", "optional_counters"];

/// A map of counters read from a tool, keyed by the tool's own names: a key it lacks is an error.
#[derive(Clone)]
pub(crate) struct Keyed {
    /// `counters of the ethtool -S result`.
    pub what: String,
    pub map: Map,
}

fn wrap(v: Dynamic, shape: &'static Shape) -> Dynamic {
    let Some(mut map) = v.clone().try_cast::<Map>() else {
        return v; // `()` for an absent nested result
    };
    for field in KEYED {
        if let Some(x) = map.get_mut(*field) {
            if let Some(m) = x.clone().try_cast::<Map>() {
                let what = format!("`{field}` of the {}", shape.name);
                *x = Dynamic::from(Keyed { what, map: m });
            }
        }
    }
    for (field, nest) in &shape.nested {
        if let Some(x) = map.get_mut(*field) {
            let inner = std::mem::take(x);
            *x = match nest {
                Nest::One(s) => wrap(inner, s),
                Nest::Many(s) => each(inner, s),
            };
        }
    }
    Dynamic::from(Record { shape, map })
}

/// A record (or counter map) as a plain map (nested ones too), `None` for any other value.
pub(crate) fn as_map(v: &Dynamic) -> Option<Dynamic> {
    (v.is::<Record>() || v.is::<Keyed>()).then(|| plain(v))
}

/// A plain map of the record, nested records and counter maps included.
fn plain(v: &Dynamic) -> Dynamic {
    if let Some(r) = v.read_lock::<Record>() {
        return Dynamic::from_map(r.map.iter().map(|(k, x)| (k.clone(), plain(x))).collect());
    }
    if let Some(r) = v.read_lock::<Keyed>() {
        return Dynamic::from_map(r.map.clone());
    }
    if v.is_array() {
        let a = v.clone().cast::<Array>();
        return Dynamic::from_array(a.iter().map(plain).collect());
    }
    v.clone()
}

/// "`speed_mpbs` is not a field of the ethtool result (did you mean `speed_mbps`?)".
pub(crate) fn unknown_field(shape: &Shape, field: &str) -> String {
    format!(
        "`{field}` is not a field of the {}{}",
        shape.name,
        did_you_mean(field, shape.fields.iter().map(String::as_str)),
    )
}

/// `; its fields are ...` when no field is near enough to suggest.
fn fields_unless_suggested(shape: &Shape, field: &str) -> String {
    if did_you_mean(field, shape.fields.iter().map(String::as_str)).is_empty() {
        format!("; its fields are {}", shape.fields.join(", "))
    } else {
        String::new()
    }
}

/// The error of reading `field`, which `shape` does not declare (also a dry run's stand-in's).
pub(crate) fn no_such_field(ctx: &NativeCallContext, shape: &Shape, field: &str) -> RhaiErr {
    signal::throw(
        signal::Outcome::ScriptError,
        format!(
            "{} at {}{}",
            unknown_field(shape, field),
            signal::at(ctx),
            fields_unless_suggested(shape, field)
        ),
        None,
        ctx.call_position(),
    )
}

fn get(ctx: &NativeCallContext, r: &Record, field: &str) -> Result<Dynamic, RhaiErr> {
    match r.map.get(field) {
        Some(v) => Ok(v.clone()),
        None if r.shape.has(field) => Ok(Dynamic::UNIT),
        None => Err(no_such_field(ctx, r.shape, field)),
    }
}

/// The error of reading `key`, which the counter map lacks: the closest keys it has.
fn no_such_key(ctx: &NativeCallContext, m: &Keyed, key: &str) -> RhaiErr {
    let keys = || m.map.keys().map(|k| k.as_str());
    let mut near: Vec<(usize, &str)> = keys().map(|k| (edit_distance(key, k), k)).collect();
    near.sort();
    let near: Vec<String> = near.iter().take(3).map(|(_, k)| format!("`{k}`")).collect();
    let closest = if near.is_empty() {
        "it is empty".to_string()
    } else {
        format!("its closest of {} keys: {}", m.map.len(), near.join(", "))
    };
    signal::throw(
        signal::Outcome::ScriptError,
        format!(
            "`{key}` is not a key of {}{} at {}; {closest} (`\"{key}\" in …` tests for a counter a driver may lack)",
            m.what,
            did_you_mean(key, keys()),
            signal::at(ctx),
        ),
        None,
        ctx.call_position(),
    )
}

fn get_key(ctx: &NativeCallContext, m: &Keyed, key: &str) -> Result<Dynamic, RhaiErr> {
    match m.map.get(key) {
        Some(v) => Ok(v.clone()),
        None => Err(no_such_key(ctx, m, key)),
    }
}

fn register_keyed(engine: &mut Engine) {
    engine.register_type_with_name::<Keyed>("map");
    engine
        .register_indexer_get(|ctx: NativeCallContext, m: &mut Keyed, k: &str| get_key(&ctx, m, k));
    engine.register_indexer_set(|m: &mut Keyed, k: &str, v: Dynamic| {
        m.map.insert(k.into(), v);
    });
    engine.register_fn("get", |ctx: NativeCallContext, m: &mut Keyed, k: &str| {
        get_key(&ctx, m, k)
    });
    engine.register_fn("contains", |m: &mut Keyed, k: &str| m.map.contains_key(k));
    engine.register_fn("keys", |m: &mut Keyed| -> Array {
        m.map.keys().map(|k| Dynamic::from(k.to_string())).collect()
    });
    engine.register_fn("values", |m: &mut Keyed| -> Array {
        m.map.values().cloned().collect()
    });
    engine.register_fn("len", |m: &mut Keyed| m.map.len() as i64);
    engine.register_fn("is_empty", |m: &mut Keyed| m.map.is_empty());
    engine.register_fn("to_map", |m: &mut Keyed| m.map.clone());
    engine.register_fn("to_string", |m: &mut Keyed| {
        Dynamic::from_map(m.map.clone()).to_string()
    });
    engine.register_fn("to_debug", |m: &mut Keyed| format!("{:?}", m.map));
    engine.register_fn("to_json", |m: &mut Keyed| {
        serde_json::to_string(&Dynamic::from_map(m.map.clone())).unwrap_or_default()
    });
}

fn set(ctx: &NativeCallContext, r: &mut Record, field: &str, v: Dynamic) -> Result<(), RhaiErr> {
    let _ = get(ctx, r, field)?;
    r.map.insert(field.into(), v);
    Ok(())
}

/// The type's operators and map-like functions (not script functions of their own): the
/// machinery every declared function's result relies on, registered first by
/// `api::register_all`.
pub(super) fn register(engine: &mut Engine) {
    register_keyed(engine);
    engine.register_type_with_name::<Record>("map");
    engine.register_indexer_get(|ctx: NativeCallContext, r: &mut Record, k: &str| get(&ctx, r, k));
    engine.register_indexer_set(
        |ctx: NativeCallContext, r: &mut Record, k: &str, v: Dynamic| set(&ctx, r, k, v),
    );
    engine.register_fn("get", |ctx: NativeCallContext, r: &mut Record, k: &str| {
        get(&ctx, r, k)
    });
    engine.register_fn("contains", |r: &mut Record, k: &str| r.map.contains_key(k));
    engine.register_fn("keys", |r: &mut Record| -> Array {
        r.map.keys().map(|k| Dynamic::from(k.to_string())).collect()
    });
    engine.register_fn("values", |r: &mut Record| -> Array {
        r.map.values().cloned().collect()
    });
    engine.register_fn("len", |r: &mut Record| r.map.len() as i64);
    engine.register_fn("is_empty", |r: &mut Record| r.map.is_empty());
    engine.register_fn("to_map", |r: &mut Record| plain(&Dynamic::from(r.clone())));
    engine.register_fn("to_string", |r: &mut Record| {
        plain(&Dynamic::from(r.clone())).to_string()
    });
    engine.register_fn("to_debug", |r: &mut Record| {
        format!("{:?}", plain(&Dynamic::from(r.clone())))
    });
    engine.register_fn("to_json", |r: &mut Record| {
        serde_json::to_string(&plain(&Dynamic::from(r.clone()))).unwrap_or_default()
    });
    engine.register_fn("==", |a: &mut Record, b: Record| {
        plain(&Dynamic::from(a.clone())).to_string() == plain(&Dynamic::from(b)).to_string()
    });
    engine.register_fn("!=", |a: &mut Record, b: Record| {
        plain(&Dynamic::from(a.clone())).to_string() != plain(&Dynamic::from(b)).to_string()
    });
}
/// A value as a person reads it in a message: strings quoted, `()` as null.
pub(crate) fn show(v: &Dynamic) -> String {
    if let Some(r) = as_map(v) {
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

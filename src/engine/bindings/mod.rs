//! The one place where primitives meet Rhai: script maps become typed option structs (unknown
//! keys refused with "did you mean"), typed results become script values, [`PrimError`]s become
//! test outcomes. Timeouts are not decided here: every option struct carries the call's own
//! `timeout` and the primitives apply the run's one policy (`RunEnv::command_timeout`).

pub mod assertions;
mod cluster;
pub mod diagnosis;
pub mod dry;
mod health;
mod infiniband;
mod localise;
mod nccl_env;
mod net_state;
mod nodes;
mod options;
mod pair;
mod parse;
mod profile;
pub mod record;
pub mod registry;
pub mod results;
mod tools;

pub use options::Opts;

use super::signal::{self, Outcome, RhaiErr};
use crate::engine::testdef::SharedRegistry;
use crate::primitives::{NodeRef, PResult, PrimError};
use crate::run::env::RunEnv;
use rhai::{Array, Dynamic, Engine, Position};
use serde::Serialize;
use std::sync::Arc;

/// A primitive's error as the test's outcome.
pub fn signal_of(e: PrimError, pos: Position) -> RhaiErr {
    // A dry run's missing answer that reaches a test's end (not a stand-in) is an error.
    let kind = match e.kind {
        Outcome::DryRun => Outcome::Error,
        k => k,
    };
    signal::throw(kind, e.message, e.detail, pos)
}

/// A primitive's typed result as a script value (a [`record::Record`] of the kind that
/// `returns` declares); a dry run gives its stand-in ([`dry::stand_in`], of the same kind).
pub fn value<T: Serialize>(
    r: PResult<T>,
    returns: results::Returns,
    pos: Position,
) -> Result<Dynamic, RhaiErr> {
    value_with(r, returns, pos, |v| rhai::serde::to_dynamic(v))
}

/// [`value`] with the script value made by `f` (then typed).
pub fn value_with<T>(
    r: PResult<T>,
    returns: results::Returns,
    pos: Position,
    f: impl FnOnce(T) -> Result<Dynamic, RhaiErr>,
) -> Result<Dynamic, RhaiErr> {
    match r {
        Ok(v) => f(v).map(|d| record::typed(d, returns)),
        Err(e) if e.kind == Outcome::DryRun => Ok(dry::stand_in(&e, returns)),
        Err(e) => Err(signal_of(e, pos)),
    }
}

/// An array of nodes from a script (`nodes()`), or an error naming what else was found.
pub fn node_array(arr: Array, pos: Position) -> Result<Vec<NodeRef>, RhaiErr> {
    arr.into_iter()
        .map(|d| {
            let t = d.type_name();
            d.try_cast::<NodeRef>().ok_or_else(|| {
                signal::error(
                    format!(
                        "expected an array of nodes (from nodes()), found an element of type {t}"
                    ),
                    pos,
                )
            })
        })
        .collect()
}

/// Every function scripts call: tests, assertions, node and pair primitives, the `parse`
/// module.
pub fn register(engine: &mut Engine, env: Arc<RunEnv>, tests: SharedRegistry) {
    registry::register(engine, tests);
    let params: std::collections::BTreeMap<String, Dynamic> = env
        .params
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                rhai::serde::to_dynamic(v).unwrap_or(Dynamic::UNIT),
            )
        })
        .collect();
    assertions::register(engine, Arc::new(params));
    dry::register(engine);
    record::register(engine);
    nodes::register(engine, env);
    tools::register(engine);
    pair::register(engine);
    cluster::register(engine);
    nccl_env::register(engine);
    net_state::register(engine);
    engine.register_static_module("parse", Arc::new(parse::module()));
    health::register(engine);
    diagnosis::register(engine);
    infiniband::register(engine);
    localise::register(engine);
    profile::register(engine);
}

/// For `fabcheck doc`: each function's options and the fields of what it returns, from the
/// declarations in `results.rs`.
pub fn reference() -> Vec<(&'static str, &'static [&'static str], Vec<String>)> {
    use results::Returns;
    results::decls()
        .iter()
        .filter(|d| !d.names[0].starts_with("parse::") && !d.names[0].starts_with("test"))
        // Functions without options or a result are described in the list of functions only.
        .filter(|d| d.method || !d.opts.is_empty() || !matches!(d.returns, Returns::Plain(_)))
        .map(|d| {
            let fields = match d.returns {
                Returns::One(s) => describe(s),
                Returns::List(s) => vec![format!("(array of: {})", describe(s).join(", "))],
                Returns::ByNode(s) => vec![format!("(map: node name -> {})", s.name)],
                Returns::Plain("nothing") => vec![],
                Returns::Plain(p) => vec![format!("({p})")],
            };
            (d.call, d.opts, fields)
        })
        .collect()
}

/// For `fabcheck doc`: the results found inside other results (`perftest row`), each once.
pub fn nested_kinds() -> Vec<(&'static str, Vec<String>)> {
    fn visit(s: &'static results::Shape, out: &mut Vec<(&'static str, Vec<String>)>) {
        for (_, n) in &s.nested {
            let (results::Nest::One(n) | results::Nest::Many(n)) = *n;
            if !out.iter().any(|(name, _)| *name == n.name) {
                out.push((n.name, describe(n)));
                visit(n, out);
            }
        }
    }
    let mut out = Vec::new();
    for d in results::decls() {
        if let results::Returns::One(s) | results::Returns::List(s) | results::Returns::ByNode(s) =
            d.returns
        {
            visit(s, &mut out);
        }
    }
    out
}

/// A shape's fields, nested results by name: `rows (array of perftest row)`.
fn describe(s: &results::Shape) -> Vec<String> {
    s.fields
        .iter()
        .map(|f| match s.nested(f) {
            Some(results::Nest::One(n)) => format!("{f} ({})", n.name),
            Some(results::Nest::Many(n)) => format!("{f} (array of {})", n.name),
            None => f.clone(),
        })
        .collect()
}

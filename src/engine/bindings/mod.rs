//! The one place where primitives meet Rhai: script maps become typed option structs (unknown
//! keys refused with "did you mean"), typed results become script values, [`PrimError`]s become
//! test outcomes. Timeouts are not decided here: every option struct carries the call's own
//! `timeout` and the primitives apply the run's one policy (`RunEnv::command_timeout`).

mod cluster;
mod nodes;
mod options;
mod pair;
mod tools;

pub use options::Opts;

use super::signal::{self, RhaiErr, SignalKind};
use crate::primitives::{Kind, NodeRef, PResult, PrimError};
use crate::run::env::RunEnv;
use rhai::{Array, Dynamic, Engine, NativeCallContext, Position};
use serde::Serialize;
use std::sync::Arc;

/// A primitive's error as the test's outcome.
pub fn signal_of(e: PrimError, pos: Position) -> RhaiErr {
    let kind = match e.kind {
        Kind::Failure => SignalKind::Failure,
        Kind::Error | Kind::DryRun => SignalKind::Error,
    };
    signal::throw(kind, e.message, e.detail, pos)
}

/// A primitive's typed result as a script value; a dry run gives `()`.
pub fn value<T: Serialize>(r: PResult<T>, pos: Position) -> Result<Dynamic, RhaiErr> {
    match r {
        Ok(v) => rhai::serde::to_dynamic(v),
        Err(e) if e.kind == Kind::DryRun => Ok(Dynamic::UNIT),
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
                    format!("expected an array of nodes (from nodes()), found an element of type {t}"),
                    pos,
                )
            })
        })
        .collect()
}

pub fn register(engine: &mut Engine, env: Arc<RunEnv>) {
    nodes::register(engine, env);
    tools::register(engine);
    pair::register(engine);
    cluster::register(engine);
}

/// Position of the call (for messages).
pub fn pos(ctx: &NativeCallContext) -> Position {
    ctx.call_position()
}

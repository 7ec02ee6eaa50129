//! Typed results become script values, [`PrimError`]s test outcomes; arrays of nodes from
//! scripts become nodes.

use super::{dry, record};
use crate::engine::signal::{self, Outcome, RhaiErr};
use crate::primitives::{NodeRef, PResult, PrimError};
use crate::util::shape::Returned;
use rhai::{Array, Dynamic, Position};
use serde::Serialize;

/// A primitive's error as the test's outcome.
pub(super) fn signal_of(e: PrimError, pos: Position) -> RhaiErr {
    // A dry run's missing answer that reaches a test's end (not a stand-in) is an error.
    let kind = match e.kind {
        Outcome::DryRun => Outcome::Error,
        k => k,
    };
    signal::throw(kind, e.message, e.detail, pos)
}

/// A primitive's typed result as a script value (a [`record::Record`] of the shape its type
/// declares); a dry run gives its stand-in ([`dry::stand_in`], of the same shape).
pub(super) fn value<T: Serialize + Returned>(
    r: PResult<T>,
    pos: Position,
) -> Result<Dynamic, RhaiErr> {
    value_with(r, pos, |v| rhai::serde::to_dynamic(v))
}

/// [`value`] with the script value made by `f` (then typed).
pub(super) fn value_with<T: Returned>(
    r: PResult<T>,
    pos: Position,
    f: impl FnOnce(T) -> Result<Dynamic, RhaiErr>,
) -> Result<Dynamic, RhaiErr> {
    let returns = T::returns();
    match r {
        Ok(v) => f(v).map(|d| record::typed(d, returns)),
        Err(e) if e.kind == Outcome::DryRun => Ok(dry::stand_in(&e, returns)),
        Err(e) => Err(signal_of(e, pos)),
    }
}

/// An array of nodes from a script (`nodes()`), each recording to the test the call `ctx`
/// runs in, or an error naming what else was found.
pub(super) fn node_array(
    ctx: &rhai::NativeCallContext,
    arr: Array,
) -> Result<Vec<NodeRef>, RhaiErr> {
    use crate::engine::tag::InTest;
    let pos = ctx.call_position();
    arr.into_iter()
        .map(|d| {
            let t = d.type_name();
            d.try_cast::<NodeRef>()
                .map(|n| n.in_test(ctx))
                .ok_or_else(|| {
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

/// A script number (int or float) as f64; anything else `None`.
pub(super) fn number(v: &Dynamic) -> Option<f64> {
    if let Ok(i) = v.as_int() {
        return Some(i as f64);
    }
    v.as_float().ok()
}

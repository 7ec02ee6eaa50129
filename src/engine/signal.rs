//! How assertions, `skip` and infrastructure errors leave a running test: a [`Signal`] thrown
//! as a Rhai runtime error, found again by the runner whatever wraps it.

use rhai::{Dynamic, EvalAltResult, Position};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalKind {
    /// An assertion did not hold: the numbers are wrong.
    Failure,
    /// The check could not be made (unreachable node, timeout, missing tool, bad output).
    Error,
    /// `skip(reason)`, missing `--allow-changes`, missing input.
    Skip,
}

#[derive(Debug, Clone)]
pub struct Signal {
    pub kind: SignalKind,
    /// One line.
    pub message: String,
    /// Longer detail for the report body (stderr tails etc.).
    pub detail: Option<String>,
}

pub type RhaiErr = Box<EvalAltResult>;

pub fn throw(
    kind: SignalKind,
    message: impl Into<String>,
    detail: Option<String>,
    pos: Position,
) -> RhaiErr {
    Box::new(EvalAltResult::ErrorRuntime(
        Dynamic::from(Signal {
            kind,
            message: message.into(),
            detail,
        }),
        pos,
    ))
}

pub fn failure(message: impl Into<String>, pos: Position) -> RhaiErr {
    throw(SignalKind::Failure, message, None, pos)
}

pub fn error(message: impl Into<String>, pos: Position) -> RhaiErr {
    throw(SignalKind::Error, message, None, pos)
}

pub fn error_with(message: impl Into<String>, detail: String, pos: Position) -> RhaiErr {
    throw(SignalKind::Error, message, Some(detail), pos)
}

pub fn skip(reason: impl Into<String>, pos: Position) -> RhaiErr {
    throw(SignalKind::Skip, reason, None, pos)
}

/// What ended a test, found by unwrapping Rhai's error wrappers.
pub enum Ending {
    Signal(Signal),
    /// Stopped by `on_progress`: the test timeout or an interrupt (the token says which).
    Terminated(String),
    /// Any other script runtime error.
    Runtime(String),
}

pub fn classify(err: &EvalAltResult) -> Ending {
    match err {
        EvalAltResult::ErrorInFunctionCall(_, _, inner, _)
        | EvalAltResult::ErrorInModule(_, inner, _) => classify(inner),
        EvalAltResult::ErrorRuntime(d, _) if d.is::<Signal>() => {
            Ending::Signal(d.clone_cast::<Signal>())
        }
        EvalAltResult::ErrorTerminated(token, _) => Ending::Terminated(token.to_string()),
        other => Ending::Runtime(describe(other)),
    }
}

/// A runtime error in words a script author can act on, with its line.
fn describe(err: &EvalAltResult) -> String {
    let pos = err.position();
    let mut msg = match err {
        EvalAltResult::ErrorFunctionNotFound(sig, _) => {
            format!("no function matches `{sig}` (wrong name, or wrong number/types of arguments; `fabcheck doc` lists every function)")
        }
        EvalAltResult::ErrorRuntime(d, _) => format!("script error: {d}"),
        other => {
            let mut s = other.to_string();
            if let Some(i) = s.rfind(" (line ") {
                s.truncate(i);
            }
            s
        }
    };
    if let Some(l) = pos.line() {
        let file = crate::run::context::file();
        match pos.position() {
            Some(c) => msg.push_str(&format!(" at {file}:{l}:{c}")),
            None => msg.push_str(&format!(" at {file}:{l}")),
        }
    }
    msg
}

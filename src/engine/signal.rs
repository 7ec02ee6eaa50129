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
        EvalAltResult::ErrorFunctionNotFound(sig, _) => script_terms(sig),
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

/// Rhai's `parse_int (())` / `ethtool (fabcheck::primitives::NodeRef, i64)` in the words of a
/// script author: which function, called with what.
fn script_terms(sig: &str) -> String {
    let (name, args) = match sig.split_once(" (") {
        Some((n, a)) => (n.trim(), a.strip_suffix(')').unwrap_or(a)),
        None => (sig.trim(), ""),
    };
    let kinds: Vec<String> = args
        .split(", ")
        .filter(|a| !a.trim().is_empty())
        .map(|a| type_word(a.trim()).to_string())
        .collect();
    let (target, rest) = match kinds.split_first() {
        Some((first, rest)) => (first.clone(), rest.to_vec()),
        None => (String::new(), vec![]),
    };
    let mut msg = if kinds.is_empty() {
        format!("`{name}()` does not exist")
    } else {
        format!(
            "`{name}` cannot be called on {target}{}",
            if rest.is_empty() {
                String::new()
            } else {
                format!(" with {}", rest.join(", "))
            }
        )
    };
    if kinds.first().is_some_and(|k| k.starts_with("nothing")) {
        msg.push_str(
            " (the value before `.` is nothing: the previous call returned no value, e.g. an in-place method)",
        );
    }
    if kinds.iter().any(|k| k == "a map") {
        msg.push_str(" (a result of a primitive or parser reads like a map but only has its fields and `keys`, `values`, `len`, `contains`, `get`, `to_json`: `r.to_map()` gives a plain copy for the other map functions)");
    }
    msg.push_str("; check the name and the arguments (`fabcheck doc` lists every function and its arguments)");
    msg
}

fn type_word(t: &str) -> &str {
    match t {
        "()" => "nothing (())",
        "&str" | "&mut str" | "ImmutableString" | "String" | "string" => "a string",
        "i64" | "INT" | "int" => "an integer",
        "f64" | "FLOAT" | "float" => "a number",
        "bool" => "true/false",
        "char" => "a character",
        "array" | "Array" | "rhai::Array" => "an array",
        "map" | "Map" | "rhai::Map" => "a map",
        t if t.ends_with("NodeRef") || t == "Node" => "a node",
        t if t.contains("FnPtr") || t == "Fn" => "a function",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn function_not_found_in_script_terms() {
        let m = super::script_terms("parse_int (())");
        assert!(
            m.starts_with("`parse_int` cannot be called on nothing"),
            "{m}"
        );
        assert!(m.contains("previous call returned no value"), "{m}");
        let m = super::script_terms("ethtool (fabcheck::primitives::NodeRef, i64)");
        assert!(
            m.starts_with("`ethtool` cannot be called on a node with an integer"),
            "{m}"
        );
        assert!(!m.contains("fabcheck::primitives"), "{m}");
    }
}

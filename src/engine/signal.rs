//! How assertions, `skip` and infrastructure errors leave a running test: a [`Signal`] thrown
//! as a Rhai runtime error, found again by the runner whatever wraps it.

use rhai::{Dynamic, EvalAltResult, Position};

pub(crate) use crate::run::outcome::Outcome;

#[derive(Debug, Clone)]
pub(crate) struct Signal {
    pub kind: Outcome,
    /// One line.
    pub message: String,
    /// Longer detail for the report body (stderr tails etc.).
    pub detail: Option<String>,
}

pub(crate) type RhaiErr = Box<EvalAltResult>;

pub(crate) fn throw(
    kind: Outcome,
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

pub(crate) fn failure(message: impl Into<String>, pos: Position) -> RhaiErr {
    throw(Outcome::Failure, message, None, pos)
}

pub(crate) fn error(message: impl Into<String>, pos: Position) -> RhaiErr {
    throw(Outcome::Error, message, None, pos)
}

pub(crate) fn skip(reason: impl Into<String>, pos: Position) -> RhaiErr {
    throw(Outcome::Skip, reason, None, pos)
}

/// What ended a test, found by unwrapping Rhai's error wrappers.
pub(crate) enum Ending {
    Signal(Signal),
    /// Stopped by `on_progress`: the test timeout or an interrupt (the token says which).
    Terminated(String),
    /// Any other script runtime error.
    Runtime(String),
}

/// What ended an evaluation of the script `file` (named in the messages of errors at a line).
pub(crate) fn classify(err: &EvalAltResult, file: &str) -> Ending {
    classify_in(err, None, file)
}

/// [`classify`], knowing the script source (a stdlib module) the error came from.
fn classify_in(err: &EvalAltResult, source: Option<&str>, file: &str) -> Ending {
    match err {
        EvalAltResult::ErrorInFunctionCall(_, src, inner, _) => classify_in(
            inner,
            Some(src.as_str()).filter(|s| !s.is_empty()).or(source),
            file,
        ),
        EvalAltResult::ErrorInModule(_, inner, _) => classify_in(inner, source, file),
        EvalAltResult::ErrorRuntime(d, pos) if d.is::<Signal>() => {
            let mut s = d.clone_cast::<Signal>();
            // A signal raised where no call context knows the line (a dry run's stand-in
            // iterated by a `for`): the position Rhai gave it says where.
            if let (Some(rest), Some(line)) = (s.message.strip_prefix(LOOP_STOP), pos.line()) {
                let file = source.unwrap_or(file);
                s.message = format!("a loop at {file}:{line} over {rest}");
            }
            Ending::Signal(s)
        }
        EvalAltResult::ErrorTerminated(token, _) => Ending::Terminated(token.to_string()),
        // `if x` / `while x` on a dry run's stand-in, or a stand-in passed where a real value
        // is needed (`ssh_hop(n, addr)` with an address not known yet).
        EvalAltResult::ErrorMismatchDataType(_, found, _) if names_dry_value(found) => {
            dry_stop(describe(err, file))
        }
        EvalAltResult::ErrorFunctionNotFound(sig, _) if names_dry_value(sig) => {
            dry_stop(describe(err, file))
        }
        other => Ending::Runtime(describe(other, file)),
    }
}

/// Rhai names a type by its registered name or its Rust path, depending on the message.
fn names_dry_value(s: &str) -> bool {
    s.contains("DryValue") || s.contains(DRY_TYPE_NAME)
}

fn dry_stop(message: String) -> Ending {
    Ending::Signal(Signal {
        kind: Outcome::DryRun,
        message,
        detail: None,
    })
}

/// The kind of signal that ended a test, if a signal did.
pub(crate) fn kind_of(err: &EvalAltResult, file: &str) -> Option<Outcome> {
    match classify(err, file) {
        Ending::Signal(s) => Some(s.kind),
        _ => None,
    }
}

/// Did the dry run's listing of a test stop here (a [`Outcome::DryRun`])?
#[cfg(test)]
pub(crate) fn is_dry_stop(err: &EvalAltResult) -> bool {
    kind_of(err, "") == Some(Outcome::DryRun)
}

/// How a dry run's stop in a `for` loop starts (the loop's place is added by [`classify`]).
/// The type's name of a dry run's stand-in answer in scripts (`type_of`) and in Rhai's
/// messages.
pub(crate) const DRY_TYPE_NAME: &str = "dry-run answer";

/// Words in every message of a test stopped by a dry run's stand-in.
pub(crate) const DRY_STOPPED: &str = "which a dry run cannot know";

/// `file:line` of a call, for messages.
pub(crate) fn at(ctx: &rhai::NativeCallContext) -> String {
    let file = ctx
        .call_source()
        .map(str::to_string)
        .unwrap_or_else(|| super::tag::script_file(ctx));
    match ctx.call_position().line() {
        Some(l) => format!("{file}:{l}"),
        None => file,
    }
}

pub(crate) const LOOP_STOP: &str = "a loop over ";

/// A runtime error in words a script author can act on, with its line.
fn describe(err: &EvalAltResult, file: &str) -> String {
    let pos = err.position();
    let mut msg = match err {
        EvalAltResult::ErrorFunctionNotFound(sig, _) => script_terms(sig),
        EvalAltResult::ErrorRuntime(d, _) => format!("script error: {d}"),
        // `if x` / `while x` on a dry run's stand-in answer.
        EvalAltResult::ErrorMismatchDataType(want, found, _) if names_dry_value(found) => {
            format!(
                "a decision (expecting {want}) needs the answer of a command listed above, {}",
                DRY_STOPPED
            )
        }
        other => {
            let mut s = other.to_string();
            if let Some(i) = s.rfind(" (line ") {
                s.truncate(i);
            }
            s
        }
    };
    if let Some(l) = pos.line() {
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
        t if t.ends_with("DryValue") || t == DRY_TYPE_NAME => {
            "a dry-run answer (not known before the run)"
        }
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

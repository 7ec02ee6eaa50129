//! Compile-time problems with a code frame of the offending line (hurl-style), and the
//! unknown-function check of `fabcheck check`.

use rhai::{ASTNode, Engine, Expr, Stmt, AST};
use std::collections::BTreeSet;
use std::fmt;

#[derive(Debug, Clone)]
pub(crate) struct Diagnostic {
    pub file: String,
    pub line: Option<usize>,
    pub col: Option<usize>,
    pub message: String,
    pub hint: Option<String>,
    /// The offending source line, for the code frame.
    pub source_line: Option<String>,
}

impl Diagnostic {
    pub(crate) fn plain(file: &str, message: String, hint: &str) -> Diagnostic {
        Diagnostic {
            file: file.into(),
            line: None,
            col: None,
            message,
            hint: Some(hint.into()),
            source_line: None,
        }
    }

    pub(crate) fn at(
        file: &str,
        source: &str,
        line: Option<usize>,
        col: Option<usize>,
        message: String,
        hint: Option<String>,
    ) -> Diagnostic {
        let source_line = line
            .and_then(|l| source.lines().nth(l.saturating_sub(1)))
            .map(str::to_string);
        Diagnostic {
            file: file.into(),
            line,
            col,
            message,
            hint,
            source_line,
        }
    }

    pub(crate) fn from_parse_error(file: &str, source: &str, e: &rhai::ParseError) -> Diagnostic {
        let mut msg = e.0.to_string();
        if let Some(i) = msg.rfind(" (line ") {
            msg.truncate(i);
        }
        Diagnostic::at(
            file,
            source,
            e.1.line(),
            e.1.position(),
            format!("syntax error: {msg}"),
            Some(
                "fix the script; `fabcheck check SCRIPT` re-checks it without running anything"
                    .into(),
            ),
        )
    }

    /// `file:line:col`
    pub(crate) fn location(&self) -> String {
        match (self.line, self.col) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", self.file),
            (Some(l), None) => format!("{}:{l}", self.file),
            _ => self.file.clone(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error: {}", self.message)?;
        writeln!(f, "  --> {}", self.location())?;
        if let (Some(l), Some(src)) = (self.line, &self.source_line) {
            let w = l.to_string().len();
            writeln!(f, "{:w$} |", "")?;
            writeln!(f, "{l} | {src}")?;
            if let Some(c) = self.col {
                writeln!(f, "{:w$} | {}^", "", " ".repeat(c.saturating_sub(1)))?;
            }
        }
        if let Some(h) = &self.hint {
            writeln!(f, "  = hint: {h}")?;
        }
        Ok(())
    }
}

const KEYWORD_FUNCTIONS: &[&str] = &[
    "print",
    "debug",
    "type_of",
    "eval",
    "Fn",
    "call",
    "curry",
    "is_def_var",
    "is_def_fn",
    "is_shared",
    "throw",
];

/// Names of every function the engine knows (registered, standard library and operators).
pub(crate) fn known_functions(engine: &Engine) -> BTreeSet<String> {
    engine
        .gen_fn_signatures(true)
        .into_iter()
        .filter_map(|s| {
            let name = s.split('(').next()?.trim().to_string();
            // signatures may be prefixed by a namespace (`parse::ethtool`) or `get$`
            Some(name.rsplit("::").next().unwrap_or(&name).to_string())
        })
        .collect()
}

/// Every call in the script as (name, namespace, position, is a method call); the names of
/// its variables go into `known` (a variable holding a closure is called like a function).
fn calls_in(
    ast: &AST,
    known: &mut BTreeSet<String>,
) -> Vec<(String, String, rhai::Position, bool)> {
    let mut calls: Vec<(String, String, rhai::Position, bool)> = Vec::new();
    ast.walk(&mut |path: &[ASTNode]| {
        match path.last() {
            Some(ASTNode::Expr(Expr::FnCall(call, pos)))
            | Some(ASTNode::Stmt(Stmt::FnCall(call, pos)))
                if call.op_token.is_none() =>
            {
                calls.push((
                    call.name.to_string(),
                    call.namespace.to_string(),
                    *pos,
                    false,
                ));
            }
            Some(ASTNode::Expr(Expr::MethodCall(call, pos))) if call.op_token.is_none() => {
                calls.push((call.name.to_string(), String::new(), *pos, true));
            }
            Some(ASTNode::Stmt(Stmt::Var(x, _, _))) => {
                known.insert(x.0.name.to_string());
            }
            _ => {}
        }
        true
    });
    calls
}

/// Calls to functions that exist nowhere: not registered, not defined in the script, not a
/// variable holding a function pointer. Each with a "did you mean".
pub(crate) fn unknown_functions(
    engine: &Engine,
    ast: &AST,
    file: &str,
    source: &str,
) -> Vec<Diagnostic> {
    let mut known = known_functions(engine);
    known.extend(KEYWORD_FUNCTIONS.iter().map(|s| s.to_string()));
    for f in ast.iter_functions() {
        known.insert(f.name.to_string());
        known.extend(f.params.iter().map(|p| p.to_string()));
    }
    // Qualified names of functions in imported modules (`link::speed`).
    let sigs = engine.gen_fn_signatures(true);
    let mut qualified: BTreeSet<String> = BTreeSet::new();
    let mut namespaces: BTreeSet<String> = BTreeSet::new();
    for sig in &sigs {
        let head = sig.split('(').next().unwrap_or("").trim();
        if let Some((ns, f)) = head.rsplit_once("::") {
            namespaces.insert(ns.to_string());
            qualified.insert(format!("{ns}::{f}"));
        }
    }
    let calls = calls_in(ast, &mut known);
    let registered: Vec<String> = known_functions(engine).into_iter().collect();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (name, ns, pos, method) in calls {
        let is_ident = name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !is_ident || name.contains('$') || !seen.insert((ns.clone(), name.clone(), pos.line())) {
            continue;
        }
        if !ns.is_empty() {
            // Only modules fabcheck knows at compile time (top-level imports) can be checked.
            if !namespaces.contains(&ns) || qualified.contains(&format!("{ns}::{name}")) {
                continue;
            }
            let prefix = format!("{ns}::");
            let in_module: Vec<&str> = qualified
                .iter()
                .filter_map(|q| q.strip_prefix(&prefix))
                .collect();
            let hint = match crate::util::suggest::closest(&name, in_module.iter().copied(), 3) {
                Some(k) => format!(
                    "did you mean `{ns}::{k}`? (module `{ns}` has: {})",
                    in_module.join(", ")
                ),
                None => format!("module `{ns}` has: {}", in_module.join(", ")),
            };
            out.push(Diagnostic::at(
                file,
                source,
                pos.line(),
                pos.position(),
                format!("unknown function `{ns}::{name}`"),
                Some(hint),
            ));
            continue;
        }
        if known.contains(&name) {
            continue;
        }
        let best = crate::util::suggest::closest(&name, registered.iter().map(String::as_str), 3);
        let what = if method { "method" } else { "function" };
        let hint = match best {
            Some(k) if method => {
                format!("did you mean `.{k}(…)`? (`fabcheck doc` lists every function and method)")
            }
            Some(k) => format!("did you mean `{k}`? (`fabcheck doc` lists every function)"),
            None => "`fabcheck doc` lists every function scripts can call".into(),
        };
        out.push(Diagnostic::at(
            file,
            source,
            pos.line(),
            pos.position(),
            if method {
                format!("unknown {what} `.{name}(…)`")
            } else {
                format!("unknown {what} `{name}`")
            },
            Some(hint),
        ));
    }
    out
}

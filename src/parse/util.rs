//! Small helpers shared by the per-tool parsers (line iteration, key/value splitting, numbers).

use super::ParseError;

/// Compile a regex literal once (per call site) and return a `&'static Regex`.
macro_rules! regex {
    ($re:literal $(,)?) => {{
        static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        RE.get_or_init(|| $crate::parse::util::compile($re))
    }};
}
pub(crate) use regex;

/// Compile a regex literal (only called once per `regex!` call site, via its `OnceLock`).
pub(crate) fn compile(re: &str) -> regex::Regex {
    regex::Regex::new(re).expect("regex literal is valid")
}

/// Lines with 1-based numbers; `\r` from CRLF captures is dropped.
pub(crate) fn numbered(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}

/// The first non-blank line (number, text), or (0, "") for empty / whitespace-only input.
pub(crate) fn first_nonblank(text: &str) -> (usize, &str) {
    numbered(text)
        .find(|(_, l)| !l.trim().is_empty())
        .unwrap_or((0, ""))
}

/// An error pointing at the first non-blank line (or line 0 for empty input).
pub(crate) fn unrecognised(kind: &'static str, text: &str, reason: &str) -> ParseError {
    let (n, l) = first_nonblank(text);
    if n == 0 {
        ParseError::new(kind, 0, "", format!("empty input; {reason}"))
    } else {
        ParseError::new(kind, n, l, reason)
    }
}

/// Split `key: value` at the first colon, trimming both sides.
pub(crate) fn key_value(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(':')?;
    Some((k.trim(), v.trim()))
}

/// Empty strings become `None`.
pub(crate) fn non_empty(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Parse a finite float (rejects `inf`/`nan` spellings so JSON stays valid).
pub(crate) fn float(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `yes`/`on`/`true` → true, `no`/`off`/`false` → false, anything else → None.
pub(crate) fn yes_no(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "yes" | "on" | "true" => Some(true),
        "no" | "off" | "false" => Some(false),
        _ => None,
    }
}

/// `text` as JSON, or a ParseError of `kind` at the line serde stopped on: `invalid WHAT: ...`
/// (`what`: "JSON", "iperf3 JSON", ...). Every JSON parser reads its input through this.
pub(crate) fn json_at(
    kind: &'static str,
    text: &str,
    what: &str,
) -> Result<serde_json::Value, ParseError> {
    serde_json::from_str(text).map_err(|e| {
        let line = e.line().max(1);
        ParseError::new(
            kind,
            line,
            text.lines().nth(line - 1).unwrap_or(""),
            format!("invalid {what}: {e}"),
        )
    })
}

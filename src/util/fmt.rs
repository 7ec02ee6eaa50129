//! Numbers as people read them in messages and reports.

/// A metric value for humans: integers without decimals, others with at most 3 decimals.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    // At least 3 decimals; small values keep 4 significant digits (0.0004 stays 0.0004).
    let decimals = if v.abs() < 1.0 {
        (3 - v.abs().log10().floor() as i32).clamp(3, 12) as usize
    } else {
        3
    };
    let s = format!("{v:.decimals$}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Remove ANSI escape sequences and control characters that are not allowed in XML 1.0
/// (keeps tab and newline).
pub fn clean_text(s: &str) -> String {
    static ANSI: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = ANSI.get_or_init(|| {
        regex::Regex::new(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
            .expect("valid regex")
    });
    re.replace_all(s, "")
        .chars()
        .filter(|&c| {
            c == '\t'
                || c == '\n'
                || (c >= ' ' && c != '\u{7f}' && c != '\u{fffe}' && c != '\u{ffff}')
        })
        .map(|c| if c == '\r' { '\n' } else { c })
        .collect()
}

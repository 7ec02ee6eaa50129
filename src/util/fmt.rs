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

/// Text for a terminal: ANSI sequences and control characters (except tab) removed.
pub fn console_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ ... final byte in @..~
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            continue;
        }
        if c.is_control() && c != '\t' {
            continue;
        }
        out.push(c);
    }
    out
}

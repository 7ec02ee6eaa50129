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

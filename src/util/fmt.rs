//! Numbers as people read them in messages and reports.

/// A metric value for humans: integers without decimals, others with at most 3 decimals.
pub(crate) fn fmt_num(v: f64) -> String {
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

/// Decimals a unit's numbers are shown with in reports: the precision of the tools that produce
/// them (perftest prints Gb/sec and usec with 2 decimals, nccl-tests GB/s with 2, iperf3 and
/// computed Gbit/s likewise; ping prints ms with 3); `None`: no rule, [`fmt_num`] applies.
pub(crate) fn unit_decimals(unit: &str) -> Option<usize> {
    match unit.trim() {
        "Gbit/s" | "Gb/s" | "Gbps" | "Gb/sec" | "GB/s" | "GB/sec" | "MB/s" | "MB/sec" | "MiB/s"
        | "GiB/s" | "Mbit/s" | "us" | "usec" | "µs" => Some(2),
        "ms" => Some(3),
        "%" => Some(1),
        _ => None,
    }
}

/// A value rounded to its unit's precision ([`unit_decimals`]), trailing zeros dropped
/// (`94.97123456 Gbit/s` → `94.97`, `20.0` → `20`); other units as [`fmt_num`].
pub(crate) fn fmt_in(v: f64, unit: &str) -> String {
    match unit_decimals(unit) {
        Some(d) if v.is_finite() => {
            let s = format!("{v:.d$}");
            let s = if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.')
            } else {
                &s
            };
            // -0.001 rounded is "-0".
            if s == "-0" {
                "0".to_string()
            } else {
                s.to_string()
            }
        }
        _ => fmt_num(v),
    }
}

/// A byte count in binary units, one decimal at most (`1048576` → `1MiB`, `1536` → `1.5KiB`).
pub(crate) fn human_bytes(b: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    format!("{}{}", fmt_num((v * 10.0).round() / 10.0), units[i])
}

/// Characters that reorder or hide text on a terminal or in a browser: the bidirectional
/// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069; a U+202E makes `FAIL`
/// read as a pass), the direction marks and the zero-width joiners.
pub(crate) fn is_deceptive(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        | '\u{061c}' | '\u{feff}')
}

/// The one sanitiser of text fabcheck shows (console lines, reports): ANSI escape sequences
/// removed, C0 and C1 control characters removed (those XML 1.0 forbids among them; tab and
/// newline kept), and the bidirectional and invisible
/// characters of [`is_deceptive`] removed.
pub(crate) fn clean_text(s: &str) -> String {
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
                || (c >= ' '
                    && !('\u{7f}'..='\u{9f}').contains(&c)
                    && c != '\u{fffe}'
                    && c != '\u{ffff}'
                    && !is_deceptive(c))
        })
        .map(|c| if c == '\r' { '\n' } else { c })
        .collect()
}

/// A TOML parser's message on one line, never empty: the parser gives no words for some
/// errors (`a = ` at the end of a line), which used to print `file:1:5: ` and nothing else.
pub(crate) fn toml_message(e: &toml::de::Error) -> String {
    let m = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ");
    if m.is_empty() {
        "not valid TOML here (a value missing after `=`, or a line cut short)".into()
    } else {
        m
    }
}

#[cfg(test)]
mod tests {
    use super::{fmt_in, fmt_num};

    #[test]
    fn values_round_to_their_tools_precision() {
        assert_eq!(fmt_in(94.97123456, "Gbit/s"), "94.97");
        assert_eq!(fmt_in(9.7637, "GB/s"), "9.76");
        assert_eq!(fmt_in(20.0, "GB/s"), "20");
        assert_eq!(fmt_in(0.1714, "ms"), "0.171");
        assert_eq!(fmt_in(0.0004, "GB/s"), "0");
        assert_eq!(fmt_in(-0.0001, "ms"), "0");
        assert_eq!(fmt_in(85.04, "%"), "85");
        // No rule for the unit: fmt_num.
        assert_eq!(fmt_in(4194304.0, "bytes"), "4194304");
        assert_eq!(fmt_in(0.027000000003, "x"), fmt_num(0.027000000003));
        assert_eq!(fmt_in(f64::NAN, "GB/s"), "NaN");
    }

    #[test]
    fn a_toml_error_always_has_words() {
        for text in ["a = ", "a = \"x", "[[node]"] {
            let e = toml::from_str::<toml::Value>(text).unwrap_err();
            let m = super::toml_message(&e);
            assert!(!m.trim().is_empty() && !m.contains('\n'), "{text:?}: {m:?}");
        }
    }

    #[test]
    fn the_sanitiser_drops_c1_controls_and_bidi_overrides() {
        let s = super::clean_text("ok\u{202e}LIAF\u{9b}31m\u{85}x\u{2066}y\u{200b}\r\n");
        assert_eq!(s, "okLIAF31mxy\n");
        assert_eq!(super::clean_text("GB/s µs – ü"), "GB/s µs – ü");
    }
}

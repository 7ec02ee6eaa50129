//! Reports: console (live), JUnit XML, JSON results, HTML; `--baseline` comparison and
//! `fabcheck compare`. Every file report is written atomically (a new file with the umask's
//! mode + rename) and also after failures and interrupts.
//!
//! Numbers: the console, JUnit, HTML and compare's markdown show a metric rounded to its
//! unit's tool precision ([`fmt_metric`]); the JSON keeps the full value (the input of
//! `--baseline` and `compare`).

pub mod compare;
pub mod console;
pub mod html;
pub mod json;
pub mod junit;
pub mod matrix;
pub mod progress;
pub mod target;

use std::path::{Path, PathBuf};

/// Write `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader never sees a half-written report ([`target`]: regular files and new names only,
/// never through another user's link). Returns the folders that were made to hold it.
///
/// The report is always a new file (never an existing inode, never its mode) with the mode a
/// new file gets from the umask (0666 & ~umask: 0644 under umask 022, so a CI agent running as
/// another user can read it; 0600 under umask 077). A file at `path` that belongs to another
/// user is not replaced: in a shared directory they could otherwise swap in a forged report.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<Vec<PathBuf>> {
    target::write(path, bytes)
}

pub use crate::util::fmt::clean_text;

pub use crate::util::fmt::fmt_num;

pub use crate::util::fmt::fmt_in;

/// A metric's value as reports show it: rounded to its unit's precision
/// ([`crate::util::fmt::unit_decimals`]), except where rounding would put it on the other side
/// of its threshold or reference (179.996 shown as 180 against a threshold of 180): then with
/// the digits that tell them apart.
pub fn fmt_metric(m: &crate::run::model::Metric) -> String {
    let shown = fmt_in(m.value, &m.unit);
    let Some(line) = m.threshold.or(m.reference) else {
        return shown;
    };
    let rounded = crate::run::model::Metric {
        value: shown.parse().unwrap_or(m.value),
        ..m.clone()
    };
    if rounded.meets(line) == m.meets(line) && shown != fmt_in(line, &m.unit) {
        return shown;
    }
    let more = fmt_num(m.value);
    if more.parse::<f64>().ok() == Some(line) && m.value != line {
        format!("{}", m.value)
    } else {
        more
    }
}

/// One line for a JUnit `message` attribute.
pub fn one_line(s: &str) -> String {
    let c = clean_text(s);
    let mut line = c
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ");
    if line.len() > 1000 {
        let mut cut = 1000;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push('…');
    }
    line
}

#[cfg(test)]
mod tests {
    #[test]
    fn cleaning_strips_ansi_and_controls() {
        assert_eq!(super::clean_text("\x1b[31mred\x1b[0m\x00x\x07"), "redx");
        assert_eq!(super::one_line("a\nb\n\n c "), "a | b | c");
        assert_eq!(super::fmt_num(77.0), "77");
        assert_eq!(super::fmt_num(0.027000000003), "0.027");
        assert_eq!(super::fmt_num(0.00041234), "0.0004123");
        assert_eq!(super::fmt_num(95.25), "95.25");
    }
}

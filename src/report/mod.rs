//! Reports: console (live), JUnit XML, JSON results, HTML; `--baseline` comparison and
//! `fabcheck compare`. Every file report is written atomically (a new file with the umask's
//! mode + rename) and also after failures and interrupts.
//!
//! Numbers: the console, JUnit, HTML and compare's markdown show a metric rounded to its
//! unit's tool precision ([`fmt_metric`]); the JSON keeps the full value (the input of
//! `--baseline` and `compare`).

pub(crate) mod compare;
pub(crate) mod console;
pub(crate) mod heatmap;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod junit;
pub(crate) mod matrix;
pub(crate) mod progress;
pub(crate) mod prom;

use std::path::{Path, PathBuf};

/// Write `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader never sees a half-written report ([`crate::util::target`], the one writer of every file
/// fabcheck writes: regular files and new names only,
/// never through another user's link). Returns the folders that were made to hold it.
///
/// The report is always a new file (never an existing inode, never its mode) with the mode a
/// new file gets from the umask (0666 & ~umask: 0644 under umask 022, so a CI agent running as
/// another user can read it; 0600 under umask 077). A file at `path` that belongs to another
/// user is not replaced: in a shared directory they could otherwise swap in a forged report.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<Vec<PathBuf>> {
    crate::util::target::write(path, bytes)
}

pub(crate) use crate::util::fmt::clean_text;

pub(crate) use crate::util::fmt::fmt_num;

pub(crate) use crate::util::fmt::fmt_in;

/// A metric's value as reports show it: rounded to its unit's precision
/// ([`crate::util::fmt::unit_decimals`]), except where rounding would put it on the other side
/// of its threshold or reference (179.996 shown as 180 against a threshold of 180): then with
/// the digits that tell them apart.
pub(crate) fn fmt_metric(m: &crate::run::model::Metric) -> String {
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
pub(crate) fn one_line(s: &str) -> String {
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

/// The run's diagnosis as plain text lines (console, JUnit): per cause, its one line, the
/// part, the results it explains and what to run next.
pub(crate) fn diagnosis_text(run: &crate::run::model::RunResult) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for (i, d) in run.diagnosis.iter().enumerate() {
        let _ = writeln!(out, "  {}. {}", i + 1, one_line(&d.cause));
        let _ = writeln!(out, "     part: {}", one_line(&d.part));
        let _ = writeln!(
            out,
            "     explains ({}): {}",
            d.evidence.len(),
            one_line(&d.evidence.join("; "))
        );
        for n in &d.next {
            let _ = writeln!(out, "     next: {}", one_line(n));
        }
    }
    out
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

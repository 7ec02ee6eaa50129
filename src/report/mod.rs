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

use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader never sees a half-written report.
///
/// The report is always a new file (never an existing inode, never its mode) with the mode a
/// new file gets from the umask (0666 & ~umask: 0644 under umask 022, so a CI agent running as
/// another user can read it; 0600 under umask 077). A file at `path` that belongs to another
/// user is not replaced: in a shared directory they could otherwise swap in a forged report.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    refuse_foreign(path)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    // The temporary file is created new (O_EXCL: a planted file or link of that name is never
    // followed or reused), under an unpredictable name; open(2) applies the umask to 0666.
    let mut attempt = 0;
    let (tmp, mut f) = loop {
        let tmp = dir.join(format!(
            ".{name}.{}.{:016x}.tmp",
            std::process::id(),
            crate::util::random::random_u64()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    let written = f.write_all(bytes).and_then(|_| f.sync_all());
    drop(f);
    // rename() replaces a link at `path` itself; it never writes through it.
    if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

/// An error when `path` exists (file, link, anything) and belongs to another user than this
/// process's effective user.
fn refuse_foreign(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() == me {
        return Ok(());
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!(
            "the existing file belongs to another user (uid {}; this run is uid {me}), and \
             fabcheck does not replace another user's file: remove it, or write the report \
             to another path",
            meta.uid()
        ),
    ))
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

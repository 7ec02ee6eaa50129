//! Reports: console (live), JUnit XML, JSON results, HTML; `--baseline` comparison and
//! `fabcheck compare`. Every file report is written atomically (temp file + rename) and also
//! after failures and interrupts.

pub mod baseline;
pub mod compare;
pub mod console;
pub mod html;
pub mod json;
pub mod junit;
pub mod model;

use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader never sees a half-written report.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
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

/// Tool versions seen in the run's command log (`X --version`, `ofed_info -s`, `ethtool -i`
/// firmware), one entry per (node, tool).
pub fn collect_tool_versions(run: &mut model::RunResult) {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for c in run
        .suites
        .iter()
        .flat_map(|s| &s.tests)
        .flat_map(|t| &t.commands)
    {
        if c.exit_code != Some(0) {
            continue;
        }
        let cmd = c.command.trim();
        let tool = if cmd.ends_with("--version") || cmd.ends_with(" -V") || cmd == "ofed_info -s" {
            cmd.split_whitespace()
                .next()
                .unwrap_or("")
                .rsplit('/')
                .next()
                .unwrap_or("")
                .to_string()
        } else {
            continue;
        };
        let version = c
            .stdout
            .lines()
            .chain(c.stderr.lines())
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .to_string();
        if !tool.is_empty() && !version.is_empty() && seen.insert((c.node.clone(), tool.clone())) {
            out.push(model::ToolVersion {
                node: c.node.clone(),
                tool,
                version,
            });
        }
    }
    run.tool_versions = out;
}

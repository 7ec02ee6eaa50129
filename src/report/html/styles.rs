//! Look of the HTML report: the stylesheet, escaping, status badges, durations.

use super::super::clean_text;
use crate::run::model::Status;

/// HTML-escape text (after removing ANSI sequences and control characters).
pub(super) fn esc(s: &str) -> String {
    let c = clean_text(s);
    let mut o = String::with_capacity(c.len() + 16);
    for ch in c.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(ch),
        }
    }
    o
}

pub(super) const CSS: &str = r#"
:root{--pass:#1a7f37;--fail:#cf222e;--err:#8250df;--skip:#9a6700;--line:#d0d7de;--muted:#57606a;--bg:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 -apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1200px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:20px;margin:0}
h2{font-size:18px;margin:28px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:18px 0 6px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:8px 10px;overflow:auto;max-height:480px;white-space:pre-wrap;word-break:break-all;margin:6px 0}
.sim{background:repeating-linear-gradient(45deg,#ffd33d,#ffd33d 18px,#ffdf5d 18px,#ffdf5d 36px);color:#3b2300;text-align:center;font-weight:700;font-size:20px;padding:12px;border-bottom:3px solid #9a6700;letter-spacing:.5px}
.sim small{display:block;font-weight:400;font-size:13px}
header{display:flex;gap:24px;align-items:center;flex-wrap:wrap;padding:18px 0 10px;border-bottom:1px solid var(--line)}
.verdict{font-size:34px;font-weight:800;color:#fff;padding:10px 26px;border-radius:8px;letter-spacing:1px}
.verdict.PASSED{background:var(--pass)}.verdict.FAILED{background:var(--fail)}.verdict.INTERRUPTED{background:var(--skip)}.verdict.NOTHING{background:var(--muted)}
.facts{display:grid;grid-template-columns:auto auto;gap:2px 14px;color:var(--muted)}
.facts b{color:#1f2328;font-weight:600}
.counts{display:flex;gap:8px;flex-wrap:wrap}
.chip{border-radius:16px;padding:3px 12px;font-weight:600;border:1px solid var(--line);background:var(--bg)}
.chip.pass{color:var(--pass)}.chip.failure{color:var(--fail)}.chip.error{color:var(--err)}.chip.skipped{color:var(--skip)}
.badge{display:inline-block;min-width:48px;text-align:center;border-radius:4px;color:#fff;font-weight:700;font-size:11.5px;padding:1px 6px}
.badge.pass{background:var(--pass)}.badge.failure{background:var(--fail)}.badge.error{background:var(--err)}.badge.skipped{background:var(--skip)}.badge.flaky{background:var(--skip)}
.problem{border:1px solid var(--line);border-left:6px solid var(--fail);border-radius:6px;padding:8px 12px;margin:10px 0;background:#fff}
.problem.error{border-left-color:var(--err)}
.problem .msg{font-weight:600;margin:4px 0;white-space:pre-wrap;word-break:break-word}
.where{color:var(--muted);font-size:12.5px}
details{margin:4px 0}
summary{cursor:pointer;color:#0969da}
table{border-collapse:collapse;width:100%;margin:6px 0 12px}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--bg);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.failure td:first-child{border-left:4px solid var(--fail)}tr.error td:first-child{border-left:4px solid var(--err)}
tr.pass td:first-child{border-left:4px solid var(--pass)}tr.skipped td:first-child{border-left:4px solid var(--skip)}
.bad{color:var(--fail);font-weight:600}.good{color:var(--pass)}
.plot{border:1px solid var(--line);border-radius:6px;padding:8px;margin:8px 0 16px;background:#fff}
.muted{color:var(--muted)}
.cell{border-radius:3px;padding:1px 6px}.legend .cell{display:inline-block}
.v-pass{background:#dafbe1;color:#1a7f37}.v-fail{background:#ffebe9;color:#cf222e;font-weight:700}
.v-error{background:#d0d7de;color:#1f2328;font-style:italic}.v-none{background:#f6f8fa;color:#1f2328}.v-odd{background:#fff8c5;color:#7d4e00;font-weight:700}
.hm-grid{display:flex;flex-wrap:wrap;gap:4px 24px;align-items:flex-start}
.hm{width:min-content}.hm h3{margin:10px 0 4px;white-space:nowrap}.hm h3 .muted{display:block;white-space:normal;font-weight:400;font-size:12px}
table.heat{width:auto;border-collapse:separate;border-spacing:2px;margin:2px 0 8px;font-size:12.5px}
table.heat th{padding:1px 4px;border:0;white-space:nowrap;font-weight:600;background:none}
table.heat tr:first-child th{font-size:11.5px;color:var(--muted);text-align:center}
.hc{text-align:right;font-variant-numeric:tabular-nums;padding:2px 4px;border:0;border-radius:3px;white-space:nowrap;min-width:40px}
.hc.sum{font-weight:700;box-shadow:inset 0 0 0 1px #8c959f}
.h-ok{background:#eef2f5}.h-better{background:#ddf4ff}.h-w1{background:#fff1b3}.h-w2{background:#ffc680}
.h-w3{background:#fb8f44;color:#3b1500}.h-fail{background:#cf222e;color:#fff;font-weight:700}.h-none{color:var(--muted);text-align:center}
.h-mark{box-shadow:inset 0 0 0 2px #8250df}.legend .hc{display:inline-block;min-width:0}
tr.marked th{color:#8250df}
.hm-tag{font-size:10.5px;border-radius:8px;padding:0 5px;margin-left:3px;color:#fff}.hm-tag.red{background:var(--fail)}.hm-tag.warn{background:#9a6700}
tr.hm-sum th,tr.hm-more td{color:var(--muted);font-weight:400;font-size:12px}
details.pairs{margin:2px 0 12px}
.mgrid{display:flex;flex-wrap:wrap;gap:6px 18px;align-items:flex-start}.mbox{width:min-content}.mbox .where{min-width:180px}
table.matrix.compact{width:auto;font-size:11.5px;margin:2px 0}
table.matrix.compact th,table.matrix.compact td{padding:1px 4px;border-bottom:0;white-space:nowrap}
table.matrix.compact .cell{padding:1px 4px}
footer{margin-top:32px;color:var(--muted);font-size:12px}
"#;

pub(super) fn status_class(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Failure => "failure",
        Status::Error => "error",
        Status::Skipped => "skipped",
    }
}

/// A testcase's badge: its status, or FLAKY for a pass after failed attempts.
pub(super) fn test_badge(t: &crate::run::model::TestResult) -> String {
    if t.flaky {
        return "<span class=\"badge flaky\">FLAKY</span>".into();
    }
    badge(t.status)
}

pub(super) fn badge(s: Status) -> String {
    format!(
        "<span class=\"badge {}\">{}</span>",
        status_class(s),
        s.label()
    )
}

pub(super) fn ms(d: u64) -> String {
    if d >= 60_000 {
        format!("{}m{:02}s", d / 60_000, (d % 60_000) / 1000)
    } else {
        format!("{:.1}s", d as f64 / 1000.0)
    }
}

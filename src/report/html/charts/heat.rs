//! The rack on one screen: each per-rail measurement as a node × rail heat map
//! ([`crate::report::heatmap`]) with the value in every cell, its own unit (latency is never
//! on a bandwidth axis), the parts the diagnosis names marked, a per-node and a per-rail
//! median; under it the node × node matrix of each rail, compact.

use super::super::super::fmt_in;
use super::super::styles::esc;
use crate::report::heatmap::{HeatCell, HeatMap, Mark, FULL_ROWS};
use crate::report::matrix::Matrix;
use std::fmt::Write;

/// The colour class of a value: past the line, else by how much worse (or better) than the
/// map's median it is.
fn class(m: &HeatMap, v: f64) -> &'static str {
    let w = m.worse_by(v);
    if m.past_line(v) {
        "h-fail"
    } else if w >= 0.15 {
        "h-w3"
    } else if w >= 0.05 {
        "h-w2"
    } else if w >= 0.02 {
        "h-w1"
    } else if w <= -0.02 {
        "h-better"
    } else {
        "h-ok"
    }
}

/// `5.6 % below` / `12 % above` the median, in the measurement's direction.
fn off(m: &HeatMap, v: f64) -> String {
    let d = if m.median != 0.0 {
        (v - m.median) / m.median.abs() * 100.0
    } else {
        0.0
    };
    let way = if d < 0.0 { "below" } else { "above" };
    if d.abs() < 0.05 {
        "at the median".to_string()
    } else {
        format!("{:.1} % {way} the median", d.abs())
    }
}

const LEGEND: &str =
    "<p class=\"legend\">Each cell is the node's median over its results on that rail \
    (for a pair test, every pair it is in, as either end), compared with the median of all cells: \
    <span class=\"hc h-ok\">within 2 %</span> \
    <span class=\"hc h-w1\">2–5 % worse</span> \
    <span class=\"hc h-w2\">5–15 % worse</span> \
    <span class=\"hc h-w3\">15 % or more worse</span> \
    <span class=\"hc h-better\">2 % or more better</span> \
    <span class=\"hc h-fail\">past its line ✗</span> · \
    <span class=\"hc h-ok h-mark\">◆</span> a part the diagnosis names \
    (a node's whole row, or one rail) · the last column and row are medians. \
    Hover a cell for its results.</p>";

/// The rack section: one heat map per measurement, its pair matrices under it.
pub(in super::super) fn rack(h: &mut String, maps: &[HeatMap], matrices: &[Matrix]) {
    if maps.is_empty() {
        return;
    }
    h.push_str("<section id=\"rack\"><h2>Rack: node × rail</h2>");
    h.push_str(LEGEND);
    h.push_str("<div class=\"hm-grid\">");
    for m in maps {
        heat_map(h, m);
    }
    h.push_str("</div>");
    for m in maps {
        let per_rail: Vec<&Matrix> = matrices
            .iter()
            .filter(|x| x.rail.is_some() && x.base == m.base && x.unit == m.unit)
            .collect();
        if !per_rail.is_empty() {
            super::pair_matrices_per_rail(h, m, &per_rail);
        }
    }
    h.push_str("</section>\n");
}

fn heat_map(h: &mut String, m: &HeatMap) {
    let way = if m.higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    };
    let mut facts = vec![
        esc(&m.unit),
        way.to_string(),
        format!(
            "median {} {}",
            esc(&fmt_in(m.median, &m.unit)),
            esc(&m.unit)
        ),
    ];
    if let Some(t) = m.threshold {
        facts.push(format!("line {}", esc(&fmt_in(t, &m.unit))));
    } else if let Some(r) = m.reference {
        facts.push(format!(
            "reference {} (informational, no line)",
            esc(&fmt_in(r, &m.unit))
        ));
    }
    if let Some(b) = m.size_bytes {
        facts.push(format!("{b} bytes"));
    }
    facts.push(format!("{} results", m.results));
    let same = if m.same.is_empty() {
        String::new()
    } else {
        format!(
            " <span class=\"muted\">= {} (the same numbers)</span>",
            esc(&m.same.join(", "))
        )
    };
    let _ = write!(
        h,
        "<div class=\"hm\" data-metric=\"{}\"><h3>{}{same} <span class=\"muted\">({})</span></h3>\
         <table class=\"heat\"><tr><th>node</th>",
        esc(&m.base),
        esc(&m.base),
        facts.join(" · ")
    );
    for (k, names) in m.rails.iter().enumerate() {
        let name = if names.len() == 1 {
            names[0].clone()
        } else {
            format!("rail {k}")
        };
        let _ = write!(
            h,
            "<th class=\"num\" title=\"rail {k}: {}\">{}</th>",
            esc(&names.join(", ")),
            esc(&name)
        );
    }
    h.push_str("<th class=\"num sum\">median</th></tr>");
    let v = m.view();
    for r in &v.rows {
        let (row_class, tag) = match &r.mark {
            Some(k) => (" marked", tag(k)),
            None => ("", String::new()),
        };
        let _ = write!(
            h,
            "<tr class=\"hm-row{row_class}\" data-node=\"{}\"{}><th>{}{tag}</th>",
            esc(&r.node),
            r.mark
                .as_ref()
                .map(|k| format!(
                    " data-mark=\"{}\" title=\"{}\"",
                    esc(&k.rule),
                    esc(&k.cause)
                ))
                .unwrap_or_default(),
            esc(&r.node)
        );
        for c in &r.cells {
            match c {
                Some(c) => cell(h, m, &r.node, c, r.mark.is_some()),
                None => h.push_str("<td class=\"hc h-none\">·</td>"),
            }
        }
        let _ = write!(
            h,
            "<td class=\"hc sum {}\" title=\"{}: median over its rails {} {} ({})\">{}</td></tr>",
            class(m, r.summary),
            esc(&r.node),
            esc(&fmt_in(r.summary, &m.unit)),
            esc(&m.unit),
            off(m, r.summary),
            esc(&fmt_in(r.summary, &m.unit))
        );
    }
    if v.hidden > 0 {
        let _ = write!(
            h,
            "<tr class=\"hm-more\"><td colspan=\"{}\">{} more nodes, every cell within {:.1} % of the median</td></tr>",
            m.rails.len() + 2,
            v.hidden,
            (v.hidden_within * 100.0).max(0.1)
        );
    }
    h.push_str("<tr class=\"hm-sum\"><th>rail median</th>");
    for (k, s) in m.rail_summary.iter().enumerate() {
        match s {
            Some(s) => {
                let _ = write!(
                    h,
                    "<td class=\"hc sum {}\" title=\"rail {k}: median over the nodes {} {} ({})\">{}</td>",
                    class(m, *s),
                    esc(&fmt_in(*s, &m.unit)),
                    esc(&m.unit),
                    off(m, *s),
                    esc(&fmt_in(*s, &m.unit))
                );
            }
            None => h.push_str("<td class=\"hc h-none\">·</td>"),
        }
    }
    let _ = write!(
        h,
        "<td class=\"hc sum\">{}</td></tr></table>",
        esc(&fmt_in(m.median, &m.unit))
    );
    if m.rows.len() > FULL_ROWS {
        let _ = write!(
            h,
            "<p class=\"muted\">{} nodes: the rows that need a look (named by the diagnosis, past the line, or 5 % or more off), worst first.</p>",
            m.rows.len()
        );
    }
    h.push_str("</div>");
}

/// The words after a marked row's node.
fn tag(k: &Mark) -> String {
    let cls = if k.red() { "red" } else { "warn" };
    let words = match k.rule.as_str() {
        "slow_node" => "slow node ◆",
        "odd_node" => "odd node ◆",
        r => r,
    };
    format!(" <span class=\"hm-tag {cls}\">{words}</span>")
}

fn cell(h: &mut String, m: &HeatMap, node: &str, c: &HeatCell, row_marked: bool) {
    let mut cls = class(m, c.value).to_string();
    let mark = c.mark.is_some() || row_marked;
    if mark {
        cls.push_str(" h-mark");
    }
    let sym = if m.past_line(c.value) {
        " ✗"
    } else if c.mark.is_some() {
        " ◆"
    } else {
        ""
    };
    let mut tip = format!(
        "{node} {}: median {} {} of {} result(s), {}",
        c.rail,
        fmt_in(c.value, &m.unit),
        m.unit,
        c.count,
        off(m, c.value)
    );
    if let (Some(s), Some(r)) = (c.sent, c.received) {
        let _ = write!(
            tip,
            "; as the measuring end {}, towards it {}",
            fmt_in(s, &m.unit),
            fmt_in(r, &m.unit)
        );
    }
    if c.failed > 0 {
        let _ = write!(tip, "; {} of {} past their line", c.failed, c.count);
    }
    if let Some(k) = &c.mark {
        let _ = write!(tip, "; {}: {}", k.rule, k.cause);
    }
    let _ = write!(
        h,
        "<td class=\"hc {cls}\"{} title=\"{}\">{}{sym}</td>",
        c.mark
            .as_ref()
            .map(|k| format!(" data-mark=\"{}\"", esc(&k.rule)))
            .unwrap_or_default(),
        esc(&tip),
        esc(&fmt_in(c.value, &m.unit))
    );
}

//! Inline SVG plots and heat maps, drawn from metric FIELDS (never from names): busbw vs
//! message size from metrics with `size_bytes`; node × rail heat maps from metrics with `rail`
//! ([`heat`]), each with the node × node matrix of every rail; the pair matrices of the other
//! pair measurements.

use super::super::fmt_in;
use super::styles::esc;
use crate::report::matrix::{Cell, Verdict};
use crate::run::model::{RunResult, Status};
use std::fmt::Write;

mod busbw;
mod heat;
mod svg;
use busbw::busbw_plot;

/// The rack view: node × rail heat maps, each with its per-rail pair matrices.
pub(super) fn rack(h: &mut String, run: &RunResult) {
    let maps = crate::report::heatmap::heatmaps(run);
    let ms = crate::report::matrix::matrices(run);
    heat::rack(h, &maps, &ms);
}

/// The node × node matrices of one per-rail measurement, compact, side by side; above
/// [`crate::report::heatmap::FULL_ROWS`] nodes only the slowest pairs of each rail.
fn pair_matrices_per_rail(
    h: &mut String,
    map: &crate::report::heatmap::HeatMap,
    ms: &[&crate::report::matrix::Matrix],
) {
    let nodes = ms.iter().map(|m| m.nodes.len()).max().unwrap_or(0);
    let big = nodes > crate::report::heatmap::FULL_ROWS;
    // open where a pair needs a look: failed, errored or odd
    let look = ms.iter().any(|m| {
        m.cells
            .values()
            .any(|c| c.odd.is_some() || matches!(c.verdict, Verdict::Fail | Verdict::Error))
    });
    let _ = write!(
        h,
        "<details class=\"pairs\"{}><summary>{}: node × node per rail ({} rails, row → column{})</summary>",
        if look && !big { " open" } else { "" },
        esc(&map.base),
        ms.len(),
        if big {
            format!("; {nodes} nodes: the slowest pairs of each rail")
        } else {
            String::new()
        }
    );
    if !big {
        h.push_str(MATRIX_LEGEND);
    }
    h.push_str("<div class=\"mgrid\">");
    for m in ms {
        let worst = slowest(m, if big { 3 } else { 2 });
        if big {
            let _ = write!(
                h,
                "<div class=\"mbox\"><b>{}</b>: {}</div>",
                esc(m.rail.as_deref().unwrap_or("")),
                worst
            );
            continue;
        }
        let _ = write!(
            h,
            "<div class=\"mbox\"><table class=\"matrix compact\"><tr><th title=\"{}\">{}</th>",
            esc(&m.metric),
            esc(m.rail.as_deref().unwrap_or(""))
        );
        matrix_rows(h, m);
        let _ = write!(
            h,
            "</table><div class=\"where\">Slowest: {worst}</div></div>"
        );
    }
    h.push_str("</div></details>");
}

/// The `n` worst pairs of a matrix, in words.
fn slowest(m: &crate::report::matrix::Matrix, n: usize) -> String {
    m.worst(n)
        .iter()
        .map(|((a, b), v)| {
            format!(
                "{} → {}: {} {}",
                esc(a),
                esc(b),
                esc(&fmt_in(*v, &m.unit)),
                esc(&m.unit)
            )
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Pair matrices (`test_pairs` meshes) of the measurements without a rail (those with one are
/// under their heat map): a node × node table per metric, each cell coloured by that pair's
/// verdict (never by rank: six failed pairs are six red cells), with a legend and the slowest
/// pairs.
pub(super) fn matrices(h: &mut String, run: &RunResult) {
    let ms: Vec<crate::report::matrix::Matrix> = crate::report::matrix::matrices(run)
        .into_iter()
        .filter(|m| m.rail.is_none())
        .collect();
    if ms.is_empty() {
        return;
    }
    h.push_str("<section id=\"matrix\"><h2>Pair matrices</h2>");
    h.push_str(MATRIX_LEGEND);
    for m in &ms {
        let _ = write!(
            h,
            "<h3>{} <span class=\"muted\">({}; row → column; {} pairs)</span></h3><div class=\"plot\"><table class=\"matrix\"><tr><th></th>",
            esc(&m.metric),
            esc(&m.unit),
            m.cells.len()
        );
        matrix_rows(h, m);
        h.push_str("</table>");
        let _ = write!(h, "<p>Slowest pairs: {}</p></div>", slowest(m, 5));
    }
    h.push_str("</section>\n");
}

/// What the matrix colours mean.
const MATRIX_LEGEND: &str = "<p class=\"legend\">Cell colour is the pair's verdict: \
    <span class=\"cell v-pass\">pass</span> meets its threshold · \
    <span class=\"cell v-fail\">fail ✗</span> misses its threshold (a value without one: its pair's test failed) · \
    <span class=\"cell v-error\">error</span> the test could not be made, the value proves nothing · \
    <span class=\"cell v-none\">no threshold</span> a number, not a verdict · \
    <span class=\"cell v-odd\">odd one out ◆</span> passes its line but lies far below its peers \
    (the diagnosis's WARN note).</p>";

/// One pair's cell: the value, coloured by its verdict, the verdict in words in the tooltip.
/// A matrix's column heads (closing the head row) and its rows, a cell per pair.
fn matrix_rows(h: &mut String, m: &crate::report::matrix::Matrix) {
    for b in &m.nodes {
        let _ = write!(h, "<th>{}</th>", esc(b));
    }
    h.push_str("</tr>");
    for a in &m.nodes {
        let _ = write!(h, "<tr><th>{}</th>", esc(a));
        for b in &m.nodes {
            match m.cells.get(&(a.clone(), b.clone())) {
                Some(c) => matrix_cell(h, a, b, c, &m.unit),
                None => h.push_str("<td class=\"muted\">·</td>"),
            }
        }
        h.push_str("</tr>");
    }
}

fn matrix_cell(h: &mut String, a: &str, b: &str, c: &Cell, unit: &str) {
    let odd = c.odd.is_some() && !matches!(c.verdict, Verdict::Fail | Verdict::Error);
    let mark = match c.verdict {
        Verdict::Fail => " ✗",
        Verdict::Error => " err",
        _ if odd => " ◆",
        _ => "",
    };
    let class = if odd { "v-odd" } else { c.verdict.class() };
    let judged = match c.threshold {
        Some(th) => format!("threshold {} {unit}", fmt_in(th, unit)),
        None => "no threshold".to_string(),
    };
    let why = c
        .message
        .as_deref()
        .filter(|_| matches!(c.status, Status::Failure | Status::Error))
        .map(|m| format!(": {}", crate::report::one_line(m)))
        .or_else(|| c.odd.as_deref().filter(|_| odd).map(|o| format!("; {o}")))
        .unwrap_or_default();
    let _ = write!(
        h,
        "<td class=\"num cell {}\" title=\"{} -> {}: {} {unit}, {judged}; test {}{}\">{}{mark}</td>",
        class,
        esc(a),
        esc(b),
        esc(&fmt_in(c.value, unit)),
        c.status.label(),
        esc(&why),
        esc(&fmt_in(c.value, unit))
    );
}

/// The plots section, if any metric asks for one (the busbw plot; per-rail numbers are the
/// rack's heat maps).
pub(super) fn section(h: &mut String, run: &RunResult) {
    if let Some(p) = busbw_plot(run) {
        h.push_str("<section id=\"plots\"><h2>Plots</h2>");
        h.push_str("<h3>NCCL bus bandwidth vs message size</h3><div class=\"plot\">");
        h.push_str(&p);
        h.push_str("</div></section>\n");
    }
}

#[cfg(test)]
mod tests {
    use crate::run::model::{Metric, RunResult, TestResult};

    fn run_with(metrics: Vec<Metric>) -> RunResult {
        let t = TestResult {
            metrics,
            ..TestResult::new("t", "s")
        };
        RunResult::of_tests("s", vec![t])
    }

    #[test]
    fn plots_read_fields_not_names() {
        // Named like a busbw point, but without size_bytes: no plot.
        let named_only = run_with(vec![Metric::new("busbw_gbs@1048576", 10.0, "GB/s")]);
        assert!(super::busbw_plot(&named_only).is_none());
        // Any name with size_bytes is a point.
        let mut a = Metric::new("allreduce_a", 10.0, "GB/s");
        a.size_bytes = Some(1 << 20);
        let mut b = Metric::new("allreduce_b", 20.0, "GB/s");
        b.size_bytes = Some(1 << 21);
        assert!(super::busbw_plot(&run_with(vec![a, b])).is_some());
        // Rails: by the `rail` field, grouped by the `node` field, as heat maps.
        let named = run_with(vec![Metric::new("rdma_write_gbps[x:y]", 95.0, "Gbit/s")]);
        assert!(crate::report::heatmap::heatmaps(&named).is_empty());
        let mut r = Metric::new("bw", 95.0, "Gbit/s");
        r.rail = Some("rocep1s0f1".into());
        r.node = Some("spark-02".into());
        r.reference = Some(90.0);
        let mut h = String::new();
        super::rack(&mut h, &run_with(vec![r]));
        assert!(
            h.contains("data-node=\"spark-02\"") && h.contains(">95<"),
            "{h}"
        );
        assert_eq!(super::esc("<a&\x1b[31m>"), "&lt;a&amp;&gt;");
    }
}

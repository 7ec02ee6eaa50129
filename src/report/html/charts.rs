//! Inline SVG plots, drawn from metric FIELDS (never from names): busbw vs message size from
//! metrics with `size_bytes`, per-rail bandwidth from metrics with `rail` (grouped by `node`).

use super::super::fmt_in;
use super::styles::esc;
use crate::report::matrix::{Cell, Verdict};
use crate::run::model::{RunResult, Status};
use std::fmt::Write;

mod busbw;
mod rails;
mod svg;
use busbw::busbw_plot;
use rails::rail_plot;

/// Pair matrices (`test_pairs` meshes): a node × node table per metric, each cell coloured by
/// that pair's verdict (never by rank: six failed pairs are six red cells), with a legend and
/// the slowest pairs.
pub(super) fn matrices(h: &mut String, run: &RunResult) {
    let ms = crate::report::matrix::matrices(run);
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
        h.push_str("</table>");
        let worst: Vec<String> = m
            .worst(5)
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
            .collect();
        let _ = write!(h, "<p>Slowest pairs: {}</p></div>", worst.join(" · "));
    }
    h.push_str("</section>\n");
}

/// What the matrix colours mean.
const MATRIX_LEGEND: &str = "<p class=\"legend\">Cell colour is the pair's verdict: \
    <span class=\"cell v-pass\">pass</span> meets its threshold, test passed · \
    <span class=\"cell v-fail\">fail ✗</span> misses its threshold, or the pair's test failed · \
    <span class=\"cell v-error\">error</span> the test could not be made, the value proves nothing · \
    <span class=\"cell v-none\">no threshold</span> a number, not a verdict · \
    <span class=\"cell v-odd\">odd one out ◆</span> passes its line but lies far below its peers \
    (the diagnosis's WARN note).</p>";

/// One pair's cell: the value, coloured by its verdict, the verdict in words in the tooltip.
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

/// The plots section, if any metric asks for one.
pub(super) fn section(h: &mut String, run: &RunResult) {
    let busbw = busbw_plot(run);
    let rails = rail_plot(run);
    if busbw.is_some() || rails.is_some() {
        h.push_str("<section id=\"plots\"><h2>Plots</h2>");
        if let Some(p) = busbw {
            h.push_str("<h3>NCCL bus bandwidth vs message size</h3><div class=\"plot\">");
            h.push_str(&p);
            h.push_str("</div>");
        }
        if let Some(p) = rails {
            h.push_str("<h3>RDMA bandwidth per rail and node</h3><div class=\"plot\">");
            h.push_str(&p);
            h.push_str("</div>");
        }
        h.push_str("</section>\n");
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
        // Rails: by the `rail` field, grouped by the `node` field.
        assert!(super::rail_plot(&run_with(vec![Metric::new(
            "rdma_write_gbps[x:y]",
            95.0,
            "Gbit/s"
        )]))
        .is_none());
        let mut r = Metric::new("bw", 95.0, "Gbit/s");
        r.rail = Some("rocep1s0f1".into());
        r.node = Some("spark-02".into());
        r.reference = Some(90.0);
        let svg = super::rail_plot(&run_with(vec![r])).unwrap();
        assert!(svg.contains("spark-02"), "{svg}");
        assert_eq!(super::esc("<a&\x1b[31m>"), "&lt;a&amp;&gt;");
    }
}

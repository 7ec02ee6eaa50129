//! Reports: HTML (--html), baseline comparison (--baseline), `fabcheck compare`.

use crate::common::{self, skip};
use common::Fab;
use std::path::Path;

const MIXED: &str = r#"
test("all good", || { metric("rail_gbps", 95.5, "Gbit/s"); });
test("bandwidth too low", || { assert_ge(71.3, 90.0, "per-rail RDMA write bandwidth"); });
test("hostile", || {
    print("<script>alert(1)</script> & \x1b[31mred\x1b[0m");
    nodes()[0].run("printf '<script>alert(2)</script> & <b>'");
    fail("tool said <script>alert(1)</script>");
});
"#;

fn html_of(o: &common::Outcome, name: &str) -> String {
    std::fs::read_to_string(o.dir.join(name)).unwrap_or_else(|e| {
        panic!(
            "no HTML report {name}: {e}\nstdout:\n{}\nstderr:\n{}",
            o.stdout, o.stderr
        )
    })
}

#[test]
fn html_is_single_file_failures_first_and_escaped() {
    let o = Fab::new()
        .file("m.rhai", MIXED)
        .args(["run", "m.rhai", "--html", "{dir}/out/report.html"])
        .reports()
        .run();
    o.code(1);
    let h = html_of(&o, "out/report.html");
    assert!(h.starts_with("<!DOCTYPE html>"));
    assert!(h.contains("FAILED"));
    // self-contained: no external loads
    for bad in ["<link", "src=\"http", "href=\"http", "@import", "<script"] {
        assert!(!h.contains(bad), "HTML contains {bad}");
    }
    // escaped
    assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(h.contains("&lt;script&gt;alert(2)&lt;/script&gt; &amp; &lt;b&gt;"));
    assert!(!h.contains('\u{1b}'));
    // failures first: the failure message comes before the passing test
    let fail_at = h
        .find("per-rail RDMA write bandwidth: expected &gt;= 90")
        .expect("failure message in the HTML");
    let pass_at = h.find("all good").expect("passing test in the HTML");
    assert!(
        fail_at < pass_at,
        "failures are listed before passing tests"
    );
    assert!(h.contains("<details"));
    // only the requested files in out/
    let mut files: Vec<String> = std::fs::read_dir(o.dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["junit.xml", "report.html", "result.json"]);
}

#[test]
fn html_plots_busbw_and_rails() {
    let script = r#"
for n in [2, 6] {
    test(`nccl ${n} nodes`, || {
        let s = 8;
        let bw = 0.01;
        while s <= 1048576 {
            metric(`busbw_gbs@${s}`, bw, "GB/s", #{ size_bytes: s });
            s *= 8;
            bw *= 3.0;
        }
    });
}
test_each(nodes(), "rail", |n| {
    metric("rdma_write_gbps@rocep1s0f1", 71.5, "Gbit/s", #{ threshold: 90.0, rail: "rocep1s0f1", node: n });
});
test("reference only", || {
    metric("rdma_read_gbps", 71.5, "Gbit/s", #{ reference: 90.0, rail: "rocep1s0f1" });
});
"#;
    let o = Fab::new()
        .file("p.rhai", script)
        .args(["run", "p.rhai", "--html", "{dir}/r.html"])
        .reports()
        .run();
    // A metric on the wrong side of its threshold fails its test; a reference never does.
    o.code(1);
    assert_eq!(o.status("rail [localhost]"), "failure");
    let m = o.message("rail [localhost]");
    assert!(
        m.contains("rdma_write_gbps@rocep1s0f1")
            && m.contains("71.5 Gbit/s")
            && m.contains("below its threshold 90 Gbit/s"),
        "{m}"
    );
    assert_eq!(o.status("reference only"), "pass");
    assert_eq!(
        o.test("rail [localhost]")["metrics"][0]["rail"],
        "rocep1s0f1"
    );
    assert_eq!(
        o.test("rail [localhost]")["metrics"][0]["node"],
        "localhost"
    );
    let h = html_of(&o, "r.html");
    assert!(h.contains("<svg"));
    assert_eq!(h.matches("<polyline").count(), 2, "one line per series");
    assert!(h.contains("nccl 2 nodes") && h.contains("nccl 6 nodes"));
    assert!(h.contains("message size (log2 scale)"));
    assert!(h.contains("bus bandwidth (GB/s)"));
    // the rail metric is a node × rail heat map, its cell red past its line
    let row = common::heat_row(&h, "rdma_write_gbps@rocep1s0f1", "localhost").expect("heat map");
    assert!(
        row.contains("class=\"hc h-fail") && row.contains(">71.5 ✗<"),
        "{row}"
    );
    assert!(h.contains("past its line"));
    // the threshold is in the JSON result
    assert_eq!(o.test("rail [localhost]")["metrics"][0]["threshold"], 90.0);
    assert!(o.test("nccl 2 nodes")["metrics"][0]
        .get("threshold")
        .is_none());
}

#[test]
fn html_has_the_simulation_banner() {
    let inv = "simulation = \"test\"\n[defaults]\ntransport = \"local\"\n[[node]]\nname = \"n1\"\n";
    let o = Fab::new()
        .file("inv.toml", inv)
        .file("s.rhai", "test(\"a\", || {});\n")
        .args(["run", "s.rhai", "-i", "inv.toml", "--html", "{dir}/r.html"])
        .run();
    o.code(0);
    let h = html_of(&o, "r.html");
    assert!(h.contains("SIMULATED cluster: test"), "{h}");
    assert!(h.contains("PASSED"));
    // a real run has no banner
    let o = Fab::new()
        .file("s.rhai", "test(\"a\", || {});\n")
        .args(["run", "s.rhai", "--html", "{dir}/r.html"])
        .run();
    assert!(!html_of(&o, "r.html").contains("SIMULATED"));
}

const BW: &str = r#"
test("rdma", || { metric("busbw", param("v"), "GB/s"); });
test("latency", || { metric("lat_us", param("lat", 2.0), "us", #{ higher_is_better: false }); });
"#;

/// A first run whose JSON becomes the baseline.
fn baseline_json(dir: &Path, v: &str) -> std::path::PathBuf {
    let o = Fab::new()
        .file("bw.rhai", BW)
        .args(["run", "bw.rhai", "--set"])
        .args([format!("v={v}")])
        .reports()
        .run();
    o.code(0);
    let p = dir.join(format!("baseline-{v}.json"));
    std::fs::copy(o.dir.join("out/result.json"), &p).unwrap();
    p
}

fn against(base: &Path, sets: &[&str]) -> common::Outcome {
    let mut f = Fab::new()
        .file("bw.rhai", BW)
        .args(["run", "bw.rhai", "--html", "{dir}/r.html", "--baseline"])
        .args([base.display().to_string()]);
    for s in sets {
        f = f.args(["--set", s]);
    }
    f.reports().run()
}

#[test]
fn baseline_regression_fails_the_run() {
    let keep = common::tempdir::TempDir::new("base");
    let base = baseline_json(keep.path(), "100");
    let o = against(&base, &["v=77"]);
    o.code(1);
    assert_eq!(o.status("baseline"), "failure");
    let t = o.test("baseline");
    assert_eq!(t["classname"], "baseline");
    let m = o.message("baseline");
    assert!(
        m.contains("busbw") && m.contains("100") && m.contains("77") && m.contains("-23.0%"),
        "{m}"
    );
    assert!(t["detail"].as_str().unwrap().contains("REGRESSED"));
    let suites = o.json.as_ref().unwrap()["suites"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(suites.last().unwrap()["name"], "baseline");
    let junit = o.junit.clone().unwrap();
    assert!(junit.contains("classname=\"baseline\""), "{junit}");
    o.junit_is_valid();
    assert!(html_of(&o, "r.html").contains("baseline"));
}

#[test]
fn baseline_within_tolerance_passes() {
    let keep = common::tempdir::TempDir::new("base");
    let base = baseline_json(keep.path(), "100");
    let o = against(&base, &["v=98"]);
    o.code(0);
    assert_eq!(o.status("baseline"), "pass");
    let out = o.test("baseline")["output"].as_str().unwrap().to_string();
    assert!(out.contains("busbw") && out.contains("-2.0%"), "{out}");
}

#[test]
fn baseline_lower_is_better_latency_rising_fails() {
    let keep = common::tempdir::TempDir::new("base");
    let base = baseline_json(keep.path(), "100");
    let o = against(&base, &["v=100", "lat=2.4"]);
    o.code(1);
    assert_eq!(o.status("baseline"), "failure");
    let m = o.message("baseline");
    assert!(m.contains("lat_us") && m.contains("2 → 2.4"), "{m}");
    assert!(!m.contains("busbw"), "busbw did not regress: {m}");
}

#[test]
fn baseline_all_missing_is_an_error_and_unreadable_is_exit_2() {
    let keep = common::tempdir::TempDir::new("base");
    let base = baseline_json(keep.path(), "100");
    let o = Fab::new()
        .file(
            "other.rhai",
            "test(\"x\", || { metric(\"y\", 1, \"u\"); });\n",
        )
        .args(["run", "other.rhai", "--baseline"])
        .args([base.display().to_string()])
        .reports()
        .run();
    o.code(1);
    assert_eq!(o.status("baseline"), "error");
    assert!(o.test("baseline")["detail"]
        .as_str()
        .unwrap()
        .contains("missing in this run"));

    let o = Fab::new()
        .file("bw.rhai", BW)
        .file("broken.json", "{ not json")
        .args([
            "run",
            "bw.rhai",
            "--set",
            "v=1",
            "--baseline",
            "broken.json",
        ])
        .reports()
        .run();
    o.code(2);
    assert!(
        o.stderr.contains("--baseline") && o.stderr.contains("broken.json"),
        "{}",
        o.stderr
    );
    assert!(o.json.is_none(), "nothing ran");
    let o = Fab::new()
        .file("bw.rhai", BW)
        .args(["run", "bw.rhai", "--baseline", "nope.json"])
        .run();
    o.code(2);
    assert!(o.stderr.contains("nope.json"), "{}", o.stderr);
}

#[test]
fn compare_lines_up_runs() {
    let keep = common::tempdir::TempDir::new("cmp");
    let a = baseline_json(keep.path(), "100");
    let b = baseline_json(keep.path(), "77");
    let md = Fab::new()
        .args(["compare"])
        .args([a.display().to_string(), b.display().to_string()])
        .run();
    md.code(0);
    let s = md.stdout.clone();
    assert!(
        s.contains("| metric | baseline-100 | baseline-77 | baseline-77 vs baseline-100 |"),
        "{s}"
    );
    assert!(
        s.contains("| bw / rdma / busbw [GB/s] | 100 | 77 | ▼ −23.0% |"),
        "{s}"
    );
    assert!(
        s.contains("| bw / latency / lat_us [us] | 2 | 2 | +0.0% |"),
        "{s}"
    );

    let csv = Fab::new()
        .args(["compare", "--format", "csv"])
        .args([a.display().to_string(), b.display().to_string()])
        .run();
    csv.code(0);
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "suite,test,metric,unit,baseline-100,baseline-77,baseline-77 vs baseline-100 %,baseline-77 vs baseline-100 flag"
    );
    assert!(
        lines.contains(&"bw,rdma,busbw,GB/s,100,77,-23.0,▼"),
        "{lines:?}"
    );

    let bad = Fab::new()
        .args(["compare", &a.display().to_string(), "missing.json"])
        .run();
    bad.code(2);
    assert!(bad.stderr.contains("missing.json"), "{}", bad.stderr);
}

/// Issue 50 (first day): `compare` of two runs' results folders names each column after its
/// run (the results folder, named by start time and script), not "result" and "result #2".
#[test]
fn compare_names_its_columns_after_the_runs_not_result_and_result_2() {
    let keep = common::tempdir::TempDir::new("cmpruns");
    let res = keep.path().join("res");
    for v in ["100", "77"] {
        Fab::new()
            .file("bw.rhai", BW)
            .args(["run", "bw.rhai", "--set"])
            .args([format!("v={v}")])
            .args(["--results".to_string(), res.display().to_string()])
            .run()
            .code(0);
    }
    let mut runs: Vec<std::path::PathBuf> = std::fs::read_dir(&res)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let names: Vec<String> = runs
        .iter()
        .map(|r| r.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let md = Fab::new()
        .args(["compare"])
        .args(
            runs.iter()
                .map(|r| r.join("result.json").display().to_string()),
        )
        .run();
    md.code(0);
    let s = &md.stdout;
    assert!(!s.contains("result #2"), "{s}");
    let head = format!(
        "| metric | {a} | {b} | {b} vs {a} |",
        a = names[0],
        b = names[1]
    );
    assert!(s.contains(&head), "{head}\n{s}");
}

// ---- Reports that cannot mislead (issue 20 items 11 and 13) ----

/// Three local nodes: `test_pairs` meshes for the pair matrix.
const THREE: &str = "[defaults]\ntransport = \"local\"\n[[node]]\nname = \"n[1-3]\"\n";

/// The verdict classes of the cells of the matrix headed `metric` (in row order).
fn matrix_cells(h: &str, metric: &str) -> Vec<String> {
    let head = format!("<h3>{metric} <span");
    let at = h
        .find(&head)
        .unwrap_or_else(|| panic!("no matrix for {metric}"));
    let table = &h[at..at + h[at..].find("</table>").expect("end of the matrix")];
    table
        .split("class=\"num cell ")
        .skip(1)
        .map(|c| c[..c.find('"').unwrap()].to_string())
        .collect()
}

#[test]
fn pair_matrix_cells_are_coloured_by_verdict_not_rank() {
    let script = r#"
test_pairs(nodes(), "all slow", |a, b| {
    metric("slow_gbps", if a.name == "n1" { 40.0 } else { 70.0 }, "Gbit/s", #{ threshold: 90.0 });
});
test_pairs(nodes(), "mixed", |a, b| {
    metric("fast_gbps", 95.0, "Gbit/s", #{ threshold: 90.0 });
    metric("raw_gbps", 95.0, "Gbit/s");
    if a.name == "n1" && b.name == "n2" { error("peer lost mid-test"); }
});
"#;
    let o = Fab::new()
        .file("inv.toml", THREE)
        .file("m.rhai", script)
        .args(["run", "m.rhai", "-i", "inv.toml", "--html", "{dir}/r.html"])
        .reports()
        .run();
    o.code(1);
    let pairs = |prefix: &str| {
        o.tests()
            .iter()
            .filter(|t| t["name"].as_str().unwrap().starts_with(prefix))
            .count()
    };
    let h = html_of(&o, "r.html");
    // Every pair failed its threshold: every cell is red, however they rank among themselves
    // (the rank colouring showed the best of six failed pairs green).
    let slow = matrix_cells(&h, "slow_gbps");
    assert_eq!(slow.len(), pairs("all slow ["), "{slow:?}");
    assert!(slow.iter().all(|c| c == "v-fail"), "{slow:?}");
    assert!(!h.contains("hsl("), "no colour by rank");
    // Met thresholds are green, the pair that could not be made is grey (its value proves
    // nothing), a value without a threshold is neutral, and the error pair is not green there.
    let fast = matrix_cells(&h, "fast_gbps");
    assert_eq!(o.status("mixed [n1 -> n2]"), "error");
    assert_eq!(
        fast.iter().filter(|c| *c == "v-error").count(),
        1,
        "{fast:?}"
    );
    assert_eq!(
        fast.iter().filter(|c| *c == "v-pass").count(),
        pairs("mixed [") - 1,
        "{fast:?}"
    );
    let raw = matrix_cells(&h, "raw_gbps");
    assert!(
        raw.iter().all(|c| c == "v-none" || c == "v-error"),
        "{raw:?}"
    );
    assert!(
        !raw.contains(&"v-pass".to_string()),
        "no threshold is no verdict"
    );
    // The legend says what the colours mean.
    for l in [
        "class=\"legend\"",
        "v-pass",
        "v-fail",
        "v-error",
        "v-none",
        "no threshold",
    ] {
        assert!(h.contains(l), "legend: {l}");
    }
}

#[test]
fn a_rail_with_only_a_reference_is_not_drawn_below_threshold() {
    let script = r#"
test("rails", || {
    metric("rail_a", 40.0, "Gbit/s", #{ reference: 90.0, rail: "rocep1s0f1", node: "n1" });
    metric("rail_b", 95.0, "Gbit/s", #{ reference: 90.0, rail: "roceP2p1s0f1", node: "n1" });
});
"#;
    let o = Fab::new()
        .file("r.rhai", script)
        .args(["run", "r.rhai", "--html", "{dir}/r.html"])
        .reports()
        .run();
    o.code(0);
    let h = html_of(&o, "r.html");
    let rack = &h[h.find("<section id=\"rack\">").expect("rack")..];
    let rack = &rack[..rack.find("</section>").unwrap()];
    // Neither cell is judged: no red, no ✗ in the maps (the legend's swatch aside).
    for metric in ["rail_a", "rail_b"] {
        let row = common::heat_row(&h, metric, "n1").expect("heat map");
        assert!(!row.contains("h-fail") && !row.contains('✗'), "{row}");
    }
    // The reference is said as such: informational, no line.
    assert_eq!(
        rack.matches("reference 90 (informational, no line)")
            .count(),
        2,
        "{rack}"
    );
    assert!(!rack.contains(" · line "), "{rack}");
}

/// The five-step on the simulation, with every report.
fn five_step_sim() -> common::Outcome {
    five_step_sim_with(&[])
}

fn five_step_sim_with(extra: &[&str]) -> common::Outcome {
    Fab::new()
        .args(["run"])
        .args([common::repo()
            .join("scripts/five_step_acceptance.rhai")
            .display()
            .to_string()])
        .args(["-i"])
        .args([common::repo()
            .join("examples/sim/two-sparks.toml")
            .display()
            .to_string()])
        .args(["--html", "{dir}/r.html"])
        .args(extra)
        .reports()
        .run()
}

#[test]
fn both_directions_failing_alike_are_two_red_cells() {
    // A 200G port negotiated at 100G: both directions measure the same ~95 Gbit/s against a
    // 180 threshold. Ranked against each other they were both "best", so both green.
    let o = five_step_sim_with(&["--scenario", "negotiated-100g"]);
    o.code(1);
    let h = html_of(&o, "r.html");
    // the port's node × node matrix, under the port's heat map
    let at = h
        .find("<th title=\"rdma_write_port_gbps · rail qsfp1\">")
        .expect("the port's pair matrix");
    let table = &h[at..at + h[at..].find("</table>").unwrap()];
    let cells: Vec<&str> = table
        .split("class=\"num cell ")
        .skip(1)
        .map(|c| &c[..c.find('"').unwrap()])
        .collect();
    assert_eq!(cells, ["v-fail", "v-fail"], "{table}");
    // and both nodes' cells of the port's heat map are red
    for n in ["spark-01", "spark-02"] {
        let row = common::heat_row(&h, "rdma_write_port_gbps", n).expect("heat map row");
        assert!(row.contains("class=\"hc h-fail"), "{row}");
    }
}

#[test]
fn nccl_threshold_reaches_the_console_and_the_busbw_plot() {
    let o = five_step_sim();
    o.code(0);
    let name = "step 3: nccl all_reduce busbw and transport";
    let best = o.test(name)["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "nccl_busbw_max_gbs")
        .cloned()
        .expect("the best busbw is recorded");
    let th = best["threshold"]
        .as_f64()
        .expect("the best busbw carries its threshold");
    let line = o
        .stdout
        .lines()
        .find(|l| l.contains(name))
        .expect("console line of the nccl test");
    // The best and the threshold, not the first per-size point.
    assert!(!line.contains("busbw_gbs@8="), "{line}");
    assert!(
        line.contains(&format!(
            "nccl_busbw_max_gbs={} GB/s (threshold {})",
            best["value"].as_f64().unwrap(),
            th
        )),
        "{line}"
    );
    assert!(
        line.contains("best of ") && line.contains("at 1GiB"),
        "{line}"
    );
    // The plot draws the threshold as a line, labelled with its value.
    let h = html_of(&o, "r.html");
    let svg = &h[h
        .find("aria-label=\"bus bandwidth vs message size\"")
        .expect("busbw plot")..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    assert!(svg.contains("class=\"threshold\""), "{svg}");
    assert!(svg.contains(&format!("threshold {th} GB/s")), "{svg}");
    // A socket fallback fails on its transport first; the plot still shows the threshold its
    // busbw missed.
    let o = five_step_sim_with(&["--scenario", "nccl-socket-fallback"]);
    assert_eq!(o.status(name), "failure");
    assert!(o.message(name).contains("Socket"), "{}", o.message(name));
    let h = html_of(&o, "r.html");
    assert!(
        h.contains(&format!("threshold {th} GB/s")),
        "no threshold line"
    );
}

#[test]
fn values_are_rounded_to_the_tools_precision_in_reports_not_in_json() {
    let script = r#"
test("rdma", || {
    metric("rail_gbps", 94.97123456, "Gbit/s");
    metric("rtt_ms", 0.1714999, "ms", #{ higher_is_better: false });
    metric("port_gbps", 179.996, "Gbit/s", #{ threshold: 180.0 });
    metric("rail_ref", 40.0, "Gbit/s", #{ reference: 47.5 });
});
"#;
    let o = Fab::new()
        .file("p.rhai", script)
        .args(["run", "p.rhai", "--html", "{dir}/r.html"])
        .reports()
        .run();
    o.code(1);
    let line = o
        .stdout
        .lines()
        .find(|l| l.contains(" rdma "))
        .unwrap()
        .to_string();
    assert!(line.contains("rail_gbps=94.97 Gbit/s"), "{line}");
    assert!(line.contains("rtt_ms=0.171 ms"), "{line}");
    // The verdict metric comes first; a reference is labelled as one, not as a threshold.
    assert!(line.contains("[port_gbps="), "{line}");
    assert!(
        line.contains("rail_ref=40 Gbit/s (reference 47.5)"),
        "{line}"
    );
    // Rounding never hides a miss: 179.996 is not shown as 180 against a threshold of 180.
    assert!(
        line.contains("port_gbps=179.996 Gbit/s (below threshold 180)"),
        "{line}"
    );
    let junit = o.junit.clone().unwrap();
    assert!(junit.contains("value=\"94.97\""), "{junit}");
    assert!(junit.contains("metric rail_gbps = 94.97 Gbit/s"), "{junit}");
    assert!(!junit.contains("94.971"), "{junit}");
    let h = html_of(&o, "r.html");
    assert!(h.contains("rail_gbps = 94.97 Gbit/s") && !h.contains("94.971"));
    // The JSON keeps the full value: --baseline and compare read it.
    assert_eq!(o.test("rdma")["metrics"][0]["value"], 94.97123456);
}

#[test]
fn multi_script_plot_labels_are_never_identical() {
    let series = |name: &str| {
        format!(
            "test(\"{name}\", || {{ for s in [8, 64, 512] {{ metric(`bw@${{s}}`, s / 100.0, \"GB/s\", #{{ size_bytes: s }}); }} metric(\"rail\", 90.0, \"Gbit/s\", #{{ rail: \"r0\", node: \"n\" }}); }});\n"
        )
    };
    let long = "nccl all_reduce busbw and transport over the whole fabric, every rail";
    let a = format!(
        "{}{}",
        series(&format!("{long} [spark-01 -> spark-02]")),
        series(&format!("{long} [spark-02 -> spark-01]"))
    );
    let o = Fab::new()
        .file("one/accept.rhai", &a)
        .file("two/accept.rhai", &a)
        .args([
            "run",
            "one/accept.rhai",
            "two/accept.rhai",
            "--html",
            "{dir}/r.html",
        ])
        .reports()
        .run();
    o.code(0);
    let h = html_of(&o, "r.html");
    // The visible text of the plots' labels (after each tooltip).
    let visible: Vec<String> = h
        .split("</title>")
        .skip(1)
        .filter_map(|t| t.split("</text>").next().filter(|l| !l.contains('<')))
        .map(|l| l.replace("&gt;", ">"))
        .collect();
    for dir in ["spark-01 -> spark-02", "spark-02 -> spark-01"] {
        assert!(
            visible.iter().any(|l| l.contains(dir)),
            "the distinguishing end is shown: {visible:?}"
        );
    }
    let legend: Vec<&String> = visible.iter().filter(|l| l.contains("spark-0")).collect();
    for (i, l) in legend.iter().enumerate() {
        assert!(l.chars().count() <= 48, "{l}");
        assert!(
            !legend[..i].contains(l) || legend.iter().filter(|x| x == &l).count() == 1,
            "identical labels: {legend:?}"
        );
    }
}

#[test]
fn a_replayed_run_says_so_in_every_report() {
    let f = Fab::new()
        .file("t/a.toml", "[[command]]\ncommand = \"echo hi\"\nstdout = \"hi\\n\"\nexit_code = 0\n")
        .file("inv.toml", "[defaults]\ntransport = \"local\"\n[[node]]\nname = \"a\"\n")
        .file(
            "s.rhai",
            "test(\"echo\", || { assert_eq(node(\"a\").run(\"echo hi\").stdout.trimmed(), \"hi\", \"out\"); });\n",
        );
    let o = f
        .args([
            "run",
            "s.rhai",
            "-i",
            "inv.toml",
            "--replay",
            "{dir}/t",
            "--html",
            "{dir}/r.html",
        ])
        .reports()
        .run();
    o.code(0);
    assert!(o.stdout.contains("REPLAYED"), "{}", o.stdout);
    let json = o.json.as_ref().unwrap();
    assert!(
        json["replayed"].as_str().unwrap().contains("--replay"),
        "{json}"
    );
    let junit = o.junit.clone().unwrap();
    assert!(junit.contains("<property name=\"replayed\""), "{junit}");
    assert!(junit.contains("REPLAYED: answers from"), "{junit}");
    o.junit_is_valid();
    let h = html_of(&o, "r.html");
    assert!(
        h.contains("id=\"replayed\"") && h.contains("REPLAYED run"),
        "{h}"
    );
    assert!(h.contains("<title>fabcheck PASSED (REPLAYED)"));
    // compare labels the replayed run's column.
    let md = Fab::new()
        .args(["compare"])
        .args([o.dir.join("out/result.json").display().to_string()])
        .run();
    md.code(0);
    assert!(md.stdout.contains("| result (replayed) |"), "{}", md.stdout);
    // A live run says nothing of the kind.
    let live = Fab::new()
        .file("s.rhai", "test(\"a\", || {});\n")
        .args(["run", "s.rhai", "--html", "{dir}/r.html"])
        .reports()
        .run();
    assert!(!live.stdout.contains("REPLAYED"));
    assert!(live.json.as_ref().unwrap().get("replayed").is_none());
    assert!(!live.junit.clone().unwrap().contains("REPLAYED"));
    assert!(!html_of(&live, "r.html").contains("REPLAYED"));
}

fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn reports_take_the_umask_mode_as_new_files() {
    use std::os::unix::fs::MetadataExt;
    for (mask, want) in [(0o022, 0o644), (0o077, 0o600)] {
        let f = Fab::new().file("s.rhai", "test(\"a\", || {});\n");
        // An existing world-writable report: replaced by a new file, never reused.
        std::fs::create_dir_all(f.dir().join("out")).unwrap();
        let old = f.dir().join("out/result.json");
        std::fs::write(&old, "{}").unwrap();
        std::fs::set_permissions(&old, std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .unwrap();
        let old_inode = std::fs::metadata(&old).unwrap().ino();
        let o = f
            .umask(mask)
            .args(["run", "s.rhai", "--html", "{dir}/out/r.html"])
            .reports()
            .run();
        o.code(0);
        for r in ["out/junit.xml", "out/result.json", "out/r.html"] {
            assert_eq!(mode_of(&o.dir.join(r)), want, "{r} under umask {mask:03o}");
        }
        assert_ne!(
            std::fs::metadata(o.dir.join("out/result.json"))
                .unwrap()
                .ino(),
            old_inode
        );
    }
}

#[test]
fn a_report_owned_by_another_user_is_not_replaced() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("it needs root to chown");
        return;
    }
    let f = Fab::new().file("s.rhai", "test(\"a\", || {});\n");
    let planted = f.dir().join("r.xml");
    std::fs::write(&planted, "forged").unwrap();
    std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
    let o = f
        .args([
            "run",
            "s.rhai",
            "--junit",
            "{dir}/r.xml",
            "--json",
            "{dir}/r.json",
        ])
        .run();
    // Seen before the run (issue 36): a usage error that says why; nothing is written.
    o.code(2);
    assert_eq!(
        std::fs::read_to_string(o.dir.join("r.xml")).unwrap(),
        "forged"
    );
    assert!(
        o.stderr.contains("r.xml") && o.stderr.contains("belongs to another user"),
        "{}",
        o.stderr
    );
    assert!(!o.dir.join("r.json").exists());
}

#[test]
fn html_says_nothing_checked_when_nothing_passed() {
    let o = Fab::new()
        .file("s.rhai", "test(\"later\", || { skip(\"not today\"); });\n")
        .args(["run", "s.rhai", "--html", "{dir}/r.html"])
        .run();
    let h = html_of(&o, "r.html");
    assert!(
        h.contains("<div class=\"verdict NOTHING\">NOTHING CHECKED</div>"),
        "{h}"
    );
    assert!(
        !h.contains(">PASSED<") && !h.contains("<title>fabcheck PASSED"),
        "a run that checked nothing is not PASSED"
    );
    // One pass is a pass.
    let o = Fab::new()
        .file(
            "s.rhai",
            "test(\"a\", || { assert(true); });\ntest(\"later\", || { skip(\"not today\"); });\n",
        )
        .args(["run", "s.rhai", "--html", "{dir}/r.html"])
        .run();
    assert!(html_of(&o, "r.html").contains("<div class=\"verdict PASSED\">PASSED</div>"));
}

#[test]
fn a_huge_fail_message_is_capped_in_the_json_report() {
    // `fail()` with an 8 MiB message (and `throw` of one): the JSON report used to keep it
    // whole, twice (the test's message and its attempt's), like no other report.
    let s = "fn big() { let s = \"x\"; for i in 0..23 { s += s; } s }\n\
             test(\"fails big\", || { fail(\"head \" + big() + \" tail\"); });\n\
             test(\"throws big\", || { throw \"head \" + big() + \" tail\"; });\n";
    let o = Fab::new()
        .file("big.rhai", s)
        .args(["run", "big.rhai"])
        .reports()
        .run();
    o.code(1);
    for name in ["fails big", "throws big"] {
        let m = o.message(name);
        assert!(m.len() < 100 * 1024, "{name}: message of {} bytes", m.len());
        assert!(
            m.contains("head xxx") && m.contains("bytes cut") && m.contains("xxx tail"),
            "{name}: head, marker and tail kept: {}",
            &m[..m.len().min(200)]
        );
    }
    assert_eq!(o.status("fails big"), "failure");
    let size = std::fs::metadata(o.dir.join("out/result.json"))
        .unwrap()
        .len();
    assert!(size < 1024 * 1024, "result.json is {size} bytes");
}

/// Tool versions are recorded while the run works: the driver and firmware `n.ethtool_driver`
/// read (a shim on PATH printing a real `ethtool -i` capture), a script's own `X --version`,
/// and the NCCL banner in a command's output; once per (node, tool).
#[test]
fn tool_versions_recorded_by_the_run_reach_the_json() {
    let f = Fab::new();
    let shims = f.dir().join("shims");
    std::fs::create_dir_all(&shims).unwrap();
    let fixture = common::repo()
        .join("tests/fixtures/ethtool/ethtool-i-cx6dx-inbox-kernel-driver-version-5.0-0.txt");
    let ethtool = shims.join("ethtool");
    std::fs::write(
        &ethtool,
        format!("#!/bin/sh\ncat '{}'\n", fixture.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ethtool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let toolx = shims.join("toolx");
    std::fs::write(&toolx, "#!/bin/sh\necho 'toolx 1.2.3'\n").unwrap();
    std::fs::set_permissions(&toolx, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", shims.display(), std::env::var("PATH").unwrap());
    let o = f
        .env("PATH", &path)
        .file(
            "v.rhai",
            r#"
test("versions", || {
    let n = nodes()[0];
    assert_eq(n.ethtool_driver("eth9").driver, "mlx5_core", "driver");
    n.ethtool_driver("eth9");
    n.run("toolx --version");
    n.run("printf 'NCCL version 2.28.9+cuda13.0\n'");
});
"#,
        )
        .args(["run", "v.rhai"])
        .reports()
        .run();
    o.code(0);
    let versions = o.json.as_ref().unwrap()["tool_versions"].clone();
    let tools: Vec<(&str, &str)> = versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["tool"].as_str().unwrap(), v["version"].as_str().unwrap()))
        .collect();
    assert_eq!(
        tools,
        [
            (
                "driver/firmware eth9",
                "mlx5_core 5.0-0, firmware 22.28.1002 (MT_0000000430)"
            ),
            ("toolx", "toolx 1.2.3"),
            ("nccl", "2.28.9+cuda13.0")
        ],
        "{versions}"
    );
}

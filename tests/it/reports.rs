//! Reports: HTML (--html), baseline comparison (--baseline), `fabcheck compare`.

use crate::common;
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
    assert!(h.contains("RDMA bandwidth per rail"));
    assert!(h.contains("below threshold"));
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

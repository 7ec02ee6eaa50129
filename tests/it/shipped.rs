//! The shipped scripts (scripts/) on the simulated two-Spark cluster (examples/sim).
use crate::common;
use common::{repo, Fab};

fn script(name: &str) -> String {
    repo().join("scripts").join(name).display().to_string()
}

/// The simulated two-Spark inventory.
pub fn sim() -> String {
    repo()
        .join("examples/sim/two-sparks.toml")
        .display()
        .to_string()
}

fn run_sim(name: &str, extra: &[&str]) -> common::Outcome {
    let mut args = vec!["run".to_string(), script(name), "-i".into(), sim()];
    args.extend(extra.iter().map(|s| s.to_string()));
    Fab::new().args(args).reports().run()
}

/// Script text `s` run on the simulation, with reports.
fn run_on_sim(s: &str) -> common::Outcome {
    Fab::new()
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-i", &sim()])
        .reports()
        .run()
}

/// The testcase names of a run, in order.
fn test_names(o: &common::Outcome) -> Vec<String> {
    o.tests()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn five_step_passes_steps_1_to_4_and_skips_5_on_the_simulation() {
    let o = run_sim("five_step_acceptance.rhai", &[]);
    o.code(0);
    for t in o.tests() {
        let name = t["name"].as_str().unwrap();
        let status = t["status"].as_str().unwrap();
        assert!(
            name.starts_with("step "),
            "testcase {name} does not start with `step N`"
        );
        if name.starts_with("step 5") {
            assert_eq!(status, "skipped", "{name}");
            assert!(o.message(name).contains("--allow-changes"));
        } else {
            assert_eq!(status, "pass", "{name}: {}", o.message(name));
        }
    }
    for n in [
        "step 1: ping mesh [spark-01 -> spark-02]",
        "step 1: ping mesh [spark-02 -> spark-01]",
        "step 2: passwordless ssh [spark-01 -> spark-02]",
        "step 3: rdma devices up [spark-01]",
        "step 3: rdma write per port [spark-01 -> spark-02]",
        "step 3: nccl all_reduce busbw and transport",
        "step 4: recipe uses fabric addresses only",
    ] {
        assert_eq!(o.status(n), "pass", "{n}");
    }
    // every rail is its own metric, and busbw per message size is recorded
    let rdma = o.test("step 3: rdma write per port [spark-01 -> spark-02]");
    let names: Vec<String> = rdma["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        names.contains(&"rdma_write_gbps[spark-01:rocep1s0f1]".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"rdma_write_gbps[spark-01:roceP2p1s0f1]".to_string()),
        "{names:?}"
    );
    let nccl = o.test("step 3: nccl all_reduce busbw and transport");
    assert!(nccl["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == "busbw_gbs@1073741824"));
    assert!(o.junit.as_deref().unwrap().contains("SIMULATED"));
    o.junit_is_valid();
}

/// Decision: the simulation also answers step 5's commands (synthesised stat/sha256sum/cp
/// answers), so with --allow-changes every step passes and nothing real is touched.
#[test]
fn five_step_with_allow_changes_runs_step_5_on_the_simulation() {
    let o = run_sim("five_step_acceptance.rhai", &["--allow-changes"]);
    o.code(0);
    assert_eq!(
        o.status("step 5: netplan backup and restore [spark-01]"),
        "pass"
    );
    assert_eq!(
        o.status("step 5: netplan backup and restore [spark-02]"),
        "pass"
    );
}

#[test]
fn recipe_with_a_foreign_address_fails_naming_it() {
    let o = run_sim(
        "five_step_acceptance.rhai",
        &["--set", "recipe=/home/nvidia/recipe/hostfile-wifi"],
    );
    o.code(1);
    let n = "step 4: recipe uses fabric addresses only";
    assert_eq!(o.status(n), "failure");
    assert!(o.message(n).contains("192.168.1.51"), "{}", o.message(n));
    let o = run_sim(
        "five_step_acceptance.rhai",
        &["--set", "recipe=/home/nvidia/recipe/serve.yaml"],
    );
    assert_eq!(o.status(n), "failure");
    assert!(
        o.message(n).contains("10.0.0.11") && o.message(n).contains("management"),
        "{}",
        o.message(n)
    );
}

fn verdict_output(sets: &[&str]) -> String {
    let mut extra = vec![];
    for s in sets {
        extra.push("--set");
        extra.push(s);
    }
    let o = run_sim("second_cable_checklist.rhai", &extra);
    assert_eq!(o.status("second cable verdict"), "pass");
    // The verdict and its reasons are on the console too, not only in the reports.
    assert!(
        o.stdout.lines().any(|l| l.trim().starts_with("verdict: ")),
        "{}",
        o.stdout
    );
    o.test("second cable verdict")["output"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn second_cable_verdict_on_every_branch() {
    // shared_limit_gbps=400: ports with their own PCIe lanes, so that the evidence (one cable
    // at 189.75 Gbit/s) leaves headroom and the four answers decide (second_cable.rs covers
    // the Spark's shared limit).
    let yes = [
        "batch_size=32",
        "model_params_b=70",
        "link_utilization_pct=85",
        "lacp_days_ok=true",
        "shared_limit_gbps=400",
    ];
    let out = verdict_output(&yes);
    assert!(out.lines().any(|l| l.trim() == "verdict: buy"), "{out}");
    let noes = [
        "batch_size=24",
        "model_params_b=8",
        "link_utilization_pct=80",
        "lacp_days_ok=false",
    ];
    for i in 0..4 {
        let mut sets = yes.to_vec();
        sets[i] = noes[i];
        let out = verdict_output(&sets);
        assert!(
            out.lines().any(|l| l.trim() == "verdict: do not buy"),
            "{sets:?}: {out}"
        );
        let key = noes[i].split('=').next().unwrap();
        assert!(
            out.lines()
                .any(|l| l.trim().starts_with("no ") && l.contains(key)),
            "{sets:?}: {out}"
        );
    }
    // inventory vars of the simulation: lacp_days_ok = false there
    let out = verdict_output(&[]);
    assert!(out.contains("verdict: do not buy"), "{out}");
    assert!(
        out.contains(
            "evidence: one cable spark-02 -> spark-01 port qsfp1: RDMA write 189.75 Gbit/s"
        ),
        "{out}"
    );
}

#[test]
fn check_compiles_all_shipped_scripts() {
    Fab::new()
        .args([
            "check",
            &script("five_step_acceptance.rhai"),
            &script("second_cable_checklist.rhai"),
            &script("fabric_baseline.rhai"),
            &script("fabric_health.rhai"),
            &script("localise.rhai"),
        ])
        .run()
        .code(0);
}

#[test]
fn fabric_baseline_runs_on_the_simulation() {
    let o = run_sim("fabric_baseline.rhai", &[]);
    o.code(0);
    assert_eq!(o.status("nccl: all_reduce 2 nodes"), "pass");
    assert_eq!(o.status("link: driver and firmware identical"), "pass");
    assert_eq!(
        o.status("health: error counters not grown under load [spark-01]"),
        "pass"
    );
    assert_eq!(o.status("workload"), "skipped");
}

/// fabric_health on the healthy simulation: every check of every node passes, with the figures
/// it judged recorded; the five-step's counters after the RDMA load show congestion
/// notifications grown (recorded, not failed) and no error counter.
#[test]
fn fabric_health_runs_clean_on_the_simulation() {
    let o = run_sim("fabric_health.rhai", &[]);
    o.code(0);
    for check in [
        "error counters",
        "gid",
        "roce mtu",
        "pcie link",
        "error counters not grown",
    ] {
        for n in ["spark-01", "spark-02"] {
            let t = format!("health: {check} [{n}]");
            assert_eq!(o.status(&t), "pass", "{t}: {}", o.message(&t));
        }
    }
    // DGX Spark has no GPUDirect RDMA (the inventory says gdr = false): skipped, saying why;
    // asked for, the check still runs (the sim answers nvidia_peermem loaded).
    let t = "health: gpudirect rdma [spark-02]";
    assert_eq!(o.status(t), "skipped");
    assert!(o.message(t).contains("gdr = false"), "{}", o.message(t));
    let asked = run_sim("fabric_health.rhai", &["--set", "peermem=true"]);
    assert_eq!(asked.status(t), "pass", "{}", asked.message(t));
    assert_eq!(
        o.status("health: fec"),
        "pass",
        "{}",
        o.message("health: fec")
    );
    assert_eq!(o.status("health: version drift"), "pass");
    assert_eq!(o.status("health: lossless roce config"), "pass");
    // The Sparks' cable is passive copper: no optics to check, said so (never a pass).
    let t = "health: optics [spark-01]";
    assert_eq!(o.status(t), "skipped");
    assert!(o.message(t).contains("passive copper"), "{}", o.message(t));
    let metrics: Vec<String> = o
        .tests()
        .iter()
        .flat_map(|t| t["metrics"].as_array().cloned().unwrap_or_default())
        .map(|m| format!("{}={}", m["name"].as_str().unwrap(), m["value"]))
        .collect();
    for m in [
        "roce_active_mtu[spark-02:roceP2p1s0f1]=4096.0",
        "pcie_gts[spark-01:enP2p1s0f1np1]=32.0",
        "pcie_width[spark-01:enp1s0f1np1]=4.0",
    ] {
        assert!(metrics.contains(&m.to_string()), "{m}: {metrics:?}");
    }
    let five = run_sim("five_step_acceptance.rhai", &[]);
    let t = five.test("step 3: error counters not grown under load [spark-01]");
    assert_eq!(t["status"], "pass", "{}", t["message"]);
    let names: Vec<&str> = t["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"counter_delta[spark-01:rocep1s0f1/1:np_cnp_sent]"),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.contains("_err")), "{names:?}");
}

/// The HTML report's health table per node: the CRC counter that grew under load is a
/// highlighted row of spark-02's table, the congestion counters that grew are plain rows.
#[test]
fn html_health_table_highlights_the_counter_that_grew() {
    let o = Fab::new()
        .args([
            "run",
            &script("five_step_acceptance.rhai"),
            "-i",
            &sim(),
            "--scenario",
            "crc-errors-growing",
            "--html",
            "report.html",
        ])
        .run();
    o.code(1);
    let html = std::fs::read_to_string(o.dir.join("report.html")).unwrap();
    let i = html.find("Fabric health per node").expect("health section");
    let sec = &html[i..html[i..].find("</section>").unwrap() + i];
    let spark02 = &sec[sec.find("<h3>spark-02</h3>").expect("spark-02 table")..];
    let row = spark02
        .split("<tr>")
        .find(|r| r.contains("rx_crc_errors_phy"))
        .expect("crc row");
    assert!(row.contains("class=\"num bad\">1842"), "{row}");
    let cnp = spark02
        .split("<tr>")
        .find(|r| r.contains("np_cnp_sent"))
        .expect("cnp row");
    assert!(!cnp.contains("bad"), "{cnp}");
}

/// The HTML shows, per node, the RoCE version of the GID the tests use (a v1 GID highlighted),
/// and the tool versions table marks the node whose NCCL differs from the others' (drift).
#[test]
fn html_shows_the_gid_version_and_marks_version_drift() {
    let html = |scenario: &str| {
        let o = Fab::new()
            .args([
                "run",
                &script("fabric_health.rhai"),
                "-i",
                &sim(),
                "--scenario",
                scenario,
                "--html",
                "report.html",
            ])
            .run();
        o.code(1);
        std::fs::read_to_string(o.dir.join("report.html")).unwrap()
    };
    let h = html("roce-v1-gid");
    let i = h.find("Fabric health per node").expect("health section");
    let sec = &h[i..h[i..].find("</section>").unwrap() + i];
    let spark02 = &sec[sec.find("<h3>spark-02</h3>").expect("spark-02 table")..];
    let gid = |dev: &str| {
        spark02
            .split("<tr>")
            .find(|r| r.contains("RoCE GID version") && r.contains(dev))
            .unwrap_or_else(|| panic!("{dev} row in {spark02}"))
            .to_string()
    };
    assert!(gid("rocep1s0f1 gid3").contains("class=\"num bad\">1 "));
    assert!(!gid("roceP2p1s0f1 gid3").contains("bad"));
    let h = html("nccl-drift");
    let tools = &h[h.find("<h2>Tool versions</h2>").expect("tool versions")..];
    let nccl: Vec<&str> = tools
        .split("<tr>")
        .filter(|r| r.contains("libnccl2"))
        .collect();
    assert_eq!(nccl.len(), 2, "{tools}");
    assert!(nccl.iter().all(|r| r.contains("(differs)")), "{nccl:?}");
    let kernel: Vec<&str> = tools
        .split("<tr>")
        .filter(|r| r.contains(">kernel<"))
        .collect();
    assert!(
        kernel.len() == 2 && kernel.iter().all(|r| !r.contains("differs")),
        "{kernel:?}"
    );
}

/// Step 3 with no RDMA device and no nccl-tests: errors that name what is missing.
#[test]
fn step_3_without_rdma_devices_or_nccl_tests_is_an_error() {
    let t = format!(
        "[[command]]\ncommand = \"rdma link\"\nstdout = \"\"\n\
         [[command]]\ncommand = \"ethtool enp1s0f1np1\"\nstdout = \"\"\n{}",
        common::NO_ALL_REDUCE_PERF
    );
    let o = common::step_3_on_replay_pair(&t, &[]);
    o.code(1);
    let d = "step 3: rdma devices up [a]";
    assert_eq!(o.status(d), "error", "{}", o.message(d));
    assert!(o.message(d).contains("no RDMA device"), "{}", o.message(d));
    let w = "step 3: rdma write per port [a -> b]";
    assert_eq!(o.status(w), "error", "{}", o.message(w));
    let n = "step 3: nccl all_reduce busbw and transport";
    assert_eq!(o.status(n), "error", "{}", o.message(n));
    assert!(
        o.message(n).contains("nccl-tests missing"),
        "{}",
        o.message(n)
    );
}

/// Every ```rhai example of the README runs against the simulated cluster without an
/// unrecorded command (the simulation answers what the README shows), and so do the shipped
/// scripts under --dry-run and the README's --set variants.
#[test]
fn the_simulation_answers_every_readme_example_and_variant() {
    // The README's examples and the reference's (docs/*.md), wherever the text lives.
    let mut readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let in_readme = readme.matches("```rhai").count();
    assert!(in_readme >= 1, "the README shows no rhai example");
    let mut docs: Vec<_> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    for p in docs {
        readme.push_str(&std::fs::read_to_string(p).unwrap());
    }
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for l in readme.lines() {
        match (&mut cur, l.trim_start()) {
            (None, "```rhai") => cur = Some(String::new()),
            (Some(b), "```") => {
                blocks.push(std::mem::take(b));
                cur = None;
            }
            (Some(b), _) => {
                b.push_str(l);
                b.push('\n');
            }
            _ => {}
        }
    }
    assert!(blocks.len() >= 3, "README rhai examples: {}", blocks.len());
    let inv = repo()
        .join("examples/sim/two-sparks.toml")
        .display()
        .to_string();
    let mut runs: Vec<(String, Vec<String>)> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        // Fragments (metric lines) use variables of a surrounding test: run whole scripts only.
        if !b.contains("test") {
            continue;
        }
        runs.push((format!("readme-{i}.rhai"), vec![b.clone()]));
    }
    for (name, body) in &runs {
        let o = Fab::new()
            .file(name, &body[0])
            .args(["run", name, "-i", &inv])
            .reports()
            .run();
        for t in o.tests() {
            let m = t["message"].as_str().unwrap_or("");
            assert!(
                !m.contains("was not recorded"),
                "{name}: {}: {m}",
                t["name"]
            );
            assert_ne!(
                t["status"], "error",
                "{name}: {}: {m}\n{}",
                t["name"], body[0]
            );
        }
    }
    for (script, extra) in [
        ("five_step_acceptance.rhai", vec!["--dry-run"]),
        ("second_cable_checklist.rhai", vec!["--dry-run"]),
        ("fabric_baseline.rhai", vec!["--dry-run"]),
        ("fabric_health.rhai", vec!["--dry-run"]),
        (
            "second_cable_checklist.rhai",
            vec!["--set", "second_cable=true"],
        ),
        (
            "five_step_acceptance.rhai",
            vec![
                "--allow-changes",
                "--set",
                "recipe=/home/nvidia/recipe/hostfile",
            ],
        ),
    ] {
        let o = run_sim(script, &extra);
        for t in o.tests() {
            let m = t["message"].as_str().unwrap_or("");
            assert!(
                !m.contains("was not recorded"),
                "{script} {extra:?}: {}: {m}",
                t["name"]
            );
        }
    }
}

/// Issue 20 item 3: one node selected checks nothing across nodes: every pair check and the
/// NCCL part are error testcases that say so (exit 1), never "0 failed, exit 0".
#[test]
fn five_step_on_one_node_is_an_error_not_a_pass() {
    let o = run_sim("five_step_acceptance.rhai", &["--set", "nodes=spark-01"]);
    o.code(1);
    for n in [
        "step 1: ping mesh",
        "step 2: passwordless ssh",
        "step 3: rdma write per port",
        "step 3: nccl all_reduce busbw and transport",
    ] {
        assert_eq!(o.status(n), "error", "{n}: {}", o.message(n));
        assert!(
            o.message(n).contains("at least two"),
            "{n}: {}",
            o.message(n)
        );
    }
    assert_eq!(o.status("step 3: link speed [spark-01]"), "pass");
}

/// Issue 20 item 3: test_pairs over 0 or 1 node is one error testcase; a node listed twice
/// counts once, so no self-pair is ever scheduled.
#[test]
fn test_pairs_never_pairs_a_node_with_itself_nor_passes_on_one_node() {
    let s = r#"
let a = node("spark-01"); let b = node("spark-02");
test_pairs([a], "one", |x, y| { assert(true, "x"); });
test_pairs([], "none", |x, y| { assert(true, "x"); });
test_pairs([a, b, a], "ring", #{ pattern: "ring" }, |x, y| { assert(x.name != y.name, `self-pair ${x.name}`); });
test_pairs([a, b], "one way", #{ both_directions: false }, |x, y| { assert(true, "x"); });
"#;
    let o = run_on_sim(s);
    o.code(1);
    assert_eq!(o.status("one"), "error");
    assert!(
        o.message("one").contains("at least two distinct nodes")
            && o.message("one").contains("spark-01")
    );
    assert_eq!(o.status("none"), "error");
    let names = test_names(&o);
    let ring: Vec<&String> = names.iter().filter(|n| n.starts_with("ring")).collect();
    assert_eq!(
        ring,
        ["ring [spark-01 -> spark-02]", "ring [spark-02 -> spark-01]"],
        "{names:?}"
    );
    let one_way: Vec<&String> = names.iter().filter(|n| n.starts_with("one way")).collect();
    assert_eq!(one_way, ["one way [spark-01 -> spark-02]"], "{names:?}");
}

/// Issue 24 item 6: scripts quote with fabcheck's own helper (util::names::quote: backslashes
/// outside the quotes, which fish reads as POSIX shells do), not a copy of it: `shell_quote`
/// and `common::shq` give the same words.
#[test]
fn scripts_quote_words_as_fabcheck_does() {
    let s = r#"
import "common" as common;
test("quote", || {
    assert_eq(shell_quote("/etc/netplan/40-cx7.yaml"), "/etc/netplan/40-cx7.yaml", "safe: unchanged");
    assert_eq(shell_quote("it's"), "'it'\\''s'", "single quote");
    assert_eq(shell_quote("a\\b"), "'a'\\\\'b'", "backslash outside the quotes");
    assert_eq(common::shq("a b\\c"), shell_quote("a b\\c"), "shq is shell_quote");
});
"#;
    let o = run_on_sim(s);
    o.code(0);
    assert_eq!(o.status("quote"), "pass", "{}", o.message("quote"));
}

/// Issue 24 item 6: options come before the closure in test, test_each and test_pairs; the
/// old order `test_pairs(nodes, name, f, opts)` still registers the same testcases with the
/// same options, and says it is deprecated once per run however often it is met.
#[test]
fn test_pairs_old_argument_order_still_works_with_one_deprecation_warning() {
    let s = r#"
let a = node("spark-01"); let b = node("spark-02");
test_pairs([a, b], "new", #{ both_directions: false, tags: ["t"] }, |x, y| { assert(x.name != y.name, "x"); });
test_pairs([a, b], "old", |x, y| { assert(x.name != y.name, "x"); }, #{ both_directions: false, tags: ["t"] });
test_pairs([a, b], "old again", |x, y| { assert(x.name != y.name, "x"); }, #{ pattern: "ring" });
"#;
    let o = run_on_sim(s);
    o.code(0);
    let names = test_names(&o);
    assert_eq!(
        names,
        [
            "new [spark-01 -> spark-02]",
            "old [spark-01 -> spark-02]",
            "old again [spark-01 -> spark-02]",
            "old again [spark-02 -> spark-01]"
        ],
        "{names:?}"
    );
    for n in ["old [spark-01 -> spark-02]", "new [spark-01 -> spark-02]"] {
        assert_eq!(o.test(n)["tags"], serde_json::json!(["t"]), "{n}");
    }
    let said = o
        .stderr
        .matches("test_pairs(nodes, name, f, opts) is deprecated")
        .count();
    assert_eq!(said, 1, "stderr: {}", o.stderr);
    assert!(
        o.stderr.contains("write test_pairs(nodes, name, opts, f)")
            && o.stderr.contains("s.rhai:4"),
        "{}",
        o.stderr
    );
    let new_only = Fab::new()
        .file("s.rhai", &s.lines().take(3).collect::<Vec<_>>().join("\n"))
        .args(["run", "s.rhai", "-i", &sim()])
        .run();
    assert!(
        !new_only.stderr.contains("deprecated"),
        "{}",
        new_only.stderr
    );
}

/// Issue 20 item 2: the RDMA mesh runs both directions by default (spark-02 transmits too), and
/// `--set both_directions=false` goes one way when time is short.
#[test]
fn rdma_pairs_run_both_directions_unless_told_one_way() {
    for (extra, want) in [(vec![], 2), (vec!["--set", "both_directions=false"], 1)] {
        let mut args = vec!["--filter", "rdma write"];
        args.extend(extra);
        let o = run_sim("five_step_acceptance.rhai", &args);
        o.code(0);
        let names: Vec<String> = o
            .tests()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names.len(), want, "{names:?}");
        assert!(names.contains(&"step 3: rdma write per port [spark-01 -> spark-02]".to_string()));
        if want == 2 {
            assert!(
                names.contains(&"step 3: rdma write per port [spark-02 -> spark-01]".to_string())
            );
        }
    }
}

/// Issue 20 item 4: `-w spark-01` must not change step 4's ground truth: the hostfile naming
/// both nodes' fabric addresses is still correct (spark-02 is in the inventory, not selected).
#[test]
fn step_4_judges_against_the_whole_inventory_whatever_w_selects() {
    let o = run_sim(
        "five_step_acceptance.rhai",
        &["-w", "spark-01", "--filter", "step 4"],
    );
    assert_eq!(
        o.status("step 4: recipe uses fabric addresses only"),
        "pass",
        "{}",
        o.message("step 4: recipe uses fabric addresses only")
    );
    o.code(0);
}

/// Issue 20 item 1: an inventory speed_mbps below what ethtool lists is the expected speed (a
/// port meant to run at 100G passes at 100G); the same port without it fails.
#[test]
fn an_inventory_speed_makes_a_slower_port_expected() {
    let fail = run_sim(
        "five_step_acceptance.rhai",
        &["--scenario", "negotiated-100g", "--filter", "link speed"],
    );
    fail.code(1);
    let ok = run_sim(
        "five_step_acceptance.rhai",
        &[
            "--scenario",
            "negotiated-100g",
            "--filter",
            "link speed",
            "--set",
            "speed_mbps=100000",
        ],
    );
    ok.code(0);
    assert!(ok.tests().iter().all(|t| t["status"] == "pass"));
}

/// `n.ping_all` on the simulation: one result per target in order, each with its address and
/// source interface (the first rail's ping and the second's, at once); a target map with an
/// unknown key, or neither an address nor a map, is an error naming it.
#[test]
fn ping_all_answers_per_target_and_refuses_bad_targets() {
    let s = r#"
test("both rails at once", || {
    let a = node("spark-01");
    let ps = a.ping_all([#{ ip: "192.168.100.11", iface: "enp1s0f1np1" }, #{ ip: "192.168.200.11", iface: "enP2p1s0f1np1" }], #{ count: 5 });
    assert_eq(ps.len(), 2, "results");
    assert_eq(ps[0].ip, "192.168.100.11", "first");
    assert_eq(ps[1].ip, "192.168.200.11", "second");
    assert_eq(ps[1].iface, "enP2p1s0f1np1", "iface");
    assert_eq(ps[1].transmitted, 5, "sent");
    assert_eq(ps[1].loss_pct, 0.0, "loss");
});
test("bad key", || { node("spark-01").ping_all([#{ ip: "192.168.100.11", ifcae: "x" }]); });
test("bad target", || { node("spark-01").ping_all([42]); });
"#;
    let o = run_on_sim(s);
    assert_eq!(
        o.status("both rails at once"),
        "pass",
        "{}",
        o.message("both rails at once")
    );
    let m = o.message("bad key");
    assert!(
        o.status("bad key") == "error" && m.contains("ifcae") && m.contains("iface"),
        "{m}"
    );
    let m = o.message("bad target");
    assert!(
        m.contains("an address or #{ ip, iface, size, count, dont_fragment }"),
        "{m}"
    );
}

/// Five-step step 1 pings once per pair (issue 49): the ping mesh's one `ping_all` command
/// carries the jumbo don't-fragment pings too, and the pair's MTU testcase judges their answers
/// without a ping of its own; with the MTU testcase alone (no mesh ran) it pings itself.
#[test]
fn five_step_step_1_sends_the_jumbo_pings_with_the_mesh_pings() {
    let pings = |o: &common::Outcome, test: &str| -> Vec<String> {
        o.test(test)["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["command"].as_str())
            .filter(|c| c.contains("ping -n"))
            .map(String::from)
            .collect()
    };
    let mesh = "step 1: ping mesh [spark-01 -> spark-02]";
    let mtu = "step 1: MTU end to end [spark-01 -> spark-02]";
    let o = run_sim("five_step_acceptance.rhai", &["--filter", "step 1"]);
    assert_eq!(o.status(mesh), "pass", "{}", o.message(mesh));
    assert_eq!(o.status(mtu), "pass", "{}", o.message(mtu));
    let m = pings(&o, mesh);
    assert_eq!(m.len(), 1, "one command: {m:?}");
    assert!(
        m[0].contains("-M do") && m[0].contains("-s 8972"),
        "{}",
        m[0]
    );
    assert!(pings(&o, mtu).is_empty(), "{:?}", pings(&o, mtu));
    let o = run_sim("five_step_acceptance.rhai", &["--filter", "MTU end to end"]);
    assert_eq!(o.status(mtu), "pass", "{}", o.message(mtu));
    assert_eq!(pings(&o, mtu).len(), 1, "the MTU testcase alone pings");
}

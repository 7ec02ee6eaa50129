//! The fault-scenario catalogue of the simulation (`examples/sim/transcripts/scenarios/`): each
//! scenario overlays one fault on the healthy two-Spark transcripts; the shipped scripts it
//! names must fail the testcases it lists, naming the fault, and nothing else may fail. The
//! healthy simulation must produce no failure and no error in any shipped script.
use crate::common::{repo, Fab, Outcome};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Deserialize)]
struct Scenario {
    description: String,
    #[serde(default)]
    healthy: bool,
    #[serde(default)]
    expect: Vec<Expect>,
    /// Lines `fabcheck discover --diff` must print (tests/it/discover.rs runs those).
    #[serde(default)]
    discover_diff: Vec<String>,
    /// What the run's first diagnosis's `part` field alone must name: the injected fault's
    /// part (issue 46: not its rule, not its cause).
    #[serde(default)]
    parts: Vec<String>,
    /// The same, per script, where the first diagnosis differs between scripts.
    #[serde(default)]
    parts_by_script: BTreeMap<String, Vec<String>>,
    /// The first diagnosis's rule (never `unexplained`), for all scripts or per script.
    #[serde(default)]
    rule: Option<String>,
    #[serde(default)]
    rule_by_script: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Expect {
    script: String,
    test: String,
    status: String,
    message: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
}

fn scenarios_dir() -> PathBuf {
    repo().join("examples/sim/transcripts/scenarios")
}

fn catalogue() -> Vec<(String, Scenario)> {
    let mut v: Vec<(String, Scenario)> = std::fs::read_dir(scenarios_dir())
        .expect("examples/sim/transcripts/scenarios")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("scenario.toml").is_file())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(e.path().join("scenario.toml")).unwrap();
            let s: Scenario =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{name}/scenario.toml: {e}"));
            (name, s)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn run(script: &str, scenario: Option<&str>, args: &[String]) -> Outcome {
    let mut a = vec![
        "run".to_string(),
        repo().join("scripts").join(script).display().to_string(),
        "-i".into(),
        repo()
            .join("examples/sim/two-sparks.toml")
            .display()
            .to_string(),
    ];
    if let Some(s) = scenario {
        a.extend(["--scenario".to_string(), s.to_string()]);
    }
    a.extend(args.iter().cloned());
    Fab::new().args(a).reports().run()
}

/// Testcases that did not pass or skip: name -> (status, message).
fn problems(o: &Outcome) -> BTreeMap<String, (String, String)> {
    o.tests()
        .iter()
        .filter(|t| !matches!(t["status"].as_str(), Some("pass") | Some("skipped")))
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                (
                    t["status"].as_str().unwrap().to_string(),
                    t["message"].as_str().unwrap_or("").to_string(),
                ),
            )
        })
        .collect()
}

/// The run opens with a diagnosis (JSON `diagnosis`, the console summary, the JUnit
/// `diagnosis` testcase) whose first entry has rule `rule` (never `unexplained`) and whose
/// `part` field alone names every string of `parts`, and every red is the evidence of one
/// cause.
fn diagnosis_names_the_part(
    o: &Outcome,
    rule: Option<&String>,
    parts: &[String],
    reds: &BTreeMap<String, (String, String)>,
    label: &str,
) {
    assert!(
        !parts.is_empty() && rule.is_some(),
        "{label}: a fault scenario must list `rule` and `parts` (PARTS in scenarios.py): its first diagnosis's rule and what its part names"
    );
    let json = o.json.as_ref().expect("--json");
    let d = json["diagnosis"].as_array().cloned().unwrap_or_default();
    assert!(!d.is_empty(), "{label}: no diagnosis\n{}", o.stdout);
    let (got_rule, part) = (
        d[0]["rule"].as_str().unwrap_or(""),
        d[0]["part"].as_str().unwrap_or(""),
    );
    assert_ne!(
        got_rule, "unexplained",
        "{label}: the first diagnosis is unexplained: {:#}",
        d[0]
    );
    assert_eq!(
        Some(got_rule),
        rule.map(String::as_str),
        "{label}: the first diagnosis's rule: {:#}",
        d[0]
    );
    for p in parts {
        assert!(
            part.contains(p.as_str()),
            "{label}: the first diagnosis's part lacks {p:?}: {part}"
        );
    }
    for red in reds.keys() {
        assert!(
            d.iter().any(|x| x["evidence"]
                .as_array()
                .is_some_and(|e| e.iter().any(|n| n.as_str() == Some(red.as_str())))),
            "{label}: `{red}` is in no diagnosis: {d:#?}"
        );
    }
    let summary = o.stdout.find("Diagnosis (");
    let problems = o.stdout.find("Problems:");
    assert!(
        summary.is_some() && summary < problems,
        "{label}: the console summary does not open with the diagnosis\n{}",
        o.stdout
    );
    let junit = o.junit.as_deref().unwrap_or("");
    assert!(
        junit.contains("<testcase name=\"diagnosis\"") && junit.contains("diagnosis.1.part"),
        "{label}: no diagnosis testcase and properties in JUnit"
    );
}

/// `name="N"` of the first element that has it (JUnit's `<testsuites>` totals).
fn xml_count(xml: &str, name: &str) -> usize {
    let key = format!(" {name}=\"");
    let at = xml
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {xml}"))
        + key.len();
    xml[at..at + xml[at..].find('"').unwrap()].parse().unwrap()
}

/// Issue 50 (first day): JUnit counted the diagnosis testcase as one more failure (6 failures
/// in JUnit, 5 in the console). The diagnosis testcase passes, carrying the causes in its
/// properties and system-out, and JUnit's failures and errors are the console's.
#[test]
fn junit_counts_the_same_failures_as_the_console_the_diagnosis_passes() {
    let o = run("fabric_baseline.rhai", Some("rdma-rail-down-on-peer"), &[]);
    o.code(1);
    let line = o
        .stdout
        .lines()
        .rev()
        .find(|l| l.contains(" tests: ") && l.contains(" failed, "))
        .unwrap_or_else(|| panic!("no counts line:\n{}", o.stdout));
    let count = |what: &str| -> usize {
        let end = line.find(what).unwrap_or_else(|| panic!("{what}: {line}"));
        line[..end].rsplit(' ').next().unwrap().parse().unwrap()
    };
    let (failed, errors) = (count(" failed"), count(" errors"));
    assert!(failed > 0 && errors > 0, "{line}");
    let junit = o.junit.as_deref().unwrap();
    assert!(o.stdout.contains("Diagnosis ("), "{}", o.stdout);
    assert_eq!(
        (xml_count(junit, "failures"), xml_count(junit, "errors")),
        (failed, errors),
        "JUnit's totals against the console's `{line}`\n{junit}"
    );
    // The diagnosis is still there: a passed testcase with the causes.
    let case = &junit[junit
        .find("<testcase name=\"diagnosis\"")
        .expect("diagnosis testcase")..];
    let case = &case[..case.find("</testcase>").expect("a diagnosis body")];
    assert!(!case.contains("<failure"), "{case}");
    assert!(
        case.contains("<system-out>") && case.contains("spark-02"),
        "{case}"
    );
    assert!(junit.contains("diagnosis.1.part"), "{junit}");
    assert_eq!(
        o.junit_is_valid(),
        format!("junitparser cases {}", xml_count(junit, "tests"))
    );
}

#[test]
fn every_fault_scenario_is_caught_by_exactly_the_testcases_it_lists() {
    let all = catalogue();
    assert!(all.len() >= 7, "the catalogue has {} scenarios", all.len());
    let mut report = Vec::new();
    for (name, s) in &all {
        assert!(
            s.healthy || !s.expect.is_empty() || !s.discover_diff.is_empty(),
            "{name}: a fault scenario must list the testcases (or discover --diff lines) that catch it"
        );
        // One run per (script, args) the scenario names; healthy variants also run the
        // scripts they name, and must come out clean.
        let mut runs: BTreeMap<(String, Vec<String>), Vec<&Expect>> = BTreeMap::new();
        for e in &s.expect {
            runs.entry((e.script.clone(), e.args.clone()))
                .or_default()
                .push(e);
        }
        for ((script, args), expects) in runs {
            let o = run(&script, Some(name), &args);
            let got = problems(&o);
            let label = format!("scenario {name} ({}) / {script} {args:?}", s.description);
            assert!(
                o.junit
                    .as_deref()
                    .unwrap_or("")
                    .contains(&format!("fault scenario `{name}`")),
                "{label}: the JUnit report does not name the scenario"
            );
            for e in &expects {
                if s.healthy {
                    continue;
                }
                let (status, message) = got.get(&e.test).cloned().unwrap_or_else(|| {
                    panic!(
                        "{label}: `{}` did not fail; problems: {got:#?}\n{}",
                        e.test, o.stdout
                    )
                });
                assert_eq!(status, e.status, "{label}: `{}`: {message}", e.test);
                for m in &e.message {
                    assert!(
                        message.contains(m.as_str()),
                        "{label}: `{}` message lacks {m:?}: {message}",
                        e.test
                    );
                }
            }
            let unexpected: Vec<_> = got
                .iter()
                .filter(|(t, _)| s.healthy || !expects.iter().any(|e| &e.test == *t))
                .collect();
            assert!(
                unexpected.is_empty(),
                "{label}: unexpected problems: {unexpected:#?}"
            );
            if !s.healthy {
                let parts = s.parts_by_script.get(&script).unwrap_or(&s.parts);
                let rule = s.rule_by_script.get(&script).or(s.rule.as_ref());
                diagnosis_names_the_part(&o, rule, parts, &got, &label);
            }
            o.code(if s.healthy { 0 } else { 1 });
            report.push(format!("{name}/{script}: {} problem(s)", got.len()));
        }
    }
    eprintln!("{}", report.join("\n"));
}

/// The diagnosis entries of rule `odd_one_out` (WARN-level notes) in result.json.
fn odd_ones(o: &Outcome) -> Vec<serde_json::Value> {
    let json = o.json.as_ref().expect("--json");
    let d = json["diagnosis"].as_array().cloned().unwrap_or_default();
    d.into_iter()
        .filter(|x| x["rule"] == "odd_one_out")
        .collect()
}

fn rdma_pct_80() -> Vec<String> {
    vec!["--set".to_string(), "rdma_pct=80".to_string()]
}

#[test]
fn a_rail_15pct_below_its_peers_is_the_odd_one_out_and_fails_nothing() {
    let mut args = rdma_pct_80();
    args.extend(["--html".to_string(), "{dir}/out/report.html".to_string()]);
    let o = run(
        "fabric_baseline.rhai",
        Some("rail-15pct-below-peers"),
        &args,
    );
    assert!(problems(&o).is_empty(), "{:#?}", problems(&o));
    // The HTML matrix of the rail marks the cell (spark-01 -> spark-02) and only that one.
    let cells = o.odd_matrix_cells();
    assert_eq!(cells.len(), 1, "odd cells in the HTML matrix: {cells:#?}");
    assert!(
        cells[0].contains("spark-01 -")
            && cells[0].contains(" spark-02: 81.02 Gbit/s")
            && cells[0].contains(">81.02 ◆<"),
        "{}",
        cells[0]
    );
    o.code(0);
    let odd = odd_ones(&o);
    assert_eq!(odd.len(), 1, "{odd:#?}\n{}", o.stdout);
    let cause = odd[0]["cause"].as_str().unwrap_or("");
    assert!(
        cause.starts_with("odd one out: rdma_write_gbps[spark-01:roceP2p1s0f1] 81.02 Gbit/s is 15 % below the median")
            && cause.ends_with("(passes its fixed threshold 80)"),
        "{cause}"
    );
    assert_eq!(
        odd[0]["part"],
        "spark-01 port qsfp1 enP2p1s0f1np1 (roceP2p1s0f1)"
    );
    assert!(o.stdout.contains(cause), "console: {}", o.stdout);
    let junit = o.junit.as_deref().unwrap_or("");
    assert!(
        junit.contains("<testcase name=\"diagnosis\"") && !junit.contains("type=\"diagnosis\""),
        "JUnit: the note is a passing diagnosis testcase, not a failure\n{junit}"
    );
}

#[test]
fn the_healthy_simulation_has_no_odd_one_out_note() {
    let o = run("fabric_baseline.rhai", None, &rdma_pct_80());
    o.code(0);
    assert!(odd_ones(&o).is_empty(), "{:#?}", odd_ones(&o));
}

#[test]
fn the_healthy_simulation_fails_nothing_in_any_shipped_script() {
    for script in [
        "five_step_acceptance.rhai",
        "fabric_baseline.rhai",
        "fabric_health.rhai",
    ] {
        let o = run(script, None, &["--allow-changes".to_string()]);
        assert!(problems(&o).is_empty(), "{script}: {:#?}", problems(&o));
        o.code(0);
    }
}

#[test]
fn an_unknown_scenario_is_a_usage_error_listing_the_known_ones() {
    let o = run("five_step_acceptance.rhai", Some("no-such-fault"), &[]);
    o.code(2);
    assert!(
        o.stderr.contains("no-such-fault") && o.stderr.contains("negotiated-100g"),
        "{}",
        o.stderr
    );
}

/// Issue 30 item 4: the README's fault catalogue (docs/simulation.md's table, which the README
/// links) has a row for every scenario of the catalogue, so a new scenario cannot ship
/// undocumented.
#[test]
fn every_scenario_has_a_row_in_the_documented_catalogue() {
    let doc =
        std::fs::read_to_string(repo().join("docs/simulation.md")).expect("docs/simulation.md");
    let section = doc
        .split("## Fault scenarios on the simulation")
        .nth(1)
        .expect("docs/simulation.md has a `## Fault scenarios on the simulation` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
    let missing: Vec<String> = catalogue()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| {
            let cell = format!("`{name}`");
            !rows
                .iter()
                .any(|r| r.split('|').nth(1).is_some_and(|c| c.contains(&cell)))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "scenarios without a row in docs/simulation.md's table (add one: scenario | the fault | caught by): {missing:?}"
    );
}

/// Issue 32 part 3, confirm before blaming: an RDMA bandwidth failure is measured again
/// (`confirm`, default 1) before it is one. A dip that does not reproduce (`rail-dips-once`)
/// is FLAKY — a pass that is not green: labelled on the console, counted in the summary and
/// the JSON, both readings in every report; with `--set confirm=0` it is a failure; a fault that
/// reproduces (`rail-at-55pct`) fails, saying both measurements failed.
#[test]
fn a_failure_that_does_not_reproduce_is_flaky_and_one_that_does_is_confirmed() {
    let t = "step 3: rdma write per port [spark-01 -> spark-02]";
    let filter = ["--filter".to_string(), "rdma write".to_string()];
    let mut html = filter.to_vec();
    html.extend(["--html".to_string(), "{dir}/out/report.html".to_string()]);
    let o = run("five_step_acceptance.rhai", Some("rail-dips-once"), &html);
    o.code(0);
    let r = o.test(t);
    assert_eq!(
        (r["status"].as_str(), r["flaky"].as_bool()),
        (Some("pass"), Some(true)),
        "{r}"
    );
    let attempts = r["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{r}");
    assert_eq!(attempts[0]["status"], "failure");
    let reading = |i: usize| attempts[i]["readings"].to_string();
    assert!(
        reading(0).contains("rdma_write_gbps[spark-01:roceP2p1s0f1]=52.3 Gbit/s"),
        "{r}"
    );
    assert!(
        reading(1).contains("rdma_write_gbps[spark-01:roceP2p1s0f1]=94.78 Gbit/s"),
        "{r}"
    );
    assert!(
        o.stdout.contains(&format!("FLAKY {t}")) && o.stdout.contains("2 passed (1 flaky)"),
        "{}",
        o.stdout
    );
    let junit = o.junit.as_deref().unwrap_or("");
    assert!(
        junit.contains("flaky: 1 of 2 attempts failed") && junit.contains("=52.3 Gbit/s"),
        "{junit}"
    );
    let html = std::fs::read_to_string(o.dir.join("out/report.html")).unwrap_or_default();
    assert!(
        html.contains("badge flaky") && html.contains("1 flaky"),
        "no FLAKY in the HTML"
    );

    let mut once = filter.to_vec();
    once.extend(["--set".to_string(), "confirm=0".to_string()]);
    let o = run("five_step_acceptance.rhai", Some("rail-dips-once"), &once);
    o.code(1);
    assert_eq!(o.status(t), "failure");
    assert_eq!(o.test(t)["attempts"].as_array().map(|a| a.len()), Some(1));

    let o = run("five_step_acceptance.rhai", Some("rail-at-55pct"), &filter);
    assert_eq!(o.status(t), "failure");
    let notes = o.test(t)["notes"].to_string();
    assert!(
        notes.contains("confirmed: failed all 2 measurements"),
        "{notes}"
    );
}

/// Latency next to bandwidth (issue 33, issue 32 part 2): the baseline measures every rail's
/// RDMA write latency pairwise; a rail far above its peers (`rail-latency-high`: 4.95 us where
/// the others answer 1.47) fails nothing without a fixed line but is the diagnosis's odd one out
/// and amber in the HTML latency matrix; `--set rdma_lat_max_usec=3` makes it a failure naming
/// the rail.
#[test]
fn a_rail_far_above_its_peers_in_latency_is_named_and_a_fixed_line_fails_it() {
    let t = "rdma: latency per rail [spark-01 -> spark-02]";
    let html = vec!["--html".to_string(), "{dir}/out/report.html".to_string()];
    let o = run("fabric_baseline.rhai", Some("rail-latency-high"), &html);
    assert!(problems(&o).is_empty(), "{:#?}", problems(&o));
    o.code(0);
    let odd = odd_ones(&o);
    let cause = odd[0]["cause"].as_str().unwrap_or("");
    assert!(
        cause.starts_with("odd one out: rdma_lat_usec[spark-01:roceP2p1s0f1] 4.95 us is 237 % above the median 1.47 us"),
        "{odd:#?}"
    );
    assert_eq!(
        odd[0]["part"],
        "spark-01 port qsfp1 enP2p1s0f1np1 (roceP2p1s0f1)"
    );
    let cells = o.odd_matrix_cells();
    assert_eq!(cells.len(), 1, "{cells:#?}");
    assert!(cells[0].contains(">4.95 ◆<"), "{}", cells[0]);

    let mut line = vec!["--set".to_string(), "rdma_lat_max_usec=3".to_string()];
    line.extend(["--filter".to_string(), "latency".to_string()]);
    let o = run("fabric_baseline.rhai", Some("rail-latency-high"), &line);
    assert_eq!(o.status(t), "failure", "{}", o.stdout);
    assert!(
        o.message(t)
            .contains("latency above 3 us on roceP2p1s0f1 4.95 us"),
        "{}",
        o.message(t)
    );
    assert_eq!(
        o.status("rdma: latency per rail [spark-02 -> spark-01]"),
        "pass"
    );
    // the healthy simulation is within the same line
    let o = run("fabric_baseline.rhai", None, &line);
    assert!(problems(&o).is_empty(), "{:#?}", problems(&o));
}

/// Issue 46 item 5: the firmware against NVIDIA's release table for the running driver. Both
/// nodes alike (no drift) still warn, naming each node and its interfaces; the driver's own
/// bundled firmware, the inbox driver of the healthy simulation, and a site that names its
/// firmware are not warned.
#[test]
fn firmware_outside_the_drivers_release_warns_naming_node_and_devices() {
    const T: &str = "health: version drift";
    let o = run(
        "fabric_health.rhai",
        Some("firmware-outside-driver-release"),
        &[],
    );
    o.code(0);
    let w = o.warnings(T);
    for node in ["spark-01", "spark-02"] {
        assert!(
            w.iter().any(|x| x.starts_with(&format!("{node} enp1s0f1np1, enP2p1s0f1np1: ConnectX-7 firmware 28.43.1014 under driver 25.07-0.9.7"))
                && x.contains("bundles ConnectX-7 firmware 28.46.1006")),
            "{node}: {w:#?}"
        );
    }
    for (scenario, args) in [
        (Some("doca-driver-with-its-firmware"), vec![]),
        (None, vec![]),
        (
            Some("firmware-outside-driver-release"),
            vec!["--set".to_string(), "firmware=28.43.1014".to_string()],
        ),
    ] {
        let o = run("fabric_health.rhai", scenario, &args);
        o.code(0);
        let w = o.warnings(T);
        assert!(
            !w.iter().any(|x| x.contains("release table")),
            "{scenario:?} {args:?}: {w:#?}"
        );
    }
}

/// Issue 46 item 9: the two-Spark inventory without `ports` (each rail a port of its own) is
/// said first as an inventory problem naming the node, both PCIe paths and the line to add;
/// the run still judges each rail against its share of the port (no red on the healthy sim).
#[test]
fn rails_of_one_port_without_ports_are_an_inventory_problem_said_first() {
    let text = std::fs::read_to_string(repo().join("examples/sim/two-sparks.toml")).unwrap();
    let dir = repo()
        .join("examples/sim/transcripts")
        .display()
        .to_string();
    let inv: String = text
        .lines()
        .filter(|l| !l.starts_with("ports = "))
        .map(|l| {
            if l.starts_with("replay_dir") {
                format!("replay_dir = \"{dir}\"")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let o = Fab::new()
        .file("noports.toml", &inv)
        .args([
            "run",
            &repo()
                .join("scripts/fabric_baseline.rhai")
                .display()
                .to_string(),
            "-i",
            "{dir}/noports.toml",
            "--no-results",
        ])
        .run();
    let first = o.stdout.find("Inventory problems").expect(&o.stdout);
    assert!(
        first < o.stdout.find("== fabric_baseline").unwrap(),
        "{}",
        o.stdout
    );
    for n in ["spark-01", "spark-02"] {
        assert!(
            o.stdout.contains(&format!(
                "{n}: enp1s0f1np1 and enP2p1s0f1np1 are one port's PCIe paths"
            )),
            "{}",
            o.stdout
        );
    }
    o.code(0);
}

/// The HCAs' PCIe error counters on DGX Sparks (RoCE; `health: gpu pcie errors ...`): the GB10
/// is not read and the log says why (integrated: no discrete PCIe link on the HCAs' path), both
/// rails' functions and the root ports above them are read; counts standing since boot and
/// unchanged under the load (a few correctable, Unsupported Requests) are logged and warned,
/// not failed; a rail's function whose correctable counts grew by 64 fails at the default limit
/// (8) and passes with `--set gpu_pcie_error_growth=64` (the limit is the setting's).
#[test]
fn spark_pcie_paths_are_read_per_rail_and_growth_is_judged_against_the_setting() {
    let filter = |extra: &[&str]| {
        let mut a = vec!["--filter".to_string(), "gpu pcie errors".to_string()];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let o = run("fabric_baseline.rhai", None, &filter(&[]));
    o.code(0);
    let t =
        serde_json::to_string(&o.test("health: gpu pcie errors before load [spark-02]")).unwrap();
    assert!(
        t.contains("GPU 000f:01:00.0 not read: platform profile dgx-spark"),
        "{t}"
    );
    assert!(
        t.contains("AER statistics of 4 of 4 devices on the HCAs' PCIe paths read"),
        "{t}"
    );
    assert!(o
        .warnings("health: gpu pcie errors before load [spark-01]")
        .is_empty());

    let o = run(
        "fabric_baseline.rhai",
        Some("pcie-path-errors-standing-healthy"),
        &filter(&[]),
    );
    o.code(0);
    let w = o.warnings("health: gpu pcie errors before load [spark-01]");
    assert!(
        w.iter().any(
            |x| x.contains("the root port 0002:00:00.0 above roceP2p1s0f1")
                && x.contains("only Unsupported Requests")
        ),
        "{w:#?}"
    );
    let t =
        serde_json::to_string(&o.test("health: gpu pcie errors before load [spark-01]")).unwrap();
    assert!(t.contains("BadDLLP 1, RxErr 2"), "{t}");

    // the whole script: the counts grow once ib_write_bw has run
    let grown = "health: gpu pcie errors not grown under load [spark-02]";
    let o = run(
        "fabric_baseline.rhai",
        Some("pcie-path-errors-growing"),
        &[],
    );
    o.code(1);
    assert_eq!(problems(&o).keys().collect::<Vec<_>>(), vec![grown]);
    let o = run(
        "fabric_baseline.rhai",
        Some("pcie-path-errors-growing"),
        &["--set".to_string(), "gpu_pcie_error_growth=64".to_string()],
    );
    o.code(0);
    assert_eq!(o.status(grown), "pass");
}

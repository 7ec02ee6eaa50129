//! Platform profiles (issue 30 section 1, docs/profiles.md): each simulated node is detected as
//! a DGX Spark from what it answers, its checks take the profile's expectations (no gdr/pcie
//! vars in examples/sim/two-sparks.toml), and every report says which profile and why, and
//! where each expectation came from; `--set` and the inventory still win over the profile.

use crate::common::{self, repo, Fab};
use serde_json::Value;

fn sim() -> String {
    repo()
        .join("examples/sim/two-sparks.toml")
        .display()
        .to_string()
}

fn script(name: &str) -> String {
    repo().join("scripts").join(name).display().to_string()
}

fn run(args: &[&str]) -> common::Outcome {
    Fab::new().args(args).reports().run()
}

/// The JSON report's profile entry of `node`.
fn profile_of(o: &common::Outcome, node: &str) -> Value {
    let j = o.json.as_ref().expect("a JSON report");
    j["profiles"]
        .as_array()
        .unwrap_or_else(|| panic!("no profiles in the JSON report:\n{}", o.stdout))
        .iter()
        .find(|p| p["node"] == node)
        .cloned()
        .unwrap_or_else(|| panic!("no profile of {node}: {}", j["profiles"]))
}

fn expectation(p: &Value, key: &str) -> (String, String) {
    let e = p["expectations"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["key"] == key))
        .unwrap_or_else(|| panic!("no expectation {key} in {p}"));
    (
        e["value"].as_str().unwrap().to_string(),
        e["from"].as_str().unwrap().to_string(),
    )
}

#[test]
fn the_simulated_sparks_are_detected_and_every_report_says_so() {
    let o = run(&["run", &script("fabric_health.rhai"), "-i", &sim()]);
    o.code(0);
    for n in ["spark-01", "spark-02"] {
        let p = profile_of(&o, n);
        assert_eq!(p["name"], "dgx-spark", "{p}");
        assert_eq!(p["known"], true, "{p}");
        let why = p["reason"].as_str().unwrap();
        for said in ["NVIDIA_DGX_Spark", "1 x NVIDIA GB10", "over 2 PCIe path(s)"] {
            assert!(why.contains(said), "{n}: {said:?} not in {why}");
        }
        // The PCIe width of a Spark rail and its missing GDR come from the profile, not vars.
        let (w, from) = expectation(&p, "pcie_width");
        assert_eq!(w, "4");
        assert!(from.starts_with("profile dgx-spark: "), "{from}");
        let (g, from) = expectation(&p, "gdr");
        assert_eq!(
            (g.as_str(), from.starts_with("profile dgx-spark")),
            ("false", true)
        );
        assert_eq!(o.status(&format!("health: pcie link [{n}]")), "pass");
        let t = format!("health: gpudirect rdma [{n}]");
        assert_eq!(o.status(&t), "skipped");
        assert!(
            o.message(&t).contains("gdr = false (profile dgx-spark"),
            "{}",
            o.message(&t)
        );
    }
    assert!(o.stdout.contains("Platform profiles:"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("  spark-01: dgx-spark (DGX Spark (GB10): "),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("pcie_width=4 (profile dgx-spark)"),
        "{}",
        o.stdout
    );
    let junit = o.junit.as_ref().unwrap();
    assert!(
        junit.contains("name=\"profile[spark-02]\" value=\"dgx-spark: "),
        "{junit}"
    );
    assert!(
        junit.contains("name=\"expect[spark-02:pcie_width]\" value=\"4 (profile dgx-spark"),
        "{junit}"
    );
    o.junit_is_valid();
}

#[test]
fn set_and_inventory_win_over_the_profile() {
    // --set gdr=true: the GPUDirect RDMA check runs (the sim answers nvidia_peermem loaded).
    let o = run(&[
        "run",
        &script("fabric_health.rhai"),
        "-i",
        &sim(),
        "--set",
        "gdr=true",
    ]);
    let (g, from) = expectation(&profile_of(&o, "spark-01"), "gdr");
    assert_eq!((g.as_str(), from.as_str()), ("true", "--set gdr"));
    assert_eq!(o.status("health: gpudirect rdma [spark-01]"), "pass");
    // A node var wins over the profile: pcie_width = 16 on spark-02 fails its x4 rails.
    let inv = sim_with_last_node_vars("pcie_width = 16");
    let o = Fab::new()
        .file("inv.toml", &inv)
        .args(["run", &script("fabric_health.rhai"), "-i", "{dir}/inv.toml"])
        .reports()
        .run();
    let (w, from) = expectation(&profile_of(&o, "spark-02"), "pcie_width");
    assert_eq!(
        (w.as_str(), from.as_str()),
        ("16", "inventory var pcie_width of spark-02")
    );
    let t = "health: pcie link [spark-02]";
    assert_eq!(o.status(t), "failure", "{}", o.stdout);
    assert!(
        o.message(t).contains("expected 32 GT/s x16"),
        "{}",
        o.message(t)
    );
    assert!(
        o.message(t)
            .contains("width from inventory var pcie_width of spark-02"),
        "{}",
        o.message(t)
    );
    assert_eq!(o.status("health: pcie link [spark-01]"), "pass");
}

/// The simulation's inventory (replay directory made absolute) with `vars` (TOML inline-table
/// keys) given to its last node, spark-02.
fn sim_with_last_node_vars(vars: &str) -> String {
    std::fs::read_to_string(sim())
        .unwrap()
        .replace(
            "replay_dir = \"transcripts\"",
            &format!(
                "replay_dir = {:?}",
                repo()
                    .join("examples/sim/transcripts")
                    .display()
                    .to_string()
            ),
        )
        .replace("[groups]", &format!("vars = {{ {vars} }}\n\n[groups]"))
}

/// The simulation's inventory with `example`'s node settings applied: every sim node takes the
/// example's defaults `vars` and `ports` and then those of the example's node at the same
/// position (its script inputs kept where the example does not set them); ports whose
/// interfaces the simulation does not answer (two-sparks-two-cables' qsfp0) are left out, said
/// in the returned notes. Serialised with the toml crate (an array of `[[node]]` tables), then
/// read back to prove the ports are what was meant.
fn sim_with(example: &str) -> (String, Vec<String>) {
    use toml::Value as T;
    let read = |p: &std::path::Path| -> toml::Table {
        toml::from_str(&std::fs::read_to_string(p).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let mut sim = read(&repo().join("examples/sim/two-sparks.toml"));
    let ex = read(&repo().join("examples").join(example));
    let transcripts = repo()
        .join("examples/sim/transcripts")
        .display()
        .to_string();
    sim["defaults"]["replay_dir"] = T::String(transcripts);
    let ex_defaults = ex
        .get("defaults")
        .cloned()
        .unwrap_or(T::Table(Default::default()));
    let ex_nodes = ex["node"].as_array().unwrap().clone();
    let mut notes = Vec::new();
    let mut want_ports = Vec::new();
    for (i, node) in sim["node"].as_array_mut().unwrap().iter_mut().enumerate() {
        let exn = &ex_nodes[i];
        let node = node.as_table_mut().unwrap();
        let mut vars = node
            .get("vars")
            .cloned()
            .unwrap_or(T::Table(Default::default()));
        for src in [ex_defaults.get("vars"), exn.get("vars")]
            .into_iter()
            .flatten()
        {
            for (k, v) in src.as_table().unwrap() {
                vars.as_table_mut().unwrap().insert(k.clone(), v.clone());
            }
        }
        node.insert("vars".into(), vars);
        let sim_ifaces: Vec<T> = node["interfaces"].as_array().unwrap().clone();
        let ports = exn.get("ports").or(ex_defaults.get("ports"));
        if let Some(ports) = ports {
            let kept: Vec<T> = ports
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| {
                    let ok = p["interfaces"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|i| sim_ifaces.contains(i));
                    if !ok {
                        notes.push(format!("{example}: port {} is not simulated", p["name"]));
                    }
                    ok
                })
                .cloned()
                .collect();
            assert!(
                !kept.is_empty(),
                "{example}: no port the simulation answers"
            );
            node.insert("ports".into(), T::Array(kept.clone()));
        }
        want_ports.push(node.get("ports").cloned());
    }
    let text = toml::to_string(&sim).unwrap();
    let back: toml::Table = toml::from_str(&text).unwrap();
    let got: Vec<Option<T>> = back["node"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.get("ports").cloned())
        .collect();
    assert_eq!(got, want_ports, "ports serialised wrong:\n{text}");
    assert_eq!(back["node"].as_array().unwrap().len(), 2, "{text}");
    (text, notes)
}

fn problems(o: &common::Outcome) -> Vec<String> {
    o.tests()
        .iter()
        .filter(|t| !matches!(t["status"].as_str(), Some("pass") | Some("skipped")))
        .map(|t| format!("{} {}: {}", t["status"], t["name"], t["message"]))
        .collect()
}

const SCRIPTS: [&str; 4] = [
    "five_step_acceptance.rhai",
    "fabric_health.rhai",
    "fabric_baseline.rhai",
    "second_cable_checklist.rhai",
];

fn run_example(inv: &str, script_name: &str, extra: &[&str]) -> common::Outcome {
    let mut args = vec![
        "run".to_string(),
        script(script_name),
        "-i".into(),
        "{dir}/inv.toml".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Fab::new().file("inv.toml", inv).args(args).reports().run()
}

/// Issue 30 section 1's Done: every shipped example's node settings on the healthy simulation
/// run the four shipped scripts with no failure and no error (six-sparks-switch also on the
/// 100G switch variant); the same settings with a real fault still fail.
#[test]
fn every_example_runs_the_shipped_scripts_green_on_the_healthy_simulation() {
    let mut said = Vec::new();
    for (example, scenario) in [
        ("two-sparks-one-cable.toml", None),
        ("two-sparks-two-cables.toml", None),
        ("six-sparks-switch.toml", None),
        ("six-sparks-switch.toml", Some("spark-on-100g-switch")),
    ] {
        let (inv, notes) = sim_with(example);
        said.extend(notes);
        for s in SCRIPTS {
            let mut extra = vec![];
            if let Some(sc) = scenario {
                extra = vec!["--scenario", sc];
            }
            let o = run_example(&inv, s, &extra);
            let bad = problems(&o);
            assert!(
                bad.is_empty(),
                "{example} {scenario:?} {s}: {bad:#?}\n{}",
                o.stdout
            );
            o.code(0);
            assert!(o.tests().len() >= 2, "{example} {s}: {}", o.stdout);
            if s == "five_step_acceptance.rhai" {
                // no gdr var anywhere: the profile said it
                let (g, from) = expectation(&profile_of(&o, "spark-01"), "gdr");
                assert_eq!(g, "false", "{example}");
                assert!(from.starts_with("profile dgx-spark"), "{example}: {from}");
            }
            if scenario.is_some() && s == "five_step_acceptance.rhai" {
                let t = o.test("step 3: link speed [spark-01]");
                let notes = t["notes"].to_string();
                assert!(notes.contains("the partner limits the port"), "{notes}");
            }
        }
    }
    eprintln!("{}", said.join("\n"));
}

/// With the examples' settings, real faults still fail: a downtrained Spark rail (x2), a
/// 200G-capable pair at 100G.
#[test]
fn with_the_examples_settings_real_faults_still_fail() {
    let (inv, _) = sim_with("two-sparks-one-cable.toml");
    let o = run_example(&inv, "fabric_health.rhai", &["--scenario", "spark-pcie-x2"]);
    let t = "health: pcie link [spark-02]";
    assert_eq!(o.status(t), "failure", "{}", o.stdout);
    assert!(
        o.message(t).contains("32.0 GT/s x2, expected 32 GT/s x4"),
        "{}",
        o.message(t)
    );
    let (inv, _) = sim_with("six-sparks-switch.toml");
    let o = run_example(
        &inv,
        "five_step_acceptance.rhai",
        &["--scenario", "negotiated-100g-partner-200g"],
    );
    let t = "step 3: link speed [spark-01]";
    assert_eq!(o.status(t), "failure", "{}", o.stdout);
    assert!(
        o.message(t).contains("highest mode both ends advertise"),
        "{}",
        o.message(t)
    );
}

/// A node that cannot be told apart is said to be unknown, never judged as a Spark.
#[test]
fn an_unknown_platform_is_said_to_be_unknown() {
    let o = run(&[
        "run",
        &script("fabric_health.rhai"),
        "-i",
        &sim(),
        "--scenario",
        "unknown-platform",
    ]);
    let p = profile_of(&o, "spark-01");
    assert_eq!(
        (p["name"].as_str(), p["known"].as_bool()),
        (Some("generic"), Some(false)),
        "{p}"
    );
    let why = p["reason"].as_str().unwrap();
    assert!(
        why.contains("unknown platform") && why.contains("nvidia-smi: not installed"),
        "{why}"
    );
    assert!(
        o.stdout.contains("spark-01: generic, platform unknown"),
        "{}",
        o.stdout
    );
    assert_eq!(profile_of(&o, "spark-02")["name"], "dgx-spark");
}

/// An inventory that lists a Spark's rails without `ports` (each rail then a port of its own):
/// every rail is measured (not the first one twice) and judged against its share of the QSFP
/// port, since the profile says a Spark port is two rails: green when healthy, red naming the
/// weak rail, and red again when `--set rails_per_port=1` says each rail is a whole port.
#[test]
fn a_spark_inventory_without_ports_judges_each_rail_against_its_share() {
    let (inv, _) = sim_with("two-sparks-one-cable.toml");
    let mut t: toml::Table = toml::from_str(&inv).unwrap();
    for n in t["node"].as_array_mut().unwrap() {
        assert!(n.as_table_mut().unwrap().remove("ports").is_some());
    }
    let inv = toml::to_string(&t).unwrap();
    let o = run_example(&inv, "five_step_acceptance.rhai", &[]);
    let t = "step 3: rdma write per port [spark-01 -> spark-02]";
    assert_eq!(o.status(t), "pass", "{}\n{inv}", o.stdout);
    let text = o.test(t).to_string();
    assert!(
        text.contains("roceP2p1s0f1"),
        "second rail not measured: {text}"
    );
    assert!(text.contains("lists 1 of the 2 rails"), "{text}");
    let o = run_example(
        &inv,
        "five_step_acceptance.rhai",
        &["--scenario", "rail-at-55pct"],
    );
    assert_eq!(o.status(t), "failure", "{}", o.stdout);
    assert!(
        o.message(t).contains("roceP2p1s0f1 52.3"),
        "{}",
        o.message(t)
    );
    let o = run_example(
        &inv,
        "five_step_acceptance.rhai",
        &["--set", "rails_per_port=1"],
    );
    assert_eq!(o.status(t), "failure", "{}", o.stdout);
}

/// The MTU end to end (five-step step 1) takes its expected MTU as every expectation does:
/// `--set mtu`, the node var, the profile (none ships one), else the hardware's majority; the
/// report says which, and a red names the source with the node and interface.
#[test]
fn the_expected_mtu_says_where_it_comes_from() {
    let five = script("five_step_acceptance.rhai");
    let t = "step 1: MTU end to end [spark-01 -> spark-02]";
    let o = run(&["run", &five, "-i", &sim(), "--filter", "MTU end"]);
    assert_eq!(o.status(t), "pass", "{}", o.stdout);
    let (m, from) = expectation(&profile_of(&o, "spark-01"), "mtu");
    assert_eq!(m, "9000");
    assert!(from.starts_with("hardware"), "{from}");

    let o = run(&[
        "run",
        &five,
        "-i",
        &sim(),
        "--filter",
        "MTU end",
        "--set",
        "mtu=4000",
    ]);
    assert_eq!(
        expectation(&profile_of(&o, "spark-01"), "mtu"),
        ("4000".to_string(), "--set mtu".to_string())
    );
    assert_eq!(o.status(t), "failure", "{}", o.stdout);
    let msg = o.message(t);
    assert!(
        msg.contains(
            "spark-01 enp1s0f1np1 MTU (expected from --set mtu): expected 4000, actual 9000"
        ),
        "{msg}"
    );

    // The node var of spark-02 (the inventory's last node) is its expectation, not spark-01's.
    let inv = sim_with_last_node_vars("mtu = 4000");
    let o = Fab::new()
        .file("inv.toml", &inv)
        .args(["run", &five, "-i", "{dir}/inv.toml", "--filter", "MTU end"])
        .reports()
        .run();
    assert_eq!(
        expectation(&profile_of(&o, "spark-02"), "mtu"),
        (
            "4000".to_string(),
            "inventory var mtu of spark-02".to_string()
        )
    );
    let back = "step 1: MTU end to end [spark-02 -> spark-01]";
    assert_eq!(o.status(back), "failure", "{}", o.stdout);
    assert!(
        o.message(back)
            .contains("(expected from inventory var mtu of spark-02)"),
        "{}",
        o.message(back)
    );
}

/// The second-cable checklist on an inventory without `ports` (found in the field: each rail
/// became a "port", so one Spark cable counted as two cables and one rail was measured as the
/// whole cable, 47 % of the limit, "headroom"): rails are counted per cable by the platform's
/// rails_per_port, one cable's rails are measured together, and rails of two cables without
/// ports are an error that says to list the ports.
#[test]
fn the_checklist_without_ports_counts_cables_not_rails() {
    let (inv, _) = sim_with("two-sparks-one-cable.toml");
    let mut t: toml::Table = toml::from_str(&inv).unwrap();
    for n in t["node"].as_array_mut().unwrap() {
        assert!(n.as_table_mut().unwrap().remove("ports").is_some());
    }
    let one = toml::to_string(&t).unwrap();
    let o = run_example(&one, "second_cable_checklist.rhai", &[]);
    assert!(problems(&o).is_empty(), "{:#?}\n{}", problems(&o), o.stdout);
    assert!(
        o.stdout.contains("2 rails are one cable here") && o.stdout.contains("1 cable(s)"),
        "{}",
        o.stdout
    );
    let names: Vec<String> = o.tests().iter().map(|t| t["name"].to_string()).collect();
    assert!(
        !names.iter().any(|n| n.contains("second cable pitfalls")),
        "one cable is not two: {names:?}"
    );
    let verdict = o.test("second cable verdict").to_string();
    assert!(
        verdict.contains("summed over 2 rail(s) = 95%") && verdict.contains("do not buy"),
        "{verdict}"
    );

    // Four rails and no ports: which two share a cable is not known.
    for n in t["node"].as_array_mut().unwrap() {
        let n = n.as_table_mut().unwrap();
        for (k, extra) in [
            ("interfaces", ["enp1s0f0np0", "enP2p1s0f0np0"]),
            ("rdma_devices", ["rocep1s0f0", "roceP2p1s0f0"]),
        ] {
            let a = n[k].as_array_mut().unwrap();
            a.extend(extra.iter().map(|s| toml::Value::from(*s)));
        }
        let ips = n["fabric_ips"].as_array_mut().unwrap();
        let more: Vec<toml::Value> = ips
            .iter()
            .map(|v| toml::Value::from(v.as_str().unwrap().replace("192.168.", "192.169.")))
            .collect();
        ips.extend(more);
    }
    let two = toml::to_string(&t).unwrap();
    let o = run_example(
        &two,
        "second_cable_checklist.rhai",
        &["--filter", "one cable"],
    );
    let c = "one cable: RDMA write vs the port limit";
    assert_eq!(o.status(c), "error", "{}", o.stdout);
    assert!(
        o.message(c).contains("4 rails and no ports")
            && o.message(c)
                .contains("which rails share a cable is not known"),
        "{}",
        o.message(c)
    );
}

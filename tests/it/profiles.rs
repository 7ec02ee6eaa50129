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
    let inv = std::fs::read_to_string(sim())
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
        .replace("[groups]", "vars = { pcie_width = 16 }\n\n[groups]");
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

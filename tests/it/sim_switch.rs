//! The switched Spark simulation (`examples/sim-switch`, issue 46): four DGX Sparks, one QSFP
//! port each (two rails) on one 200G Ethernet switch, where a node can be compared with its
//! peers. The shipped scripts run green on it, and every fault scenario fails exactly the
//! testcases it lists, its first diagnosis's rule and part field (alone) naming the injected
//! fault's part; healthy variants are green with no diagnosis.

use crate::common::{repo, Fab, Outcome};
use crate::sim_ib::catalogue_on;

const INV: &str = "examples/sim-switch/four-sparks.toml";
const SCENARIOS: &str = "examples/sim-switch/transcripts/scenarios";

fn run(script: &str, args: &[&str]) -> Outcome {
    Fab::new()
        .args([
            "run",
            &repo().join("scripts").join(script).display().to_string(),
            "-i",
            &repo().join(INV).display().to_string(),
        ])
        .args(args)
        .reports()
        .run()
}

fn not_green(o: &Outcome) -> Vec<String> {
    o.tests()
        .iter()
        .filter(|t| !matches!(t["status"].as_str(), Some("pass") | Some("skipped")))
        .map(|t| format!("{}: {}", t["name"], t["message"]))
        .collect()
}

#[test]
fn the_four_sparks_on_a_switch_run_green_with_every_pair_measured() {
    for script in [
        "fabric_baseline.rhai",
        "fabric_health.rhai",
        "five_step_acceptance.rhai",
    ] {
        let o = run(script, &[]);
        assert!(not_green(&o).is_empty(), "{script}: {:#?}", not_green(&o));
        o.code(0);
        let d = &o.json.as_ref().expect("--json")["diagnosis"];
        assert!(
            d.as_array().is_none_or(|a| a.is_empty()),
            "{script}: a healthy run with a diagnosis: {d:#}"
        );
    }
    // all twelve ordered pairs are measured, each at the port's ~190 Gbit/s
    let o = run(
        "fabric_baseline.rhai",
        &["--filter", "rdma: write per port"],
    );
    let pairs: Vec<_> = o
        .tests()
        .iter()
        .filter(|t| t["status"] == "pass")
        .map(|t| t["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(pairs.len(), 12, "{pairs:#?}");
    // the switch is in force (the inventory's var): the lossless-config check is a failure
    // policy, not back-to-back's warning, and passes on PFC priority 3 everywhere
    let h = run(
        "fabric_health.rhai",
        &["--filter", "health: lossless roce config"],
    );
    assert_eq!(
        h.status("health: lossless roce config"),
        "pass",
        "{}",
        h.stdout
    );
    assert!(
        !h.stdout.contains("back-to-back, no switch"),
        "{}",
        h.stdout
    );
}

#[test]
fn every_switch_scenario_is_caught_naming_the_part() {
    // every fault scenario says the rule its first diagnosis must have, not only the part
    let dir = repo().join(SCENARIOS);
    let mut faults = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path().join("scenario.toml")).unwrap();
        let s: toml::Value = toml::from_str(&text).unwrap();
        let healthy = s.get("healthy").and_then(|h| h.as_bool()) == Some(true);
        let noted = s.get("note").is_some();
        if !healthy && !noted {
            faults += 1;
            assert!(
                s.get("rule").is_some() && s.get("parts").is_some(),
                "{:?}: a fault scenario names its first diagnosis's rule and parts",
                e.file_name()
            );
        }
    }
    assert!(faults >= 5, "{faults} fault scenarios");
    catalogue_on(INV, SCENARIOS);
}

/// A node slow in every pair slows the ring it is in: the 4-Spark all_reduce's bandwidth red is
/// that node's too, one diagnosis for the whole red (the 2-Spark run without it passes), not a
/// second cause "the path of NCCL's traffic".
#[test]
fn a_slow_node_explains_the_collective_it_slows() {
    let o = Fab::new()
        .args([
            "run",
            &repo()
                .join("scripts/fabric_baseline.rhai")
                .display()
                .to_string(),
            "-i",
            &repo().join(INV).display().to_string(),
            "--scenario",
            "node-slow-every-rail",
        ])
        .reports()
        .run();
    o.code(1);
    assert_eq!(o.status("nccl: all_reduce 4 nodes"), "failure");
    assert_eq!(o.status("nccl: all_reduce 2 nodes"), "pass");
    let d = o.json.as_ref().expect("--json")["diagnosis"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0]["rule"], "slow_node");
    let evidence: Vec<&str> = d[0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    assert!(
        evidence.contains(&"nccl: all_reduce 4 nodes"),
        "{evidence:?}"
    );
    assert_eq!(evidence.len(), 7, "{evidence:?}");
}

/// Five-step step 1 sends each pair's pings and its jumbo don't-fragment pings in one command
/// (issue 49): the simulation answers that command, so no pair falls back to the pings alone
/// (a testcase's log says so when it does), healthy and with a rail at MTU 1500 (whose node
/// sends its jumbo pings at 1472 bytes on that rail), where the MTU testcases still fail.
#[test]
fn step_1_pings_each_pair_once_on_the_switch() {
    for scenario in [None, Some("rail-mtu-1500-one-node")] {
        let mut args = vec!["--filter", "step 1"];
        if let Some(s) = scenario {
            args.extend(["--scenario", s]);
        }
        let o = run("five_step_acceptance.rhai", &args);
        let pings: Vec<_> = o
            .tests()
            .into_iter()
            .filter(|t| {
                t["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("step 1: ping mesh"))
            })
            .collect();
        assert_eq!(pings.len(), 12, "{scenario:?}: twelve ordered pairs");
        for t in o.tests() {
            let out = t["output"].as_str().unwrap_or("");
            assert!(
                !out.contains("the pings alone"),
                "{scenario:?}: {}: fell back: {out}",
                t["name"]
            );
        }
        for t in &pings {
            assert_eq!(t["status"], "pass", "{scenario:?}: {t:#}");
        }
        let mtu_red = not_green(&o)
            .iter()
            .filter(|m| m.contains("MTU end to end"))
            .count();
        assert_eq!(
            mtu_red,
            if scenario.is_some() { 6 } else { 0 },
            "{scenario:?}: {:#?}",
            not_green(&o)
        );
    }
}

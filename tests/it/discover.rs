//! `fabcheck discover` on the simulation (docs/discover.md): two host names to an inventory
//! that the five-step runs green on; `--diff` after a window names what changed (the
//! catalogue's scenarios with `discover_diff`); an unreachable host is named and the others
//! are still written; -o never overwrites without --force.
use crate::common::{repo, Fab, Outcome};
use std::path::PathBuf;

fn defaults() -> String {
    repo()
        .join("examples/sim/discover-defaults.toml")
        .display()
        .to_string()
}

fn sim_inventory() -> String {
    repo()
        .join("examples/sim/two-sparks.toml")
        .display()
        .to_string()
}

fn discover(fab: Fab, args: &[&str]) -> Outcome {
    let mut a = vec!["discover".to_string()];
    a.extend(args.iter().map(|s| s.to_string()));
    fab.args(a).run()
}

#[test]
fn two_host_names_to_a_green_five_step() {
    let o = discover(
        Fab::new(),
        &[
            "spark-01",
            "spark-02",
            "-i",
            &defaults(),
            "-o",
            "{dir}/found.toml",
        ],
    );
    o.code(0);
    let path = o.dir.join("found.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    // What was found, as the hand-written simulation inventory says it (values read by hand
    // from the transcripts: the ip -j addr answers and the real ibdev2netdev capture).
    let inv: toml::Value = toml::from_str(&text).expect("the written inventory is TOML");
    let n1 = &inv["node"][0];
    assert_eq!(n1["name"].as_str(), Some("spark-01"));
    assert_eq!(n1["host"].as_str(), Some("10.0.0.11"));
    let strs = |v: &toml::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(strs(&n1["interfaces"]), ["enp1s0f1np1", "enP2p1s0f1np1"]);
    assert_eq!(
        strs(&n1["fabric_ips"]),
        ["192.168.100.10", "192.168.200.10"]
    );
    assert_eq!(strs(&n1["rdma_devices"]), ["rocep1s0f1", "roceP2p1s0f1"]);
    let port = &n1["ports"][0];
    assert_eq!(port["name"].as_str(), Some("qsfp1"));
    assert_eq!(strs(&port["interfaces"]), ["enp1s0f1np1", "enP2p1s0f1np1"]);
    assert_eq!(n1["vars"]["mtu"].as_integer(), Some(9000));
    assert_eq!(
        n1["vars"]["rails"]["enp1s0f1np1"]["gid_index"].as_integer(),
        Some(3)
    );
    assert_eq!(inv["groups"]["fabric"].as_str(), Some("spark-[01-02]"));
    // where the values came from, in comments
    for said in [
        "management NIC enP7s7 (10.0.0.11, the address SSH reached)",
        "left out enp1s0f0np0 (rocep1s0f0): no carrier",
        "RoCE v2 GID index 3, show_gids",
        "PCI function 1 of the adapter with sys_image_guid 4cbb:4703:002d:1a16",
        "DMI product name: NVIDIA_DGX_Spark",
        "# platform profile: dgx-spark",
    ] {
        assert!(text.contains(said), "lacks {said:?}:\n{text}");
    }
    // ... and the five-step runs on it with no failure and no error.
    let o = Fab::new()
        .args([
            "run",
            &repo()
                .join("scripts/five_step_acceptance.rhai")
                .display()
                .to_string(),
            "-i",
            &path.display().to_string(),
            // No `--set gdr=false`: a DGX Spark has no GPUDirect RDMA, and the detected
            // platform profile says so (docs/profiles.md), not the inventory.
        ])
        .reports()
        .run();
    let bad: Vec<String> = o
        .tests()
        .iter()
        .filter(|t| !matches!(t["status"].as_str(), Some("pass") | Some("skipped")))
        .map(|t| format!("{} {}: {}", t["status"], t["name"], t["message"]))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}\n{}", o.stdout);
    assert!(o.tests().len() >= 15, "{}", o.stdout);
    o.code(0);
}

#[test]
fn an_unreachable_host_is_named_and_the_others_are_written() {
    let o = discover(
        Fab::new(),
        &["spark-[01-03]", "-i", &defaults(), "-o", "{dir}/found.toml"],
    );
    o.code(1);
    assert!(
        o.stderr.contains("spark-03 (spark-03): NOT REACHED") && o.stderr.contains("no transcript"),
        "{}",
        o.stderr
    );
    let text = std::fs::read_to_string(o.dir.join("found.toml")).unwrap();
    assert!(text.contains("# NOT REACHED: spark-03"), "{text}");
    // a valid inventory of the two that answered
    let o2 = Fab::new()
        .args([
            "nodes",
            "-i",
            &o.dir.join("found.toml").display().to_string(),
        ])
        .run();
    o2.code(0);
    let names: Vec<&str> = o2
        .stdout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split('\t').next())
        .collect();
    assert_eq!(names, ["spark-01", "spark-02", "@fabric"], "{}", o2.stdout);
}

#[test]
fn the_output_file_is_never_overwritten_without_force() {
    let fab = Fab::new().file("found.toml", "# mine\n");
    let args = ["spark-01", "-i", &defaults(), "-o", "{dir}/found.toml"];
    let o = discover(fab, &args);
    o.code(2);
    assert!(o.stderr.contains("--force"), "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(o.dir.join("found.toml")).unwrap(),
        "# mine\n"
    );
    let fab = Fab::new().file("found.toml", "# mine\n");
    let mut forced = args.to_vec();
    forced.push("--force");
    let o = discover(fab, &forced);
    o.code(0);
    let text = std::fs::read_to_string(o.dir.join("found.toml")).unwrap();
    assert!(text.contains("name = \"spark-01\""), "{text}");
}

/// The catalogue's scenarios that `fabcheck discover --diff` must catch, and their lines.
fn diff_scenarios() -> Vec<(String, Vec<String>)> {
    let dir: PathBuf = repo().join("examples/sim/transcripts/scenarios");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
        let Ok(text) = std::fs::read_to_string(e.path().join("scenario.toml")) else {
            continue;
        };
        let v: toml::Value = toml::from_str(&text).unwrap();
        if let Some(lines) = v.get("discover_diff").and_then(|d| d.as_array()) {
            let lines = lines
                .iter()
                .map(|l| l.as_str().unwrap().to_string())
                .collect();
            out.push((e.file_name().to_string_lossy().into_owned(), lines));
        }
    }
    out.sort();
    out
}

#[test]
fn after_a_window_diff_names_the_renamed_rail_and_the_moved_address() {
    // The healthy simulation is what its hand-written inventory says.
    let o = discover(Fab::new(), &["--diff", &sim_inventory()]);
    assert!(o.stdout.contains("no difference"), "{}", o.stdout);
    o.code(0);
    let all = diff_scenarios();
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.contains(&"rail-renamed") && names.contains(&"address-moved"),
        "{names:?}"
    );
    // A discovered inventory, diffed later, names the same changes (from its rails table).
    let o = discover(
        Fab::new(),
        &[
            "spark-[01-02]",
            "-i",
            &defaults(),
            "-o",
            "{dir}/before.toml",
        ],
    );
    o.code(0);
    let before = o.dir.join("before.toml").display().to_string();
    for (name, lines) in &all {
        for against in [sim_inventory(), before.clone()] {
            let o = discover(Fab::new(), &["--diff", &against, "--scenario", name]);
            o.code(1);
            for l in lines {
                assert!(
                    o.stdout.contains(l.as_str()),
                    "{name} vs {against}: lacks {l:?}:\n{}",
                    o.stdout
                );
            }
            // the node that did not change is not named
            assert!(
                !o.stdout.contains("spark-01:"),
                "{name} vs {against}:\n{}",
                o.stdout
            );
        }
    }
}

//! `fabcheck discover` on the namespace lab: nodes that do not resolve each other's names,
//! reached only through the lab's ssh config (no `host` anywhere), the fabric on veths
//! `fab0`/`fab1` without RDMA. The discovered inventory is the lab's own, and the five-step's
//! ping and SSH steps pass on it; a node whose sshd is gone is named, the others written.

use crate::common::lab::{Lab, Variant};
use crate::common::{repo, Fab};

fn defaults(lab: &Lab) -> String {
    format!(
        "# lab SSH settings only: names are resolved by the ssh config\n[defaults]\nuser = \"fclab\"\nknown_hosts = \"strict\"\nssh_config = \"{}\"\n",
        lab.dir.join("ssh_config").display()
    )
}

#[test]
fn discover_on_a_lab_without_names_through_the_ssh_config() {
    let v = Variant {
        no_names: true,
        ..Default::default()
    };
    let Some(lab) = Lab::ensure_variant(16, &v, "discover_on_a_lab_without_names") else {
        return;
    };
    let o = Fab::new()
        .file("defaults.toml", &defaults(&lab))
        .args([
            "discover",
            "lab[01-03]",
            "-i",
            "{dir}/defaults.toml",
            "-o",
            "{dir}/found.toml",
        ])
        .run();
    o.code(0);
    let path = o.dir.join("found.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let inv: toml::Value = toml::from_str(&text).unwrap();
    // lab.sh: labNN's fab0 is 10.214.0.N/16, fab1 10.215.0.N/16, MTU 9000; mgmt0 10.213.0.N.
    for (k, n) in inv["node"].as_array().unwrap().iter().enumerate() {
        let i = k + 1;
        assert_eq!(n["name"].as_str(), Some(format!("lab0{i}").as_str()));
        assert!(n.get("host").is_none(), "{text}");
        let ifaces: Vec<&str> = n["interfaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(ifaces, ["fab0", "fab1"], "{text}");
        let ips: Vec<&str> = n["fabric_ips"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(
            ips,
            [format!("10.214.0.{i}"), format!("10.215.0.{i}")],
            "{text}"
        );
        assert_eq!(n["vars"]["mtu"].as_integer(), Some(9000), "{text}");
    }
    assert!(
        text.contains("management NIC mgmt0 (10.213.0.1, the address SSH reached)")
            && text.contains("no RDMA device on this node"),
        "{text}"
    );
    // The five-step's ping mesh and SSH hops (the steps a lab without RDMA can pass) on it.
    let o5 = Fab::new()
        .args([
            "run",
            &repo()
                .join("scripts/five_step_acceptance.rhai")
                .display()
                .to_string(),
            "-i",
            &path.display().to_string(),
            "--set",
            "ping_count=1",
            "--filter",
            "step 1",
            "--filter",
            "step 2",
        ])
        .reports()
        .run();
    let st: Vec<(String, String)> = o5
        .tests()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // Ping mesh, MTU end to end (the discovered MTU 9000) and SSH: 6 ordered pairs each, and
    // each node's rails (3); the
    // RoCE MTU of step 1 is skipped on nodes without RDMA devices.
    let (roce, rest): (Vec<_>, Vec<_>) = st
        .iter()
        .partition(|(n, _)| n.starts_with("step 1: roce mtu"));
    assert_eq!(rest.len(), 21, "{st:?}\n{}", o5.stdout);
    assert!(
        rest.iter().all(|(_, s)| s == "pass"),
        "{st:?}\n{}",
        o5.stdout
    );
    assert!(roce.iter().all(|(_, s)| s == "skipped"), "{st:?}");
    o5.code(0);

    // The lab's own inventory: nothing differs (all 16 nodes, its settings).
    let o = Fab::new()
        .args(["discover", "--diff", &lab.inventory()])
        .run();
    assert!(
        o.stdout.contains("no difference"),
        "{}\n{}",
        o.stdout,
        o.stderr
    );
    o.code(0);

    // A node whose sshd is gone: named with the reason, the others still written.
    lab.kill_sshd("lab02");
    let o = Fab::new()
        .file("defaults.toml", &defaults(&lab))
        .args([
            "discover",
            "lab[01-03]",
            "-i",
            "{dir}/defaults.toml",
            "-o",
            "{dir}/found.toml",
            "--timeout",
            "10s",
        ])
        .run();
    lab.start_sshd("lab02");
    o.code(1);
    assert!(
        o.stderr.contains("lab02 (lab02): NOT REACHED"),
        "{}",
        o.stderr
    );
    let text = std::fs::read_to_string(o.dir.join("found.toml")).unwrap();
    assert!(text.contains("# NOT REACHED: lab02"), "{text}");
    assert!(
        text.contains("name = \"lab01\"") && text.contains("name = \"lab03\""),
        "{text}"
    );
}

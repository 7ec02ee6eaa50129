//! The shipped five-step acceptance on 4 namespace-lab nodes: steps 1, 2, 4 and 5 for real
//! (ping mesh, SSH hops over fabric addresses, recipe addresses, netplan backup/restore); step 3
//! an error that says no RDMA device was found (this kernel has no RDMA).

use crate::common;
use common::lab::Lab;
use common::Fab;

fn five_step(lab: &Lab, recipe: &str, extra: &[&str]) -> common::Outcome {
    let script = common::repo()
        .join("scripts/five_step_acceptance.rhai")
        .display()
        .to_string();
    let mut args = vec![
        "run".to_string(),
        script,
        "-i".into(),
        lab.inventory(),
        "-w".into(),
        "lab[01-04]".into(),
    ];
    for a in [
        "--set",
        "ping_count=1",
        "--set",
        &format!("recipe={recipe}"),
    ]
    .iter()
    .chain(extra)
    {
        args.push(a.to_string());
    }
    Fab::new().args(args).reports().run()
}

fn netplan_sums(lab: &Lab) -> Vec<String> {
    (1..=4)
        .map(|i| {
            lab.exec(
                &lab.node(i),
                "stat -c '%U %G %a' /etc/netplan/40-cx7.yaml; sha256sum /etc/netplan/40-cx7.yaml",
            )
            .1
        })
        .collect()
}

#[test]
fn five_step_on_the_lab() {
    let Some(lab) = Lab::ensure(16, "five_step_on_the_lab") else {
        return;
    };
    // The lab user's home is shared by the nodes: the recipe files live there.
    let home = std::path::Path::new("/home/fclab");
    std::fs::write(
        home.join("fabcheck-recipe-ok"),
        "10.214.0.1 slots=1\n10.214.0.2 slots=1\n10.215.0.3 slots=1\n10.214.0.4 slots=1\n",
    )
    .unwrap();
    std::fs::write(
        home.join("fabcheck-recipe-foreign"),
        "10.214.0.1 slots=1\n10.213.0.2 slots=1\n",
    )
    .unwrap();
    let before = netplan_sums(&lab);

    let o = five_step(&lab, "/home/fclab/fabcheck-recipe-ok", &["--allow-changes"]);
    o.code(1);
    let mut steps = std::collections::BTreeMap::<String, Vec<String>>::new();
    for t in o.tests() {
        let name = t["name"].as_str().unwrap().to_string();
        steps
            .entry(name[..6].to_string())
            .or_default()
            .push(t["status"].as_str().unwrap().to_string());
    }
    for (step, n) in [("step 1", 12), ("step 2", 12), ("step 4", 1), ("step 5", 4)] {
        let st = &steps[step];
        assert_eq!(st.len(), n, "{step}: {st:?}");
        assert!(
            st.iter().all(|s| s == "pass"),
            "{step}: {st:?}\n{}",
            o.stdout
        );
    }
    assert!(
        steps["step 3"].iter().all(|s| s == "error"),
        "{:?}",
        steps["step 3"]
    );
    assert!(
        o.message("step 3: rdma devices up [lab01]")
            .contains("no RDMA device"),
        "{}",
        o.message("step 3: rdma devices up [lab01]")
    );
    o.junit_is_valid();
    assert_eq!(
        netplan_sums(&lab),
        before,
        "netplan files changed by backup/restore"
    );

    // A recipe naming a management address fails and names it; without --allow-changes,
    // step 5 is skipped with the reason.
    let o = five_step(&lab, "/home/fclab/fabcheck-recipe-foreign", &[]);
    assert_eq!(
        o.status("step 4: recipe uses fabric addresses only"),
        "failure"
    );
    assert!(
        o.message("step 4: recipe uses fabric addresses only")
            .contains("10.213.0.2"),
        "{}",
        o.message("step 4: recipe uses fabric addresses only")
    );
    assert_eq!(
        o.status("step 5: netplan backup and restore [lab02]"),
        "skipped"
    );
    assert!(o
        .message("step 5: netplan backup and restore [lab02]")
        .contains("--allow-changes"));
}

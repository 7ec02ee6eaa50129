//! The shipped five-step acceptance on 4 namespace-lab nodes: steps 1, 2, 4 and 5 for real
//! (ping mesh, SSH hops over fabric addresses, recipe addresses, netplan backup/restore); step 3
//! an error that says no RDMA device was found (this kernel has no RDMA).

use crate::common;
use common::lab::Lab;
use common::Fab;

fn five_step(lab: &Lab, recipe: &str, extra: &[&str]) -> common::Outcome {
    let inventory = std::fs::read_to_string(lab.inventory()).unwrap();
    five_step_with(&inventory, recipe, extra)
}

fn five_step_script() -> String {
    common::repo()
        .join("scripts/five_step_acceptance.rhai")
        .display()
        .to_string()
}

/// The five-step on lab01–lab04 with this inventory (TOML text).
fn five_step_with(inventory: &str, recipe: &str, extra: &[&str]) -> common::Outcome {
    let script = five_step_script();
    let mut args = vec![
        "run".to_string(),
        script,
        "-i".into(),
        "inv.toml".into(),
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
    Fab::new()
        .file("inv.toml", inventory)
        .args(args)
        .reports()
        .run()
}

/// The recipe whose addresses are all fabric addresses of lab01–lab04 (in the lab user's
/// home, which the nodes share).
fn recipe_ok() -> &'static str {
    let path = "/home/fclab/fabcheck-recipe-ok";
    std::fs::write(
        path,
        "10.214.0.1 slots=1\n10.214.0.2 slots=1\n10.215.0.3 slots=1\n10.214.0.4 slots=1\n",
    )
    .unwrap();
    path
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
    recipe_ok();
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
        // The RoCE MTU of step 1 needs RDMA devices, as step 3 does: its own group.
        let group = if name.starts_with("step 1: roce mtu") {
            "roce mtu".to_string()
        } else {
            name[..6].to_string()
        };
        steps
            .entry(group)
            .or_default()
            .push(t["status"].as_str().unwrap().to_string());
    }
    // step 1: the ping mesh and the MTU end to end, 12 ordered pairs each, and 4 nodes' rails
    // (no rdma_devices in the lab: their addresses only).
    // step 4: the recipe's addresses and its NCCL settings (none: a pass with a note).
    for (step, n) in [("step 1", 28), ("step 2", 12), ("step 4", 2), ("step 5", 4)] {
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
        steps["roce mtu"].len() == 4 && steps["roce mtu"].iter().all(|s| s == "skipped"),
        "{:?}",
        steps["roce mtu"]
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
    // Step 5 really read the running network before the backup and after the restore (real
    // `ip -j addr` / `ip -j route` of real lab nodes) and found it the same: green.
    let t = o.test("step 5: netplan backup and restore [lab01]");
    let all = t.to_string();
    assert!(all.matches("ip -j route").count() >= 2, "{all}");
    assert!(all.matches("ip -j -6 route").count() >= 2, "{all}");
    assert!(
        all.contains("the running network equals the snapshot before the backup"),
        "{all}"
    );

    // A backup directory someone else prepared is refused (root would write through it).
    let (_, out) = lab.exec(
        "lab01",
        "rm -rf /var/tmp/fc-planted; runuser -u fclab -- mkdir -m 0777 /var/tmp/fc-planted; echo made",
    );
    assert!(out.contains("made"), "{out}");
    let o = five_step(
        &lab,
        "/home/fclab/fabcheck-recipe-ok",
        &[
            "--allow-changes",
            "--set",
            "backup_dir=/var/tmp/fc-planted",
            "--filter",
            "step 5",
        ],
    );
    let m = o.message("step 5: netplan backup and restore [lab01]");
    assert_eq!(
        o.status("step 5: netplan backup and restore [lab01]"),
        "error",
        "{m}"
    );
    assert!(
        m.contains("refused backup_dir /var/tmp/fc-planted") && m.contains("fclab"),
        "{m}"
    );
    let _ = lab.exec("lab01", "rm -rf /var/tmp/fc-planted");

    // A recipe naming a management address fails and names it; without --allow-changes,
    // step 5 is skipped with the reason, and the nodes were sent none of its commands (every
    // command sent is in the --record transcripts).
    let o = five_step(
        &lab,
        "/home/fclab/fabcheck-recipe-foreign",
        &["--record", "{dir}/rec"],
    );
    let mut sent = String::new();
    for e in std::fs::read_dir(o.dir.join("rec")).unwrap().flatten() {
        sent.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
    }
    assert!(sent.contains("ping"), "the run was recorded: {sent:.2000}");
    // Step 5's own commands (the backup folder's name, the copy and the restore); other
    // steps use mktemp and `netplan generate --root-dir` read-only.
    for step5 in ["fabcheck-netplan.XXXXXXXX", "cp -a -T", "mv -f -T"] {
        assert!(
            !sent.contains(step5),
            "a command of the skipped step 5 was sent (`{step5}`) without --allow-changes"
        );
    }
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

/// Another cluster's setup: the nodes resolve none of each other's names, the node user's own
/// `~/.ssh/config` says `StrictHostKeyChecking no` with an empty known_hosts, and the inventory
/// names nodes without `host` (the runner reaches them through its ssh config). The verdicts
/// must be the same as on the default lab.
#[test]
fn five_step_on_a_lab_without_names_and_with_the_users_ssh_config() {
    use common::lab::Variant;
    let v = Variant {
        no_names: true,
        user_ssh_config: Some("StrictHostKeyChecking no".into()),
        ..Default::default()
    };
    let Some(lab) = Lab::ensure_variant(16, &v, "five_step_on_a_lab_without_names") else {
        return;
    };
    // Inventory without `host`: names only (the runner's ssh config knows them, peers do not).
    let inv = std::fs::read_to_string(lab.inventory()).unwrap();
    let inv: String = inv
        .lines()
        .filter(|l| !l.starts_with("host = "))
        .map(|l| format!("{l}\n"))
        .collect();
    let o = five_step_with(&inv, recipe_ok(), &["--allow-changes"]);
    o.code(1);
    for t in o.tests() {
        let name = t["name"].as_str().unwrap();
        let status = t["status"].as_str().unwrap();
        if name.starts_with("step 3") {
            continue;
        }
        if name.starts_with("step 1: roce mtu") {
            assert_eq!(status, "skipped", "{name}: {}", t["message"]);
            continue;
        }
        assert_eq!(status, "pass", "{name}: {}", t["message"]);
    }
    assert_eq!(
        o.tests()
            .iter()
            .filter(|t| t["name"].as_str().unwrap().starts_with("step 5"))
            .count(),
        4
    );
    let m = o.message("step 3: rdma devices up [lab01]");
    assert!(m.contains("no RDMA device"), "{m}");
    // Step 5's fresh SSH went to the address fabcheck connected to, not to the bare name.
    let t = o.test("step 5: netplan backup and restore [lab02]");
    let cmds = t["commands"].to_string();
    assert!(cmds.contains("10.213.0.2 'echo fabcheck-hop"), "{cmds}");
    // strict_host_key=true makes host-key trust part of the check: with an empty known_hosts
    // (the run above let the user's config add the keys) step 2 fails with ssh's own reason.
    let (_, out) = lab.exec("lab01", ": > /home/fclab/.ssh/known_hosts; echo cleared");
    assert!(out.contains("cleared"), "{out}");
    let script = five_step_script();
    let step2_strict = || {
        Fab::new()
            .file("inv.toml", &inv)
            .args(["run", &script, "-i", "inv.toml", "-w", "lab[01-02]"])
            .args(["--filter", "step 2", "--set", "strict_host_key=true"])
            .reports()
            .run()
    };
    let o = step2_strict();
    o.code(1);
    let m = o.message("step 2: passwordless ssh [lab01 -> lab02]");
    assert!(
        m.contains("Host key verification failed")
            || m.contains("No ED25519 host key is known")
            || m.contains("host key"),
        "{m}"
    );
    // The diagnosis names the part, lab01's known_hosts entry for lab02 (the lab's nodes share
    // one home: lab02's entry for lab01 went too), not an unexplained red.
    let d = o.json.as_ref().unwrap()["diagnosis"].clone();
    assert_eq!(d[0]["rule"], "ssh_trust", "{d}");
    assert_eq!(d[0]["part"], "lab01's known_hosts entry for lab02", "{d}");
    assert!(
        d.as_array()
            .unwrap()
            .iter()
            .all(|x| x["rule"] == "ssh_trust"),
        "{d}"
    );
    // A changed host key: lab02's addresses on record with another key. ssh says so, and the
    // diagnosis tells it from an unknown one (lab02 -> lab01 stays unknown).
    let (_, addrs) = lab.exec(
        "lab02",
        "ip -o -4 addr show | awk '{print $4}' | cut -d/ -f1",
    );
    let plant = format!(
        "k=$(mktemp -u); ssh-keygen -q -t ed25519 -N '' -f $k && for a in {}; do echo \"$a $(cut -d' ' -f1,2 $k.pub)\"; done > /home/fclab/.ssh/known_hosts; rm -f $k $k.pub; echo planted",
        addrs.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    let (_, out) = lab.exec("lab01", &plant);
    assert!(out.contains("planted"), "{out}");
    let o = step2_strict();
    o.code(1);
    let m = o.message("step 2: passwordless ssh [lab01 -> lab02]");
    assert!(m.contains("REMOTE HOST IDENTIFICATION HAS CHANGED"), "{m}");
    let d = o.json.as_ref().unwrap()["diagnosis"].clone();
    let parts: Vec<&str> = d
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["part"].as_str().unwrap())
        .collect();
    assert!(
        parts.contains(&"lab01's known_hosts entry for lab02, or lab02's host key"),
        "{d}"
    );
    assert!(
        parts.contains(&"lab02's known_hosts entry for lab01"),
        "{d}"
    );
}

/// Another cluster's setup: the node user's login shell is bash and its `~/.bashrc` prints a
/// banner on stdout, module chatter on stderr and a line without newline, before every command
/// (sshd runs commands through the login shell). That text is not the tools' output: parsers
/// see only what the command printed, the verdicts are those of the default lab, and the run
/// says once that the shell is noisy.
#[test]
fn verdicts_hold_when_the_login_shell_prints_a_banner() {
    use common::lab::Variant;
    let v = Variant {
        noisy_shell: true,
        ..Default::default()
    };
    let Some(lab) = Lab::ensure_variant(16, &v, "verdicts_hold_when_the_login_shell_prints") else {
        return;
    };
    // The shell really is noisy: a plain ssh command gets the banner in front of its output.
    let (_, out) = lab.exec(
        "lab01",
        "runuser -u fclab -- ssh -o BatchMode=yes lab02 'echo payload' 2>&1",
    );
    assert!(
        out.contains("Welcome to lab02") && out.contains("Lmod"),
        "{out}"
    );
    let o = Fab::new()
        .args([
            "exec",
            "-i",
            &lab.inventory(),
            "-w",
            "lab[01-04]",
            "--",
            "ip -j -br addr show fab0; echo on-stderr >&2",
        ])
        .run();
    o.code(0);
    let out = &o.stdout;
    assert!(
        !out.contains("Welcome") && !out.contains("motd") && !out.contains("Lmod"),
        "{out}"
    );
    assert_eq!(out.matches("\"ifname\":\"fab0\"").count(), 4, "{out}");
    assert_eq!(out.matches("on-stderr").count(), 4, "{out}");
    let err = &o.stderr;
    assert_eq!(
        err.matches("prints before every command").count(),
        1,
        "{err}"
    );
    assert!(err.contains("Welcome to lab0"), "{err}");

    let o = five_step(&lab, recipe_ok(), &["--allow-changes"]);
    o.code(1);
    for t in o.tests() {
        let name = t["name"].as_str().unwrap();
        // No RDMA here: step 1's RoCE MTU is skipped saying so, step 3 is an error.
        if name.starts_with("step 1: roce mtu") {
            assert_eq!(t["status"], "skipped", "{name}: {}", t["message"]);
        } else if !name.starts_with("step 3") {
            assert_eq!(t["status"], "pass", "{name}: {}", t["message"]);
        }
    }
    // Step 3 is an error for the lab's real reason (no RDMA here), not a banner in the parse.
    let m = o.message("step 3: rdma devices up [lab01]");
    assert!(
        m.contains("no RDMA device") && !m.contains("Welcome"),
        "{m}"
    );
}

/// Another cluster's setup: the node user's sudo asks for a password (no NOPASSWD rule).
/// fabcheck runs `sudo -n`, so step 5 cannot make its change: that is an error naming sudo and
/// what to do, never a failed netplan check.
#[test]
fn step_5_without_passwordless_sudo_is_an_error_naming_sudo() {
    let Some(lab) = Lab::ensure(16, "step_5_without_passwordless_sudo_is_an_error") else {
        return;
    };
    /// Puts the lab's sudoers rule back however the test ends.
    struct Restore(String);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = std::fs::write("/etc/sudoers.d/fclab", &self.0);
        }
    }
    let rule = std::fs::read_to_string("/etc/sudoers.d/fclab").unwrap();
    assert!(rule.contains("NOPASSWD"), "{rule}");
    let _restore = Restore(rule.clone());
    std::fs::write("/etc/sudoers.d/fclab", rule.replace("NOPASSWD: ", "")).unwrap();
    let script = five_step_script();
    let o = Fab::new()
        .args([
            "run",
            &script,
            "-i",
            &lab.inventory(),
            "-w",
            "lab[01-02]",
            "--filter",
            "step 5",
            "--allow-changes",
        ])
        .reports()
        .run();
    o.code(1);
    for n in ["lab01", "lab02"] {
        let name = format!("step 5: netplan backup and restore [{n}]");
        assert_eq!(o.status(&name), "error", "{name}: {}", o.message(&name));
        let m = o.message(&name);
        assert!(
            m.contains("sudo refused")
                && m.contains("a password is required")
                && m.contains("NOPASSWD"),
            "{m}"
        );
    }
    o.junit_is_valid();
}

/// Issue 20 item 10: with no target MTU, the MTU most fabric interfaces have is expected, so the
/// node whose interface differs is the one named — never a healthy peer ("lab04 fab1 MTU:
/// expected 1500, actual 9000" before). Real MTUs on the lab's veths, real pings.
#[test]
fn mtu_without_a_target_names_the_odd_node_not_a_healthy_peer() {
    let Some(lab) = Lab::ensure(
        4,
        "mtu_without_a_target_names_the_odd_node_not_a_healthy_peer",
    ) else {
        return;
    };
    struct Restore<'a>(&'a Lab);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let (c, out) = self.0.exec("lab03", "ip link set fab1 mtu 9000");
            assert_eq!(c, 0, "restore lab03 fab1 MTU: {out}");
        }
    }
    let (c, out) = lab.exec("lab03", "ip link set fab1 mtu 1500");
    assert_eq!(c, 0, "{out}");
    let _restore = Restore(&lab);
    let inventory = std::fs::read_to_string(lab.inventory()).unwrap();
    let script = common::repo()
        .join("scripts/fabric_baseline.rhai")
        .display()
        .to_string();
    let o = Fab::new()
        .file("inv.toml", &inventory)
        .args([
            "run",
            &script,
            "-i",
            "inv.toml",
            "-w",
            "lab[01-04]",
            "--filter",
            "MTU",
        ])
        .reports()
        .run();
    o.code(1);
    let mut failed = 0;
    for t in o.tests() {
        let name = t["name"].as_str().unwrap();
        let msg = t["message"].as_str().unwrap_or("");
        if name.contains("lab03") {
            assert_eq!(t["status"], "failure", "{name}: {msg}");
            assert!(
                msg.contains("lab03 fab1 MTU") && msg.contains("expected 9000, actual 1500"),
                "{name}: {msg}"
            );
            failed += 1;
        } else {
            assert_eq!(t["status"], "pass", "{name} (lab03 not in it): {msg}");
        }
    }
    assert_eq!(failed, 6, "the 6 ordered pairs with lab03 fail");
}

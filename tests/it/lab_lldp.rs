//! Rail alignment over LLDP (issue 46 item 3) on the namespace lab with real lldpd: one lldpd
//! per lab rail bridge plays that rail's leaf switch (`leaf-f0` on the bridge ports of every
//! node's fab0, `leaf-f1` on fab1's, port ids as switches send them: interface names), one
//! lldpd per node on fab0/fab1, and `fabric_baseline`'s "link: rails on their switches (LLDP)"
//! reads them with the real `lldpctl -f json`. The one shim: `lldpctl` in /usr/local/sbin (where
//! `sudo -n` looks first) adds `-u` with the node's own socket (the nodes share /run); its answers
//! are lldpctl's own.
//! A node cabled to the other rail's leaf is emulated by serving its bridge ports from the
//! other leaf's lldpd: the LLDP view of a crossed cable.

use crate::common::lab::Lab;
use crate::common::Fab;
use std::process::{Child, Command};
use std::time::Duration;

const NODES: [&str; 4] = ["lab01", "lab02", "lab03", "lab04"];
const SOCKS: &str = "/run/fclab-lldp";
const TEST: &str = "link: rails on their switches (LLDP)";

/// The lldpd processes of one phase: the two leaves (in the lab's network namespace, in the
/// foreground as the child itself) and one per node (inside the node, ended with pkill).
struct Lldp<'a> {
    lab: &'a Lab,
    leaves: Vec<Child>,
}

impl<'a> Lldp<'a> {
    /// Leaf k serves the bridge ports `ports[k]`.
    fn start(lab: &'a Lab, ports: [Vec<String>; 2]) -> Self {
        std::fs::create_dir_all(SOCKS).unwrap();
        // The leaf's name, and its port's name as the port id (as switches send it), often (the
        // test need not wait 30 s): configured before lldpd's first frame (`-O`). lldpd runs in
        // the foreground (`-d`) as the child itself, so killing the child ends it.
        let mut leaves = Vec::new();
        for (k, p) in ports.iter().enumerate() {
            let sock = format!("{SOCKS}/leaf-f{k}.sock");
            let conf = format!("{SOCKS}/leaf-f{k}.conf");
            std::fs::write(&conf, format!("configure system hostname leaf-f{k}\nconfigure lldp portidsubtype ifname\nconfigure lldp tx-interval 1\n")).unwrap();
            let _ = std::fs::remove_file(&sock);
            let child = Command::new("nsenter")
                .args([
                    "--net=/run/netns/fclab-net",
                    "lldpd",
                    "-d",
                    "-O",
                    &conf,
                    "-u",
                    &sock,
                    "-I",
                    &p.join(","),
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("start a leaf's lldpd (apt-get install lldpd)");
            leaves.push(child);
        }
        for n in NODES {
            let (c, out) = lab.exec(
                n,
                &format!("mkdir -p {SOCKS} && lldpd -u {SOCKS}/{n}.sock -I fab0,fab1 </dev/null >/dev/null 2>&1; for i in 1 2 3 4 5 6 7 8 9 10; do [ -S {SOCKS}/{n}.sock ] && break; sleep 0.2; done; chmod 666 {SOCKS}/{n}.sock"),
            );
            assert_eq!(c, 0, "lldpd on {n}: {out}");
        }
        Lldp { lab, leaves }
    }

    /// Every node hears exactly the expected leaf on each rail (`leaf(node, rail)`): a frame of
    /// the previous phase's leaves is aged out first (TTL 4 s at a 1 s interval).
    fn heard(&self, leaf: impl Fn(&str, usize) -> String) {
        for n in NODES {
            wait_for(&format!("{n}'s LLDP neighbours"), || {
                let (_, out) = self
                    .lab
                    .exec(n, &format!("lldpctl -u {SOCKS}/{n}.sock -f json0"));
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&out) else {
                    return false;
                };
                let seen: Vec<(String, String)> = v["lldp"][0]["interface"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|i| {
                        (
                            i["name"].as_str().unwrap_or("").to_string(),
                            i["chassis"][0]["name"][0]["value"]
                                .as_str()
                                .unwrap_or("")
                                .to_string(),
                        )
                    })
                    .collect();
                let want: Vec<(String, String)> =
                    (0..2).map(|k| (format!("fab{k}"), leaf(n, k))).collect();
                seen.len() == 2 && want.iter().all(|w| seen.contains(w))
            });
        }
    }
}

impl Drop for Lldp<'_> {
    fn drop(&mut self) {
        for c in &mut self.leaves {
            let _ = c.kill();
            let _ = c.wait();
        }
        // lldpd's unprivileged half ends with its monitor; wait for it
        crate::common::comes(crate::common::HANG, || {
            Command::new("pgrep")
                .args(["-f", SOCKS])
                .output()
                .map(|o| o.stdout.is_empty())
                .unwrap_or(true)
        });
        for n in NODES {
            // gone before its socket is: an lldpd that exits late would unlink the next one's
            let _ = self.lab.exec(n, &format!("pkill -x lldpd; for i in $(seq 100); do pgrep -x lldpd >/dev/null || break; sleep 0.1; done; rm -f {SOCKS}/{n}.sock {SOCKS}/{n}.sock.lock"));
        }
        let _ = std::fs::remove_dir_all(SOCKS);
    }
}

/// The one shim, where `sudo -n` finds it before the real /usr/sbin/lldpctl: the real lldpctl
/// with this node's own lldpd socket (the lab's nodes share /run). Removed when dropped.
const SHIM: &str = "/usr/local/sbin/lldpctl";

struct Shim;

impl Shim {
    fn install() -> Self {
        assert!(
            !std::path::Path::new(SHIM).exists(),
            "{SHIM} exists already: this test would replace it (remove it, or run elsewhere)"
        );
        std::fs::write(
            SHIM,
            format!("#!/bin/sh\n# fabcheck lab test shim (tests/it/lab_lldp.rs), removed when the test ends\nexec /usr/sbin/lldpctl -u {SOCKS}/$(hostname).sock \"$@\"\n"),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(SHIM, std::fs::Permissions::from_mode(0o755)).unwrap();
        Shim
    }
}

impl Drop for Shim {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(SHIM);
    }
}

/// Waits (bounded, generous: lldpd's first frames on a busy machine) until `ok` holds.
fn wait_for(what: &str, ok: impl FnMut() -> bool) {
    crate::common::eventually(Duration::from_secs(90), what, ok);
}

fn ports(rail: usize, nodes: &[&str]) -> Vec<String> {
    nodes.iter().map(|n| format!("fcf{rail}-{n}")).collect()
}

fn baseline(lab: &Lab) -> crate::common::Outcome {
    Fab::new()
        .args([
            "run",
            &crate::common::repo()
                .join("scripts/fabric_baseline.rhai")
                .display()
                .to_string(),
            "-i",
            &lab.inventory(),
            "-w",
            "lab[01-04]",
            "--filter",
            TEST,
        ])
        .reports()
        .run()
}

#[test]
fn lab_real_lldpd_rails_on_their_leaves_pass_and_a_crossed_node_is_named() {
    let Some(lab) = Lab::ensure(16, "lab_real_lldpd_rails_on_their_leaves") else {
        return;
    };
    if Command::new("lldpd").arg("-h").output().is_err() {
        crate::common::skip("lab LLDP test needs lldpd (apt-get install lldpd)");
        return;
    }
    // fabcheck runs lldpctl through `sudo -n`, whose secure_path puts /usr/local/sbin first
    let _shim = Shim::install();
    {
        // healthy: rail k of every node on leaf-fk
        let l = Lldp::start(&lab, [ports(0, &NODES), ports(1, &NODES)]);
        l.heard(|_, k| format!("leaf-f{k}"));
        let o = baseline(&lab);
        assert_eq!(o.status(TEST), "pass", "{}\n{}", o.stdout, o.test(TEST));
        let log = o.test(TEST).to_string();
        assert!(
            log.contains("lab03 fab0 (rail 1) -> leaf-f0 port fcf0-lab03"),
            "{log}"
        );
    }
    {
        // lab03's cables on the other rail's leaves
        let rest = ["lab01", "lab02", "lab04"];
        let mut f0 = ports(0, &rest);
        f0.push("fcf1-lab03".into());
        let mut f1 = ports(1, &rest);
        f1.push("fcf0-lab03".into());
        let l = Lldp::start(&lab, [f0, f1]);
        l.heard(|n, k| format!("leaf-f{}", if n == "lab03" { 1 - k } else { k }));
        let o = baseline(&lab);
        assert_eq!(o.status(TEST), "failure", "{}", o.stdout);
        let m = o.message(TEST);
        assert!(
            m.contains("lab03 fab0 (rail 1) lands on leaf-f1 port fcf0-lab03, the switch of rail 2; rail 1 of the other nodes lands on leaf-f0"),
            "{m}\n{}",
            o.test(TEST)["output"]
        );
        assert!(!m.contains("lab01") && !m.contains("lab02"), "{m}");
        let d = &o.json.as_ref().unwrap()["diagnosis"][0];
        assert_eq!(d["rule"], "rail_crossed", "{d}");
        assert!(d["part"].as_str().unwrap_or("").contains("lab03"), "{d}");
    }
}

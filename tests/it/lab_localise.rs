//! Issue 32 part 4: scripts/localise.rhai on 16 lab nodes finds the one bad node (or link)
//! with at most 3·N pair tests. The fault is a shim: real iperf3 everywhere, but on the faulty
//! node (or only towards the faulty link's far end) the client's JSON report says half rate.

use crate::common;
use common::lab::Lab;
use common::Fab;

/// An iperf3 shim: on `node`, as a client whose arguments contain `towards` (any server when
/// empty), the real iperf3's JSON with every bits_per_second halved; real iperf3 otherwise.
fn half_rate_shim(node: &str, towards: &str) -> String {
    format!(
        r#"#!/bin/sh
real=/usr/bin/iperf3
case " $* " in *" -c "*) ;; *) exec $real "$@" ;; esac
[ "$(hostname)" = "{node}" ] || exec $real "$@"
case " $* " in *"{towards}"*) ;; *) exec $real "$@" ;; esac
$real "$@" | perl -pe 's/("bits_per_second":\s*)([-+0-9.eE]+)/$1 . ($2 \/ 2)/ge'
"#
    )
}

struct Unshim<'a>(&'a Lab);
impl Drop for Unshim<'_> {
    fn drop(&mut self) {
        self.0.remove_shims();
    }
}

/// Runs localise.rhai on all 16 nodes; the testcase's status and message, and the pair tests
/// it used (its metric `localise_tests`).
fn localise(lab: &Lab) -> (String, String, usize) {
    let script = common::repo()
        .join("scripts/localise.rhai")
        .display()
        .to_string();
    let o = Fab::new()
        .args([
            "run",
            &script,
            "-i",
            &lab.inventory(),
            "--set",
            "duration=1",
            "--set",
            "iperf3_args=-b 1G",
        ])
        .reports()
        .run();
    let name = "localise: bad node or link";
    let msg = o.message(name);
    let metrics = o.test(name)["metrics"].clone();
    let tests = metrics
        .as_array()
        .and_then(|m| m.iter().find(|x| x["name"] == "localise_tests"))
        .and_then(|x| x["value"].as_f64())
        .unwrap_or_else(|| panic!("no localise_tests metric in {metrics}: {msg}"));
    if o.status(name) == "failure" {
        assert!(
            msg.contains(&format!("({tests} pair tests for 16 nodes")),
            "{msg}"
        );
    }
    (o.status(name), msg, tests as usize)
}

#[test]
fn localise_names_the_shim_slowed_node_among_16_with_at_most_3n_tests() {
    let Some(lab) = Lab::ensure(16, "localise_names_the_shim_slowed_node") else {
        return;
    };
    let _unshim = Unshim(&lab);
    lab.shim("iperf3", &half_rate_shim("lab07", ""));
    let (status, msg, tests) = localise(&lab);
    assert_eq!(status, "failure", "{msg}");
    assert!(msg.contains("exclude lab07 "), "{msg}");
    assert!(!msg.contains("bad link"), "{msg}");
    assert!(
        msg.contains("lab07: failed against 3 nodes proven good"),
        "{msg}"
    );
    assert!((16..=48).contains(&tests), "{tests} pair tests: {msg}");
}

#[test]
fn localise_tells_a_shim_slowed_link_from_a_bad_node() {
    let Some(lab) = Lab::ensure(16, "localise_tells_a_shim_slowed_link") else {
        return;
    };
    let (c, addr) = lab.exec("lab04", "ip -4 -o addr show dev fab0");
    assert_eq!(c, 0, "{addr}");
    let ip = addr
        .split_whitespace()
        .skip_while(|w| *w != "inet")
        .nth(1)
        .and_then(|a| a.split('/').next())
        .expect("lab04 fab0 address")
        .to_string();
    let _unshim = Unshim(&lab);
    lab.shim("iperf3", &half_rate_shim("lab03", &format!(" {ip} ")));
    let (status, msg, tests) = localise(&lab);
    assert_eq!(status, "failure", "{msg}");
    assert!(msg.contains("bad link lab03 - lab04"), "{msg}");
    assert!(!msg.contains("exclude lab"), "no node excluded: {msg}");
    assert!((16..=48).contains(&tests), "{tests} pair tests: {msg}");
}

#[test]
fn localise_passes_a_healthy_lab_of_16() {
    let Some(lab) = Lab::ensure(16, "localise_passes_a_healthy_lab") else {
        return;
    };
    lab.remove_shims();
    let (status, msg, tests) = localise(&lab);
    assert_eq!(status, "pass", "{msg}");
    assert_eq!(tests, 16, "{msg}");
}

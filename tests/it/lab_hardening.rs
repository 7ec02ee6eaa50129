//! Lab tests of issue 23's hardening items that this module owns: secrets never in an argv,
//! a blocking `Match exec`, the step-5 backup directory, what a `kill -9` leaves.

use crate::common::lab::Lab;
use crate::common::Fab;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Every argv on the machine (the nodes' too: their PID namespaces are children of this one)
/// that holds `needle`, as a /proc poller of any user reads them.
fn argvs_holding(needle: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            if c.contains(needle) {
                seen.push(c);
            }
        }
    }
    seen
}

/// Poll every argv on the machine for `needle` until the returned flag is set; the handle
/// gives what was seen.
fn poll_argvs(needle: String) -> (Arc<AtomicBool>, std::thread::JoinHandle<Vec<String>>) {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let h = std::thread::spawn(move || {
        let mut seen = Vec::new();
        while !s.load(Ordering::Relaxed) {
            seen.extend(argvs_holding(&needle));
            std::thread::sleep(Duration::from_millis(2));
        }
        seen
    });
    (stop, h)
}

/// Issue 23, item 9: a command's `env` values (plain, with sudo, and through mpirun's `-x`)
/// reach the command on the node but never any argv there or here: a /proc poller running
/// the whole time sees no secret (on main, `sudo -n env TOK=…` showed it for the command's
/// whole life).
#[test]
fn env_values_never_appear_in_any_argv_on_the_nodes() {
    let Some(lab) = Lab::ensure(16, "env_values_never_appear_in_any_argv_on_the_nodes") else {
        return;
    };
    let secret = format!("S3CRET{}x", std::process::id());
    let s = format!(
        "for n in [\"lab01\", \"lab02\"] {{\n\
           test(`plain ${{n}}`, || {{ let r = node(n).run(`sleep 2; printf %s \"$TOK\"`, #{{ env: #{{ TOK: \"{secret}\" }} }}); assert_eq(r.stdout, \"{secret}\", \"value\"); }});\n\
           test(`sudo ${{n}}`, || {{ let r = node(n).run(`sleep 2; printf %s \"$TOK\"`, #{{ env: #{{ TOK: \"{secret}\" }}, sudo: true }}); assert_eq(r.stdout, \"{secret}\", \"value\"); }});\n\
         }}\n"
    );
    let (stop, poller) = poll_argvs(secret.clone());
    let o = Fab::new()
        .file("s.rhai", &s)
        .args(["run", "s.rhai", "-i", &lab.inventory()])
        .reports()
        .run();
    stop.store(true, Ordering::Relaxed);
    let seen = poller.join().unwrap();
    for t in ["plain lab01", "sudo lab01", "plain lab02", "sudo lab02"] {
        assert_eq!(o.status(t), "pass", "{t}: {}", o.message(t));
    }
    o.code(0);
    assert!(seen.is_empty(), "the secret was in an argv: {seen:?}");
}

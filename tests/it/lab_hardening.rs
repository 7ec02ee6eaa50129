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
    assert!(
        seen.is_empty(),
        "the secret was in an argv {} times, e.g. {:?}",
        seen.len(),
        seen.first()
    );
}

/// Step 5 on lab01 alone with `--set backup_dir=DIR`.
fn step5_on_lab01(lab: &Lab, backup_dir: &str) -> crate::common::Outcome {
    let script = crate::common::repo().join("scripts/five_step_acceptance.rhai");
    Fab::new()
        .args(["run", &script.display().to_string(), "-i", &lab.inventory()])
        .args(["-w", "lab01", "--allow-changes", "--filter", "step 5"])
        .args(["--set", &format!("backup_dir={backup_dir}")])
        .args([
            "--set",
            "mgmt_ssh_from_peer=false",
            "--set",
            "netplan_generate=false",
        ])
        .reports()
        .run()
}

/// Issue 23, item 5: the attack on a user-given step-5 `backup_dir`. A directory owned by
/// `nobody` above it, holding nobody's symlink to a root-only directory that holds a root-only
/// file named like the netplan file: on main root wrote the netplan file over it. Now the
/// parent is refused naming both (nothing is written), and a parent only root can change
/// (sticky /var/tmp) gets a fresh private directory.
#[test]
fn a_backup_dir_under_another_users_directory_is_refused_and_nothing_written() {
    let Some(lab) = Lab::ensure(
        16,
        "a_backup_dir_under_another_users_directory_is_refused_and_nothing_written",
    ) else {
        return;
    };
    let setup = "rm -rf /var/tmp/fc-attack /root/fc-victim; mkdir -p -m 0700 /root/fc-victim/bk; \
                 echo ROOT-ONLY > /root/fc-victim/bk/40-cx7.yaml; chmod 600 /root/fc-victim/bk/40-cx7.yaml; \
                 mkdir /var/tmp/fc-attack; ln -s /root/fc-victim /var/tmp/fc-attack/link; \
                 chown -h nobody /var/tmp/fc-attack /var/tmp/fc-attack/link; echo made";
    let (_, out) = lab.exec("lab01", setup);
    assert!(out.contains("made"), "{out}");
    let o = step5_on_lab01(&lab, "/var/tmp/fc-attack/link/bk");
    let (_, victim) = lab.exec(
        "lab01",
        "cat /root/fc-victim/bk/40-cx7.yaml; ls -A /root/fc-victim/bk",
    );
    let _ = lab.exec("lab01", "rm -rf /var/tmp/fc-attack /root/fc-victim");
    let t = "step 5: netplan backup and restore [lab01]";
    let m = o.message(t);
    assert_eq!(
        victim.trim(),
        "ROOT-ONLY\n40-cx7.yaml",
        "root wrote through the planted link; {m}"
    );
    assert_eq!(o.status(t), "error", "{m}");
    assert!(
        m.contains("refused backup_dir /var/tmp/fc-attack/link/bk")
            && m.contains("/var/tmp/fc-attack/link is a symbolic link owned by nobody")
            && m.contains("/var/tmp/fc-attack is owned by nobody"),
        "{m}"
    );
    // A parent that only root can change: a fresh root 0700 directory in it, step 5 passes.
    let list = "stat -c '%n %U %a' /var/tmp/fabcheck-netplan.* 2>/dev/null";
    let before = lab.exec("lab01", list).1;
    let o = step5_on_lab01(&lab, "/var/tmp");
    let m = o.message(t);
    assert_eq!(o.status(t), "pass", "{m}");
    let after = lab.exec("lab01", list).1;
    let new: Vec<&str> = after.lines().filter(|l| !before.contains(*l)).collect();
    assert_eq!(new.len(), 1, "{after}");
    assert!(new[0].ends_with(" root 700"), "{}", new[0]);
    let dir = new[0].split(' ').next().unwrap().to_string();
    let _ = lab.exec("lab01", &format!("rm -rf {dir}"));
}

/// Issue 23, item 10 (and its leftover): fabcheck killed with SIGKILL while `sleep 3557` runs on
/// four nodes, one of which (lab04) has its sshd stopped: within seconds its masters are gone
/// (on main before the watchdog they stayed until the commands ended), so is its control
/// directory, and so are the sleeps on the three nodes that answer (on main they ran on until
/// their node-side timeout); the stopped node delays nothing past the watchdog's bound.
#[test]
fn after_kill_9_the_masters_and_the_control_dir_are_gone_within_seconds() {
    use crate::lab_ssh::{control_dirs_of, kill_leftovers, local_ssh_of, wait_on_node};
    let Some(lab) = Lab::ensure(
        16,
        "after_kill_9_the_masters_and_the_control_dir_are_gone_within_seconds",
    ) else {
        return;
    };
    // The sleeps and their node-side timeout last an hour: only the watchdog ends them within
    // the bound.
    let s = "test(\"sleepers\", #{ timeout: \"2h\" }, || { run_all(nodes(\"lab[01-04]\"), \"sleep 3557\", #{ timeout: \"2h\" }); });\n";
    let f = Fab::new()
        .file("k.rhai", s)
        .args(["run", "k.rhai", "-i", &lab.inventory()]);
    let mut child = f
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let nodes = ["lab01", "lab02", "lab03", "lab04"];
    for n in nodes {
        wait_on_node(&lab, n, "sleep 3557");
    }
    assert!(!local_ssh_of(pid).is_empty(), "masters are up");
    assert!(!control_dirs_of(pid).is_empty(), "a control dir is there");
    let stop = lab.exec("lab04", "pkill -STOP -x sshd; echo stopped").1;
    child.kill().unwrap();
    let _ = child.wait();
    let t = std::time::Instant::now();
    let left_on = |n: &&str| lab.pids(n).contains("sleep 3557");
    let answering = &nodes[..3];
    let gone = || {
        local_ssh_of(pid).is_empty()
            && control_dirs_of(pid).is_empty()
            && !answering.iter().any(left_on)
    };
    let mut nodes_clear = None;
    while !gone() && t.elapsed() < crate::common::HANG {
        if nodes_clear.is_none() && !answering.iter().any(left_on) {
            nodes_clear = Some(t.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = t.elapsed();
    let (ssh, dirs) = (local_ssh_of(pid), control_dirs_of(pid));
    let left: Vec<&str> = answering.iter().copied().filter(|n| left_on(n)).collect();
    let _ = lab.exec("lab04", "pkill -CONT -x sshd");
    kill_leftovers(pid);
    for n in nodes {
        let _ = lab.exec(n, "pkill -KILL -f 'sleep 3557'");
    }
    assert!(stop.contains("stopped"), "{stop}");
    assert!(
        left.is_empty(),
        "`sleep 3557` still on {left:?} {took:?} after SIGKILL"
    );
    assert!(
        ssh.is_empty(),
        "masters still there {took:?} after SIGKILL: {ssh}"
    );
    assert!(
        dirs.is_empty(),
        "control dirs still there {took:?} after SIGKILL: {dirs:?}"
    );
    eprintln!(
        "after SIGKILL: node commands gone after {:?}, masters and control dir after {took:?}",
        nodes_clear.unwrap_or(took)
    );
}

/// Issue 23, item 10: a node whose sshd is stopped (SIGSTOP) after the connection is up: a
/// command that never reached it is not "killed on the node" (on main it said so), but said
/// to have had no answer, and the node's own commands are untouched.
#[test]
fn a_command_that_never_reached_a_stopped_sshd_is_not_said_killed() {
    let Some(lab) = Lab::ensure(
        16,
        "a_command_that_never_reached_a_stopped_sshd_is_not_said_killed",
    ) else {
        return;
    };
    // lab03's connection is up; while lab04 sleeps, lab03's sshd (listener and sessions) is
    // stopped; then a command goes to lab03.
    let s = "test(\"up\", || { node(\"lab03\").sh(\"true\"); node(\"lab04\").sh(\"sleep 3\"); });\n\
             test(\"stopped\", || { node(\"lab03\").run(\"echo ran > /dev/null\", #{ timeout: \"2s\" }); });\n";
    let f = Fab::new()
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-i", &lab.inventory()])
        .reports();
    let t0 = std::time::Instant::now();
    let child = f.spawn();
    crate::lab_ssh::wait_on_node(&lab, "lab04", "sleep 3");
    let stop = lab.exec("lab03", "pkill -STOP -x sshd; echo stopped").1;
    let out = child.wait_with_output().unwrap();
    let _ = lab.exec("lab03", "pkill -CONT -x sshd");
    assert!(stop.contains("stopped"), "{stop}");
    let o = f.outcome(out);
    eprintln!("run ended {:?} after its start", t0.elapsed());
    let m = o.message("stopped");
    assert_eq!(o.status("up"), "pass", "{}", o.message("up"));
    assert_eq!(o.status("stopped"), "error", "{m}");
    assert!(!m.contains("killed on the node"), "{m}");
    assert!(m.contains("got no answer within 2s"), "{m}");
}

/// Issue 23, item 10: `known_hosts = "off"` and a node whose host key differs from the one
/// known for it (another key for lab01 in the known_hosts file): the run goes on, as asked,
/// but warns once (a console `warning:`, and the test that connected carries the warning into the
/// reports); a node whose key is the known one (lab02) adds nothing. On main: no warning.
#[test]
fn known_hosts_off_warns_once_when_it_accepts_a_changed_host_key() {
    let Some(lab) = Lab::ensure(
        16,
        "known_hosts_off_warns_once_when_it_accepts_a_changed_host_key",
    ) else {
        return;
    };
    let f = Fab::new();
    let dir = f.dir().to_path_buf();
    let st = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(dir.join("other"))
        .status()
        .unwrap();
    assert!(st.success());
    let other = std::fs::read_to_string(dir.join("other.pub")).unwrap();
    let other: Vec<&str> = other.split_whitespace().take(2).collect();
    let known = std::fs::read_to_string(lab.dir.join("known_hosts")).unwrap();
    let lab02: String = known
        .lines()
        .filter(|l| l.starts_with("lab02,"))
        .filter_map(|l| l.split_once(' '))
        .map(|(_, key)| format!("10.213.0.2 {key}\n"))
        .collect();
    assert!(!lab02.is_empty(), "{known}");
    let kh = format!("10.213.0.1 {}\n{lab02}", other.join(" "));
    let cfg = format!(
        "Host 10.213.0.1 10.213.0.2\n  User fclab\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile /dev/null\n  UpdateHostKeys no\n  BatchMode yes\n",
        lab.dir.join("id_ed25519").display(),
        dir.join("kh").display()
    );
    let inv = "[defaults]\nknown_hosts = \"off\"\nssh_config = \"cfg\"\nconnect_timeout = \"10s\"\n\
               [[node]]\nname = \"lab01\"\nhost = \"10.213.0.1\"\n[[node]]\nname = \"lab02\"\nhost = \"10.213.0.2\"\n";
    let s = "test(\"one\", || { node(\"lab01\").sh(\"true\"); });\n\
             test(\"two\", || { node(\"lab02\").sh(\"true\"); });\n\
             test(\"again\", || { node(\"lab01\").sh(\"true\"); });\n";
    let o = f
        .file("kh", &kh)
        .file("cfg", &cfg)
        .file("inv.toml", inv)
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .reports()
        .run();
    o.code(0);
    let warns: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains("host key of 10.213.0.1 has changed"))
        .collect();
    assert_eq!(warns.len(), 1, "{}", o.stderr);
    assert!(
        warns[0].starts_with("warning: ") && warns[0].contains("SHA256:"),
        "{}",
        warns[0]
    );
    let json = o.json.as_ref().expect("json");
    let warned: Vec<String> = o
        .tests()
        .iter()
        .filter(|t| t.to_string().contains("has changed"))
        .map(|t| t["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(warned, ["one"], "{json}");
    let junit = o.junit.as_deref().unwrap_or("");
    assert_eq!(
        junit.matches("host key of 10.213.0.1 has changed").count(),
        1,
        "{junit}"
    );
}

/// Issue 23 leftover: the local transport's `env` with `sudo: true`. As root (no sudo is run)
/// and as the lab user (`runuser`; `sudo -n`, whose env_reset clears the environment: on main
/// the value was dropped), the value reaches the command, which runs as root, and never any
/// argv (a /proc poller runs the whole time). Needs the lab only for its user with
/// passwordless sudo.
#[test]
fn local_env_reaches_a_sudo_command_as_root_and_as_another_user_and_no_argv() {
    let Some(_lab) = Lab::ensure(
        16,
        "local_env_reaches_a_sudo_command_as_root_and_as_another_user_and_no_argv",
    ) else {
        return;
    };
    let secret = format!("S3CRET{}y it's", std::process::id());
    let inv = "[defaults]\ntransport = \"local\"\n[[node]]\nname = \"a\"\n";
    let s = format!(
        "test(\"plain\", || {{ let r = node(\"a\").run(`sleep 1; printf %s \"$TOK\"`, #{{ env: #{{ TOK: \"{secret}\" }} }}); assert_eq(r.stdout, \"{secret}\", \"value\"); }});\n\
         test(\"sudo\", || {{ let r = node(\"a\").run(`sleep 1; printf '%s %s' \"$(id -u)\" \"$TOK\"`, #{{ env: #{{ TOK: \"{secret}\" }}, sudo: true }}); assert_eq(r.stdout, \"0 {secret}\", \"uid and value\"); }});\n"
    );
    let secret_word = secret.split(' ').next().unwrap().to_string();
    for user in ["root", "fclab"] {
        let f = Fab::new()
            .file("inv.toml", inv)
            .file("s.rhai", &s)
            .args(["run", "s.rhai", "-i", "inv.toml"])
            .reports();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(f.dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let c = f.command();
        let mut cmd = std::process::Command::new("runuser");
        // The lab user runs a copy it can reach (the checkout may be in a folder only root
        // enters).
        cmd.args(["-u", user, "--"])
            .arg(crate::common::reachable_bin())
            .args(c.get_args())
            .env("CI", "true")
            .current_dir(f.dir())
            .stdin(std::process::Stdio::null());
        let (stop, poller) = poll_argvs(secret_word.clone());
        let out = cmd.output().expect("runuser");
        stop.store(true, Ordering::Relaxed);
        let seen = poller.join().unwrap();
        let o = f.outcome(out);
        for t in ["plain", "sudo"] {
            assert_eq!(o.status(t), "pass", "{user}, {t}: {}", o.message(t));
        }
        o.code(0);
        assert!(
            seen.is_empty(),
            "{user}: the value was in an argv {} times, e.g. {:?}",
            seen.len(),
            seen.first()
        );
    }
}

/// Issue 36, item 5: a login shell whose `~/.bashrc` prints 1.1 MB before every command (over
/// the 1 MiB that used to end the search for the start line): the command's output is only
/// its own (on main: the banner, the run's start line, then `hello`). A shell that prints as
/// much and then never runs the command is an error that says so, not output.
#[test]
fn a_login_banner_over_1_mib_never_reaches_the_output() {
    use crate::common::lab::Variant;
    let v = Variant {
        noisy_shell: true,
        ..Default::default()
    };
    let Some(lab) =
        Lab::ensure_variant(4, &v, "a_login_banner_over_1_mib_never_reaches_the_output")
    else {
        return;
    };
    let rc = "/home/fclab/.bashrc";
    let mark = std::fs::read_to_string(rc).unwrap();
    let mark = mark.lines().next().unwrap().to_string();
    // The first line stays lab.sh's mark: dropping the variant lab restores the rc file.
    let banner = "head -c 1100000 /dev/zero | tr '\\0' B; echo\n";
    std::fs::write(rc, format!("{mark}\n{banner}")).unwrap();
    let s = "test(\"echo\", || { let r = node(\"lab01\").run(\"echo hello\"); assert_eq(r.stdout, \"hello\\n\", \"only the command's output\"); });\n";
    let o = Fab::new()
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-i", &lab.inventory(), "-w", "lab01"])
        .reports()
        .run();
    let m = o.message("echo");
    assert_eq!(o.status("echo"), "pass", "{m}\n{}", o.stderr);
    // The flood without the start line: the shell exits before the command.
    std::fs::write(rc, format!("{mark}\n{banner}exit 0\n")).unwrap();
    let o = Fab::new()
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-i", &lab.inventory(), "-w", "lab01"])
        .reports()
        .run();
    std::fs::write(rc, format!("{mark}\n")).unwrap();
    let m = o.message("echo");
    assert_eq!(o.status("echo"), "error", "{m}");
    assert!(m.contains("never fabcheck's start line"), "{m}");
    assert!(!m.contains("BBBBBBBB"), "{m}");
}

/// Issue 50 item 7: a login shell that floods without end (`yes` in `~/.bashrc`) never reaches
/// the command, and the clean-up fabcheck runs after it (the interrupt's node clean-up at the
/// end of the run, the timeout's) reaches the same shell. Each used to read the flood whole
/// for its 5–10 s (1.5–2.1 GB in memory; a fresh connection tried after it): now every read
/// stops at 1 MiB and a bit, and a node that answered with a flood is not asked again.
#[test]
fn a_login_shell_that_floods_without_end_keeps_the_clean_up_bounded() {
    use crate::common::lab::Variant;
    let v = Variant {
        noisy_shell: true,
        ..Default::default()
    };
    let test = "a_login_shell_that_floods_without_end_keeps_the_clean_up_bounded";
    let Some(lab) = Lab::ensure_variant(4, &v, test) else {
        return;
    };
    let rc = "/home/fclab/.bashrc";
    let mark = std::fs::read_to_string(rc).unwrap();
    let mark = mark.lines().next().unwrap().to_string();
    // The first line stays lab.sh's mark: dropping the variant lab restores the rc file; and
    // this test puts it back however it ends.
    struct Restore(&'static str, String);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = std::fs::write(self.0, format!("{}\n", self.1));
        }
    }
    let _restore = Restore(rc, mark.clone());
    std::fs::write(rc, format!("{mark}\nyes 'motd: flood'\n")).unwrap();
    let s = "test(\"echo\", || { node(\"lab01\").run(\"echo hello\", #{ timeout: \"2s\" }); });\n";
    let f = Fab::new()
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-i", &lab.inventory(), "-w", "lab01"])
        .reports();
    let (o, peak_kib) = crate::common::run_measuring_rss(&f);
    std::fs::write(rc, format!("{mark}\n")).unwrap();
    let m = o.message("echo");
    assert_eq!(o.status("echo"), "error", "{m}");
    assert!(!m.contains("motd: flood"), "{m}");
    // Said as what it is (the node answered, with a flood), not as a stopped sshd.
    assert!(
        m.contains("the login shell printed over") && !m.contains("sshd stopped"),
        "{m}"
    );
    // Measured: about 30 MiB with the bounded reads, over 1 GiB before.
    assert!(
        peak_kib < 256 * 1024,
        "fabcheck peaked at {} MiB reading a flood",
        peak_kib / 1024
    );
    let json = o.json.as_ref().expect("result.json");
    let left = serde_json::to_string(&json["not_cleaned_up"]).unwrap();
    assert!(
        left.contains("lab01"),
        "the node that floods is named: {left}"
    );
}

/// Run `run_all(nodes(), "sleep 60")` on lab[01-04]; once lab03 runs it, `between` (kill its
/// sshd, ...), then SIGTERM. Returns the outcome and what is still running on lab03.
fn sshd_dies_mid_run(lab: &Lab, between: &dyn Fn()) -> (crate::common::Outcome, String, Fab) {
    let s = "test(\"sleep\", || { run_all(nodes(), \"sleep 60\"); });\n";
    let f = Fab::new()
        .file("s.rhai", s)
        .args([
            "run",
            "s.rhai",
            "-i",
            &lab.inventory(),
            "-w",
            "lab[01-04]",
            "--html",
            "{dir}/r.html",
        ])
        .reports();
    let child = f.spawn();
    crate::lab_ssh::wait_on_node(lab, "lab03", "sleep 60");
    // The run's master connection to lab03 (10.213.0.3, its destination the last word of the
    // local ssh's command line).
    let pid = child.id();
    let master_to_lab03 = || {
        crate::lab_ssh::local_ssh_of(pid).lines().any(|l| {
            l.split_whitespace()
                .last()
                .is_some_and(|d| d.ends_with("10.213.0.3"))
        })
    };
    assert!(
        master_to_lab03(),
        "no master to lab03: {}",
        crate::lab_ssh::local_ssh_of(pid)
    );
    between();
    // The signal comes once that master has seen its connection end (it exits), not after a
    // pause.
    crate::common::eventually(crate::common::HANG, "the master to lab03 ended", || {
        !master_to_lab03()
    });
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let left = lab.pids("lab03");
    // Whatever happens, the lab is left as found.
    lab.start_sshd("lab03");
    let _ = lab.exec("lab03", "pkill -KILL -f '[s]leep 60'");
    (f.outcome(out), left, f)
}

/// Issue 36, item 4: a node whose sshd dies while it runs a command of the run. With no way to
/// reach it again, the run (SIGTERM: exit 3) says in every report that this node could not be
/// cleaned up, what may be left there and until when (on main: nothing, and `sleep 60` ran on
/// unnamed). When its sshd is back before the cleanup, a fresh connection ends the command.
#[test]
fn a_node_whose_sshd_dies_is_named_not_cleaned_up_or_cleaned_over_a_fresh_connection() {
    let Some(lab) = Lab::ensure(
        16,
        "a_node_whose_sshd_dies_is_named_not_cleaned_up_or_cleaned_over_a_fresh_connection",
    ) else {
        return;
    };
    let (o, left, _keep) = sshd_dies_mid_run(&lab, &|| lab.kill_sshd("lab03"));
    assert_eq!(o.code, 3, "{}", o.stderr);
    assert!(
        left.contains("sleep 60"),
        "the command is really left: {left}"
    );
    let line = "NOT CLEANED UP lab03: `sleep 60`, until ";
    assert!(o.stdout.contains(line), "{}", o.stdout);
    assert!(o.stdout.contains("(node-side timeout cap)"), "{}", o.stdout);
    assert_eq!(
        o.stdout.matches("NOT CLEANED UP").count(),
        1,
        "{}",
        o.stdout
    );
    let j = o.json.as_ref().unwrap();
    assert_eq!(j["not_cleaned_up"][0]["node"], "lab03", "{j}");
    assert_eq!(j["not_cleaned_up"][0]["commands"][0], "sleep 60", "{j}");
    let junit = o.junit.clone().unwrap();
    assert!(junit.contains("name=\"not_cleaned_up/lab03\""), "{junit}");
    o.junit_is_valid();
    let html = std::fs::read_to_string(o.dir.join("r.html")).unwrap();
    assert!(html.contains("NOT CLEANED UP lab03"), "{html}");
    // sshd killed, then back before the TERM: the old connection is gone, a fresh one cleans.
    let (o, left, _keep) = sshd_dies_mid_run(&lab, &|| {
        lab.kill_sshd("lab03");
        lab.start_sshd("lab03");
    });
    assert_eq!(o.code, 3, "{}", o.stderr);
    assert!(!o.stdout.contains("NOT CLEANED UP"), "{}", o.stdout);
    assert!(!left.contains("sleep 60"), "left on lab03: {left}");
    assert!(o.json.as_ref().unwrap().get("not_cleaned_up").is_none());
}

//! Connection set-up under the runner's own ssh config (issue 23 item 4): what ssh runs while
//! reading its config is bounded too and leaves nothing behind. Needs an ssh client, no lab.

use crate::common::{skip, Fab};

/// Processes (any user) whose command line is exactly `sleep SECS`.
fn sleeps(secs: &str) -> Vec<i32> {
    let want = format!("sleep\0{secs}\0");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<i32>().ok()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            (String::from_utf8_lossy(&cmd) == want).then_some(pid)
        })
        .collect()
}

/// A `Match exec` that never ends, met by `ssh -G` (known_hosts unset: fabcheck reads the
/// config's policy) and by the master's own set-up (known_hosts set): the node is an error
/// that names the cause within the connect timeout's bound, and no `sleep` of it is left. On
/// main the run hung (the master waited for ever) and `ssh -G` left its `sleep` behind.
#[test]
fn a_blocking_match_exec_is_bounded_by_the_connect_timeout_and_leaves_nothing() {
    if std::process::Command::new("ssh")
        .arg("-V")
        .output()
        .is_err()
    {
        skip("no ssh client is installed");
        return;
    }
    for (case, known_hosts) in [("ssh -G", ""), ("master", "known_hosts = \"strict\"\n")] {
        // A duration no other process uses: its `sleep` is found by it.
        let secs = format!("7{}{}", std::process::id(), known_hosts.len());
        let inv = format!(
            "[defaults]\nport = 9\nconnect_timeout = \"2s\"\n{known_hosts}ssh_config = \"ssh_config\"\n[[node]]\nname = \"a\"\nhost = \"127.0.0.1\"\n"
        );
        let f = Fab::new()
            .file("inv.toml", &inv)
            .file(
                "ssh_config",
                &format!("Match originalhost 127.0.0.1 exec \"sleep {secs}\"\n  User nobody\n"),
            )
            .file(
                "c.rhai",
                "test(\"reach\", || { node(\"a\").run(\"true\"); });\n",
            )
            .args(["run", "c.rhai", "-i", "inv.toml"])
            .reports();
        // The `Match exec` never ends (its sleep lasts weeks): the run must end within the
        // bound, far above the connect timeout's 2 × 2 s + 5 s and far below the hang.
        let mut child = f.spawn();
        let ended =
            crate::common::comes(crate::common::HANG, || child.try_wait().unwrap().is_some());
        if !ended {
            let _ = child.kill();
            let _ = child.wait();
        }
        // What ssh started is gone soon after fabcheck (polled, bounded; no fixed pause).
        crate::common::comes(crate::common::HANG, || sleeps(&secs).is_empty());
        let left = sleeps(&secs);
        for p in &left {
            // SAFETY: a `sleep` this test made ssh start.
            unsafe { libc::kill(*p, libc::SIGKILL) };
        }
        let out = child.wait_with_output().unwrap();
        assert!(ended, "{case}: the run hung for {:?}", crate::common::HANG);
        assert!(
            left.is_empty(),
            "{case}: `sleep {secs}` left behind: {left:?}"
        );
        let o = f.outcome(out);
        let m = o.message("reach");
        assert_eq!(o.status("reach"), "error", "{case}: {m}");
        assert!(m.contains("Match exec"), "{case}: {m}");
    }
}

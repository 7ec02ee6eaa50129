//! `fabcheck health` (issue 47, docs/continuous.md): one node judged where it runs, on both
//! simulations. Fault scenarios fail the prolog naming the part in one stderr line; healthy
//! variants pass; the prolog asks only its own node and sends no traffic and no Slurm command;
//! counters are judged against the last run's snapshot; the gauges file is promtool-clean and
//! survives a run killed mid-write.

use crate::common::{self, repo, tempdir::TempDir, Fab, Outcome};
use std::path::Path;

fn sim(which: &str) -> String {
    let f = match which {
        "ib" => "examples/sim-ib/cluster.toml",
        "switch" => "examples/sim-switch/four-sparks.toml",
        _ => "examples/sim/two-sparks.toml",
    };
    repo().join(f).display().to_string()
}

/// `fabcheck health` on one node of a simulation, with its state in `state`.
fn health(
    which: &str,
    node: &str,
    scenario: Option<&str>,
    state: &Path,
    extra: &[&str],
) -> Outcome {
    let mut args = vec![
        "health".to_string(),
        "-i".into(),
        sim(which),
        "--node".into(),
        node.into(),
        "--state".into(),
        state.display().to_string(),
    ];
    if let Some(s) = scenario {
        args.extend(["--scenario".into(), s.into()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    Fab::new().args(args).run()
}

fn fresh() -> TempDir {
    TempDir::new("health")
}

/// The one line an unhealthy run writes on stderr.
fn the_line(o: &Outcome) -> String {
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one stderr line, got: {}", o.stderr);
    lines[0].to_string()
}

#[test]
fn every_prolog_fault_of_both_simulations_fails_naming_the_part() {
    let cases = [
        (
            "spark",
            "spark-02",
            "negotiated-100g",
            "fabcheck: enp1s0f1np1 link: negotiated 100000 Mb/s, expected 200000 Mb/s",
        ),
        (
            "spark",
            "spark-02",
            "end-advertises-100g",
            "fabcheck: enp1s0f1np1 link:",
        ),
        (
            "spark",
            "spark-02",
            "rdma-rail-down-on-peer",
            "fabcheck: enP2p1s0f1np1 link: no link",
        ),
        (
            "spark",
            "spark-01",
            "pcie-downtrained",
            "fabcheck: enP2p1s0f1np1 pcie link: 2.5 GT/s x4, expected 32 GT/s x4",
        ),
        (
            "spark",
            "spark-02",
            "spark-pcie-x2",
            "fabcheck: enp1s0f1np1 pcie link: 32.0 GT/s x2",
        ),
        (
            "spark",
            "spark-02",
            "roce-v1-gid",
            "fabcheck: rocep1s0f1 gid:",
        ),
        (
            "spark",
            "spark-02",
            "roce-mtu-1024",
            "fabcheck: enp1s0f1np1 roce mtu:",
        ),
        (
            "spark",
            "spark-02",
            "rdma-device-missing",
            "fabcheck: roceP2p1s0f1 rails:",
        ),
        (
            "spark",
            "spark-02",
            "rdma-mapping-swapped",
            "fabcheck: rocep1s0f1 ",
        ),
        (
            "ib",
            "h100-02",
            "ib-port-at-hdr",
            "fabcheck: mlx5_5 link: port 1: Rate 200 Gb/s",
        ),
        (
            "ib",
            "h100-01",
            "ib-no-subnet-manager",
            "fabcheck: mlx5_0 link:",
        ),
    ];
    let mut wrong = Vec::new();
    for (which, node, scenario, want) in cases {
        let st = fresh();
        let o = health(which, node, Some(scenario), &st.path().join("state"), &[]);
        let line = o.stderr.lines().next().unwrap_or("").to_string();
        if o.code != 1
            || o.stderr.lines().count() != 1
            || !line.starts_with(want)
            || line.chars().count() > 79
        {
            wrong.push(format!(
                "{scenario} on {node}: exit {}, stderr {:?} (want a line starting {want:?})",
                o.code, o.stderr
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn healthy_variants_of_both_simulations_pass_the_prolog() {
    let cases = [
        ("spark", "spark-01", None),
        ("spark", "spark-02", None),
        // a 100G switch by design: both ends advertise 100G, the like ports are not asked
        ("spark", "spark-02", Some("spark-on-100g-switch")),
        ("spark", "spark-01", Some("kernel-update-inbox-driver")),
        ("ib", "h100-01", None),
        ("ib", "h100-04", None),
        ("ib", "h100-02", Some("ib-healthy-one-switch")),
    ];
    for (which, node, scenario) in cases {
        let st = fresh();
        let o = health(which, node, scenario, &st.path().join("state"), &[]);
        assert_eq!(
            (o.code, o.stderr.as_str()),
            (0, ""),
            "{node} {scenario:?}: {}",
            o.stdout
        );
        assert!(
            o.stdout.starts_with(&format!("{node}: healthy (prolog")),
            "{}",
            o.stdout
        );
    }
}

/// Every command the prolog sent (its `-v` log): only to the node judged, only reads of that
/// node, no traffic tool, no Slurm command (a `scontrol`/`sinfo` on PATH records any call).
#[test]
fn the_prolog_asks_only_its_node_sends_no_traffic_and_no_slurm_command() {
    let shims = fresh();
    let calls = shims.path().join("calls");
    for tool in ["scontrol", "sinfo", "squeue"] {
        let p = shims.path().join(tool);
        std::fs::write(
            &p,
            format!("#!/bin/sh\necho {tool} \"$@\" >> '{}'\n", calls.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        shims.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (which, node) in [("spark", "spark-02"), ("ib", "h100-03")] {
        let st = fresh();
        let o = Fab::new()
            .args(["health", "-v", "-i", &sim(which), "--node", node, "--state"])
            .args([st.path().join("state").display().to_string()])
            .env("PATH", &path)
            .env("SLURMD_NODENAME", node)
            .env("RUST_LOG", "fabcheck=debug")
            .run();
        o.code(0);
        let sent: Vec<&str> = o
            .stderr
            .lines()
            .filter_map(|l| l.split_once(" DEBUG ").map(|(_, r)| r))
            .filter(|r| r.contains(" (timeout "))
            .collect();
        assert!(sent.len() > 5, "the commands are logged: {}", o.stderr);
        let traffic = [
            "ib_write_bw",
            "ib_read_bw",
            "ib_send",
            "ping",
            "iperf3",
            "mpirun",
            "all_reduce",
            "srun",
            "scontrol",
            "sinfo",
            "ssh ",
        ];
        for c in &sent {
            assert!(
                c.starts_with(&format!("{node}: ")),
                "a command to another node: {c}"
            );
            assert!(
                !traffic.iter().any(|t| c.contains(t)),
                "traffic or Slurm: {c}"
            );
        }
    }
    assert!(
        !calls.exists(),
        "a Slurm command ran: {}",
        std::fs::read_to_string(&calls).unwrap_or_default()
    );
}

/// A copy of the Spark simulation with one more, test-only overlay: spark-01's second rail
/// answers `ethtool -S` with three link-down events (the link-flapping scenario's SYNTHESISED
/// second reading) from the first read on, as a node whose link flapped between two runs.
fn sim_with_flapped_counters(dir: &Path) -> String {
    let copy = dir.join("sim");
    let st = std::process::Command::new("cp")
        .args([
            "-r",
            &repo().join("examples/sim").display().to_string(),
            &copy.display().to_string(),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let s = copy.join("transcripts/scenarios/flapped-between-runs");
    std::fs::create_dir_all(&s).unwrap();
    std::fs::write(s.join("scenario.toml"), "description = \"test only: spark-01 enP2p1s0f1np1 reads three link-down events from the first read on\"\nhealthy = false\n").unwrap();
    std::fs::write(
        s.join("spark-01.toml"),
        "[[command]]\ncommand = \"ethtool -S enP2p1s0f1np1\"\nstdout_file = \"scenarios/link-flapping/ethtool-S-flapped.txt\"\nexit_code = 0\nduration_ms = 30\n",
    )
    .unwrap();
    copy.join("two-sparks.toml").display().to_string()
}

#[test]
fn counters_grown_since_the_last_run_fail_the_prolog_and_a_lost_state_is_a_fresh_start() {
    let d = fresh();
    let inv = sim_with_flapped_counters(d.path());
    let st = d.path().join("state");
    let run = |scenario: Option<&str>| {
        let mut f = Fab::new()
            .args(["health", "-i", &inv, "--node", "spark-01", "--state"])
            .args([st.display().to_string()]);
        if let Some(s) = scenario {
            f = f.args(["--scenario", s]);
        }
        f.run()
    };
    run(None).code(0);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&st).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the state folder is made 0700");
    let o = run(Some("flapped-between-runs"));
    o.code(1);
    assert_eq!(
        the_line(&o),
        "fabcheck: enP2p1s0f1np1 errors since the last run: link_down_events_phy +3"
    );
    // the same reading again: nothing grew since the unhealthy run (its reading was kept)
    run(Some("flapped-between-runs")).code(0);
    // a corrupt state: a fresh start, said, never a crash or a red
    std::fs::write(st.join("health-spark-01.json"), "{ half a file").unwrap();
    let o = run(Some("flapped-between-runs"));
    o.code(0);
    assert!(
        o.stdout
            .contains("note: fresh start, the state was not usable"),
        "{}",
        o.stdout
    );
}

#[test]
fn a_state_folder_others_can_write_is_refused_before_anything_is_judged() {
    let d = fresh();
    let st = d.path().join("shared");
    std::fs::create_dir(&st).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&st, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let o = health("spark", "spark-02", None, &st, &[]);
    o.code(2);
    assert!(
        o.stderr.contains("others can read or write it"),
        "{}",
        o.stderr
    );
    assert_eq!(
        std::fs::read_dir(&st).unwrap().count(),
        0,
        "nothing written there"
    );
}

#[test]
fn the_healthcheck_window_catches_counters_growing_on_both_simulations() {
    for (which, node, scenario, want) in [
        (
            "spark",
            "spark-01",
            "link-flapping",
            "fabcheck: enP2p1s0f1np1 errors over the window: link_down_events_phy +3",
        ),
        (
            "ib",
            "h100-03",
            "ib-symbol-errors-growing",
            "fabcheck: mlx5_9/1 errors over the window: SymbolErrorCounter +37",
        ),
    ] {
        let st = fresh();
        // the prolog reads once: it cannot see growth within its run
        health(which, node, Some(scenario), &st.path().join("state"), &[]).code(0);
        let st = fresh();
        let o = health(
            which,
            node,
            Some(scenario),
            &st.path().join("state"),
            &["--context", "healthcheck"],
        );
        o.code(1);
        assert_eq!(the_line(&o), want);
    }
}

#[test]
fn nothing_judged_is_unknown_exit_4_not_unhealthy() {
    let f = Fab::new().file(
        "one.toml",
        "[[node]]\nname = \"n1\"\nhost = \"n1\"\ntransport = \"replay\"\nreplay_dir = \"empty\"\ninterfaces = [\"eth9\"]\nrdma_devices = [\"mlx5_9\"]\n",
    );
    std::fs::create_dir(f.dir().join("empty")).unwrap();
    std::fs::write(f.dir().join("empty/n1.toml"), "").unwrap();
    let st = fresh();
    let o = f
        .args(["health", "-i", "one.toml", "--node", "n1", "--state"])
        .args([st.path().join("state").display().to_string()])
        .run();
    assert_eq!(o.code, 4, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("UNKNOWN (not judged, not drained)"),
        "{}",
        o.stdout
    );
}

/// The gauges file with its two run-dependent values (start time, duration) set to 0.
fn normalised(prom: &str) -> String {
    prom.lines()
        .map(|l| {
            if !l.starts_with('#')
                && (l.starts_with("fabcheck_health_last_run_timestamp_seconds")
                    || l.starts_with("fabcheck_health_duration_seconds")
                    || l.starts_with("fabcheck_run_last_run_timestamp_seconds")
                    || l.starts_with("fabcheck_run_duration_seconds"))
            {
                format!("{} 0", l.rsplit_once(' ').unwrap().0)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn promtool_check(path: &Path) {
    let Ok(o) = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(path).unwrap())
        .output()
    else {
        common::skip("promtool is not installed (Debian package prometheus; .ci/run installs it)");
        return;
    };
    assert!(
        o.status.success(),
        "promtool check metrics {}: {}{}",
        path.display(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_gauges_match_their_golden_files_and_promtool_accepts_them() {
    let golden = repo().join("tests/golden/health");
    for (which, node, scenario, context, name) in [
        (
            "spark",
            "spark-02",
            Some("negotiated-100g"),
            "prolog",
            "spark-02-negotiated-100g-prolog.prom",
        ),
        (
            "ib",
            "h100-03",
            Some("ib-symbol-errors-growing"),
            "healthcheck",
            "h100-03-symbol-errors-healthcheck.prom",
        ),
        (
            "ib",
            "h100-01",
            None,
            "prolog",
            "h100-01-healthy-prolog.prom",
        ),
        (
            "spark",
            "spark-01",
            None,
            "healthcheck",
            "spark-01-healthy-healthcheck.prom",
        ),
        (
            "ib",
            "h100-04",
            None,
            "epilog",
            "h100-04-healthy-epilog.prom",
        ),
    ] {
        let st = fresh();
        let prom = st.path().join("prom");
        health(
            which,
            node,
            scenario,
            &st.path().join("state"),
            &["--context", context, "--prom", &prom.display().to_string()],
        );
        let got =
            std::fs::read_to_string(prom.join("fabcheck.prom")).expect("fabcheck.prom written");
        promtool_check(&prom.join("fabcheck.prom"));
        let text = normalised(&got);
        let path = golden.join(name);
        if std::env::var_os("FABCHECK_BLESS").is_some() {
            std::fs::create_dir_all(&golden).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            text, want,
            "{name} differs (FABCHECK_BLESS=1 rewrites it; check the diff)"
        );
        promtool_check(&path);
        for family in got.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
            let name = family.split(' ').next().unwrap();
            assert_eq!(
                got.matches(&format!("# TYPE {name} ")).count(),
                1,
                "TYPE once: {name}"
            );
            assert_eq!(
                got.matches(&format!("# HELP {name} ")).count(),
                1,
                "HELP once: {name}"
            );
        }
    }
}

/// A run killed between writing the new gauges and renaming them over the old file leaves the
/// old file whole (the kill point is the test hook's FIFO handshake, not a timing).
#[test]
fn a_run_killed_mid_write_leaves_the_previous_gauges_intact() {
    let d = fresh();
    let prom = d.path().join("prom");
    let st = d.path().join("state");
    let args = |scenario: &str| -> Vec<String> {
        let mut a: Vec<String> = [
            "health",
            "-i",
            &sim("spark"),
            "--node",
            "spark-02",
            "--state",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.push(st.display().to_string());
        a.extend(["--prom".into(), prom.display().to_string()]);
        if !scenario.is_empty() {
            a.extend(["--scenario".into(), scenario.into()]);
        }
        a
    };
    Fab::new().args(args("")).run().code(0);
    let before = std::fs::read_to_string(prom.join("fabcheck.prom")).unwrap();
    assert!(before.contains("fabcheck_health_status{node=\"spark-02\",context=\"prolog\"} 0"));
    let fifo = d.path().join("hold");
    let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let f = Fab::new().args(args("negotiated-100g")).env(
        "FABCHECK_TEST_HOLD_RENAME",
        &format!("fabcheck.prom:{}", fifo.display()),
    );
    let mut child = f.spawn();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(std::fs::File::open(&fifo).unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "holding before the rename\n");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(prom.join("fabcheck.prom")).unwrap(),
        before,
        "the previous gauges, whole"
    );
    let tmp: Vec<String> = std::fs::read_dir(&prom)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(
        tmp.len(),
        1,
        "the new gauges were complete in a temporary file: {tmp:?}"
    );
    let new = std::fs::read_to_string(prom.join(&tmp[0])).unwrap();
    assert!(
        new.contains("fabcheck_health_status{node=\"spark-02\",context=\"prolog\"} 1"),
        "{new}"
    );
    // node_exporter's textfile collector reads *.prom only: the leftover is not read
    assert!(!tmp[0].ends_with(".prom"));
}

/// A rail that came up slower since the last healthy run is unhealthy even where nothing else
/// says what it should run: the prolog asks no other node, so a switch port that now
/// advertises only 100G (switch sim `switch-port-100g-one-node`) is caught from the state the
/// last healthy run kept. Without that history (a first run, or a site on a 100G switch by
/// design) it is healthy, and a site's explicit speed_mbps is the intent instead.
#[test]
fn a_link_slower_than_at_the_last_healthy_run_is_unhealthy() {
    let state = fresh();
    const SC: Option<&str> = Some("switch-port-100g-one-node");
    // no history: nothing tells 100G by design from a port that dropped
    health("switch", "spark-02", SC, &state.path().join("state"), &[]).code(0);
    let state = fresh();
    health("switch", "spark-02", None, &state.path().join("state"), &[]).code(0);
    let o = health("switch", "spark-02", SC, &state.path().join("state"), &[]);
    o.code(1);
    assert!(
        o.stdout.contains(
            "spark-02 enp1s0f1np1: negotiated 100000 Mb/s, 200000 Mb/s at the last healthy run"
        ),
        "{}",
        o.stdout
    );
    assert!(
        the_line(&o).contains("100000 Mb/s, 200000 at the last healthy run"),
        "{}",
        o.stderr
    );
    // still flagged while it lasts (an unhealthy run keeps the healthy run's speeds) ...
    health("switch", "spark-02", SC, &state.path().join("state"), &[]).code(1);
    // ... unless the site says 100G is meant
    health(
        "switch",
        "spark-02",
        SC,
        &state.path().join("state"),
        &["--set", "speed_mbps=100000"],
    )
    .code(0);
}

/// `--set speed_mbps=0` is "not given" (docs/scripts.md: "0: the same"): the inventory and
/// the ports decide, as without it (issue 48 item 3: the one precedence rule must not take a
/// 0 for the site's speed and leave every port without an expected speed).
#[test]
fn set_speed_mbps_zero_is_not_given() {
    let state = fresh();
    let o = health(
        "switch",
        "spark-02",
        None,
        &state.path().join("state"),
        &["--set", "speed_mbps=0", "-v"],
    );
    o.code(0);
    let all = format!("{}{}", o.stdout, o.stderr);
    assert!(!all.contains("no expected speed"), "{all}");
    assert!(
        all.contains("spark-02 port qsfp1 enp1s0f1np1: negotiated 200000 Mb/s, expected 200000 Mb/s (the highest mode both ends advertise"),
        "{all}"
    );
}

/// A copy of simulation `which` (`examples/sim` or `examples/sim-ib`) with one more, test-only
/// overlay `name`: `node` answers `command` with `stdout` (SYNTHESISED in the format of the
/// real captures: tests/fixtures/kernel-log/ for the kernel log, the simulation's perfquery).
fn sim_with_overlay(
    dir: &Path,
    which: &str,
    name: &str,
    node: &str,
    command: &str,
    stdout: &str,
) -> String {
    let (src, inv) = match which {
        "ib" => ("examples/sim-ib", "cluster.toml"),
        _ => ("examples/sim", "two-sparks.toml"),
    };
    let copy = dir.join("sim");
    let st = std::process::Command::new("cp")
        .args([
            "-r",
            &repo().join(src).display().to_string(),
            &copy.display().to_string(),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let s = copy.join("transcripts/scenarios").join(name);
    std::fs::create_dir_all(&s).unwrap();
    std::fs::write(
        s.join("scenario.toml"),
        format!("description = \"test only: {name} on {node}\"\nhealthy = false\n"),
    )
    .unwrap();
    let q = |t: &str| serde_json::to_string(t).unwrap();
    std::fs::write(
        s.join(format!("{node}.toml")),
        format!(
            "[[command]]\ncommand = {}\nstdout = {}\nexit_code = 0\nduration_ms = 20\n",
            q(command),
            q(stdout)
        ),
    )
    .unwrap();
    copy.join(inv).display().to_string()
}

/// The healthy transcript's answer of `node` to `command` in simulation `which`.
fn healthy_answer(which: &str, node: &str, command: &str) -> String {
    let dir = match which {
        "ib" => "examples/sim-ib/transcripts",
        _ => "examples/sim/transcripts",
    };
    let text = std::fs::read_to_string(repo().join(dir).join(format!("{node}.toml"))).unwrap();
    let t: toml::Value = toml::from_str(&text).unwrap();
    let c = t["command"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"].as_str() == Some(command))
        .unwrap_or_else(|| panic!("{node}: no answer to {command}"));
    match c.get("stdout_file").and_then(|f| f.as_str()) {
        Some(f) => std::fs::read_to_string(repo().join(dir).join(f)).unwrap(),
        None => c["stdout"].as_str().unwrap().to_string(),
    }
}

const KERNEL_LOG: &str = "cat /proc/sys/kernel/random/boot_id && dmesg >/dev/null && { dmesg | grep -iE 'link (is )?(up|down)'; true; }";

/// Issue 47 (healthcheck): the kernel log's "Link down" lines of a fabric netdev since the last
/// run fail naming it; each rail's first down-then-up at boot (the healthy transcript) is no
/// flap; flaps already counted by the last run do not fire again; a first run (nothing kept)
/// only warns; after a reboot the flaps since boot count.
#[test]
fn link_flaps_in_the_kernel_log_since_the_last_run_fail_the_healthcheck_naming_the_netdev() {
    let d = fresh();
    let healthy = healthy_answer("spark", "spark-02", KERNEL_LOG);
    let flapped = format!(
        "{healthy}[86400.120733] mlx5_core 0002:01:00.1 enP2p1s0f1np1: Link down\n\
         [86402.918211] mlx5_core 0002:01:00.1 enP2p1s0f1np1: Link up\n\
         [90017.004512] mlx5_core 0002:01:00.1 enP2p1s0f1np1: Link down\n\
         [90019.771030] mlx5_core 0002:01:00.1 enP2p1s0f1np1: Link up\n"
    );
    let inv = sim_with_overlay(
        d.path(),
        "spark",
        "kernel-log-flapped",
        "spark-02",
        KERNEL_LOG,
        &flapped,
    );
    let st = d.path().join("state");
    let run = |scenario: Option<&str>| healthcheck(&inv, "spark-02", &st, scenario);
    let o = run(None);
    o.code(0);
    assert!(o.stdout.contains("PASS  link flaps"), "{}", o.stdout);
    let o = run(Some("kernel-log-flapped"));
    o.code(1);
    let line = the_line(&o);
    assert!(
        line.starts_with(
            "fabcheck: enP2p1s0f1np1 link flaps: went down 2 time(s) since the last run"
        ),
        "{line}"
    );
    assert!(
        o.stdout
            .contains("spark-02 enP2p1s0f1np1: link went down 2 time(s) since the last run, the last 90017 s after boot"),
        "{}",
        o.stdout
    );
    // counted once: the next run sees nothing new
    run(Some("kernel-log-flapped")).code(0);
    // after a reboot (the state's boot is another), the flaps since boot count
    let path = st.join("health-spark-02.json");
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    s["kernel_log"]["boot_id"] = "a-boot-before".into();
    std::fs::write(&path, s.to_string()).unwrap();
    let o = run(Some("kernel-log-flapped"));
    o.code(1);
    assert!(
        o.stdout.contains("since boot (the node rebooted"),
        "{}",
        o.stdout
    );
    // nothing kept: the flaps since boot are a warning only, never a drain on the first run
    std::fs::remove_file(&path).unwrap();
    run(Some("kernel-log-flapped")).code(0);
}

/// InfiniBand ports log no link line: their flaps since the last run are the growth of the
/// port's LinkDownedCounter, named by port.
#[test]
fn ib_link_flaps_are_the_link_downed_counter_growth_since_the_last_run() {
    let d = fresh();
    let cmd = "perfquery -x -C mlx5_4 -P 1";
    let healthy = healthy_answer("ib", "h100-02", cmd);
    let flapped = healthy.replace(
        "LinkDownedCounter:...............0",
        "LinkDownedCounter:...............3",
    );
    assert_ne!(healthy, flapped);
    let inv = sim_with_overlay(d.path(), "ib", "hca-flapped", "h100-02", cmd, &flapped);
    let st = d.path().join("state");
    let run = |scenario: Option<&str>| healthcheck(&inv, "h100-02", &st, scenario);
    run(None).code(0);
    let o = run(Some("hca-flapped"));
    o.code(1);
    assert!(the_line(&o).contains("mlx5_4"), "{}", o.stderr);
    assert!(
        o.stdout
            .contains("FAIL  link flaps: link flaps: h100-02 mlx5_4/1: LinkDownedCounter +3 since the last run"),
        "{}",
        o.stdout
    );
    run(Some("hca-flapped")).code(0);
}

/// `fabcheck run --prom DIR` (issue 47): the run's verdict and the last measured RDMA and NCCL
/// bandwidth with their thresholds, through the same writer (golden file, promtool clean); a
/// rail measured below its line shows below its threshold; no series per message size.
#[test]
fn run_prom_has_the_last_measured_bandwidth_with_its_threshold() {
    let golden = repo().join("tests/golden/health/run-fabric-baseline-healthy.prom");
    let run = |scenario: Option<&str>, dir: &Path| {
        let script = repo().join("scripts/fabric_baseline.rhai");
        let mut f = Fab::new().args([
            "run",
            &script.display().to_string(),
            "-i",
            &sim("spark"),
            "--no-results",
            "--prom",
            &dir.display().to_string(),
        ]);
        if let Some(s) = scenario {
            f = f.args(["--scenario", s]);
        }
        f.run()
    };
    let st = fresh();
    run(None, st.path()).code(0);
    let path = st.path().join("fabcheck-run.prom");
    let got = std::fs::read_to_string(&path).expect("fabcheck-run.prom written");
    promtool_check(&path);
    let text = normalised(&got);
    if std::env::var_os("FABCHECK_BLESS").is_some() {
        std::fs::write(&golden, &text).unwrap();
    }
    assert_eq!(
        text,
        std::fs::read_to_string(&golden).unwrap_or_default(),
        "run-fabric-baseline-healthy.prom differs (FABCHECK_BLESS=1 rewrites it; check the diff)"
    );
    promtool_check(&golden);
    assert!(
        got.lines()
            .filter(|l| !l.starts_with('#'))
            .all(|l| !l.contains('@') && !l.contains("size") && !l.contains("run_id")),
        "a series per size or run: {got}"
    );
    // a dry run measures nothing: the last real run's gauges stay as they were
    let script = repo().join("scripts/fabric_baseline.rhai");
    Fab::new()
        .args(["run", &script.display().to_string(), "-i", &sim("spark")])
        .args(["--dry-run", "--prom", &st.path().display().to_string()])
        .run()
        .code(0);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        got,
        "a dry run rewrote the gauges"
    );
    let st = fresh();
    run(Some("rail-at-55pct"), st.path()).code(1);
    let got = std::fs::read_to_string(st.path().join("fabcheck-run.prom")).unwrap();
    let value = |family: &str, rail: &str| -> f64 {
        let key = format!("{family}{{node=\"spark-01\",peer=\"spark-02\",rail=\"{rail}\"}} ");
        let line = got
            .lines()
            .find(|l| l.starts_with(&key))
            .unwrap_or_else(|| panic!("no {key} in {got}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(got.contains("fabcheck_run_status 1\n"), "{got}");
    let bw = value(
        "fabcheck_rdma_write_bandwidth_bytes_per_second",
        "roceP2p1s0f1",
    );
    let line = value(
        "fabcheck_rdma_write_threshold_bytes_per_second",
        "roceP2p1s0f1",
    );
    assert!(bw < line, "{bw} below {line}: {got}");
}

/// Issue 47: InfiniBand keeps each HCA port's rate at the last healthy run as RoCE does: a
/// node whose every port came back slower (all alike, so the fastest-port rule sees nothing,
/// and still at the profile's minimum) is unhealthy, named by port; an explicit ib_rate_gbps
/// is the intent instead.
#[test]
fn an_ib_port_slower_than_at_the_last_healthy_run_is_unhealthy_unless_a_rate_is_given() {
    let d = fresh();
    let faster = healthy_answer("ib", "h100-02", "ibstat").replace("Rate: 400", "Rate: 800");
    let inv = sim_with_overlay(d.path(), "ib", "ib-at-xdr", "h100-02", "ibstat", &faster);
    let st = d.path().join("state");
    let run = |scenario: Option<&str>, extra: &[&str]| {
        let mut f = Fab::new()
            .args(["health", "-i", &inv, "--node", "h100-02"])
            .args(["--state".to_string(), st.display().to_string()]);
        if let Some(s) = scenario {
            f = f.args(["--scenario", s]);
        }
        f.args(extra).run()
    };
    // at 800 (above the profile's 400): healthy, the rates kept
    run(Some("ib-at-xdr"), &[]).code(0);
    // back at 400: at the profile's minimum, but slower than at the last healthy run
    let o = run(None, &[]);
    o.code(1);
    assert_eq!(
        the_line(&o),
        "fabcheck: mlx5_0/1 link: 400000 Mb/s, 800000 at the last healthy run"
    );
    // still flagged while it lasts (the unhealthy run kept the healthy rates)
    run(None, &[]).code(1);
    // the site says what it runs: that is the intent, not the history
    run(None, &["--set", "ib_rate_gbps=400"]).code(0);
}

/// Issue 47 (epilog): loopback RDMA on each rail of the node, server and client on the same
/// device (the traffic stays in the HCA): a rail below rdma_pct (80) % of its share of the
/// port fails naming the RDMA device, on both simulations (SYNTHESISED loopback answers: no
/// real capture of a loopback run exists); the healthy transcripts pass. The prolog and the
/// healthcheck send none of it.
#[test]
fn the_epilog_loops_rdma_back_on_each_rail_and_names_a_slow_one() {
    for (which, node, dev, cmd, from, to, want) in [
        (
            "spark",
            "spark-02",
            "roceP2p1s0f1",
            "ib_write_bw -d roceP2p1s0f1 -x 3 -p 18515 -D 2 --report_gbits 127.0.0.1",
            "BW average[Gb/sec]",
            "52.30",
            "fabcheck: roceP2p1s0f1 rail loopback: loopback 52.3 Gbit/s, below 80",
        ),
        (
            "ib",
            "h100-02",
            "mlx5_5",
            "ib_write_bw -d mlx5_5 -p 18515 -D 2 --report_gbits 127.0.0.1",
            "BW average[Gb/sec]",
            "196.10",
            "fabcheck: mlx5_5 rail loopback: loopback 196.1 Gbit/s, below 320",
        ),
    ] {
        let d = fresh();
        let healthy = healthy_answer(which, node, cmd);
        // the average column of the one result row
        let mut lines: Vec<String> = healthy.lines().map(str::to_string).collect();
        let head = lines.iter().position(|l| l.contains(from)).unwrap();
        let row: Vec<String> = lines[head + 1]
            .split_whitespace()
            .map(str::to_string)
            .collect();
        lines[head + 1] = lines[head + 1].replace(&row[3], to);
        let slow = lines.join("\n") + "\n";
        assert_ne!(slow, healthy);
        let inv = sim_with_overlay(d.path(), which, "loopback-slow", node, cmd, &slow);
        let st = d.path().join("state");
        let run = |context: &str, scenario: Option<&str>| {
            let mut f = Fab::new()
                .args(["health", "--context", context, "-i", &inv, "--node", node])
                .args(["--state".to_string(), st.display().to_string()]);
            if let Some(s) = scenario {
                f = f.args(["--scenario", s]);
            }
            f.run()
        };
        let o = run("epilog", None);
        o.code(0);
        assert!(o.stdout.contains("PASS  rail loopback"), "{}", o.stdout);
        let o = run("epilog", Some("loopback-slow"));
        o.code(1);
        assert!(the_line(&o).starts_with(want), "{which}: {}", o.stderr);
        assert!(o.stdout.contains(dev), "{}", o.stdout);
        // the healthcheck sends no traffic: the same node is healthy there
        let o = run("healthcheck", Some("loopback-slow"));
        o.code(0);
        assert!(!o.stdout.contains("rail loopback"), "{}", o.stdout);
    }
}

/// The healthcheck's kernel-log read on this machine's real kernel (local transport, as root:
/// dmesg may be restricted to root): the command runs under sh, the boot id is the kernel's,
/// the real log parses, and a netdev that never logs a link line (`lo`) has no flap.
#[test]
fn the_kernel_log_is_read_on_a_real_kernel() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        common::skip("not root: the kernel log may be root's only (kernel.dmesg_restrict)");
        return;
    }
    let s = "test(\"flaps\", || {\n\
             let n = node(\"a\");\n\
             let f = n.link_flaps(());\n\
             let b = n.run(\"cat /proc/sys/kernel/random/boot_id\").stdout.trimmed();\n\
             assert_eq(f.mark.boot_id, b, \"the kernel's boot id\");\n\
             assert_eq(f.netdevs.len(), 1, \"one netdev\");\n\
             assert_eq(f.netdevs[0].flaps, 0, \"lo logs no link line\");\n\
             assert(f.first_reading, \"no mark given\");\n\
             let again = n.link_flaps(f.mark);\n\
             assert(!again.first_reading && !again.rebooted, \"the same boot\");\n\
             });\n";
    Fab::new()
        .file(
            "inv.toml",
            "[defaults]\ntransport = \"local\"\n[[node]]\nname = \"a\"\ninterfaces = [\"lo\"]\n",
        )
        .file("s.rhai", s)
        .args(["run", "s.rhai", "-i", "inv.toml", "--no-results"])
        .run()
        .code(0);
}

/// Issue 50 item 1, one writer for every file fabcheck writes: the gauges file (`--prom DIR`)
/// and the state file (`--state DIR`) go through the writer of the reports, so a link planted
/// at either name (here to a file of the test's own) is refused and said, never written
/// through, and the verdict stands (docs/reliability.md, "Files fabcheck writes").
#[test]
fn prom_and_state_files_never_write_through_a_planted_link() {
    let st = fresh();
    let (prom, state) = (st.path().join("prom"), st.path().join("state"));
    std::fs::create_dir_all(&prom).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let victim = st.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let planted = [
        prom.join("fabcheck.prom"),
        state.join("health-spark-01.json"),
    ];
    for p in &planted {
        std::os::unix::fs::symlink(&victim, p).unwrap();
    }
    let o = health(
        "spark",
        "spark-01",
        None,
        &state,
        &["--prom", &prom.display().to_string()],
    );
    o.code(0);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    for p in &planted {
        assert!(p.is_symlink(), "{} replaced", p.display());
    }
    let said = format!("{}{}", o.stdout, o.stderr);
    assert!(
        said.contains("fabcheck.prom not written") && said.contains("symbolic link"),
        "{said}"
    );
    assert!(said.contains("the state was not kept"), "{said}");
}

/// `fabcheck health --context healthcheck` of `node` with its state in `st`, under `scenario`.
fn healthcheck(inv: &str, node: &str, st: &Path, scenario: Option<&str>) -> Outcome {
    let mut f = Fab::new()
        .args([
            "health",
            "--context",
            "healthcheck",
            "-i",
            inv,
            "--node",
            node,
        ])
        .args(["--state".to_string(), st.display().to_string()]);
    if let Some(s) = scenario {
        f = f.args(["--scenario", s]);
    }
    f.run()
}

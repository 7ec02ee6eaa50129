//! The real Slurm lab (`lab.sh --slurm`: Debian's slurm-wlm 22.05 and munge, slurmctld on the
//! root side, one slurmd per lab node, `select/linear`). fabcheck runs as the lab user inside
//! `salloc -N 3` and inside `sbatch`: `nodes -i slurm`, `exec -i slurm`, `test_each`, and NCCL
//! through the srun launcher with a shim `all_reduce_perf` that prints a real nccl-tests
//! capture — checked from Slurm's own view (the `SLURM_JOB_ID`/`SLURM_STEP_ID` every rank was
//! given). Also: srun outside an allocation (queued until the timeout, whose error keeps srun's
//! "queued" line; then a job of its own, said so), another user's allocation (refused), and a
//! launch that fails (named as srun's failure, not as unparsable nccl output).

use crate::common::lab::{Lab, Variant};
use crate::common::{self, Fab, Outcome};
use std::path::{Path, PathBuf};
use std::process::Command;

const LAB_USER: &str = "fclab";

const NCCL_FIXTURE: &str =
    "nccl-tests/all_reduce-1node-2xA100-g2-nccl2.20-debug-info-netib-nodevice-socket-indented.txt";

/// The shim: what Slurm told the rank, appended to a log; rank 0 prints the capture (as
/// nccl-tests under a launcher prints from one rank).
const SHIM: &str = r#"#!/bin/sh
# fabcheck TEST SHIM — not nccl-tests. Records the Slurm job, step and rank this task ran as
# (the variables slurmstepd gives every task: Slurm's own view) and an NCCL variable it got,
# then rank 0 prints a REAL captured nccl-tests output (@FIXTURE@): no GPUs or RDMA here.
echo "$SLURM_JOB_ID $SLURM_STEP_ID $SLURM_PROCID $(hostname) $NCCL_DEBUG_SUBSYS" >> '@LOG@'
[ "$SLURM_PROCID" = 0 ] && cat '@FIXTURE@'
exit 0
"#;

const ALLOCATION_SCRIPT: &str = r#"
test_each(nodes(), "own name over ssh", |n| {
    assert_eq(n.sh("hostname").trim(), n.name, "hostname");
});
test("nccl through srun (shim all_reduce_perf printing a real nccl-tests capture)", || {
    let r = all_reduce_perf(nodes(), #{ launcher: "srun" });
    assert_eq(r.slurm_hosts, ["lab01", "lab02", "lab03"], "hosts of the step");
    assert_eq(r.slurm_step, `${r.slurm_job}.0`, "first step of the job");
});
test("srun launch of a program missing on the nodes", || {
    all_reduce_perf(nodes(), #{ launcher: "srun", binary: "/nonexistent-fabcheck-test/all_reduce_perf" });
});
"#;

const NCCL_TEST: &str =
    "nccl through srun (shim all_reduce_perf printing a real nccl-tests capture)";

fn shim_log() -> PathBuf {
    let dir = std::env::temp_dir().join("fabcheck-shim-log");
    std::fs::create_dir_all(&dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let log = dir.join("slurm-ranks");
    let _ = std::fs::remove_file(&log);
    log
}

/// What the lab user runs (fabcheck, the capture the shim prints) copied where it can read
/// them: the checkout may be in a home only root enters.
fn readable_copy(from: &Path, name: &str) -> PathBuf {
    let to = std::env::temp_dir().join("fabcheck-shim-log").join(name);
    let _ = std::fs::remove_file(&to);
    std::fs::copy(from, &to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
    to
}

/// The lab user's copy of fabcheck (see [`readable_copy`]).
fn lab_user_bin() -> PathBuf {
    std::env::temp_dir().join("fabcheck-shim-log/fabcheck-slurm-lab")
}

/// The shim's lines: (job, step, rank, host, NCCL_DEBUG_SUBSYS), sorted by rank.
fn ranks(log: &Path) -> Vec<(String, String, String, String, String)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut v: Vec<_> = text
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            assert_eq!(w.len(), 5, "{l:?}");
            let s = |i: usize| w[i].to_string();
            (s(0), s(1), s(2), s(3), s(4))
        })
        .collect();
    v.sort_by(|a, b| a.2.cmp(&b.2));
    v
}

/// The ranks ran as step 0 of `job`, one per node of lab[01-03], with the NCCL variables
/// fabcheck set (commas intact).
fn assert_step_of(job: &str, log: &Path) {
    let r = ranks(log);
    let want: Vec<_> = ["lab01", "lab02", "lab03"]
        .iter()
        .enumerate()
        .map(|(i, h)| {
            (
                job.to_string(),
                "0".to_string(),
                i.to_string(),
                h.to_string(),
                "INIT,NET".to_string(),
            )
        })
        .collect();
    assert_eq!(r, want, "the ranks as Slurm saw them");
}

fn slurm_conf(lab: &Lab) -> String {
    lab.dir.join("slurm.conf").display().to_string()
}

fn defaults(lab: &Lab) -> String {
    format!("slurm:{}", lab.dir.join("slurm-defaults.toml").display())
}

/// Root-side Slurm command (squeue, scancel) against the lab cluster.
fn slurm(lab: &Lab, args: &[&str]) -> String {
    let o = Command::new(args[0])
        .args(&args[1..])
        .env("SLURM_CONF", slurm_conf(lab))
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `f`'s fabcheck command run as `user` (its own environment: no SLURM_* from this process),
/// inside `wrap` (e.g. `salloc -N 3`); its stdout starts with `JOB=<SLURM_JOB_ID>`.
fn run_as(lab: &Lab, f: &Fab, user: &str, wrap: &[&str]) -> Outcome {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(f.dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let c = f.command();
    let mut cmd = Command::new("sudo");
    cmd.args(["-u", user, "env", "CI=true"])
        .arg(format!("SLURM_CONF={}", slurm_conf(lab)))
        .args(wrap)
        .args(["sh", "-c", "echo JOB=$SLURM_JOB_ID; exec \"$@\"", "sh"])
        .arg(lab_user_bin())
        .args(c.get_args())
        .current_dir(f.dir());
    f.outcome(cmd.output().expect("sudo"))
}

/// `f`'s fabcheck command as the batch script of `sbatch --wait -N 3` submitted by `user` (the
/// script runs on lab01); its output file is the outcome's stdout, starting with `JOB=<id>`.
fn sbatch_as(lab: &Lab, f: &Fab, user: &str) -> Outcome {
    let c = f.command();
    let mut line = vec![lab_user_bin().display().to_string()];
    line.extend(c.get_args().map(|a| a.to_string_lossy().into_owned()));
    let words: Vec<String> = line.iter().map(|a| format!("'{a}'")).collect();
    let batch = f.dir().join("job.sh");
    let script = format!(
        "#!/bin/sh\necho JOB=$SLURM_JOB_ID\nexec {}\n",
        words.join(" ")
    );
    std::fs::write(&batch, script).unwrap();
    let out_file = f.dir().join("sbatch.out");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(f.dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let st = Command::new("sudo")
        .args(["-u", user, "env"])
        .arg(format!("SLURM_CONF={}", slurm_conf(lab)))
        .args(["sbatch", "--wait", "-N", "3", "-w", "lab[01-03]", "-o"])
        .arg(&out_file)
        .arg("-D")
        .arg(f.dir())
        .arg(&batch)
        .output()
        .unwrap();
    let printed = std::fs::read_to_string(&out_file).unwrap_or_default();
    f.outcome(std::process::Output {
        stdout: printed.into_bytes(),
        ..st
    })
}

fn job_of(o: &Outcome) -> String {
    let job = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("JOB="))
        .unwrap_or_else(|| panic!("no JOB= line:\n{}\n{}", o.stdout, o.stderr))
        .to_string();
    assert!(!job.is_empty(), "not in an allocation:\n{}", o.stderr);
    job
}

fn test_output(o: &Outcome, name: &str) -> String {
    o.test(name)["output"].as_str().unwrap_or("").to_string()
}

#[test]
fn lab_slurm_in_salloc_sbatch_and_outside() {
    let v = Variant {
        slurm: true,
        ..Default::default()
    };
    let Some(lab) = Lab::ensure_variant(4, &v, "lab_slurm_in_salloc_sbatch_and_outside") else {
        return;
    };
    let log = shim_log();
    let fixture = readable_copy(
        &common::repo().join("tests/fixtures").join(NCCL_FIXTURE),
        "slurm-nccl-capture.txt",
    );
    let bin = readable_copy(&common::bin(), "fabcheck-slurm-lab");
    assert_eq!(bin, lab_user_bin());
    let shim = SHIM
        .replace("@LOG@", &log.display().to_string())
        .replace("@FIXTURE@", &fixture.display().to_string());
    lab.shim("all_reduce_perf", &shim);
    let salloc3 = ["salloc", "-N", "3", "-w", "lab[01-03]"];

    // `nodes -i slurm` and `exec -i slurm` inside salloc: the allocated nodes, reached.
    let f = Fab::new().args(["nodes", "-i", &defaults(&lab)]);
    let o = run_as(&lab, &f, LAB_USER, &salloc3);
    o.code(0);
    for n in ["lab01", "lab02", "lab03"] {
        assert!(o.stdout.contains(n), "{}", o.stdout);
    }
    assert!(!o.stdout.contains("lab04"), "{}", o.stdout);
    let f = Fab::new().args(["exec", "-i", &defaults(&lab), "--", "hostname"]);
    let o = run_as(&lab, &f, LAB_USER, &salloc3);
    o.code(0);
    for n in ["lab01", "lab02", "lab03"] {
        assert!(o.stdout.lines().any(|l| l.trim() == n), "{}", o.stdout);
    }

    // A run inside salloc: test_each, NCCL as step J.0 of the allocation, a failed launch.
    let f = Fab::new()
        .file("a.rhai", ALLOCATION_SCRIPT)
        .args(["run", "a.rhai", "-i", &defaults(&lab)])
        .reports();
    let o = run_as(&lab, &f, LAB_USER, &salloc3);
    let job = job_of(&o);
    for n in ["lab01", "lab02", "lab03"] {
        let t = o
            .tests()
            .into_iter()
            .find(|t| {
                t["name"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("own name over ssh")
                    && t["node"] == n
            })
            .unwrap_or_else(|| panic!("no test_each test for {n}: {}", o.stdout));
        assert_eq!(t["status"], "pass", "{t}");
    }
    assert_eq!(
        o.status(NCCL_TEST),
        "pass",
        "{}\n{}",
        o.message(NCCL_TEST),
        o.stderr
    );
    assert_step_of(&job, &log);
    let out = test_output(&o, NCCL_TEST);
    assert!(
        out.contains(&format!(
            "srun: the ranks ran as step {job}.0 on lab01, lab02, lab03 of Slurm allocation {job} (SLURM_JOB_ID)"
        )),
        "{out}"
    );
    let t = "srun launch of a program missing on the nodes";
    let m = o.message(t);
    assert_eq!(o.status(t), "error", "{m}");
    assert!(
        m.contains("srun (the launcher) failed on lab01 (exit 2)")
            && m.contains(
                "execve(): /nonexistent-fabcheck-test/all_reduce_perf: No such file or directory"
            )
            && !m.contains("cannot parse"),
        "{m}"
    );
    o.junit_is_valid();

    // Inside sbatch (the batch script runs on lab01): the same step of the batch job.
    let _ = std::fs::remove_file(&log);
    let f = Fab::new()
        .file(
            "b.rhai",
            ALLOCATION_SCRIPT
                .split("test(\"srun launch")
                .next()
                .unwrap(),
        )
        .args(["run", "b.rhai", "-i", &defaults(&lab)])
        .reports();
    let o = sbatch_as(&lab, &f, LAB_USER);
    let job = job_of(&o);
    assert_eq!(
        o.status(NCCL_TEST),
        "pass",
        "{}\n{}",
        o.message(NCCL_TEST),
        o.stdout
    );
    assert_step_of(&job, &log);

    // Outside an allocation while another job holds every node: srun's job waits in the
    // queue; the timeout's error and the report keep srun's line and the real duration.
    let mut holder = Command::new("sudo")
        .args(["-u", LAB_USER, "env"])
        .arg(format!("SLURM_CONF={}", slurm_conf(&lab)))
        .args(["salloc", "-N", "4", "sleep", "3600"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    crate::common::eventually(crate::common::HANG, "the salloc job runs", || {
        !slurm(&lab, &["squeue", "-h", "-t", "R", "-o", "%i"])
            .trim()
            .is_empty()
    });
    let inv = lab.dir.join("slurm-defaults.toml").display().to_string();
    let queued = "srun outside an allocation while the nodes are busy";
    let f = Fab::new()
        .file(
            "q.rhai",
            &format!("test(\"{queued}\", || {{ all_reduce_perf(nodes(\"lab[01-03]\"), #{{ launcher: \"srun\", timeout: \"15s\" }}); }});\n"),
        )
        .args(["run", "q.rhai", "-i", &inv])
        .reports();
    let o = run_as(&lab, &f, LAB_USER, &[]);
    let _ = slurm(&lab, &["scancel", "-u", LAB_USER]);
    let _ = holder.kill();
    let _ = holder.wait();
    let m = o.message(queued);
    assert_eq!(o.status(queued), "error", "{m}");
    assert!(
        m.contains("timed out after 15s")
            && m.contains("queued and waiting for resources")
            && m.contains("srun ran outside a Slurm allocation"),
        "{m}"
    );
    let cmd = &o.test(queued)["commands"][0];
    assert!(
        cmd["stderr"]
            .as_str()
            .unwrap_or("")
            .contains("queued and waiting for resources"),
        "{cmd}"
    );
    assert!(cmd["duration_ms"].as_u64().unwrap_or(0) >= 15000, "{cmd}");

    // Outside an allocation, nodes free: srun makes a job of its own, and the test says so.
    let _ = std::fs::remove_file(&log);
    let f = Fab::new()
        .file("o.rhai", &format!("test(\"{NCCL_TEST}\", || {{ all_reduce_perf(nodes(\"lab[01-03]\"), #{{ launcher: \"srun\" }}); }});\n"))
        .args(["run", "o.rhai", "-i", &inv])
        .reports();
    let o = run_as(&lab, &f, LAB_USER, &[]);
    assert_eq!(o.status(NCCL_TEST), "pass", "{}", o.message(NCCL_TEST));
    let warnings = o.test(NCCL_TEST)["warnings"].to_string();
    let job = ranks(&log).first().map(|r| r.0.clone()).unwrap_or_default();
    assert!(
        warnings.contains("srun ran outside a Slurm allocation")
            && warnings.contains(&format!("Slurm made job {job} for the ranks")),
        "{warnings}"
    );

    // Another user's allocation, nodes reached as the lab user (with root's lab key: the
    // defaults file names the lab's ssh_config). root's salloc names no owner (no
    // SLURM_JOB_USER): Slurm refuses the step, told as srun's failure with the why.
    let _ = std::fs::remove_file(&log);
    let text = std::fs::read_to_string(lab.dir.join("slurm-defaults.toml")).unwrap();
    let ssh_config = format!(
        "[defaults]\nssh_config = \"{}\"\n",
        lab.dir.join("ssh_config").display()
    );
    let root_defaults = text.replacen("[defaults]\n", &ssh_config, 1);
    let root_slurm = "slurm:{dir}/root-defaults.toml";
    let f = Fab::new()
        .file("a.rhai", ALLOCATION_SCRIPT)
        .file("root-defaults.toml", &root_defaults)
        .args(["run", "a.rhai", "-i", root_slurm])
        .reports();
    let o = run_as(&lab, &f, "root", &salloc3);
    let job = job_of(&o);
    let m = o.message(NCCL_TEST);
    assert_eq!(o.status(NCCL_TEST), "error", "{m}");
    assert!(
        m.contains(&format!(
            "srun (the launcher) failed on lab01 (exit 1) before all_reduce_perf printed results: srun: error: Unable to create step for job {job}: Access/permission denied (the Slurm allocation belongs to another user than the one fabcheck connects as)"
        )),
        "{m}\n{}",
        o.test(NCCL_TEST)["commands"]
    );
    // root's batch job (SLURM_JOB_USER=root): refused before anything runs.
    let f = Fab::new()
        .file("a.rhai", ALLOCATION_SCRIPT)
        .file("root-defaults.toml", &root_defaults)
        .args(["run", "a.rhai", "-i", root_slurm])
        .reports();
    let o = sbatch_as(&lab, &f, "root");
    let job = job_of(&o);
    let m = o.message(NCCL_TEST);
    assert_eq!(o.status(NCCL_TEST), "error", "{m}");
    assert!(
        m.contains(&format!(
            "inside Slurm allocation {job} (SLURM_JOB_ID) of user `root` (SLURM_JOB_USER), but the launch on lab01 runs as `fclab`"
        )),
        "{m}"
    );
    assert!(ranks(&log).is_empty(), "a rank ran");
    // Every job ended (a job just released may show as completing for a moment).
    let mut left = String::new();
    crate::common::comes(crate::common::HANG, || {
        left = slurm(&lab, &["squeue", "-h"]);
        left.trim().is_empty()
    });
    assert!(left.trim().is_empty(), "jobs left: {left}");
    let _ = std::fs::remove_file(&bin);
}

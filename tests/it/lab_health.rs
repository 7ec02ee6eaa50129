//! `fabcheck health --slurm` against the lab's real Slurm (`lab.sh --slurm`: slurm-wlm 22.05 and
//! munge, see tests/lab/README.md "Slurm"): the fabric verdict comes from the Spark simulation
//! (spark-02, healthy or `negotiated-100g`), the drain and resume go to the lab's real
//! slurmctld for node lab02 (SLURMD_NODENAME, as slurmd sets it for its HealthCheckProgram).
//! Every scontrol call goes through a logging wrapper on PATH that runs the real scontrol.

use crate::common::lab::{Lab, Variant};
use crate::common::{repo, tempdir::TempDir, Fab, Outcome};
use fabcheck::parse::scontrol::{self, SlurmNode};
use std::path::{Path, PathBuf};
use std::process::Command;

const NODE: &str = "lab02";

struct Rig {
    conf: String,
    calls: PathBuf,
    path: String,
    state: PathBuf,
    _dir: TempDir,
}

impl Rig {
    fn new(lab: &Lab) -> Rig {
        let dir = TempDir::new("lab-health");
        let calls = dir.path().join("calls");
        let wrapper = dir.path().join("scontrol");
        let real = which("scontrol");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\n# test wrapper: log the call, run the real scontrol\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
                calls.display(),
                real.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        Rig {
            conf: lab.dir.join("slurm.conf").display().to_string(),
            path: format!(
                "{}:{}",
                dir.path().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
            state: dir.path().join("state"),
            calls,
            _dir: dir,
        }
    }

    /// `fabcheck health` for lab02 judged on the simulation's spark-02; its scontrol calls.
    fn health(&self, context: &str, scenario: Option<&str>, slurm: bool) -> (Outcome, Vec<String>) {
        let _ = std::fs::remove_file(&self.calls);
        let mut args: Vec<String> = ["health", "--context", context, "-i"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(
            repo()
                .join("examples/sim/two-sparks.toml")
                .display()
                .to_string(),
        );
        args.extend([
            "--node".into(),
            "spark-02".into(),
            "--state".into(),
            self.state.display().to_string(),
        ]);
        if let Some(s) = scenario {
            args.extend(["--scenario".into(), s.into()]);
        }
        if slurm {
            args.push("--slurm".into());
        }
        let o = Fab::new()
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .env("SLURMD_NODENAME", NODE)
            .env("PATH", &self.path)
            .run();
        let calls = std::fs::read_to_string(&self.calls)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        (o, calls)
    }

    fn scontrol(&self, args: &[&str]) -> String {
        let o = Command::new(which("scontrol"))
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn node(&self) -> SlurmNode {
        scontrol::parse(&self.scontrol(&["show", "node", "-o", NODE])).expect("scontrol show node")
    }
}

fn which(tool: &str) -> PathBuf {
    for d in ["/usr/bin", "/usr/local/bin", "/bin"] {
        let p = Path::new(d).join(tool);
        if p.exists() {
            return p;
        }
    }
    panic!("{tool} not found");
}

/// (reads, updates) among the scontrol calls of one run.
fn counted(calls: &[String]) -> (usize, usize) {
    (
        calls.iter().filter(|c| c.starts_with("show node")).count(),
        calls.iter().filter(|c| c.starts_with("update")).count(),
    )
}

#[test]
fn lab_health_drains_resumes_after_k_healthy_runs_and_leaves_an_admins_drain_alone() {
    let v = Variant {
        slurm: true,
        ..Default::default()
    };
    let Some(lab) = Lab::ensure_variant(
        4,
        &v,
        "lab_health_drains_resumes_after_k_healthy_runs_and_leaves_an_admins_drain_alone",
    ) else {
        return;
    };
    let r = Rig::new(&lab);
    if r.node().drain() {
        r.scontrol(&["update", &format!("NodeName={NODE}"), "State=RESUME"]);
    }
    assert!(!r.node().drain(), "lab02 starts undrained: {:?}", r.node());

    // a faulty node: drained with fabcheck's reason, naming the part first
    let (o, calls) = r.health("healthcheck", Some("negotiated-100g"), true);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(counted(&calls), (1, 1), "one read, one update: {calls:?}");
    let n = r.node();
    assert!(n.drain(), "{n:?}");
    let reason = n.reason.clone().unwrap_or_default();
    assert!(
        reason.starts_with("fabcheck: enp1s0f1np1 link:"),
        "{reason}"
    );
    assert_eq!(o.stderr.trim(), reason, "the reason is the stderr line");
    // still faulty: already drained, no second update
    let (_, calls) = r.health("healthcheck", Some("negotiated-100g"), true);
    assert_eq!(counted(&calls), (1, 0), "{calls:?}");
    // healthy once: K=2 not reached
    let (o, calls) = r.health("healthcheck", None, true);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(counted(&calls), (1, 0), "{calls:?}");
    assert!(r.node().drain(), "resumed after one healthy run");
    // healthy twice: resumed
    let (_, calls) = r.health("healthcheck", None, true);
    assert_eq!(counted(&calls), (1, 1), "{calls:?}");
    assert!(!r.node().drain(), "{:?}", r.node());

    // an admin's drain stays, through healthy and unhealthy runs
    r.scontrol(&[
        "update",
        &format!("NodeName={NODE}"),
        "State=DRAIN",
        "Reason=maint",
    ]);
    for scenario in [None, None, None, Some("negotiated-100g")] {
        let (o, calls) = r.health("healthcheck", scenario, true);
        assert_eq!(counted(&calls), (1, 0), "{calls:?}\n{}", o.stdout);
        assert!(
            o.stdout
                .contains("drained for another reason (maint): left alone"),
            "{}",
            o.stdout
        );
        let n = r.node();
        assert!(n.drain() && n.reason.as_deref() == Some("maint"), "{n:?}");
    }
    // the prolog makes no Slurm call, healthy or not; --slurm is refused there
    for scenario in [None, Some("negotiated-100g")] {
        let (_, calls) = r.health("prolog", scenario, false);
        assert!(calls.is_empty(), "{calls:?}");
    }
    let (o, calls) = r.health("prolog", None, true);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(r.node().reason.as_deref(), Some("maint"));
    r.scontrol(&["update", &format!("NodeName={NODE}"), "State=RESUME"]);
    assert!(!r.node().drain(), "lab02 left undrained");
}

//! `fabcheck health` (docs/continuous.md): what one node's checks say as one verdict, and the
//! state kept between runs on that node (the last counter snapshot, the consecutive healthy
//! runs). Plain data; `cli::health` drives the run, `report::prom` renders the gauges.

use super::model::{Status, TestResult};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The verdict of one run on one node.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// Every check that ran passed (some may be unknown).
    Healthy,
    /// A check failed: the part it names and what it found.
    Unhealthy { part: String, what: String },
    /// No check could judge anything (every one an error or skipped).
    Unknown,
}

/// One finished run of `fabcheck health` on one node: what the gauges are made of.
pub(crate) struct Outcome<'a> {
    pub node: &'a str,
    /// `prolog`, `healthcheck` or `epilog`.
    pub context: &'a str,
    pub verdict: &'a Verdict,
    /// When it started, seconds since the Unix epoch.
    pub started_s: f64,
    pub duration_s: f64,
    pub tests: &'a [TestResult],
}

impl Verdict {
    /// The exit code this verdict ends the command with (and the status gauge's value).
    pub(crate) fn code(&self) -> i32 {
        match self {
            Verdict::Healthy => 0,
            Verdict::Unhealthy { .. } => 1,
            Verdict::Unknown => 4,
        }
    }
}

/// The longest `fabcheck: …` line: node-problem-detector shows a message under 80 characters,
/// `sinfo -R` the first 20.
pub(crate) const LINE_MAX: usize = 79;

impl Verdict {
    /// The one stderr line (and the Slurm reason) of an unhealthy node: `fabcheck: <part>
    /// <what>`, the part first, at most [`LINE_MAX`] characters.
    pub(crate) fn line(&self) -> Option<String> {
        let Verdict::Unhealthy { part, what } = self else {
            return None;
        };
        let full = format!("fabcheck: {part} {what}");
        Some(shorten(&full, LINE_MAX))
    }
}

fn shorten(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let mut out: String = one.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// The check's own name: `node: link [spark-02]` -> `link`.
pub(crate) fn check_name(t: &TestResult) -> String {
    let n = t.name.strip_prefix("node: ").unwrap_or(&t.name);
    n.split(" [").next().unwrap_or(n).to_string()
}

/// The verdict of the node's checks: the first failure names its part; no failure and a pass
/// of a check tagged `core` (the link and rail checks, without which nothing about the fabric
/// was judged) is healthy; else unknown.
pub(crate) fn judge(node: &str, tests: &[TestResult]) -> Verdict {
    if let Some(t) = tests.iter().find(|t| t.status == Status::Failure) {
        let (part, what) = part_of(node, t);
        return Verdict::Unhealthy { part, what };
    }
    let core = |t: &&TestResult| t.tags.iter().any(|g| g == "core");
    if tests.iter().filter(core).any(|t| t.status == Status::Pass) {
        Verdict::Healthy
    } else {
        Verdict::Unknown
    }
}

/// The checks that could not run (an error: a tool missing, a timeout): `check: why`.
pub(crate) fn unknown(tests: &[TestResult]) -> Vec<String> {
    tests
        .iter()
        .filter(|t| t.status == Status::Error)
        .map(|t| {
            let why = t.message.as_deref().unwrap_or("no reason given");
            format!("{}: {}", check_name(t), shorten(why, 200))
        })
        .collect()
}

/// The part a failed check names (its subject's device, else the check) and what it found,
/// without the node's name (the node is the one Slurm or the exporter already names).
fn part_of(node: &str, t: &TestResult) -> (String, String) {
    let check = check_name(t);
    let strip = |s: &str| -> String {
        let s = s.trim();
        let s = s.strip_prefix(node).unwrap_or(s).trim_start();
        s.trim_start_matches(':').trim().to_string()
    };
    if let Some(s) = t.subjects.first() {
        let device = s
            .netdev
            .clone()
            .or_else(|| s.rail.clone())
            .or_else(|| s.port.clone().map(|p| format!("port {p}")));
        let found = s.found.as_deref().map(strip);
        if let Some(d) = device {
            let what = found
                .map(|f| f.strip_prefix(&d).map(str::trim).unwrap_or(&f).to_string())
                .unwrap_or_else(|| message_of(node, t));
            return (d, format!("{check}: {what}"));
        }
        if let Some(p) = s.part.as_deref() {
            return (strip(p), check);
        }
    }
    (check, message_of(node, t))
}

fn message_of(node: &str, t: &TestResult) -> String {
    let m = t.message.as_deref().unwrap_or("failed");
    let m = m.split(" (").next().unwrap_or(m);
    m.replace(&format!("{node} "), "")
        .replace(&format!("{node}: "), "")
}

/// What `fabcheck health` keeps between runs on a node (`--state DIR/health-NODE.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct State {
    pub node: String,
    /// Consecutive healthy runs (unknown runs leave it as it was; unhealthy ones reset it).
    pub passes: u32,
    /// The last snapshot of the node's error counters (`health_counters`), as the script saw it.
    #[serde(default)]
    pub counters: Option<serde_json::Value>,
    /// The negotiated speed of each fabric interface at the last healthy run (Mb/s): a link
    /// that came up slower since is unhealthy even where nothing else says what it should run.
    #[serde(default)]
    pub speeds: Option<serde_json::Value>,
    /// Where the last reading of the kernel log's link lines ended (the boot and the time of
    /// its last link line): the next run counts only the flaps after it.
    #[serde(default)]
    pub kernel_log: Option<serde_json::Value>,
}

/// The state file of `node` in `dir`.
pub(crate) fn state_path(dir: &Path, node: &str) -> PathBuf {
    dir.join(format!("health-{node}.json"))
}

/// The state of `node` in `dir`: a missing, unreadable or corrupt file (or another node's) is
/// a fresh start, with the reason.
pub(crate) fn load_state(dir: &Path, node: &str) -> (State, Option<String>) {
    let fresh = State {
        node: node.to_string(),
        ..State::default()
    };
    let path = state_path(dir, node);
    let text = match crate::util::fs::read_capped(&path, 16 << 20, "state") {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (fresh, None),
        Err(e) => return (fresh, Some(format!("{}: {e}", path.display()))),
    };
    match serde_json::from_str::<State>(&text) {
        Ok(s) if s.node == node => (s, None),
        Ok(s) => (
            fresh,
            Some(format!("{}: the state of node {}", path.display(), s.node)),
        ),
        Err(e) => (
            fresh,
            Some(format!("{}: not a state file ({e})", path.display())),
        ),
    }
}

/// The state after a run with `verdict`: healthy counts one more pass, unhealthy resets the
/// count, unknown keeps it.
pub(crate) fn next_passes(passes: u32, verdict: &Verdict) -> u32 {
    match verdict {
        Verdict::Healthy => passes.saturating_add(1),
        Verdict::Unhealthy { .. } => 0,
        Verdict::Unknown => passes,
    }
}

/// What `--slurm` does to the node after a run (at most one update).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SlurmAction {
    /// `scontrol update NodeName=X State=DRAIN Reason=<the line>`.
    Drain(String),
    /// `scontrol update NodeName=X State=RESUME`.
    Resume,
}

/// A reason fabcheck gave (`fabcheck: …`): only such a drain is fabcheck's to undo.
pub(crate) fn ours(reason: Option<&str>) -> bool {
    reason.is_some_and(|r| r.starts_with("fabcheck:"))
}

/// The Slurm action after a run with `v` on a node Slurm shows as `n`, with `passes`
/// consecutive healthy runs (this one counted) and `k` needed to resume; and what to say.
/// A node drained for any other reason is never touched; an unknown run changes nothing.
pub(crate) fn slurm_action(
    n: &crate::parse::scontrol::SlurmNode,
    v: &Verdict,
    passes: u32,
    k: u32,
) -> (Option<SlurmAction>, String) {
    let reason = n.reason.as_deref();
    let other = n.drain() && !ours(reason);
    let shown = reason.unwrap_or("none given");
    match v {
        _ if other => (
            None,
            format!("drained for another reason ({shown}): left alone"),
        ),
        Verdict::Unknown => (None, "nothing judged: not drained, not resumed".into()),
        Verdict::Unhealthy { .. } if n.drain() => {
            (None, format!("already drained by fabcheck ({shown})"))
        }
        Verdict::Unhealthy { .. } => match v.line() {
            Some(l) => (Some(SlurmAction::Drain(l)), "drained".into()),
            None => (None, String::new()),
        },
        Verdict::Healthy if n.drain() && passes >= k => (
            Some(SlurmAction::Resume),
            format!("resumed after {passes} healthy runs (undrain_after={k})"),
        ),
        Verdict::Healthy if n.drain() => (
            None,
            format!("drained by fabcheck; healthy run {passes} of {k} before it is resumed"),
        ),
        Verdict::Healthy => (None, "not drained".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::model::{Finding, Subject};

    fn failed(name: &str, subject: Option<Subject>, msg: &str) -> TestResult {
        let mut t = TestResult::new(name, "node_health");
        t.status = Status::Failure;
        t.message = Some(msg.into());
        t.subjects = subject.into_iter().collect();
        t
    }

    #[test]
    fn the_line_names_the_device_first_without_the_node() {
        let s = Subject {
            netdev: Some("enp1s0f1np1".into()),
            found: Some("enp1s0f1np1 negotiated 100000 Mb/s, expected 200000 Mb/s".into()),
            ..Subject::new(Finding::LinkSlow, "spark-02")
        };
        let v = judge("spark-02", &[failed("node: link [spark-02]", Some(s), "x")]);
        let l = v.line().unwrap();
        assert_eq!(
            l,
            "fabcheck: enp1s0f1np1 link: negotiated 100000 Mb/s, expected 200000 Mb/s"
        );
        assert!(l.chars().count() <= LINE_MAX);
    }

    #[test]
    fn a_failure_without_a_subject_names_its_check() {
        let v = judge(
            "h1",
            &[failed(
                "node: gpudirect rdma [h1]",
                None,
                "h1: 8 NVIDIA GPU(s) but the nvidia_peermem module is not loaded (x)",
            )],
        );
        assert!(v
            .line()
            .unwrap()
            .starts_with("fabcheck: gpudirect rdma 8 NVIDIA GPU(s)"));
    }

    #[test]
    fn errors_alone_are_unknown_and_a_pass_with_errors_is_healthy() {
        let mut e = TestResult::new("node: gid [n]", "c");
        e.status = Status::Error;
        assert_eq!(judge("n", std::slice::from_ref(&e)), Verdict::Unknown);
        let mut p = TestResult::new("node: gid [n]", "c");
        p.status = Status::Pass;
        assert_eq!(
            judge("n", &[e.clone(), p.clone()]),
            Verdict::Unknown,
            "no core check"
        );
        p.tags = vec!["core".into()];
        assert_eq!(judge("n", &[e.clone(), p]), Verdict::Healthy);
        assert_eq!(unknown(&[e]).len(), 1);
    }

    #[test]
    fn only_fabchecks_own_drain_is_undone_and_only_after_k_healthy_runs() {
        use crate::parse::scontrol::SlurmNode;
        let node = |flags: &[&str], reason: Option<&str>| SlurmNode {
            name: "n".into(),
            state: "IDLE".into(),
            flags: flags.iter().map(|f| f.to_string()).collect(),
            reason: reason.map(str::to_string),
        };
        let bad = Verdict::Unhealthy {
            part: "eth0".into(),
            what: "link: down".into(),
        };
        let idle = node(&[], None);
        let ours = node(&["DRAIN"], Some("fabcheck: eth0 link: down"));
        let maint = node(&["DRAIN"], Some("maint"));
        let drain = |n: &SlurmNode, v: &Verdict, p: u32| slurm_action(n, v, p, 2).0;
        assert_eq!(
            drain(&idle, &bad, 0),
            Some(SlurmAction::Drain("fabcheck: eth0 link: down".into()))
        );
        assert_eq!(drain(&ours, &bad, 0), None, "no second update");
        assert_eq!(drain(&maint, &bad, 0), None, "an admin's drain");
        assert_eq!(drain(&ours, &Verdict::Healthy, 1), None);
        assert_eq!(
            drain(&ours, &Verdict::Healthy, 2),
            Some(SlurmAction::Resume)
        );
        assert_eq!(drain(&maint, &Verdict::Healthy, 9), None);
        assert_eq!(drain(&idle, &Verdict::Unknown, 0), None);
        assert_eq!(drain(&ours, &Verdict::Unknown, 5), None);
        // a draining node (jobs still on it) is drained, not free
        let draining = SlurmNode {
            state: "ALLOCATED".into(),
            ..maint.clone()
        };
        assert_eq!(drain(&draining, &Verdict::Healthy, 9), None);
    }

    #[test]
    fn a_corrupt_or_foreign_state_is_a_fresh_start() {
        let d = std::env::temp_dir().join(format!("fc-health-state-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(state_path(&d, "a"), "{ not json").unwrap();
        let (s, why) = load_state(&d, "a");
        assert_eq!(s.passes, 0);
        assert!(why.unwrap().contains("not a state file"));
        std::fs::write(state_path(&d, "b"), r#"{"node":"c","passes":3}"#).unwrap();
        let (s, why) = load_state(&d, "b");
        assert_eq!((s.passes, s.node.as_str()), (0, "b"));
        assert!(why.unwrap().contains("node c"));
        let (s, why) = load_state(&d, "absent");
        assert!(why.is_none() && s.passes == 0);
        std::fs::remove_dir_all(&d).unwrap();
    }
}

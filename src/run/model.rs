//! The results of a run: what the engine produces and every reporter reads.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Failure,
    Error,
    Skipped,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Failure => "FAIL",
            Status::Error => "ERROR",
            Status::Skipped => "SKIP",
        }
    }
}

/// A number recorded with `metric(name, value, unit, opts)`. Its identity is structured: the
/// stdlib sets `node`, `rail` and `size_bytes`, and reports read those fields (the name stays as
/// it was for JUnit properties, JSON and `--baseline` keys).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: String,
    /// Allowed regression against a baseline, in percent (default 10); `higher_is_better`
    /// decides which direction counts as worse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance_pct: Option<f64>,
    #[serde(default = "yes")]
    pub higher_is_better: bool,
    /// The pass/fail line (`metric(..., #{ threshold })`): a value on the wrong side of it
    /// (by `higher_is_better`) fails the test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// An informational line (`#{ reference }`): drawn and listed, never fails a test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<f64>,
    /// The node the number belongs to (when a test covers several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The rail (RDMA device) or port the number belongs to: such metrics are the HTML
    /// report's per-rail bars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail: Option<String>,
    /// The message size of a per-size number (NCCL busbw): the HTML busbw plot's x axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// The other node of a pair measurement (`node` → `peer`): the HTML bandwidth matrix.
    /// Set by default inside `test_pairs` tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
}

impl Metric {
    pub fn new(name: &str, value: f64, unit: &str) -> Metric {
        Metric {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
            tolerance_pct: None,
            higher_is_better: true,
            threshold: None,
            reference: None,
            node: None,
            rail: None,
            size_bytes: None,
            peer: None,
        }
    }

    /// Whether the value is on the right side of `line` (by `higher_is_better`).
    pub fn meets(&self, line: f64) -> bool {
        if self.higher_is_better {
            self.value >= line
        } else {
            self.value <= line
        }
    }
}

fn yes() -> bool {
    true
}

/// One remote (or local) command run during a test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandLog {
    pub node: String,
    pub command: String,
    pub exit_code: Option<i64>,
    pub duration_ms: u64,
    /// Capped head and tail of stdout / stderr (full output goes to --record transcripts).
    pub stdout: String,
    pub stderr: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `--dry-run`: listed, not sent (no exit code, no output).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

impl CommandLog {
    /// How the command ended, as reports show it: `exit 0, 12 ms`, or `listed, not run (dry
    /// run)`.
    pub fn outcome(&self) -> String {
        if self.dry_run {
            return "listed, not run (dry run)".into();
        }
        format!(
            "exit {}, {} ms",
            self.exit_code
                .map(|e| e.to_string())
                .unwrap_or_else(|| "-".into()),
            self.duration_ms
        )
    }
}

/// One attempt of a test (a test with `retries` may have several).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attempt {
    pub status: Status,
    pub message: Option<String>,
    pub duration_ms: u64,
    /// What the attempt measured (`name=value unit`, its metrics), so that every reading of a
    /// re-measured test is in the report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestResult {
    pub name: String,
    /// `<script>` or `<script>.<node>`: (classname, name) is unique in a run.
    pub classname: String,
    pub node: Option<String>,
    pub file: String,
    pub line: Option<usize>,
    pub tags: Vec<String>,
    pub status: Status,
    /// One line: what failed, with expected and actual values and script file:line.
    pub message: Option<String>,
    /// The longer story (stderr tails, the error chain).
    pub detail: Option<String>,
    pub duration_ms: u64,
    pub warnings: Vec<String>,
    pub metrics: Vec<Metric>,
    pub commands: Vec<CommandLog>,
    /// What the script printed (`print`) and the test's log lines.
    pub output: String,
    pub attempts: Vec<Attempt>,
    /// Passed only on a later attempt (`retries`) or re-measurement (`confirm`): a failure that
    /// did not reproduce. Not blamed, not green: the console labels it FLAKY, the summary counts
    /// it, the reports show every attempt's reading.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flaky: bool,
    /// When the test started (RFC 3339, ms): with the duration, when each node was busy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// `test_pairs` testcases: the second node of the pair (the first is `node`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// `test_pairs` testcases: the round the pair ran in (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
    /// `note(msg)` lines: shown on the console under the test (and kept in `output`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Tool versions the test's commands showed ([`super::versions`]); the run's results keep
    /// them once per (node, tool) in [`RunResult::tool_versions`].
    #[serde(skip)]
    pub tool_versions: Vec<ToolVersion>,
    /// What the test found wrong, and on which part (`subject(...)` in scripts, automatic from
    /// unreachable nodes): the typed input of the run's diagnosis ([`super::diagnosis`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<Subject>,
    /// Platform profiles and expectations the test took; the run's results keep them once per
    /// node in [`RunResult::profiles`].
    #[serde(skip)]
    pub profiles: Vec<super::profile::NodeProfile>,
}

/// What kind of fault a [`Subject`] records: the diagnosis rules match on it, never on text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// A port or rail without link (ethtool `Link detected: no`, RDMA port DOWN).
    LinkDown,
    /// A port up below its expected speed (a 200G port at 100G).
    LinkSlow,
    /// The node could not be reached (ssh connect failed).
    Unreachable,
    /// A bandwidth below its line (a metric past its threshold, or the odd one out).
    Bandwidth,
    /// A latency above its line.
    Latency,
    /// A flow across the spine below its line: `links` are the switch ports its path leaves
    /// by (ibtracert), so that slow flows sharing one cable are put on it.
    SpinePath,
    /// Receive error counters grew (CRC, symbol errors, pre-FEC BER): the signal arriving at
    /// this port is bad.
    RxErrors,
    /// Link-down events grew: the link flapped.
    Flapping,
    /// A PCIe link trained below its expected speed or width.
    PcieDowntrained,
    /// An InfiniBand HCA port without link, or trained below its expected rate (ibstat,
    /// iblinkinfo).
    IbPort,
    /// No InfiniBand subnet manager answers (SM lid 0, ports stuck in Initializing).
    IbNoSm,
    /// A rail's cable lands on another rail's leaf switch (rail-optimised fabric, iblinkinfo).
    RailCrossed,
    /// SSH between two nodes refused for trust, not for the fabric: `found` says how
    /// (`host_key_unknown`, `host_key_changed`, `login_refused`, then `at ADDRESS`).
    SshTrust,
    /// The script itself stopped (a runtime error of the script: no fabric finding).
    Script,
    /// A configuration differs from what it should be (GID, MTU, FEC, PFC, firmware, driver).
    Config,
    /// Anything else a script names a part for.
    Other,
}

impl Finding {
    pub const ALL: &'static [(&'static str, Finding)] = &[
        ("link_down", Finding::LinkDown),
        ("link_slow", Finding::LinkSlow),
        ("unreachable", Finding::Unreachable),
        ("bandwidth", Finding::Bandwidth),
        ("latency", Finding::Latency),
        ("rx_errors", Finding::RxErrors),
        ("flapping", Finding::Flapping),
        ("pcie_downtrained", Finding::PcieDowntrained),
        ("ib_port", Finding::IbPort),
        ("ib_no_sm", Finding::IbNoSm),
        ("rail_crossed", Finding::RailCrossed),
        ("spine_path", Finding::SpinePath),
        ("ssh_trust", Finding::SshTrust),
        ("script", Finding::Script),
        ("config", Finding::Config),
        ("other", Finding::Other),
    ];

    /// The kind named `s` (`subject(#{ kind })`).
    pub fn parse(s: &str) -> Option<Finding> {
        Finding::ALL.iter().find(|(n, _)| *n == s).map(|(_, f)| *f)
    }
}

/// A cable (or optical module) as `ethtool -m` describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cable {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
}

impl Cable {
    /// `vendor PN x SN y`, or `None` when nothing is known.
    pub fn describe(&self) -> Option<String> {
        let parts: Vec<String> = [
            self.vendor.clone(),
            self.part_number.as_ref().map(|p| format!("PN {p}")),
            self.serial_number.as_ref().map(|s| format!("SN {s}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

/// The part a test found wrong: node, port (the inventory's physical port), netdev, RDMA
/// device (rail), the other end, the cable where known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subject {
    pub kind: Finding,
    pub node: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netdev: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cable: Option<Cable>,
    /// The part in the check's own words, where it knows it better than node and device
    /// (`nvidia-peermem on spark-01`, `the launch's host list`): the diagnosis names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// What was measured against what was expected (`negotiated 100000 Mb/s, expected 200000
    /// Mb/s`; `rx_crc_errors_phy +1234`): the diagnosis says it with the cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// The links of the path the evidence took, one per switch port it left by (`"DESC"
    /// GUID port N`, as a trace gives them): reds whose paths share a link are put on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
}

impl Subject {
    pub fn new(kind: Finding, node: &str) -> Subject {
        Subject {
            kind,
            node: node.to_string(),
            port: None,
            netdev: None,
            rail: None,
            peer: None,
            cable: None,
            part: None,
            found: None,
            links: vec![],
        }
    }
}

/// One probable cause of the run's reds (`run::diagnosis`): what, which part, which results
/// it explains, what to run next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Diagnosis {
    /// The rule that found it (`link_down`, `unreachable`, `host_side`, `receiver_errors`,
    /// `pcie_downtrained`, `slow_node`, `slow_rail`, `odd_node`, `odd_rail`, `odd_one_out`,
    /// `unexplained`; docs/diagnosis.md).
    pub rule: String,
    /// The probable cause, one line.
    pub cause: String,
    /// The part: node, port, rail, cable, far end.
    pub part: String,
    /// The results it explains (testcase names).
    pub evidence: Vec<String>,
    /// The metric a note is about (the odd one out: the matrix marks its cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// What to run next.
    pub next: Vec<String>,
}

impl Diagnosis {
    /// A WARN-level note (a node, rail or result far from its like parts that passes its
    /// line), not the cause of a red: it fails nothing.
    pub(crate) fn is_warning(&self) -> bool {
        matches!(self.rule.as_str(), "odd_one_out" | "odd_node" | "odd_rail")
    }
}

impl TestResult {
    /// A passing test with nothing recorded yet.
    pub fn new(name: &str, classname: &str) -> TestResult {
        TestResult {
            name: name.to_string(),
            classname: classname.to_string(),
            node: None,
            file: String::new(),
            line: None,
            tags: vec![],
            flaky: false,
            status: Status::Pass,
            message: None,
            detail: None,
            duration_ms: 0,
            warnings: vec![],
            metrics: vec![],
            commands: vec![],
            output: String::new(),
            attempts: vec![],
            started: None,
            peer: None,
            round: None,
            notes: vec![],
            tool_versions: vec![],
            subjects: vec![],
            profiles: vec![],
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SuiteResult {
    pub name: String,
    pub file: String,
    pub timestamp: String,
    pub duration_ms: u64,
    pub tests: Vec<TestResult>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ToolVersion {
    pub node: String,
    pub tool: String,
    pub version: String,
    /// Not the version most nodes have of this tool (drift; set by `run::finish`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub differs: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RunResult {
    pub fabcheck_version: String,
    pub started: String,
    pub duration_ms: u64,
    pub inventory: Option<String>,
    /// Set when the run used a simulated cluster: every report says so.
    pub simulation: Option<String>,
    /// Set when commands were answered from recorded transcripts (`--replay DIR`, or nodes with
    /// `transport = "replay"`): where they came from. Every report says REPLAYED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed: Option<String>,
    pub interrupted: bool,
    pub params: serde_json::Map<String, serde_json::Value>,
    pub suites: Vec<SuiteResult>,
    #[serde(default)]
    pub tool_versions: Vec<ToolVersion>,
    /// The probable causes of the reds (`run::diagnosis`, set by `run::finish`): every report
    /// opens with them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnosis: Vec<Diagnosis>,
    /// The platform profile each node got, why, and where each expectation came from
    /// ([`super::profile`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<super::profile::NodeProfile>,
    /// Nodes where the run's commands could not be ended (their sshd died, they stopped
    /// answering, no fresh connection could be made): what may still run there, and until
    /// when at the latest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_cleaned_up: Vec<crate::transport::Leftover>,
    /// The nodes no connection reached, each once with the reason (the top of every report):
    /// every testcase that needed one of them is an error with a short message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreachable: Vec<Unreached>,
}

/// A node that was never reached, and why (one line: `cannot connect to HOST: CAUSE`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Unreached {
    pub node: String,
    pub reason: String,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub pass: usize,
    /// Of the passes, those that passed only on a later attempt (flaky).
    pub flaky: usize,
    pub failure: usize,
    pub error: usize,
    pub skipped: usize,
}

impl Counts {
    pub(crate) fn total(&self) -> usize {
        self.pass + self.failure + self.error + self.skipped
    }
}

impl RunResult {
    pub(crate) fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for t in self.suites.iter().flat_map(|s| &s.tests) {
            match t.status {
                Status::Pass => {
                    c.pass += 1;
                    c.flaky += usize::from(t.flaky);
                }
                Status::Failure => c.failure += 1,
                Status::Error => c.error += 1,
                Status::Skipped => c.skipped += 1,
            }
        }
        c
    }

    /// GitLab keeps only the first of duplicate (classname, name) pairs. Within a script the
    /// registry keeps names unique; across the run (two scripts with the same file name in
    /// different folders) later duplicates get ` (2)`, ` (3)`, … appended to the test name.
    pub(crate) fn make_unique(&mut self) {
        let mut seen = std::collections::HashSet::new();
        for t in self.suites.iter_mut().flat_map(|s| &mut s.tests) {
            t.name = unique_name(&mut seen, &t.classname, &t.name);
        }
    }

    /// `name` in `classname`, or with ` (2)`, ` (3)`, … when a test of the run already has it
    /// (for a testcase added after [`RunResult::make_unique`]).
    pub(crate) fn unused_name(&self, classname: &str, name: &str) -> String {
        let mut seen: std::collections::HashSet<(String, String)> = self
            .suites
            .iter()
            .flat_map(|s| &s.tests)
            .map(|t| (t.classname.clone(), t.name.clone()))
            .collect();
        unique_name(&mut seen, classname, name)
    }
}

#[cfg(test)]
impl RunResult {
    /// A finished run of one suite `suite` holding `tests` (unit tests of what reads results).
    pub(crate) fn of_tests(suite: &str, tests: Vec<TestResult>) -> RunResult {
        RunResult {
            fabcheck_version: "0".into(),
            started: String::new(),
            duration_ms: 0,
            inventory: None,
            simulation: None,
            replayed: None,
            interrupted: false,
            params: Default::default(),
            suites: vec![SuiteResult {
                name: suite.into(),
                file: format!("{suite}.rhai"),
                timestamp: String::new(),
                duration_ms: 0,
                tests,
            }],
            tool_versions: vec![],
            diagnosis: vec![],
            unreachable: vec![],
            profiles: vec![],
            not_cleaned_up: vec![],
        }
    }
}

/// `name`, or the first of `name (2)`, `name (3)`, … that `seen` lacks; noted in `seen`.
fn unique_name(
    seen: &mut std::collections::HashSet<(String, String)>,
    classname: &str,
    name: &str,
) -> String {
    let mut candidate = name.to_string();
    let mut n = 2;
    while !seen.insert((classname.to_string(), candidate.clone())) {
        candidate = format!("{name} ({n})");
        n += 1;
    }
    candidate
}

/// A test's message and detail as every report keeps them (head + tail, see [`cap`]): a
/// script's `fail(huge)` must not become a report of hundreds of MB (JUnit and HTML cap their
/// blocks at the same size).
pub(crate) const MESSAGE_CAP: usize = 64 * 1024;

/// Keep the head and tail of a long text, with a marker saying how much was cut.
pub(crate) fn cap(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let half = max / 2;
    let mut h = half;
    while !text.is_char_boundary(h) {
        h -= 1;
    }
    let mut t = text.len() - half;
    while !text.is_char_boundary(t) {
        t += 1;
    }
    format!(
        "{}\n[... {} bytes cut by fabcheck; the full output is in --record transcripts ...]\n{}",
        &text[..h],
        t - h,
        &text[t..]
    )
}

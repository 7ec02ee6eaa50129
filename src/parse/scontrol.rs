//! `scontrol show node -o NAME` (Slurm 22.05): the node's state and, where it has one, the
//! reason an admin or a health check gave it. One line of `Key=Value` fields; `Reason=` comes
//! last and its value has spaces, with Slurm's ` [user@time]` appended.
//!
//! ```text
//! NodeName=lab02 Arch=x86_64 … State=IDLE+DRAIN ThreadsPerCore=1 … Reason=fabcheck: enp1s0f1np1 link: … [root@2026-12-07T02:44:56]
//! Node lab09 not found
//! ```

use super::util::regex;
use super::ParseError;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SlurmNode {
    pub name: String,
    /// The base state: `IDLE`, `ALLOCATED`, `MIXED`, `DOWN`, … (`State=` before the first `+`).
    pub state: String,
    /// The state's flags: `DRAIN`, `NOT_RESPONDING`, `COMPLETING`, …
    pub flags: Vec<String>,
    /// The reason without Slurm's ` [user@time]`; `None` without a `Reason=` field.
    pub reason: Option<String>,
}

impl SlurmNode {
    /// Drained or draining (`+DRAIN` on any base state, `DRAINED`/`DRAINING` as some versions
    /// print it): jobs still running on a draining node do not make it free.
    pub fn drain(&self) -> bool {
        self.flags.iter().any(|f| f == "DRAIN") || self.state.starts_with("DRAIN")
    }
}

pub fn parse(text: &str) -> Result<SlurmNode, ParseError> {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if line.is_empty() {
        return Err(ParseError::new("scontrol-show-node", 0, "", "empty output"));
    }
    let bad = |why: &str| ParseError::new("scontrol-show-node", 1, line, why);
    if let Some(c) = regex!(r"^Node (\S+) not found").captures(line) {
        return Err(bad(&format!("Slurm has no node {}", &c[1])));
    }
    let name = regex!(r"^NodeName=(\S+)")
        .captures(line)
        .ok_or_else(|| bad("not a `scontrol show node -o` line (no NodeName=)"))?[1]
        .to_string();
    let state = regex!(r"(?:^|\s)State=(\S+)")
        .captures(line)
        .ok_or_else(|| bad("no State= field"))?[1]
        .to_string();
    let mut parts = state.split('+').map(str::to_string);
    let base = parts.next().unwrap_or_default();
    let reason = regex!(r"\sReason=(.*?)(?:\s+\[[^\]\[]*@[^\]\[]*\])?\s*$")
        .captures(line)
        .map(|c| c[1].trim().to_string());
    Ok(SlurmNode {
        name,
        state: base,
        flags: parts.collect(),
        reason,
    })
}

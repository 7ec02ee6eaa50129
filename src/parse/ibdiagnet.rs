//! `ibdiagnet` (ibdiagnet2, NVIDIA's fabric diagnostic): the summary it prints at the end of a
//! run — the `Fabric Summary` block (`Total Nodes : 15`, `IB Switches : 3`, ...) and the
//! `Summary` stage table (`-I- Stage  Warnings  Errors  Comment`, one `-I- NAME W E [comment]`
//! row per stage). Everything else ibdiagnet prints (progress, `-I-`/`-W-`/`-E-` lines of the
//! stages) is skipped: the details are in its output directory (`/var/tmp/ibdiagnet2`).
//! Between the two, the routing lines of the summary: `Adaptive Routing is enabled on N
//! switches` (and `Hashed Based Forwarding is enabled on N switches`); a summary without the
//! line leaves the count unknown (`None`), not 0.
//!
//! Recognised evidence: the stage table's header or the `Fabric Summary` line.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ibdiagnet";

/// One row of the stage table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    pub name: String,
    pub warnings: u64,
    pub errors: u64,
    /// The comment column, when printed.
    pub comment: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ibdiagnet {
    pub total_nodes: Option<u64>,
    pub switches: Option<u64>,
    pub channel_adapters: Option<u64>,
    pub aggregation_nodes: Option<u64>,
    pub routers: Option<u64>,
    /// `Adaptive Routing is enabled on N switches`.
    pub adaptive_routing_switches: Option<u64>,
    /// `Hashed Based Forwarding is enabled on N switches`.
    pub hbf_switches: Option<u64>,
    pub stages: Vec<Stage>,
    /// Sums over the stages.
    pub warnings: u64,
    pub errors: u64,
}

fn count(line: &str, label: &str) -> Option<u64> {
    let (k, v) = line.split_once(':')?;
    (k.trim() == label).then(|| v.trim().parse().ok())?
}

pub fn parse(text: &str) -> Result<Ibdiagnet, ParseError> {
    let mut s = Ibdiagnet::default();
    let mut seen = false;
    let mut table = false;
    for (_, line) in numbered(text) {
        let t = line.trim();
        if t == "Fabric Summary" {
            seen = true;
            continue;
        }
        for (label, slot) in [
            ("Total Nodes", &mut s.total_nodes),
            ("IB Switches", &mut s.switches),
            ("IB Channel Adapters", &mut s.channel_adapters),
            ("IB Aggregation Nodes", &mut s.aggregation_nodes),
            ("IB Routers", &mut s.routers),
        ] {
            if let Some(v) = count(t, label) {
                *slot = Some(v);
            }
        }
        if let Some(c) = regex!(
            r"^(Adaptive Routing|Hashed Based Forwarding) is enabled on (\d+) switch(?:es)?$"
        )
        .captures(t)
        {
            let n = c[2].parse().ok();
            if &c[1] == "Adaptive Routing" {
                s.adaptive_routing_switches = n;
            } else {
                s.hbf_switches = n;
            }
            continue;
        }
        if regex!(r"^-I-\s+Stage\s+Warnings\s+Errors").is_match(t) {
            seen = true;
            table = true;
            continue;
        }
        if !table {
            continue;
        }
        match regex!(r"^-I-\s+(\S.*?)\s+(\d+)\s+(\d+)(?:\s+(\S.*))?$").captures(t) {
            Some(c) => s.stages.push(Stage {
                name: c[1].to_string(),
                warnings: c[2].parse().unwrap_or(0),
                errors: c[3].parse().unwrap_or(0),
                comment: c.get(4).map(|m| m.as_str().to_string()),
            }),
            None => table = false,
        }
    }
    if !seen {
        return Err(unrecognised(
            KIND,
            text,
            "no `Fabric Summary` line and no `-I- Stage  Warnings  Errors` table",
        ));
    }
    s.warnings = s.stages.iter().map(|x| x.warnings).sum();
    s.errors = s.stages.iter().map(|x| x.errors).sum();
    Ok(s)
}

crate::impl_shape!(Stage, parsed("ibdiagnet stage"));
crate::impl_shape!(
    Ibdiagnet,
    parsed("ibdiagnet summary").many::<Stage>("stages")
);

crate::parser!("ibdiagnet", "ibdiagnet (its closing summary)", sample: "ibdiags/ibdiagnet-routing-ar-dump-fabric-summary-15-nodes-stage-table-discovery-3-warnings.txt");

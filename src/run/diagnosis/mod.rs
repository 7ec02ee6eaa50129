//! The diagnosis of a finished run: its reds grouped by their most likely common cause, by a
//! small rule set ([`rules`], documented in docs/diagnosis.md) over the typed results — each
//! test's [`Subject`]s (what it found wrong on which part), its metrics past their lines, its
//! node and peer — and the inventory's ports (which rails share a cable). Pure: no command is
//! run, no text is matched.

pub(crate) mod fleet;
pub(crate) mod rules;
mod spine;
mod ssh_trust;

use super::model::{Diagnosis, Finding, RunResult, Status, Subject, TestResult};
use crate::inventory::Inventory;

/// One physical port of a node: its netdevs and RDMA devices (rails), in the inventory's order.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PortTopo {
    pub name: String,
    pub interfaces: Vec<String>,
    pub rails: Vec<String>,
}

/// A node as the rules see it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NodeTopo {
    pub name: String,
    pub host: String,
    /// Fabric netdevs and RDMA devices: the k-th of each is one rail.
    pub interfaces: Vec<String>,
    pub rails: Vec<String>,
    pub ports: Vec<PortTopo>,
    /// The platform profile the run detected on the node (`run::profile`), when it did: a
    /// part's words depend on it (a DGX Spark has no riser).
    pub platform: Option<String>,
    /// How an engineer logs in to run a next step there, as `ssh` takes it (`-p 2222
    /// fclab@10.0.0.1`, the inventory's user and port); `None` for a `local` node (this
    /// machine: the command as it is).
    pub login: Option<String>,
}

/// What the rules know of the fabric's shape (from the inventory).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Topology {
    pub nodes: Vec<NodeTopo>,
}

/// `[-F CONFIG] [-p PORT] [USER@]HOST` of a node reached over ssh (a replayed node stands
/// for one), `None` for a `local` one.
fn login(n: &crate::inventory::Node) -> Option<String> {
    use crate::inventory::TransportKind;
    if n.transport == TransportKind::Local {
        return None;
    }
    let mut s = String::new();
    if let Some(c) = &n.ssh_config {
        s += &format!("-F {} ", crate::transport::quote(&c.display().to_string()));
    }
    if let Some(p) = n.port {
        s += &format!("-p {p} ");
    }
    if let Some(u) = &n.user {
        s += &format!("{u}@");
    }
    s += &n.host;
    Some(s)
}

impl Topology {
    pub(crate) fn of(inv: &Inventory) -> Topology {
        let nodes = inv
            .nodes
            .iter()
            .map(|n| NodeTopo {
                name: n.name.clone(),
                host: n.host.clone(),
                interfaces: n.interfaces.clone(),
                rails: n.rdma_devices.clone(),
                ports: n
                    .ports
                    .iter()
                    .map(|p| PortTopo {
                        name: p.name.clone(),
                        interfaces: p.interfaces.clone(),
                        rails: p.rdma_devices.clone(),
                    })
                    .collect(),
                platform: None,
                login: login(n),
            })
            .collect();
        Topology { nodes }
    }

    /// The same, with each node's platform as the run detected it.
    pub(crate) fn with_profiles(&self, profiles: &[super::profile::NodeProfile]) -> Topology {
        let mut t = self.clone();
        for n in &mut t.nodes {
            n.platform = profiles
                .iter()
                .find(|p| p.node == n.name && p.profile.known)
                .map(|p| p.profile.name.clone());
        }
        t
    }

    /// Whether the run detected `node` as a DGX Spark.
    pub(crate) fn is_spark(&self, node: &str) -> bool {
        self.node(node).and_then(|n| n.platform.as_deref()) == Some(super::profile::SPARK)
    }

    pub(crate) fn node(&self, name: &str) -> Option<&NodeTopo> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The rail index (k-th fabric netdev or RDMA device) of `name` (a netdev, RDMA device or
    /// port name with one rail) on `node`.
    pub(crate) fn index(&self, node: &str, name: &str) -> Option<usize> {
        let n = self.node(node)?;
        n.interfaces
            .iter()
            .position(|x| x == name)
            .or_else(|| n.rails.iter().position(|x| x == name))
    }

    /// The physical port of `node` holding `name` (netdev or RDMA device).
    pub(crate) fn port_of(&self, node: &str, name: &str) -> Option<&PortTopo> {
        self.node(node)?
            .ports
            .iter()
            .find(|p| p.interfaces.iter().any(|x| x == name) || p.rails.iter().any(|x| x == name))
    }

    /// The other node at the far end of `node`'s links: the subject's peer, else the only
    /// other node of a two-node fabric (back to back); `None` behind a switch of many nodes.
    pub(crate) fn far_node(&self, node: &str, peer: Option<&str>) -> Option<String> {
        if let Some(p) = peer {
            return Some(p.to_string());
        }
        let others: Vec<&NodeTopo> = self.nodes.iter().filter(|n| n.name != node).collect();
        (self.nodes.len() == 2 && others.len() == 1).then(|| others[0].name.clone())
    }

    /// `netdev (rail)` of rail index `k` on `node`, as far as known.
    pub(crate) fn rail_label(&self, node: &str, k: usize) -> Option<String> {
        let n = self.node(node)?;
        match (n.interfaces.get(k), n.rails.get(k)) {
            (Some(i), Some(r)) => Some(format!("{i} ({r})")),
            (Some(i), None) => Some(i.clone()),
            (None, Some(r)) => Some(r.clone()),
            (None, None) => None,
        }
    }
}

/// A metric of a red test past its pass/fail line.
#[derive(Debug, Clone)]
pub(crate) struct Low {
    pub node: Option<String>,
    pub rail: Option<String>,
    pub peer: Option<String>,
}

/// A red (failed or errored) testcase with what it names.
pub(crate) struct Red<'a> {
    pub t: &'a TestResult,
    pub low: Vec<Low>,
}

impl Red<'_> {
    /// Nodes this red involves: its node, its peer, its subjects' and failing metrics' nodes.
    pub(crate) fn nodes(&self) -> Vec<&str> {
        let mut v: Vec<&str> = [self.t.node.as_deref(), self.t.peer.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        for s in &self.t.subjects {
            v.push(&s.node);
            v.extend(s.peer.as_deref());
        }
        for l in &self.low {
            v.extend(l.node.as_deref());
            v.extend(l.peer.as_deref());
        }
        v.sort();
        v.dedup();
        v
    }

    /// Rail names (netdevs or RDMA devices) this red names, with their nodes.
    pub(crate) fn rails(&self) -> Vec<(&str, &str)> {
        let mut v = vec![];
        for s in &self.t.subjects {
            for r in [s.netdev.as_deref(), s.rail.as_deref()]
                .into_iter()
                .flatten()
            {
                v.push((s.node.as_str(), r));
            }
        }
        for l in &self.low {
            if let (Some(n), Some(r)) = (l.node.as_deref(), l.rail.as_deref()) {
                v.push((n, r));
            }
        }
        v
    }

    /// A test over the whole fabric (no node, no peer, no subject): a collective crosses
    /// every link.
    pub(crate) fn fabric_wide(&self) -> bool {
        self.t.node.is_none() && self.t.peer.is_none() && self.t.subjects.is_empty()
    }
}

/// The state the rules share: the reds, which are explained, the diagnoses so far.
pub(crate) struct Ctx<'a> {
    pub topo: &'a Topology,
    pub reds: Vec<Red<'a>>,
    pub claimed: Vec<bool>,
    pub out: Vec<Diagnosis>,
    /// The parts the fleet's pair results single out ([`crate::run::fleet`]).
    pub fleet: Vec<crate::run::fleet::Attribution>,
}

impl Ctx<'_> {
    /// Every subject of kind `kind` in the reds, once each.
    pub(crate) fn subjects(&self, kinds: &[Finding]) -> Vec<Subject> {
        let mut v: Vec<Subject> = vec![];
        for r in &self.reds {
            for s in &r.t.subjects {
                if kinds.contains(&s.kind) && !v.contains(s) {
                    v.push(s.clone());
                }
            }
        }
        v
    }

    /// Claim (mark explained) every unclaimed red `pred` holds for; their names.
    pub(crate) fn claim(&mut self, pred: impl Fn(&Red) -> bool) -> Vec<String> {
        let mut names = vec![];
        for (i, r) in self.reds.iter().enumerate() {
            if !self.claimed[i] && pred(r) {
                self.claimed[i] = true;
                names.push(r.t.name.clone());
            }
        }
        names
    }
}

/// A metric of `t` on the wrong side of its threshold.
fn lows(t: &TestResult) -> Vec<Low> {
    t.metrics
        .iter()
        .filter_map(|m| {
            let line = m.threshold?;
            (!m.meets(line)).then(|| Low {
                node: m.node.clone(),
                rail: m.rail.clone(),
                peer: m.peer.clone(),
            })
        })
        .collect()
}

/// The diagnosis of `run`: one [`Diagnosis`] per probable cause, the rules' in their order
/// ([`rules::ALL`]), then one per red no rule explains, then the WARN-level notes: a node
/// or rail in every slow pair that passes its line ([`fleet`]), then one `odd_one_out` note
/// per other result far from its peers ([`super::peers`]). Empty when nothing is red or odd.
pub(crate) fn diagnose(run: &RunResult, topo: &Topology) -> Vec<Diagnosis> {
    let topo = &topo.with_profiles(&run.profiles);
    let reds: Vec<Red> = run
        .suites
        .iter()
        .flat_map(|s| &s.tests)
        .filter(|t| matches!(t.status, Status::Failure | Status::Error))
        .map(|t| Red { t, low: lows(t) })
        .collect();
    let fleet = match crate::run::fleet::FleetPolicy::from_params(&run.params) {
        Some(p) => crate::run::fleet::attributions(run, &p, &|n, r| topo.index(n, r)),
        None => vec![],
    };
    let mut ctx = Ctx {
        topo,
        claimed: vec![false; reds.len()],
        reds,
        out: vec![],
        fleet,
    };
    for rule in rules::ALL {
        rule(&mut ctx);
    }
    // A cause whose reds an earlier one already explained (the second rail of one module)
    // says nothing new.
    ctx.out.retain(|d| !d.evidence.is_empty());
    // The script's own errors after the fabric's causes: they are no fabric cause.
    let (script, mut fabric): (Vec<Diagnosis>, Vec<Diagnosis>) =
        ctx.out.drain(..).partition(|d| d.rule == "script_error");
    fabric.extend(script);
    ctx.out = fabric;
    // Last, the WARN-level notes: results far from their peers that need not have failed.
    let part = |m: &crate::run::model::Metric| match m.node.as_deref() {
        Some(n) => rules::part_of(topo, n, m.rail.as_deref()),
        None => m.name.clone(),
    };
    ctx.out.extend(fleet::notes(topo, &ctx.fleet));
    if let Some(policy) = super::peers::PeerPolicy::from_params(&run.params) {
        // a result the fleet already put on its node or rail says nothing new
        let covered = |d: &Diagnosis| {
            ctx.fleet.iter().any(|a| {
                d.metric.as_ref().is_some_and(|m| a.metrics.contains(m))
                    && d.evidence.iter().all(|t| a.tests.contains(t))
            })
        };
        let odd: Vec<Diagnosis> = super::peers::odd_ones(run, &policy, part)
            .into_iter()
            .filter(|d| !covered(d))
            .collect();
        ctx.out.extend(odd);
    }
    ctx.out
}

#[cfg(test)]
mod tests;

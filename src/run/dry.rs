//! The dry run (`--dry-run`) as a transport of its own: every command a test would send is
//! listed on the run's console instead of sent, and what it would need on its node is noted
//! ([`Needs`]: programs, `sudo`, the node's RDMA devices) for the read-only preflight
//! (`run::preflight`), which checks exactly that. Every command answers
//! [`TransportError::NotRun`], which the primitives turn into the dry run's outcome.

use super::observer::{Event, Observer};
use crate::inventory::{Node, TransportKind};
use crate::transport::{CmdOutput, CmdRequest, Transport, TransportError};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// The dry run's transport, for one command: the run's console (the listing), the needs it
/// notes, and the transport every node is forced to (`--replay`), which tells a remote node.
pub(crate) struct DryRun<'a> {
    pub observer: &'a dyn Observer,
    pub needs: &'a Needs,
    pub force: Option<&'a TransportKind>,
    /// The test the listed command is for ("" outside one, or on a helper thread).
    pub test: &'a str,
}

impl Transport for DryRun<'_> {
    fn run(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        let line = format!("{}: {}", node.name, listed(req));
        self.observer.event(&Event::Listed { line: &line });
        if remote(self.force, node) {
            self.needs.tool(&node.name, "timeout", self.test);
        }
        if req.sudo {
            self.needs.sudo(&node.name, self.test);
        }
        Err(TransportError::NotRun {
            node: node.name.clone(),
            command: req.command.clone(),
        })
    }
}

/// What the selected tests would need on one node, each with the tests that need it.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NodeNeeds {
    pub tools: BTreeMap<String, BTreeSet<String>>,
    pub sudo: BTreeSet<String>,
    pub rdma: BTreeSet<String>,
}

/// What a dry run found the selected tests would need, per node (filled from any thread).
#[derive(Debug, Default)]
pub struct Needs {
    nodes: Mutex<BTreeMap<String, NodeNeeds>>,
}

impl Needs {
    /// A need of `test` ("": of no test, the node's need only) on `node`.
    fn add(&self, node: &str, test: &str, f: impl FnOnce(&mut NodeNeeds, String)) {
        let test = test.to_string();
        let mut m = self.nodes.lock().unwrap_or_else(|p| p.into_inner());
        f(m.entry(node.to_string()).or_default(), test);
    }
    fn note(set: &mut BTreeSet<String>, test: String) {
        if !test.is_empty() {
            set.insert(test);
        }
    }
    pub fn tool(&self, node: &str, tool: &str, test: &str) {
        self.add(node, test, |n, t| {
            Self::note(n.tools.entry(tool.to_string()).or_default(), t)
        });
        if is_rdma_tool(tool) {
            self.rdma(node, test);
        }
    }
    pub fn sudo(&self, node: &str, test: &str) {
        self.add(node, test, |n, t| {
            Self::note(&mut n.sudo, t);
            n.tools.entry("sudo".into()).or_default();
        });
    }
    pub fn rdma(&self, node: &str, test: &str) {
        self.add(node, test, |n, t| Self::note(&mut n.rdma, t));
    }
    /// What the node's tests need (None: no selected test sends it a command).
    pub fn get(&self, node: &str) -> Option<NodeNeeds> {
        let m = self.nodes.lock().unwrap_or_else(|p| p.into_inner());
        m.get(node).cloned()
    }
    pub fn all(&self) -> BTreeMap<String, NodeNeeds> {
        self.nodes.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Programs that talk to RDMA devices: a node whose tests run one has its inventory devices
/// checked.
pub(crate) fn is_rdma_tool(tool: &str) -> bool {
    let name = tool.rsplit('/').next().unwrap_or(tool);
    name.starts_with("ib_")
        || name.ends_with("_perf")
        || matches!(name, "rdma" | "ibdev2netdev" | "ibv_devinfo" | "ibstat")
}

/// A command as a dry run lists it: `[sudo -n] [env NAME=… ...] COMMAND`. A listing shows the
/// names of the variables a command gets, never their values: a name says nothing reliable
/// about whether its value is a secret (`AUTH`, `NCCL_IB_CRED`), and a real run keeps every
/// value out of argv and the reports too.
pub(crate) fn listed(req: &CmdRequest) -> String {
    let mut s = String::new();
    if req.sudo {
        s.push_str("sudo -n ");
    }
    if !req.env.is_empty() {
        s.push_str("env ");
        for (k, _) in &req.env {
            s.push_str(&format!("{k}=… "));
        }
    }
    s.push_str(&req.command);
    s
}

/// Whether commands to this node go through the node-side wrapper that needs `timeout`
/// (every remote node; a replayed node stands for one). `force`: `--replay`'s transport.
pub(crate) fn remote(force: Option<&TransportKind>, node: &Node) -> bool {
    !matches!(force.unwrap_or(&node.transport), TransportKind::Local)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_are_kept_per_node_with_their_tests() {
        let n = Needs::default();
        let t = "step 3 [a]";
        n.tool("a", "ib_write_bw", t);
        n.tool("a", "ping", t);
        n.sudo("b", t);
        n.tool("a", "ping", "");
        let a = n.get("a").unwrap();
        assert_eq!(
            a.tools.keys().collect::<Vec<_>>(),
            vec!["ib_write_bw", "ping"]
        );
        assert!(a.tools["ib_write_bw"].contains("step 3 [a]"));
        assert!(
            a.rdma.contains("step 3 [a]"),
            "a perftest program uses RDMA"
        );
        let b = n.get("b").unwrap();
        assert!(b.tools.contains_key("sudo") && b.rdma.is_empty());
        assert!(is_rdma_tool("/home/u/nccl-tests/build/all_reduce_perf"));
        assert!(!is_rdma_tool("ping"));
    }
}

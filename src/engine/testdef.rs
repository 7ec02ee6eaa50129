//! What a script's top level registers: the tests the runner runs later (plain Rust; the Rhai
//! functions that fill the registry are in `bindings/test_fns.rs`).

use crate::primitives::NodeRef;
use rhai::FnPtr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone)]
pub struct TestDef {
    pub name: String,
    /// Set for `test_each` testcases: the node passed to the closure.
    pub node: Option<NodeRef>,
    pub func: FnPtr,
    pub timeout: Option<Duration>,
    pub tags: Vec<String>,
    pub retries: u32,
    /// Option `confirm: N`: a measured failure (not an error) is measured again up to N times
    /// before it is a failure; a re-measurement that passes makes the test flaky.
    pub confirm: u32,
    /// Needs `--allow-changes` (option `changes: true`); skipped without it.
    pub changes: bool,
    pub line: Option<usize>,
    /// Testcases registered by one `test_each` (or one round of `test_pairs`) share a group
    /// and run concurrently.
    pub group: Option<usize>,
    /// `test_pairs` testcases: the second node passed to the closure (`|a, b|`).
    pub peer: Option<NodeRef>,
    /// `test_pairs` testcases: (round, number of rounds), 1-based.
    pub round: Option<(usize, usize)>,
    /// `test_pairs` with `rounds: false`: the group's pairs run together within these limits.
    pub at_once: Option<super::pair_plan::AtOnce>,
    /// Known at registration to be an error (a pair check over fewer than two nodes, a test
    /// option that cannot be read): the testcase is reported as this error without running
    /// the closure; the script's other tests still run.
    pub error: Option<String>,
}

#[derive(Default)]
pub struct Registry {
    pub tests: Vec<TestDef>,
    groups: usize,
    /// Names of the script's `for` loop variables (see `snapshot_loop_captures` in `bindings/test_fns.rs`).
    pub loop_vars: std::collections::HashSet<String>,
    /// Hashes of the registered (name, node) keys: a name is compared with the tests only on
    /// a hash match (a 1000-node mesh registers 999,000 testcases).
    keys: std::collections::HashSet<u64>,
}

pub(crate) type SharedRegistry = Arc<Mutex<Registry>>;

impl Registry {
    /// A new group of testcases that run concurrently (one `test_each`, one round of
    /// `test_pairs`).
    pub fn new_group(&mut self) -> usize {
        self.groups += 1;
        self.groups
    }

    /// `name`, or `name (2)`, `name (3)`, ... when a test of that name (on that node) is
    /// registered already: GitLab keeps only the first of duplicate (classname, name) pairs.
    /// The name returned is taken (recorded for the next call).
    pub fn unique_name(&mut self, name: &str, node: Option<&str>) -> String {
        let mut unique = name.to_string();
        let mut n = 2;
        while self.has(&unique, node) {
            unique = format!("{name} ({n})");
            n += 1;
        }
        self.keys.insert(Self::key(&unique, node));
        unique
    }

    fn key(name: &str, node: Option<&str>) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault};
        BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .hash_one((name, node))
    }

    /// Whether a test of this name on this node is registered already.
    fn has(&self, name: &str, node: Option<&str>) -> bool {
        self.keys.contains(&Self::key(name, node))
            && self
                .tests
                .iter()
                .any(|t| t.name == name && t.node.as_ref().map(|x| x.name()) == node)
    }
}

//! What a script's top level registers: the tests the runner runs later (plain Rust; the Rhai
//! functions that fill the registry are in `bindings/registry.rs`).

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
    /// Known at registration to be an error (a pair check over fewer than two nodes, a test
    /// option that cannot be read): the testcase is reported as this error without running
    /// the closure; the script's other tests still run.
    pub error: Option<String>,
}

#[derive(Default)]
pub struct Registry {
    pub tests: Vec<TestDef>,
    groups: usize,
    /// Names of the script's `for` loop variables (see `snapshot_loop_captures` in `bindings/registry.rs`).
    pub loop_vars: std::collections::HashSet<String>,
}

pub type SharedRegistry = Arc<Mutex<Registry>>;

impl Registry {
    /// A new group of testcases that run concurrently (one `test_each`, one round of
    /// `test_pairs`).
    pub fn new_group(&mut self) -> usize {
        self.groups += 1;
        self.groups
    }

    /// `name`, or `name (2)`, `name (3)`, ... when a test of that name (on that node) is
    /// registered already: GitLab keeps only the first of duplicate (classname, name) pairs.
    pub fn unique_name(&self, name: &str, node: Option<&str>) -> String {
        let mut unique = name.to_string();
        let mut n = 2;
        while self
            .tests
            .iter()
            .any(|t| t.name == unique && t.node.as_ref().map(|x| x.name()) == node)
        {
            unique = format!("{name} ({n})");
            n += 1;
        }
        unique
    }
}

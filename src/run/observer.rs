//! The one output channel of a run: what the runner, the tests and the dry run's listing tell
//! the console (or anything else) while the run works. Nothing below `cli` prints; the
//! console (`report::console`) implements this.

use super::model::TestResult;

pub trait Observer: Send + Sync {
    fn suite_started(&self, _name: &str, _tests: usize) {}
    fn test_started(&self, _name: &str) {}
    fn test_finished(&self, _t: &TestResult) {}
    /// A line a script printed (`print`, `log`, `debug`) in test `test` (or in the script's
    /// top level, [`super::context::TOP_LEVEL`]); it is in the test's output already.
    fn printed(&self, _test: &str, _line: &str) {}
    /// `--dry-run`: a line of the listing (a command not sent, a round of pairs).
    fn listed(&self, _line: &str) {}
}

/// Tells nobody (unit tests, and the environment that registers script functions only for
/// their declarations).
pub(crate) struct NoObserver;
impl Observer for NoObserver {}

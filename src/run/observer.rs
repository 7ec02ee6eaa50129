//! The one output channel of a run: what the runner, the tests, the dry run's listing and the
//! engine's warnings tell the console (or anything else) while the run works, as [`Event`]s.
//! Nothing below `cli` prints; the console (`report::console`) renders the events, pinned by
//! `tests/golden/console/`. The transports, below `run`, tell nobody: what they meet on the way
//! to a node comes back with the command's output, and `RunEnv` sends it on as a `Notice`.

use super::model::TestResult;

pub trait Observer: Send + Sync {
    fn event(&self, e: &Event);
}

/// Everything a run tells its reporters while it works, in one type (as cargo-nextest's
/// `TestEvent`): the runner, the tests, the dry run and the engine's own warnings send it;
/// the console renders it.
#[derive(Debug)]
pub enum Event<'a> {
    SuiteStarted {
        name: &'a str,
        tests: usize,
    },
    TestStarted {
        name: &'a str,
    },
    TestFinished(&'a TestResult),
    /// A line a script printed (`print`, `log`, `debug`) in test `test` (or in the script's
    /// top level, [`super::context::TOP_LEVEL`]); it is in the test's output already.
    Printed {
        test: &'a str,
        line: &'a str,
    },
    /// `--dry-run`: a line of the listing (a command not sent, a round of pairs).
    Listed {
        line: &'a str,
    },
    /// How a real run schedules pairs (a round, pairs at once): for `-v`.
    Scheduled {
        line: &'a str,
    },
    /// What a transport met on the way to a node (a login shell that prints, a changed host
    /// key accepted), beginning `NODE: `: `first` of its kind in this run (a warning), or
    /// another node's (for `-v`: a cluster's nodes usually share their set-up).
    Notice {
        line: &'a str,
        first: bool,
    },
    /// A warning about the script rather than one test (`warn` at its top level, a deprecated
    /// form), with where it is.
    Warning {
        line: &'a str,
    },
}

/// Tells nobody (unit tests, and the environment that registers script functions only for
/// their declarations).
pub(crate) struct NoObserver;
impl Observer for NoObserver {
    fn event(&self, _: &Event) {}
}

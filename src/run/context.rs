//! Per-test state of the thread that runs a test: deadline, metrics, warnings, command log,
//! printed output. Native functions reach it through [`with`].

use super::model::{CommandLog, Metric};
use super::observer::Observer;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) struct TestCtx {
    pub name: String,
    pub deadline: Instant,
    pub metrics: Vec<Metric>,
    pub warnings: Vec<String>,
    pub commands: Vec<CommandLog>,
    pub output: String,
    /// Failures found along the way that do not stop the test (a metric past its threshold).
    pub deferred_failures: Vec<String>,
    /// Assertions evaluated (a test with none, no metric and no command checked nothing).
    pub checks: usize,
    /// Commands run beyond [`MAX_COMMANDS`] (not logged).
    pub commands_dropped: usize,
    /// `test_pairs` testcases: (first node, second node).
    pub pair: Option<(String, String)>,
    /// `note(msg)` lines.
    pub notes: Vec<String>,
    /// Tool versions met by the test's commands ([`super::versions`]).
    pub tool_versions: Vec<super::model::ToolVersion>,
    /// What the test found wrong, on which part (`subject(...)`; unreachable nodes).
    pub subjects: Vec<super::model::Subject>,
    /// Platform profiles and expectations the test took ([`super::profile`]).
    pub profiles: Vec<super::profile::NodeProfile>,
    /// Where the lines the script prints go besides the test's output (none: only there).
    pub observer: Option<Arc<dyn Observer>>,
}

impl TestCtx {
    pub(crate) fn new(name: &str, timeout: Duration) -> TestCtx {
        TestCtx {
            name: name.to_string(),
            // A huge timeout (`--timeout 1e300` got this far) means "no deadline", never a panic.
            deadline: Instant::now()
                .checked_add(timeout)
                .unwrap_or_else(|| Instant::now() + Duration::from_secs(100 * 365 * 86_400)),
            metrics: vec![],
            warnings: vec![],
            commands: vec![],
            output: String::new(),
            deferred_failures: vec![],
            checks: 0,
            commands_dropped: 0,
            pair: None,
            notes: vec![],
            tool_versions: vec![],
            subjects: vec![],
            profiles: vec![],
            observer: None,
        }
    }

    /// The same context, its printed lines also told to `observer`.
    pub(crate) fn observed_by(self, observer: Arc<dyn Observer>) -> TestCtx {
        TestCtx {
            observer: Some(observer),
            ..self
        }
    }
}

thread_local! {
    static CTX: RefCell<Option<TestCtx>> = const { RefCell::new(None) };
    static FILE: RefCell<String> = const { RefCell::new(String::new()) };
}

pub(crate) fn install(ctx: TestCtx) {
    CTX.with(|c| *c.borrow_mut() = Some(ctx));
}

pub(crate) fn take() -> Option<TestCtx> {
    CTX.with(|c| c.borrow_mut().take())
}

pub(crate) fn with<R>(f: impl FnOnce(&mut TestCtx) -> R) -> Option<R> {
    CTX.with(|c| c.borrow_mut().as_mut().map(f))
}

/// A context for a thread working for the current test (`at_once`): its name, deadline,
/// pair and observer, nothing recorded yet; `None` outside a test. [`merge`] gives back what
/// it recorded.
pub(crate) fn fork() -> Option<TestCtx> {
    with(|c| TestCtx {
        deadline: c.deadline,
        pair: c.pair.clone(),
        observer: c.observer.clone(),
        ..TestCtx::new(&c.name, Duration::ZERO)
    })
}

/// What a [`fork`]ed context recorded, into the current test (commands within
/// [`MAX_COMMANDS`], the rest counted; printed lines appended in the order merged).
pub(crate) fn merge(child: TestCtx) {
    with(|c| {
        c.metrics.extend(child.metrics);
        c.warnings.extend(child.warnings);
        for cmd in child.commands {
            if c.commands.len() < MAX_COMMANDS {
                c.commands.push(cmd);
            } else {
                c.commands_dropped += 1;
            }
        }
        c.commands_dropped += child.commands_dropped;
        c.output.push_str(&child.output);
        c.deferred_failures.extend(child.deferred_failures);
        c.checks += child.checks;
        c.notes.extend(child.notes);
        c.tool_versions.extend(child.tool_versions);
        for s in child.subjects {
            if !c.subjects.contains(&s) {
                c.subjects.push(s);
            }
        }
        c.profiles.extend(child.profiles);
    });
}

/// Time left before this test's deadline; `None` outside a test (`fabcheck exec`: no test
/// deadline caps a command's own timeout).
pub(crate) fn remaining() -> Option<Duration> {
    with(|c| c.deadline.saturating_duration_since(Instant::now()))
}

pub(crate) fn past_deadline() -> bool {
    with(|c| Instant::now() >= c.deadline).unwrap_or(false)
}

/// The script file being run on this thread (for file:line in messages).
pub(crate) fn set_file(f: &str) {
    FILE.with(|x| *x.borrow_mut() = f.to_string());
}

pub(crate) fn file() -> String {
    FILE.with(|x| x.borrow().clone())
}

/// What a test's printed output keeps (head + tail) while it runs.
pub(crate) const OUTPUT_KEEP: usize = 1024 * 1024;

/// Commands logged per test; later ones are counted, not kept (their output is in `--record`).
pub(crate) const MAX_COMMANDS: usize = 2000;

/// Name of the context the script's top level runs in.
pub(crate) const TOP_LEVEL: &str = "(script top level)";

/// A line a script printed (`print`, `log`): into the current test's output (JUnit system-out,
/// JSON, HTML), and told to the test's observer (the console shows the script's top level,
/// and every test's lines with `-v`).
pub(crate) fn log_line(line: &str) {
    let observer = with(|c| {
        c.output.push_str(line);
        c.output.push('\n');
        // `loop { print(1 MB) }` must not grow without bound: keep head and latest tail.
        if c.output.len() > 2 * OUTPUT_KEEP {
            c.output = super::model::cap(&c.output, OUTPUT_KEEP);
        }
        c.observer.clone().map(|o| (o, c.name.clone()))
    });
    if let Some(Some((o, name))) = observer {
        o.event(&super::observer::Event::Printed { test: &name, line });
    }
}

/// What a primitive keeps in the running test besides its result: the one way it writes the
/// test's context, through the run environment it is given ([`super::env::RunEnv::keep`]).
#[derive(Debug)]
pub(crate) enum Kept {
    /// A line of the test's output, as the script's `print` gives.
    Line(String),
    /// A line of the test's output that is a warning of the test too.
    Warning(String),
    /// A node's platform profile and the expectation the test took from it.
    Profile(super::profile::NodeProfile),
    /// A part the test found wrong (a tool missing on a node), for the diagnosis.
    Subject(super::model::Subject),
}

impl Kept {
    /// Into the current test on this thread (nothing outside a test).
    pub(crate) fn into_test(self) {
        match self {
            Kept::Line(l) => log_line(&l),
            Kept::Warning(l) => {
                log_line(&l);
                with(|c| c.warnings.push(l));
            }
            Kept::Profile(p) => {
                with(|c| c.profiles.push(p));
            }
            Kept::Subject(s) => add_subject(s),
        }
    }
}

/// Record what the running test found wrong on which part (once per equal subject); nothing
/// outside a test.
pub(crate) fn add_subject(s: super::model::Subject) {
    with(|c| {
        if !c.subjects.contains(&s) {
            c.subjects.push(s);
        }
    });
}

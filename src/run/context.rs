//! Per-test state of the thread that runs a test: deadline, metrics, warnings, command log,
//! printed output. Native functions reach it through [`with`].

use super::model::{CommandLog, Metric};
use std::cell::RefCell;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct TestCtx {
    pub name: String,
    pub file: String,
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
}

impl TestCtx {
    pub fn new(name: &str, file: &str, timeout: Duration) -> TestCtx {
        TestCtx {
            name: name.to_string(),
            file: file.to_string(),
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
        }
    }
}

thread_local! {
    static CTX: RefCell<Option<TestCtx>> = const { RefCell::new(None) };
    static FILE: RefCell<String> = const { RefCell::new(String::new()) };
}

pub fn install(ctx: TestCtx) {
    CTX.with(|c| *c.borrow_mut() = Some(ctx));
}

pub fn take() -> Option<TestCtx> {
    CTX.with(|c| c.borrow_mut().take())
}

pub fn with<R>(f: impl FnOnce(&mut TestCtx) -> R) -> Option<R> {
    CTX.with(|c| c.borrow_mut().as_mut().map(f))
}

/// Time left before this test's deadline (a generous default outside tests).
pub fn remaining() -> Duration {
    with(|c| c.deadline.saturating_duration_since(Instant::now()))
        .unwrap_or(Duration::from_secs(600))
}

pub fn past_deadline() -> bool {
    with(|c| Instant::now() >= c.deadline).unwrap_or(false)
}

/// The script file being run on this thread (for file:line in messages).
pub fn set_file(f: &str) {
    FILE.with(|x| *x.borrow_mut() = f.to_string());
}

pub fn file() -> String {
    FILE.with(|x| x.borrow().clone())
}

/// What a test's printed output keeps (head + tail) while it runs.
pub const OUTPUT_KEEP: usize = 1024 * 1024;

/// Commands logged per test; later ones are counted, not kept (their output is in `--record`).
pub const MAX_COMMANDS: usize = 2000;

static ECHO: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// What scripts print is shown on the console (besides the reports): 0 nothing (`list`,
/// `check`), 1 the top level (`run`), 2 everything (`run -v`).
pub fn set_echo(level: u8) {
    ECHO.store(level, std::sync::atomic::Ordering::Relaxed);
}

/// Name of the context the script's top level runs in.
pub const TOP_LEVEL: &str = "(script top level)";

/// A line a script printed (`print`, `log`): into the current test's output (JUnit system-out,
/// JSON, HTML); on the console too for the script's top level, and for tests with `-v`.
pub fn log_line(line: &str) {
    let echo = ECHO.load(std::sync::atomic::Ordering::Relaxed);
    let shown = with(|c| {
        c.output.push_str(line);
        c.output.push('\n');
        // `loop { print(1 MB) }` must not grow without bound: keep head and latest tail.
        if c.output.len() > 2 * OUTPUT_KEEP {
            c.output = super::model::cap(&c.output, OUTPUT_KEEP);
        }
        if (c.name == TOP_LEVEL && echo >= 1) || echo >= 2 {
            Some(c.name.clone())
        } else {
            None
        }
    });
    match shown {
        None if echo >= 1 => println!("{}", crate::util::fmt::clean_text(line)),
        Some(Some(name)) if name == TOP_LEVEL => {
            println!("{}", crate::util::fmt::clean_text(line))
        }
        Some(Some(name)) => println!(
            "  [{}] {}",
            crate::util::fmt::clean_text(&name),
            crate::util::fmt::clean_text(line)
        ),
        _ => {}
    }
}

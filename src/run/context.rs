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
}

impl TestCtx {
    pub fn new(name: &str, file: &str, timeout: Duration) -> TestCtx {
        TestCtx {
            name: name.to_string(),
            file: file.to_string(),
            deadline: Instant::now() + timeout,
            metrics: vec![],
            warnings: vec![],
            commands: vec![],
            output: String::new(),
            deferred_failures: vec![],
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

/// Log a line into the current test's output (or stderr outside tests).
pub fn log_line(line: &str) {
    if with(|c| {
        c.output.push_str(line);
        c.output.push('\n');
    })
    .is_none()
    {
        tracing::info!("{line}");
    }
}

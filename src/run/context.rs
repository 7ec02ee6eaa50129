//! The running test as a value: its record ([`TestLog`]: deadline, metrics, warnings, command
//! log, printed output), owned by the runner per attempt. Bindings reach it through the call's
//! tag, primitives through the node (or the `&TestLog`) they are handed.

use super::model::{CommandLog, Metric};
use super::observer::Observer;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::ThreadId;
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

/// The running test's record, as a value: what a test (or the script's top level) records,
/// its deadline and its script file. The runner makes one per attempt; bindings reach it
/// through the call's tag, primitives through the [`crate::primitives::NodeRef`] (or the
/// `&TestLog`) they are handed. Clones share the one record.
#[derive(Clone)]
pub struct TestLog {
    ctx: Arc<Mutex<TestCtx>>,
    deadline: Instant,
    file: Arc<str>,
}

impl std::fmt::Debug for TestLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestLog").field("file", &self.file).finish()
    }
}

impl TestLog {
    /// A record of `ctx`, run from the script `file`.
    pub(crate) fn new(ctx: TestCtx, file: &str) -> TestLog {
        TestLog {
            deadline: ctx.deadline,
            ctx: Arc::new(Mutex::new(ctx)),
            file: file.into(),
        }
    }

    /// `f` over what the test recorded so far.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut TestCtx) -> R) -> R {
        f(&mut self.ctx.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// What the test recorded, taken out (the record is left empty).
    pub(crate) fn take(&self) -> TestCtx {
        self.with(|c| {
            let blank = TestCtx {
                deadline: c.deadline,
                ..TestCtx::new(&c.name, Duration::ZERO)
            };
            std::mem::replace(c, blank)
        })
    }

    /// The test's name.
    pub(crate) fn name(&self) -> String {
        self.with(|c| c.name.clone())
    }

    /// The script file the test runs from (for file:line in messages).
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    /// Time left before the test's deadline.
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// A record for a thread working for this test (`at_once`): its name, deadline, pair,
    /// observer and file, nothing recorded yet. [`TestLog::merge`] gives back what it recorded.
    pub(crate) fn fork(&self) -> TestLog {
        let ctx = self.with(|c| TestCtx {
            deadline: c.deadline,
            pair: c.pair.clone(),
            observer: c.observer.clone(),
            ..TestCtx::new(&c.name, Duration::ZERO)
        });
        TestLog::new(ctx, &self.file)
    }

    /// What a [`TestLog::fork`]ed record recorded, into this test (commands within
    /// [`MAX_COMMANDS`], the rest counted; printed lines appended in the order merged).
    pub(crate) fn merge(&self, child: TestCtx) {
        self.with(|c| {
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

    /// A line the script printed (`print`, `log`): into the test's output (JUnit system-out,
    /// JSON, HTML), and told to the test's observer (the console shows the script's top
    /// level, and every test's lines with `-v`).
    pub(crate) fn log_line(&self, line: &str) {
        let observer = self.with(|c| {
            c.output.push_str(line);
            c.output.push('\n');
            // `loop { print(1 MB) }` must not grow without bound: keep head and latest tail.
            if c.output.len() > 2 * OUTPUT_KEEP {
                c.output = super::model::cap(&c.output, OUTPUT_KEEP);
            }
            c.observer.clone().map(|o| (o, c.name.clone()))
        });
        if let Some((o, name)) = observer {
            o.event(&super::observer::Event::Printed { test: &name, line });
        }
    }

    /// Keep `k` in the test: what a primitive records besides what it returns.
    pub(crate) fn keep(&self, k: Kept) {
        match k {
            Kept::Line(l) => self.log_line(&l),
            Kept::Warning(l) => {
                self.log_line(&l);
                self.with(|c| c.warnings.push(l));
            }
            Kept::Profile(p) => self.with(|c| c.profiles.push(p)),
            Kept::Subject(s) => self.add_subject(s),
        }
    }

    /// Record what the test found wrong on which part (once per equal subject).
    pub(crate) fn add_subject(&self, s: super::model::Subject) {
        self.with(|c| {
            if !c.subjects.contains(&s) {
                c.subjects.push(s);
            }
        });
    }
}

/// The deadlines of the evaluations running now, by the thread that runs each. Rhai's
/// progress callback, which stops a script's own endless loop (`loop {}`) at its test's
/// deadline, is given no call context and no tag, and one engine serves every thread of the
/// fan-out: this is what it reads. The runner enters an attempt's record for the time of its
/// evaluation (an `at_once` call its fork), and [`Entered`] leaves it; it holds nothing else.
/// The callback runs at every operation of every script: the earliest deadline entered is kept
/// apart (an atomic), and the map is read only once that one has passed.
pub struct Running {
    deadlines: RwLock<HashMap<ThreadId, Instant>>,
    /// Nanoseconds after `base` of the earliest deadline entered (`u64::MAX`: none).
    earliest: AtomicU64,
    base: Instant,
}

impl Default for Running {
    fn default() -> Running {
        Running {
            deadlines: RwLock::default(),
            earliest: AtomicU64::new(u64::MAX),
            base: Instant::now(),
        }
    }
}

impl Running {
    /// `log`'s deadline is the one of evaluations on this thread until the guard is dropped.
    pub(crate) fn enter(&self, log: &TestLog) -> Entered<'_> {
        let thread = std::thread::current().id();
        let before = self.update(|m| m.insert(thread, log.deadline));
        Entered {
            running: self,
            thread,
            before,
        }
    }

    /// Is the evaluation on this thread past its test's deadline? (None entered: no.)
    pub(crate) fn past_deadline(&self) -> bool {
        let now = Instant::now();
        if self.nanos(now) < self.earliest.load(Ordering::Acquire) {
            return false;
        }
        let m = self.deadlines.read().unwrap_or_else(|p| p.into_inner());
        m.get(&std::thread::current().id())
            .is_some_and(|d| now >= *d)
    }

    /// `f` over the deadlines, the earliest kept up to date.
    fn update<R>(&self, f: impl FnOnce(&mut HashMap<ThreadId, Instant>) -> R) -> R {
        let mut m = self.deadlines.write().unwrap_or_else(|p| p.into_inner());
        let r = f(&mut m);
        let earliest = m.values().map(|d| self.nanos(*d)).min().unwrap_or(u64::MAX);
        self.earliest.store(earliest, Ordering::Release);
        r
    }

    fn nanos(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX)
    }
}

/// An evaluation entered in [`Running`]; dropped, the thread's earlier deadline (if any) is
/// back.
pub(crate) struct Entered<'a> {
    running: &'a Running,
    thread: ThreadId,
    before: Option<Instant>,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.running.update(|m| match self.before {
            Some(d) => m.insert(self.thread, d),
            None => m.remove(&self.thread),
        });
    }
}

/// What a test's printed output keeps (head + tail) while it runs.
pub(crate) const OUTPUT_KEEP: usize = 1024 * 1024;

/// Commands logged per test; later ones are counted, not kept (their output is in `--record`).
pub(crate) const MAX_COMMANDS: usize = 2000;

/// Name of the context the script's top level runs in.
pub(crate) const TOP_LEVEL: &str = "(script top level)";

/// What a primitive keeps in the running test besides its result: the one way it writes the
/// test's record, through the record it is handed ([`TestLog::keep`]).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn log(timeout: Duration) -> TestLog {
        TestLog::new(TestCtx::new("t", timeout), "t.rhai")
    }

    /// The progress callback's deadline is the one entered on its own thread, for as long as
    /// the evaluation is entered; an inner entry (`at_once` on the test's thread) gives the
    /// outer one back when it ends.
    #[test]
    fn a_deadline_is_the_entered_threads_own_while_entered() {
        let running = Running::default();
        let (past, later) = (log(Duration::ZERO), log(Duration::from_secs(3600)));
        assert!(!running.past_deadline(), "nothing entered");
        {
            let _outer = running.enter(&later);
            assert!(!running.past_deadline());
            {
                let _inner = running.enter(&past);
                assert!(running.past_deadline());
                std::thread::scope(|s| {
                    let other = s.spawn(|| running.past_deadline());
                    assert!(!other.join().unwrap(), "another thread's evaluation");
                });
            }
            assert!(!running.past_deadline(), "the outer deadline is back");
        }
        let _past = running.enter(&past);
        assert!(running.past_deadline());
    }

    /// A fork shares nothing recorded with its test until merged, and keeps its deadline.
    #[test]
    fn a_fork_records_apart_until_merged() {
        let test = log(Duration::from_secs(60));
        let fork = test.fork();
        fork.log_line("from the fork");
        fork.keep(Kept::Warning("w".into()));
        assert!(test.with(|c| c.output.is_empty()));
        assert_eq!(fork.deadline, test.deadline);
        test.merge(fork.take());
        let c = test.take();
        assert_eq!(c.output, "from the fork\nw\n");
        assert_eq!(c.warnings, ["w"]);
    }
}

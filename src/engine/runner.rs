//! Runs a compiled script: its top level registers tests, then the tests run in order
//! (`test_each` testcases concurrently up to the fan-out), each with its timeout and retries.

use super::pair_plan::AtOnce;
use super::signal::{classify, Ending, Outcome};
use super::testdef::TestDef;
use super::Script;
use crate::primitives::NodeRef;
use crate::run::cancel;
use crate::run::context::{self, TestCtx, TestLog};
use crate::run::env::RunEnv;
use crate::run::model::{cap, Attempt, Status, SuiteResult, TestResult};
use crate::run::observer::{Event, Observer};
use crate::util::pool;
use rhai::{Dynamic, Scope};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The warning of a passing test that made no assertion, recorded no metric and ran no command.
pub(crate) const CHECKED_NOTHING: &str =
    "checked nothing: the test made no assertion, recorded no metric and ran no command";

/// What a run of scripts needs besides the scripts: the test filters and the run's environment
/// (fan-out, `--allow-changes`, `--dry-run`, the default test timeout).
pub(crate) struct RunOptions {
    pub filters: Vec<String>,
    pub env: std::sync::Arc<crate::run::env::RunEnv>,
}

/// Size of the output kept per testcase in reports.
pub(crate) const OUTPUT_CAP: usize = 64 * 1024;

fn timestamp_ms() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Run the script's top level (registration). Returns an error testcase if it failed.
pub(crate) fn register_tests(
    script: &Script,
    timeout: Duration,
    env: &RunEnv,
) -> Option<TestResult> {
    let file = script.path.display().to_string();
    let top = TestCtx::new(context::TOP_LEVEL, timeout).observed_by(env.observer.clone());
    let log = TestLog::new(top, &file);
    let started = Instant::now();
    let res = {
        let _deadline = env.running.enter(&log);
        run_top_level(script, &log)
    };
    let ctx = Some(log.take());
    let err = res.err()?;
    let mut t = blank(script, context::TOP_LEVEL, None, Some(1));
    let (status, message, detail) = ending_to_outcome(&err, timeout, &file);
    t.status = if status == Status::Skipped {
        Status::Skipped
    } else {
        Status::Error
    };
    t.message = Some(format!("the script's top level stopped: {message}"));
    t.detail = detail;
    t.duration_ms = started.elapsed().as_millis() as u64;
    if let Some(c) = ctx {
        absorb(&mut t, c);
    }
    Some(t)
}

/// The script's top level, its evaluation tagged with `log` (what its calls record).
fn run_top_level(script: &Script, log: &TestLog) -> Result<(), Box<rhai::EvalAltResult>> {
    let (engine, ast) = (&script.engine, &script.ast);
    let mut global = engine.new_global_runtime_state();
    global.source = ast.source().map(Into::into);
    global.lib.push(ast.shared_lib().clone());
    global.embedded_module_resolver = ast.resolver().cloned();
    global.tag = Dynamic::from(log.clone());
    // `Engine::run_ast_with_scope` with the tag set: Rhai 1.27 takes no tag for a top level.
    #[allow(deprecated)]
    engine
        .eval_statements_raw(
            &mut global,
            &mut rhai::Caches::new(),
            &mut Scope::new(),
            ast.statements(),
        )
        .map(|_| ())
}

/// A test's closure called with `args`, its evaluation tagged with `log` (`FnPtr::call` with
/// the tag set).
fn call_test(
    script: &Script,
    func: &rhai::FnPtr,
    log: &TestLog,
    args: impl rhai::FuncArgs,
) -> Result<Dynamic, Box<rhai::EvalAltResult>> {
    let engine = &script.engine;
    let mut global = engine.new_global_runtime_state();
    global.lib.push(script.ast.shared_lib().clone());
    global.tag = Dynamic::from(log.clone());
    let ctx = rhai::NativeCallContext::new_with_all_fields(
        engine,
        func.fn_name(),
        None,
        &global,
        rhai::Position::NONE,
    );
    func.call_within_context::<Dynamic>(&ctx, args)
}

fn blank(script: &Script, name: &str, node: Option<String>, line: Option<usize>) -> TestResult {
    // One classname per script: Jenkins splits classnames at dots and would scatter a
    // `test_each` over per-node packages; the node is in the test name (`name [node]`).
    TestResult {
        node,
        file: script.path.display().to_string(),
        line,
        ..TestResult::new(name, &script.name.replace('.', "_"))
    }
}

fn absorb(t: &mut TestResult, c: TestCtx) {
    t.notes = c.notes;
    t.metrics = c.metrics;
    t.warnings = c.warnings;
    if c.commands_dropped > 0 {
        t.warnings.push(format!(
            "{} more commands ran than the {} kept in reports (--record keeps all)",
            c.commands_dropped,
            context::MAX_COMMANDS
        ));
    }
    t.commands.extend(c.commands);
    t.tool_versions.extend(c.tool_versions);
    t.subjects = c.subjects;
    t.profiles.extend(c.profiles);
    t.output.push_str(&c.output);
}

/// A test's status, message and detail from what ended it; message and detail capped here,
/// once (`fail(huge)`, `throw huge`: the message is kept in the test and in its attempts).
fn ending_to_outcome(
    err: &rhai::EvalAltResult,
    timeout: Duration,
    file: &str,
) -> (Status, String, Option<String>) {
    let cap = |m: &str| crate::run::model::cap(m, crate::run::model::MESSAGE_CAP);
    let (st, message, detail) = uncapped_outcome(err, timeout, file);
    (st, cap(&message), detail.as_deref().map(cap))
}

fn uncapped_outcome(
    err: &rhai::EvalAltResult,
    timeout: Duration,
    file: &str,
) -> (Status, String, Option<String>) {
    match classify(err, file) {
        Ending::Signal(s) => {
            // A dry run's stop only ends dry runs, whose outcomes become "listed" (`dry_outcome`).
            let st = Status::from(s.kind);
            (st, s.message, s.detail)
        }
        Ending::Terminated(tok) if tok == "interrupted" => {
            (Status::Error, "interrupted (Ctrl-C / SIGTERM)".into(), None)
        }
        Ending::Terminated(_) => (
            Status::Error,
            format!(
                "test timed out after {}",
                crate::util::duration::human(timeout)
            ),
            None,
        ),
        Ending::Runtime(m) => (Status::Error, m, None),
    }
}

/// Run one test with its retries: each attempt ([`attempt`], [`record`]), then the verdict
/// over them ([`finalize`]).
fn run_one(script: &Script, def: &TestDef, opts: &RunOptions) -> TestResult {
    let mut t = blank(
        script,
        &def.name,
        def.node.as_ref().map(|n| n.name().to_string()),
        def.line,
    );
    t.tags = def.tags.clone();
    t.peer = def.peer.as_ref().map(|n| n.name().to_string());
    t.round = def.round.map(|r| r.0);
    let started = Instant::now();
    t.started = Some(timestamp_ms());
    if let Some((status, message)) = not_run(def, opts) {
        t.status = status;
        t.message = Some(message);
        return t;
    }
    let timeout = def.timeout.unwrap_or(opts.env.test_timeout());
    let file = script.path.display().to_string();
    let mut ended_by = None;
    for n in 0..=def.retries + def.confirm {
        let a = attempt(script, def, &file, timeout, &opts.env);
        ended_by = a.ended_by;
        record(&mut t, def, n, a, opts);
        // `retries` run again after any red, `confirm` only after a measured failure. A dry
        // run lists a test once: a retry would list the same commands again.
        let again = n < def.retries || t.status == Status::Failure;
        let done = matches!(t.status, Status::Pass | Status::Skipped)
            || !again
            || cancel::interrupted()
            || opts.env.dry_run;
        if done {
            break;
        }
    }
    finalize(&mut t, def, opts, ended_by);
    t.duration_ms = started.elapsed().as_millis() as u64;
    t
}

/// Why a test is not run at all (the run was interrupted, it needs --allow-changes, it is
/// known at registration to be an error), as its status and message.
fn not_run(def: &TestDef, opts: &RunOptions) -> Option<(Status, String)> {
    if cancel::interrupted() {
        return Some((Status::Skipped, "not run: the run was interrupted".into()));
    }
    if def.changes && !opts.env.allow_changes {
        return Some((
            Status::Skipped,
            "needs --allow-changes (this test changes nodes)".into(),
        ));
    }
    def.error.clone().map(|e| (Status::Error, e))
}

/// What one attempt of a test gave.
struct AttemptEnd {
    status: Status,
    message: Option<String>,
    detail: Option<String>,
    /// What the test recorded (commands, output, metrics, warnings).
    ctx: Option<TestCtx>,
    /// It asserted, measured or ran something.
    checked: bool,
    ended_by: Option<Outcome>,
    duration_ms: u64,
}

/// One attempt: the test's closure called with its node (and peer), in a fresh context.
fn attempt(
    script: &Script,
    def: &TestDef,
    file: &str,
    timeout: Duration,
    env: &RunEnv,
) -> AttemptEnd {
    let mut tc = TestCtx::new(&def.name, timeout).observed_by(env.observer.clone());
    tc.pair = match (&def.node, &def.peer) {
        (Some(a), Some(b)) => Some((a.name().to_string(), b.name().to_string())),
        _ => None,
    };
    let log = TestLog::new(tc, file);
    let a_start = Instant::now();
    let res = {
        let _deadline = env.running.enter(&log);
        let (f, l) = (&def.func, &log);
        let node = |n: &NodeRef| Dynamic::from(n.recording_to(Some(log.clone())));
        match (&def.node, &def.peer) {
            (Some(a), Some(b)) => call_test(script, f, l, (node(a), node(b))),
            (Some(n), None) => call_test(script, f, l, (node(n),)),
            _ => call_test(script, f, l, ()),
        }
    };
    let mut ctx = Some(log.take());
    // A runtime error of the script (not an assertion, not a node's answer) is no fabric
    // finding: the diagnosis says so, apart from the fabric's causes.
    if let (Err(e), Some(c)) = (&res, ctx.as_mut()) {
        if matches!(classify(e, file), Ending::Runtime(_)) {
            let node = def
                .node
                .as_ref()
                .map(|n| n.name().to_string())
                .unwrap_or_default();
            c.subjects.push(crate::run::model::Subject::new(
                crate::run::model::Finding::Script,
                &node,
            ));
        }
    }
    let deferred = ctx
        .as_ref()
        .map(|c| c.deferred_failures.clone())
        .unwrap_or_default();
    let (status, message, detail) = match &res {
        Ok(_) if !deferred.is_empty() => (
            Status::Failure,
            Some(if deferred.len() == 1 {
                deferred[0].clone()
            } else {
                format!(
                    "{} (and {} more metrics past their thresholds)",
                    deferred[0],
                    deferred.len() - 1
                )
            }),
            Some(deferred.join("\n")),
        ),
        Ok(_) => (Status::Pass, None, None),
        Err(e) => {
            let (s, m, d) = ending_to_outcome(e, timeout, file);
            (s, Some(m), d)
        }
    };
    AttemptEnd {
        status,
        message,
        detail,
        checked: ctx
            .as_ref()
            .is_some_and(|c| c.checks > 0 || !c.metrics.is_empty() || !c.commands.is_empty()),
        ctx,
        ended_by: res
            .as_ref()
            .err()
            .and_then(|e| super::signal::kind_of(e, file)),
        duration_ms: a_start.elapsed().as_millis() as u64,
    }
}

/// Attempt `n` (0-based) into the testcase: its line in the output when there are retries,
/// its entry in `attempts`; the last attempt's measurements, every attempt's commands and
/// output; the testcase's status is the attempt's.
fn record(t: &mut TestResult, def: &TestDef, n: u32, a: AttemptEnd, opts: &RunOptions) {
    let most = def.retries + def.confirm + 1;
    if most > 1 {
        t.output.push_str(&format!(
            "--- attempt {} of at most {}: {}{}\n",
            n + 1,
            most,
            a.status.label(),
            a.message
                .as_ref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default()
        ));
    }
    t.metrics.clear();
    t.warnings.clear();
    if let Some(c) = a.ctx {
        absorb(t, c);
    }
    let readings: Vec<String> = t.metrics.iter().map(reading).collect();
    if most > 1 && !readings.is_empty() {
        t.output.push_str(&format!(
            "--- readings of attempt {}: {}\n",
            n + 1,
            readings.join(", ")
        ));
    }
    t.attempts.push(Attempt {
        status: a.status,
        message: a.message.clone(),
        duration_ms: a.duration_ms,
        readings,
    });
    if a.status == Status::Pass && !a.checked && !opts.env.dry_run {
        // A pass that looked at nothing is not evidence: say so everywhere.
        t.warnings.push(CHECKED_NOTHING.into());
        t.output.push_str(&format!("warning: {CHECKED_NOTHING}\n"));
    }
    t.status = a.status;
    t.message = a.message;
    t.detail = a.detail;
}

/// After the last attempt: a pass after failed attempts is flaky, a dry run's outcome is its
/// listing, the output is capped.
fn finalize(t: &mut TestResult, def: &TestDef, opts: &RunOptions, ended_by: Option<Outcome>) {
    let reds = t
        .attempts
        .iter()
        .filter(|a| a.status != Status::Pass)
        .count();
    if t.status == Status::Pass && reds > 0 {
        t.flaky = true;
        t.warnings.push(flaky_words(t, reds));
    } else if t.status == Status::Failure && def.confirm > 0 && t.attempts.len() > 1 {
        t.notes.push(format!(
            "confirmed: failed all {} measurements ({})",
            t.attempts.len(),
            attempt_readings(t)
        ));
    }
    if opts.env.dry_run && t.status != Status::Skipped {
        dry_outcome(t, ended_by);
    }
    t.output = cap(&t.output, OUTPUT_CAP);
}

/// `name=value unit` of one metric, as the attempts list it.
fn reading(m: &crate::run::model::Metric) -> String {
    let v = crate::util::fmt::fmt_num(m.value);
    format!("{}={v} {}", m.name, m.unit).trim_end().to_string()
}

/// Every attempt's readings, `1: a=.., 2: a=..`, or its message where it measured nothing.
fn attempt_readings(t: &TestResult) -> String {
    let each = t.attempts.iter().enumerate().map(|(i, a)| {
        let r = if a.readings.is_empty() {
            a.message.clone().unwrap_or_else(|| a.status.label().into())
        } else {
            a.readings.join(", ")
        };
        format!("{}: {}", i + 1, crate::run::model::cap(&r, 200))
    });
    each.collect::<Vec<_>>().join("; ")
}

/// The flaky warning: which attempts failed, that the last passed, every reading.
fn flaky_words(t: &TestResult, reds: usize) -> String {
    format!(
        "flaky: {reds} of {} attempts failed, then it passed; not confirmed, not blamed: measure it again or watch it (readings {})",
        t.attempts.len(),
        attempt_readings(t)
    )
}

/// `--dry-run`: a test's outcome is its listing — skipped, "dry run: N commands listed", and
/// where the listing ended when the test did not run to its end. What is missing on the nodes
/// is the preflight's to say (`run::preflight`). A test that ended on an error of the script
/// itself ([`Outcome::ScriptError`]: a misspelt field) stays an error: the real run would
/// end there whatever the nodes answer.
fn dry_outcome(t: &mut TestResult, ended_by: Option<Outcome>) {
    let listed = t.commands.iter().filter(|c| c.dry_run).count();
    let said = t.message.clone().unwrap_or_default();
    let stopped = ended_by == Some(Outcome::DryRun);
    if ended_by == Some(Outcome::ScriptError) {
        t.detail = Some(format!(
            "dry run: {listed} command{} listed, then the test ends with this error, whatever the nodes answer",
            if listed == 1 { "" } else { "s" }
        ));
        return;
    }
    let ended = match t.status {
        Status::Pass => " (the whole test)".to_string(),
        _ if stopped => format!(", then the listing stops: {said}"),
        s => format!(", then the test would end ({}: {said})", s.label()),
    };
    t.detail = Some(format!(
        "dry run: commands listed, not run; the test's own outcome was {}{}",
        t.status.label(),
        if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        }
    ));
    t.status = Status::Skipped;
    t.message = Some(format!(
        "dry run: {listed} command{} listed{ended}",
        if listed == 1 { "" } else { "s" }
    ));
}

fn matches_filter(def: &TestDef, filters: &[String]) -> bool {
    filters.is_empty()
        || filters.iter().any(|f| {
            def.name.contains(f.as_str())
                || def
                    .tags
                    .iter()
                    .any(|t| f.strip_prefix("tag:") == Some(t.as_str()))
        })
}

/// The tests a run would produce (after filtering).
pub(crate) fn selected(script: &Script, filters: &[String]) -> Vec<TestDef> {
    with_selected(script, filters, |defs| defs.cloned().collect())
}

/// `f` over the tests a run would produce, without copying them (`fabcheck list` of a
/// 1000-node mesh: 999,000 testcases).
pub(crate) fn with_selected<R>(
    script: &Script,
    filters: &[String],
    f: impl FnOnce(&mut dyn Iterator<Item = &TestDef>) -> R,
) -> R {
    let reg = script.registry.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut reg.tests.iter().filter(|d| matches_filter(d, filters)))
}

/// Run a script: top level, then its tests. Always returns a result (nothing is lost).
pub(crate) fn run_suite(script: &Script, opts: &RunOptions, obs: &dyn Observer) -> SuiteResult {
    let started = Instant::now();
    let stamp = timestamp();
    let mut results: Vec<TestResult> = Vec::new();
    if let Some(t) = register_tests(script, opts.env.test_timeout(), &opts.env) {
        obs.event(&Event::TestFinished(&t));
        results.push(t);
    }
    let defs = selected(script, &opts.filters);
    obs.event(&Event::SuiteStarted {
        name: &script.name,
        tests: defs.len(),
    });
    let mut i = 0;
    while i < defs.len() {
        let group = defs[i].group;
        let mut j = i + 1;
        while group.is_some() && j < defs.len() && defs[j].group == group {
            j += 1;
        }
        let batch = &defs[i..j];
        if let Some((r, total)) = batch[0].round {
            // test_pairs: show the schedule (each node in at most one pair per round).
            let pairs: Vec<String> = batch
                .iter()
                .map(|d| {
                    format!(
                        "{} -> {}",
                        d.node.as_ref().map(|n| n.name()).unwrap_or("?"),
                        d.peer.as_ref().map(|n| n.name()).unwrap_or("?")
                    )
                })
                .collect();
            let line = format!("round {r}/{total}: {}", pairs.join(", "));
            obs.event(&if opts.env.dry_run {
                Event::Listed { line: &line }
            } else {
                Event::Scheduled { line: &line }
            });
        }
        let run = |_: usize, def: &TestDef| {
            obs.event(&Event::TestStarted { name: &def.name });
            let r = run_one(script, def, opts);
            obs.event(&Event::TestFinished(&r));
            r
        };
        let failed = |_: usize, def: &TestDef| {
            let r = panicked(script, def);
            obs.event(&Event::TestFinished(&r));
            r
        };
        let done = match batch[0].at_once {
            Some(at_once) => together(batch, at_once, opts, run, failed),
            None => {
                let workers = if batch.len() == 1 { 1 } else { opts.env.fanout };
                pool::map(batch, workers, run, failed)
            }
        };
        results.extend(done);
        i = j;
    }
    SuiteResult {
        name: script.name.clone(),
        file: script.path.display().to_string(),
        timestamp: stamp,
        duration_ms: started.elapsed().as_millis() as u64,
        tests: results,
    }
}

/// `test_pairs(…, #{ rounds: false })`: the pairs at once, in plan order, at most `per_node`
/// with a node as first and `per_node` with it as second (its SSH connection's channels, its
/// sshd's handshakes), at most `--fanout` x `per_node` (and the `fanout` option) in all.
fn together(
    batch: &[TestDef],
    at_once: AtOnce,
    opts: &RunOptions,
    run: impl Fn(usize, &TestDef) -> TestResult + Sync,
    failed: impl Fn(usize, &TestDef) -> TestResult + Sync,
) -> Vec<TestResult> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut slot = |n: Option<&NodeRef>| {
        let next = index.len();
        *index
            .entry(n.map(|n| n.name().to_string()).unwrap_or_default())
            .or_insert(next)
    };
    let keys: Vec<Vec<usize>> = batch
        .iter()
        .map(|d| vec![2 * slot(d.node.as_ref()), 2 * slot(d.peer.as_ref()) + 1])
        .collect();
    let line = format!(
        "{} pairs at once, at most {} per node as first and as second of a pair",
        batch.len(),
        at_once.per_node
    );
    opts.env.observer.event(&if opts.env.dry_run {
        Event::Listed { line: &line }
    } else {
        Event::Scheduled { line: &line }
    });
    let workers = opts
        .env
        .fanout
        .saturating_mul(at_once.per_node)
        .min(at_once.max);
    pool::map_capped(
        batch,
        workers,
        at_once.per_node,
        |k, _| keys[k].clone(),
        run,
        failed,
    )
}

fn panicked(script: &Script, def: &TestDef) -> TestResult {
    let mut t = blank(
        script,
        &def.name,
        def.node.as_ref().map(|n| n.name().to_string()),
        def.line,
    );
    t.status = Status::Error;
    t.message =
        Some("internal error: the test thread panicked (a fabcheck bug; please report it)".into());
    t
}

//! `fabcheck run`, `check`, `list`.

use super::{RunArgs, Target, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE};
use crate::engine::{self, assertions::typed_param, runner};
use crate::inventory::{parse_duration, Inventory, TransportKind};
use crate::primitives::{RunEnv, Transports};
use crate::report::{self, console::Console, model::RunResult};
use crate::transport::{self, cancel, Transport};
use rhai::Dynamic;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Files, directories (every `*.rhai`, sorted) and glob patterns → script paths.
pub fn expand_scripts(args: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for a in args {
        let p = Path::new(a);
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| format!("{a}: {e}"))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "rhai"))
                .collect();
            v.sort();
            if v.is_empty() {
                return Err(format!("{a}: the directory has no *.rhai script"));
            }
            out.extend(v);
        } else if p.exists() {
            out.push(p.to_path_buf());
        } else if a.contains(['*', '?', '[']) {
            let mut v: Vec<PathBuf> = glob::glob(a)
                .map_err(|e| format!("{a}: bad glob pattern: {e}"))?
                .filter_map(Result::ok)
                .collect();
            v.sort();
            if v.is_empty() {
                return Err(format!("{a}: the pattern matches no script"));
            }
            out.extend(v);
        } else {
            return Err(format!("{a}: no such script file or directory"));
        }
    }
    Ok(out)
}

pub fn parse_sets(sets: &[String]) -> Result<BTreeMap<String, Dynamic>, String> {
    let mut m = BTreeMap::new();
    for s in sets {
        let Some((k, v)) = s.split_once('=') else {
            return Err(format!("--set {s}: expected KEY=VALUE"));
        };
        if k.is_empty()
            || !k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
        {
            return Err(format!("--set {s}: `{k}` is not a valid parameter name"));
        }
        m.insert(k.to_string(), typed_param(v));
    }
    Ok(m)
}

/// Inventory from -i / -w (or one local node when neither is given).
pub fn load_inventory(t: &Target) -> Result<Inventory, String> {
    let mut inv = match (&t.inventory, &t.nodes) {
        (Some(p), _) => Inventory::load(p).map_err(|e| e.to_string())?,
        (None, Some(w)) => return Inventory::from_nodeset(w).map_err(|e| e.to_string()),
        (None, None) => return Ok(Inventory::local()),
    };
    if let Some(w) = &t.nodes {
        let keep: Vec<String> = inv
            .select(w)
            .map_err(|e| format!("-w {w}: {e}"))?
            .into_iter()
            .map(|n| n.name.clone())
            .collect();
        inv.nodes.retain(|n| keep.contains(&n.name));
    }
    Ok(inv)
}

#[derive(Default)]
pub struct EnvOptions {
    pub params: BTreeMap<String, Dynamic>,
    pub allow_changes: bool,
    pub dry_run: bool,
    pub fanout: Option<usize>,
    pub timeout: Option<Duration>,
    pub record: Option<PathBuf>,
    pub replay: Option<PathBuf>,
    pub stdlib: Option<PathBuf>,
}

impl EnvOptions {
    /// For commands that must not touch nodes (`check`, `list`, `doc`): every command is a
    /// dry run.
    pub fn dry(params: BTreeMap<String, Dynamic>) -> EnvOptions {
        EnvOptions {
            params,
            dry_run: true,
            ..Default::default()
        }
    }
}

pub fn build_env(inv: Inventory, o: EnvOptions) -> Result<Arc<RunEnv>, String> {
    let fanout = o.fanout.unwrap_or(inv.fanout).max(1);
    let wrap = |t: Arc<dyn Transport>| -> Result<Arc<dyn Transport>, String> {
        match &o.record {
            Some(dir) => Ok(Arc::new(
                transport::record::Recorder::new(t, dir.clone())
                    .map_err(|e| format!("--record {}: {e}", dir.display()))?,
            )),
            None => Ok(t),
        }
    };
    let transports = Transports {
        ssh: wrap(Arc::new(transport::ssh::SshTransport::new(fanout)))?,
        local: wrap(Arc::new(transport::local::LocalTransport))?,
        replay: Arc::new(transport::replay::ReplayTransport::new(o.replay.clone())),
        force: o.replay.as_ref().map(|_| TransportKind::Replay),
    };
    let stdlib_dir = o
        .stdlib
        .or_else(|| std::env::var_os("FABCHECK_STDLIB").map(PathBuf::from));
    Ok(Arc::new(RunEnv {
        inventory: inv,
        transports,
        params: Arc::new(o.params),
        allow_changes: o.allow_changes,
        dry_run: o.dry_run,
        fanout,
        stdlib_dir,
        timeout: o.timeout,
    }))
}

fn load_all(paths: &[PathBuf], env: &Arc<RunEnv>) -> Result<Vec<engine::Script>, i32> {
    let mut scripts = Vec::new();
    let mut failed = false;
    for p in paths {
        match engine::load(p, env) {
            Ok(s) => scripts.push(s),
            Err(diags) => {
                failed = true;
                for d in diags {
                    eprint!("{d}");
                }
            }
        }
    }
    if failed {
        Err(EXIT_USAGE)
    } else {
        Ok(scripts)
    }
}

fn usage(msg: impl std::fmt::Display) -> i32 {
    eprintln!("error: {msg}");
    EXIT_USAGE
}

pub fn check(scripts: &[String]) -> i32 {
    let paths = match expand_scripts(scripts) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let env = match build_env(Inventory::local(), EnvOptions::dry(BTreeMap::new())) {
        Ok(e) => e,
        Err(e) => return usage(e),
    };
    match load_all(&paths, &env) {
        Ok(s) => {
            for x in &s {
                println!("ok: {}", x.path.display());
            }
            EXIT_OK
        }
        Err(c) => c,
    }
}

pub fn list(scripts: &[String], target: &Target, sets: &[String], filters: &[String]) -> i32 {
    let (paths, inv, params) = match (
        expand_scripts(scripts),
        load_inventory(target),
        parse_sets(sets),
    ) {
        (Ok(p), Ok(i), Ok(s)) => (p, i, s),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return usage(e),
    };
    // Listing must not touch nodes: every command is a dry run.
    let env = match build_env(inv, EnvOptions::dry(params)) {
        Ok(e) => e,
        Err(e) => return usage(e),
    };
    let scripts = match load_all(&paths, &env) {
        Ok(s) => s,
        Err(c) => return c,
    };
    for s in &scripts {
        if let Some(t) = runner::register_tests(s, Duration::from_secs(60)) {
            eprintln!("{}: {}", s.path.display(), t.message.unwrap_or_default());
        }
        for d in runner::selected(s, filters) {
            println!("{}\t{}", s.name, d.name);
        }
    }
    EXIT_OK
}

pub fn run(a: RunArgs, quiet: bool) -> i32 {
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let paths = match expand_scripts(&a.scripts) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let params = match parse_sets(&a.set) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let timeout = match a.timeout.as_deref().map(parse_duration).transpose() {
        Ok(t) => t,
        Err(e) => return usage(format!("--timeout: {e}")),
    };
    let inv = match load_inventory(&a.target) {
        Ok(i) => i,
        Err(e) => return usage(e),
    };
    if a.replay.is_some() && a.record.is_some() {
        return usage("--record and --replay cannot be used together");
    }
    // The baseline is read before anything runs: a typo must not cost a maintenance window.
    let baseline = match &a.baseline {
        Some(p) => match report::json::load(p) {
            Ok(b) => Some((p.display().to_string(), b)),
            Err(e) => return usage(format!("--baseline: cannot use {}: {e}", p.display())),
        },
        None => None,
    };
    let simulation = inv.simulation.clone();
    let inventory_label = inv.source.as_ref().map(|p| p.display().to_string());
    let json_params: serde_json::Map<String, serde_json::Value> = params
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                rhai::serde::from_dynamic::<serde_json::Value>(v)
                    .unwrap_or(serde_json::Value::Null),
            )
        })
        .collect();
    let env = match build_env(
        inv,
        EnvOptions {
            params,
            allow_changes: a.allow_changes,
            dry_run: a.dry_run,
            fanout: a.fanout,
            timeout,
            record: a.record.clone(),
            replay: a.replay.clone(),
            stdlib: a.stdlib.clone(),
        },
    ) {
        Ok(e) => e,
        Err(e) => return usage(e),
    };
    let scripts = match load_all(&paths, &env) {
        Ok(s) => s,
        Err(c) => return c,
    };
    cancel::install_handlers();
    let console = Console::new(quiet);
    if let Some(sim) = &simulation {
        console.print_header(&format!("SIMULATED cluster: {sim}"));
    }
    let opts = runner::RunOptions {
        filters: a.filter.clone(),
        default_timeout: timeout.unwrap_or(Duration::from_secs(600)),
        fanout: env.fanout,
        allow_changes: a.allow_changes,
        dry_run: a.dry_run,
    };
    let mut suites = Vec::new();
    if a.dry_run {
        let reach = runner::reachability_suite(&env);
        for t in &reach.tests {
            crate::engine::runner::Observer::test_finished(&console, t);
        }
        suites.push(reach);
    }
    for s in &scripts {
        suites.push(runner::run_suite(s, &opts, &console));
    }
    let interrupted = cancel::interrupted();
    if interrupted {
        for t in env.transports.all() {
            t.cleanup();
        }
    }
    for t in env.transports.all() {
        t.close();
    }
    let mut run = RunResult {
        fabcheck_version: env!("CARGO_PKG_VERSION").to_string(),
        started: started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        inventory: inventory_label,
        simulation,
        interrupted,
        params: json_params,
        suites,
        tool_versions: vec![],
    };
    crate::report::collect_tool_versions(&mut run);
    // Unique names before the baseline comparison (its keys are the names the JSON keeps)...
    run.make_unique();
    if let Some((path, b)) = &baseline {
        if !interrupted {
            report::baseline::apply(&mut run, b, path);
            if let Some(t) = run.suites.last().and_then(|s| s.tests.first()) {
                use crate::engine::runner::Observer;
                console.suite_started("baseline", 1);
                console.test_finished(t);
            }
        }
    }
    // ...and again after it, in case a script's own test clashes with the `baseline` testcase.
    run.make_unique();
    let mut written = Vec::new();
    let mut write_failed = false;
    let mut write = |path: &Option<PathBuf>, what: &str, body: String| {
        if let Some(p) = path {
            match report::write_atomic(p, body.as_bytes()) {
                Ok(()) => written.push(format!("{what}: {}", p.display())),
                Err(e) => {
                    eprintln!("error: cannot write the {what} report {}: {e}", p.display());
                    write_failed = true;
                }
            }
        }
    };
    // Tests interrupt a run exactly here (an interrupt while the reports are written):
    // FABCHECK_TEST_REPORT_DELAY_MS pauses before the first report is written.
    if let Some(ms) = std::env::var("FABCHECK_TEST_REPORT_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        eprintln!("fabcheck: writing reports in {ms} ms (FABCHECK_TEST_REPORT_DELAY_MS)");
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    write(&a.junit, "JUnit", report::junit::render(&run));
    write(&a.json, "JSON", report::json::render(&run));
    if a.html.is_some() {
        write(&a.html, "HTML", report::html::render(&run));
    }
    console.summary(&run, &written);
    let c = run.counts();
    // A Ctrl-C that arrives while the reports are written still ends the run as interrupted
    // (the reports are complete: they were written before this point).
    if interrupted || cancel::interrupted() {
        EXIT_INTERRUPTED
    } else if c.failure > 0 || c.error > 0 || write_failed {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

//! `fabcheck run`: scripts against the inventory, then the reports.

use super::common::{
    build_env, check_report_paths, expand_scripts, load_all, load_inventory, parse_sets,
    parse_timeout, usage, EnvOptions,
};
use super::{RunArgs, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::engine::runner;
use crate::inventory::Inventory;
use crate::report::{self, console::Console};
use crate::run::cancel;
use crate::run::model::RunResult;
use crate::run::observer::Event;
use std::path::PathBuf;
use std::time::Instant;

/// Everything checked and loaded before a node is touched.
struct Prepared {
    env: std::sync::Arc<crate::run::env::RunEnv>,
    scripts: Vec<crate::engine::Script>,
    baseline: Option<(String, RunResult)>,
    simulation: Option<String>,
    replayed: Option<String>,
    inventory_label: Option<String>,
    params: serde_json::Map<String, serde_json::Value>,
}

pub fn run(a: RunArgs, quiet: bool, verbose: u8) -> i32 {
    let started = Instant::now();
    let started_wall = std::time::SystemTime::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let console = std::sync::Arc::new(Console::new(quiet, if verbose > 0 { 2 } else { 1 }));
    let p = match prepare(&a, console.clone()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let results = match results_folder(&a, &started_at) {
        Ok(r) => r,
        Err(code) => return code,
    };
    cancel::install_handlers(super::common::say);
    if let Some(sim) = &p.simulation {
        console.print_header(&format!("SIMULATED cluster: {sim}"));
    } else if let Some(r) = &p.replayed {
        console.print_header(&format!("REPLAYED: answers from {r}; no node is contacted"));
    }
    print_inventory_problems(&p);
    let suites = execute(&a, &p, &console);
    let interrupted = cancel::interrupted();
    let not_cleaned_up = end_transports(&p.env, interrupted);
    let mut run = RunResult {
        fabcheck_version: env!("CARGO_PKG_VERSION").to_string(),
        started: started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        inventory: p.inventory_label.clone(),
        simulation: p.simulation.clone(),
        replayed: p.replayed.clone(),
        interrupted,
        params: p.params.clone(),
        suites,
        tool_versions: vec![],
        diagnosis: vec![],
        unreachable: vec![],
        profiles: vec![],
        not_cleaned_up,
    };
    let baseline = p.baseline.as_ref().map(|(path, b)| (path.as_str(), b));
    if let Some(t) = crate::run::finish::finish(
        &mut run,
        baseline,
        &crate::run::diagnosis::Topology::of(&p.env.inventory),
    ) {
        use crate::run::observer::Observer;
        console.event(&Event::SuiteStarted {
            name: "baseline",
            tests: 1,
        });
        console.event(&Event::TestFinished(&t));
    }
    let (written, write_failed) = write_reports(&a, &run, results.as_deref());
    console.summary(&run, &written);
    if let Some(e) = filter_matched_nothing(&a, &p.scripts) {
        return usage(e);
    }
    let c = run.counts();
    // A Ctrl-C that arrives while the reports are written still ends the run as interrupted
    // (the reports are complete: they were written before this point).
    let code = if interrupted || cancel::interrupted() {
        EXIT_INTERRUPTED
    } else if c.failure > 0 || c.error > 0 || write_failed {
        EXIT_FAILED
    } else {
        EXIT_OK
    };
    // a dry run measures nothing: the last real run's gauges stay
    if let Some(dir) = a.prom.as_ref().filter(|_| !a.dry_run) {
        write_prom(dir, &run, code, started_wall);
    }
    code
}

/// `--prom DIR`: DIR/fabcheck-run.prom, written atomically (a temporary file in DIR, then a
/// rename: a run killed mid-write leaves the previous file). Not written: a warning.
fn write_prom(dir: &std::path::Path, run: &RunResult, code: i32, started: std::time::SystemTime) {
    let started_s = started
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as f64 / 1000.0)
        .unwrap_or(0.0);
    let text = crate::report::prom::render_run(run, code, started_s);
    let path = dir.join("fabcheck-run.prom");
    if let Err(e) = crate::util::target::write(&path, text.as_bytes()) {
        eprintln!(
            "warning: --prom: {} not written: {e}; the run's verdict stands",
            path.display()
        );
    }
}

/// End what the run left on the nodes (everything after an interrupt, else the commands whose
/// end is not known) and close the connections: the nodes that could not be cleaned up.
pub fn end_transports(
    env: &crate::run::env::RunEnv,
    interrupted: bool,
) -> Vec<crate::transport::Leftover> {
    let mut left = Vec::new();
    for t in env.transports.all() {
        left.extend(if interrupted {
            t.cleanup()
        } else {
            t.cleanup_pending()
        });
    }
    for t in env.transports.all() {
        t.close();
    }
    left
}

/// Arguments, inventory, baseline, scripts and `--set` keys: every usage error (exit 2) before
/// anything runs — a typo must not cost a maintenance window.
fn prepare(a: &RunArgs, console: std::sync::Arc<Console>) -> Result<Prepared, i32> {
    let paths = expand_scripts(&a.scripts).map_err(usage)?;
    let params = parse_sets(&a.set).map_err(usage)?;
    let timeout = parse_timeout(a.timeout.as_deref()).map_err(usage)?;
    check_report_paths(&[
        ("--junit", a.junit.as_deref()),
        ("--json", a.json.as_deref()),
        ("--html", a.html.as_deref()),
    ])
    .map_err(usage)?;
    let inv = load_inventory(&a.target).map_err(usage)?;
    if a.replay.is_some() && a.record.is_some() {
        return Err(usage("--record and --replay cannot be used together"));
    }
    if let Some(dir) = &a.record {
        let names: Vec<&str> = inv.nodes.iter().map(|n| n.name.as_str()).collect();
        crate::transport::recorder::check_dir(dir, &names).map_err(usage)?;
    }
    let baseline = match &a.baseline {
        Some(p) => Some((
            p.display().to_string(),
            report::json::load(p)
                .map_err(|e| usage(format!("--baseline: cannot use {}: {e}", p.display())))?,
        )),
        None => None,
    };
    let simulation = scenario_label(a, &inv).map_err(usage)?;
    let replayed = replay_source(a, &inv);
    let inventory_label = inv.source.as_ref().map(|p| p.display().to_string());
    let json_params = params.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let env = build_env(
        inv,
        EnvOptions {
            params,
            allow_changes: a.allow_changes,
            dry_run: a.dry_run,
            fanout: a.fanout,
            timeout,
            record: a.record.clone(),
            replay: a.replay.clone(),
            scenario: a.scenario.clone(),
            stdlib: a.stdlib.clone(),
            observer: Some(console),
            verbose: 0,
        },
    )
    .map_err(usage)?;
    let scripts = load_all(&paths, &env)?;
    // Every --set key must be one the run reads (run::settings, or the user's script's own
    // param calls), of its type.
    let (texts, modules) = script_sources(&scripts);
    let declared = crate::engine::params::for_run(&texts, &modules);
    crate::engine::params::check(&env.params, &declared).map_err(usage)?;
    Ok(Prepared {
        env,
        scripts,
        baseline,
        simulation,
        replayed,
        inventory_label,
        params: json_params,
    })
}

/// The transcript directories a run replays from: `--replay DIR`, else those of the nodes with
/// `transport = "replay"`, sorted, each once.
fn replay_dirs(a: &RunArgs, inv: &Inventory) -> Vec<PathBuf> {
    if let Some(d) = &a.replay {
        return vec![d.clone()];
    }
    let mut dirs: Vec<PathBuf> = inv
        .nodes
        .iter()
        .filter(|n| n.transport == crate::inventory::TransportKind::Replay)
        .filter_map(|n| n.replay_dir.clone())
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Where a run's answers come from when they are not from live nodes: `--replay DIR`, or the
/// transcripts of nodes with `transport = "replay"`.
fn replay_source(a: &RunArgs, inv: &Inventory) -> Option<String> {
    let dirs = replay_dirs(a, inv);
    let how = if a.replay.is_some() {
        "--replay"
    } else {
        "transport = \"replay\""
    };
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    (!dirs.is_empty()).then(|| format!("recorded transcripts in {} ({how})", shown.join(", ")))
}

/// The simulation label of the reports; with `--scenario NAME`, the scenario is checked in
/// every transcript directory the run replays from and named in the label.
fn scenario_label(a: &RunArgs, inv: &Inventory) -> Result<Option<String>, String> {
    let Some(name) = &a.scenario else {
        return Ok(inv.simulation.clone());
    };
    let dirs = replay_dirs(a, inv);
    if dirs.is_empty() {
        return Err(format!(
            "--scenario {name}: scenarios overlay replayed transcripts; no node of the inventory is replayed (transport = \"replay\" or --replay DIR)"
        ));
    }
    let mut desc = String::new();
    for d in &dirs {
        desc = crate::transport::replay::scenario_info(d, name)
            .map_err(|e| e.to_string())?
            .description;
    }
    let base = inv
        .simulation
        .clone()
        .unwrap_or_else(|| "replayed transcripts".into());
    Ok(Some(format!("{base}; fault scenario `{name}`: {desc}")))
}

/// Every script's suite; in a dry run (the scripts' commands listed), the preflight of what
/// they would need, first in the results.
fn execute(a: &RunArgs, p: &Prepared, console: &Console) -> Vec<crate::run::model::SuiteResult> {
    let opts = runner::RunOptions {
        filters: a.filter.clone(),
        env: p.env.clone(),
    };
    let mut suites = Vec::new();
    for s in &p.scripts {
        suites.push(runner::run_suite(s, &opts, console));
    }
    if a.dry_run {
        use crate::run::observer::Observer;
        let pre = crate::run::preflight::suite(&p.env);
        console.event(&Event::SuiteStarted {
            name: &pre.name,
            tests: pre.tests.len(),
        });
        for t in &pre.tests {
            console.event(&Event::TestFinished(t));
        }
        suites.insert(0, pre);
    }
    suites
}

/// Write every report asked for: (what was written, whether any write failed).
fn write_reports(
    a: &RunArgs,
    run: &RunResult,
    results: Option<&std::path::Path>,
) -> (Vec<String>, bool) {
    use std::io::Write;
    let mut written = Vec::new();
    let mut write_failed = false;
    let mut write = |path: &Option<PathBuf>, what: &str, body: String| {
        if let Some(p) = path {
            match report::write_atomic(p, body.as_bytes()) {
                Ok(made) => {
                    for d in made {
                        // Not eprintln: after SIGHUP the terminal may be gone (EIO), and
                        // the other reports must still be written.
                        let _ = writeln!(
                            std::io::stderr(),
                            "note: the folder {} of the {what} report did not exist; fabcheck \
                             made the folder",
                            d.display()
                        );
                    }
                    written.push(format!("{what}: {}", p.display()))
                }
                Err(e) => {
                    let _ = writeln!(
                        std::io::stderr(),
                        "error: cannot write the {what} report {}: {e}",
                        p.display()
                    );
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
    write(&a.junit, "JUnit", report::junit::render(run));
    write(&a.json, "JSON", report::json::render(run));
    if a.html.is_some() {
        write(&a.html, "HTML", report::html::render(run));
    }
    if let Some(dir) = results {
        let ok = [
            ("junit.xml", report::junit::render(run)),
            ("result.json", report::json::render(run)),
            ("report.html", report::html::render(run)),
        ]
        .into_iter()
        // Every report is tried and every failure named (a full disk: all three, not the
        // first alone).
        .map(|(name, body)| {
            report::write_atomic(&dir.join(name), body.as_bytes())
                .map_err(|e| {
                    let _ = writeln!(
                        std::io::stderr(),
                        "error: cannot write {}: {e}",
                        dir.join(name).display()
                    );
                })
                .is_ok()
        })
        .fold(0, |n, ok| n + usize::from(ok));
        if ok == 0 && std::fs::remove_dir(dir).is_ok() {
            // Made by this run and left empty: not a results folder that holds nothing.
            let _ = writeln!(
                std::io::stderr(),
                "note: none of the run's reports could be written in {}; the empty folder was \
                 removed",
                dir.display()
            );
        }
        let ok = ok == 3;
        if ok {
            written.push(format!(
                "Results: {} (junit.xml, result.json, report.html; --no-results: none)",
                dir.display()
            ));
        } else if !explicit_reports(a) {
            // The results folder is the run's only report: losing it is a failed run. With
            // --junit/--json/--html, those reports carry the verdict (written above).
            write_failed = true;
        }
    }
    (written, write_failed)
}

/// Whether the run was given a report file of its own (--junit, --json or --html).
fn explicit_reports(a: &RunArgs) -> bool {
    a.junit.is_some() || a.json.is_some() || a.html.is_some()
}

/// The working directory refuses a new folder (read-only mount, no write permission): not a
/// name taken by a file or another user's link, which stay refusals.
fn unwritable(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EROFS) | Some(libc::EACCES))
}

/// Where the per-run results folders go without --results.
const DEFAULT_RESULTS: &str = "fabcheck-results";

/// The longest script name in a results folder's name (the folder is `<start>-<script>`).
const RESULTS_SCRIPT_CHARS: usize = 64;

/// The run's results folder, made before the first test: `--results` DIR /
/// `<start time>-<first script>` (`-2`, `-3`... when a run started in the same second), by the
/// rules of every file fabcheck writes (`util::target`: folders reached without another user's
/// link, a new folder never an existing one). `None` with --no-results or --dry-run. A folder
/// under --results DIR that cannot be made is a usage error (exit 2) before anything runs,
/// unless --junit/--json/--html name the reports: then a warning, and the run goes on without
/// it; the default ./fabcheck-results that cannot be made is a warning too (issue 47: a green
/// run in a read-only working directory stays green).
fn results_folder(a: &RunArgs, started: &str) -> Result<Option<PathBuf>, i32> {
    if a.no_results || a.dry_run {
        return Ok(None);
    }
    let stamp: String = started
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect();
    let script = a
        .scripts
        .first()
        .map(|s| {
            let stem = std::path::Path::new(s.trim_end_matches('/'))
                .file_stem()
                .map(|x| x.to_string_lossy().into_owned())
                .unwrap_or_default();
            stem.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "._-".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .take(RESULTS_SCRIPT_CHARS)
                .collect::<String>()
        })
        .unwrap_or_default();
    let base = format!("{stamp}-{script}");
    let names: Vec<String> = std::iter::once(base.clone())
        .chain((2..1000).map(|n| format!("{base}-{n}")))
        .collect();
    let parent = a
        .results
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_RESULTS));
    match crate::util::target::make_new_folder(&parent, &names) {
        Ok((dir, _made)) => Ok(Some(dir)),
        Err(e) if explicit_reports(a) => {
            eprintln!(
                "warning: no results folder: cannot make a folder in {}: {e}; the reports \
                 asked for (--junit/--json/--html) are written as usual (--no-results, or \
                 --results DIR elsewhere, silences this)",
                parent.display()
            );
            Ok(None)
        }
        // The default folder where the working directory cannot take it (read-only, or not
        // this user's, under Slurm or cron): the run goes on, its verdict on the console and
        // in its exit code.
        Err(e) if a.results.is_none() && unwritable(&e) => {
            eprintln!(
                "warning: no results folder: cannot make {DEFAULT_RESULTS}/ in the working \
                 directory ({e}); the run goes on without reports: give --results DIR in a \
                 folder you can write, or --junit/--json/--html FILE"
            );
            Ok(None)
        }
        Err(e) => Err(usage(format!(
            "cannot make the results folder in {}: {e}; nothing was run. Give --results DIR \
             in a folder you can write, or --no-results with --junit/--json/--html FILE",
            parent.display()
        ))),
    }
}

/// A filter that selects nothing would pass having checked nothing: a usage error.
fn filter_matched_nothing(a: &RunArgs, scripts: &[crate::engine::Script]) -> Option<String> {
    if a.filter.is_empty()
        || scripts
            .iter()
            .any(|s| !runner::selected(s, &a.filter).is_empty())
    {
        return None;
    }
    let names: Vec<String> = scripts
        .iter()
        .flat_map(|s| runner::selected(s, &[]))
        .map(|d| d.name)
        .take(20)
        .collect();
    Some(format!(
        "--filter {} matched no test (tests: {}); use a substring of a test name or tag:NAME",
        a.filter.join(" --filter "),
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    ))
}

/// Where `param` is read: the scripts, the embedded stdlib and the module files the scripts'
/// imports read (never the other files of their folders).
/// Inventory mistakes against what the selected scripts read, each once, before any test
/// (also in a dry run).
fn print_inventory_problems(p: &Prepared) {
    let mut sources: Vec<String> = p.scripts.iter().map(|s| s.source.clone()).collect();
    // and the stdlib modules they import, and those these import
    let mut i = 0;
    while i < sources.len() {
        for (name, src) in crate::engine::stdlib::EMBEDDED {
            let imported = sources[i].contains(&format!("import \"{name}\""));
            if imported && !sources.iter().any(|s| s == src) {
                sources.push(src.to_string());
            }
        }
        i += 1;
    }
    let problems = crate::inventory::needs::problems(&p.env.inventory.nodes, &sources);
    if problems.is_empty() {
        return;
    }
    println!(
        "Inventory problems ({}), said once here (a field the scripts read and a node lacks makes the testcases that read it ERROR or SKIP):",
        problems.len()
    );
    for l in &problems {
        println!("  {l}");
    }
}

/// The run's scripts (file name, text) and the text of the module files beside them that their
/// imports read (the embedded stdlib's keys are rows of `run::settings`).
pub(super) fn script_sources(
    scripts: &[crate::engine::Script],
) -> (Vec<(String, String)>, Vec<String>) {
    let texts = scripts
        .iter()
        .map(|s| {
            let file = s
                .path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            (file, s.source.clone())
        })
        .collect();
    let mut modules = Vec::new();
    for s in scripts {
        modules.extend(
            s.modules
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .cloned(),
        );
    }
    (texts, modules)
}

//! What several commands share: script paths, `--set` values, the inventory from `-i`/`-w`,
//! the run environment, compiling scripts, usage errors.

use super::{Target, EXIT_USAGE};
use crate::engine;
use crate::inventory::{Inventory, TransportKind};
use crate::run::env::{RunEnv, Transports};
use crate::transport::{self, Transport};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A usage error: printed, exit 2.
pub fn usage(msg: impl std::fmt::Display) -> i32 {
    eprintln!("error: {msg}");
    EXIT_USAGE
}

/// A line the process says on stderr outside any run's console (the last resort after a
/// second signal, `transport::cancel`): the command line's channel.
pub fn say(line: &str) {
    eprintln!("{line}");
}

/// `--timeout VALUE` of `run` and `exec`: a duration above zero (a zero timeout would end
/// every command at once and error every test).
pub fn parse_timeout(v: Option<&str>) -> Result<Option<Duration>, String> {
    let Some(v) = v else { return Ok(None) };
    let d = crate::util::duration::parse_duration(v).map_err(|e| format!("--timeout: {e}"))?;
    if d.is_zero() {
        return Err(format!(
            "--timeout {v}: a timeout of zero would end every command at once; give a \
             positive duration like 30s or 5m (or leave --timeout out for the defaults)"
        ));
    }
    Ok(Some(d))
}

/// The report paths of a run, checked before anything runs: each a regular file of this user
/// or a new name, in a folder reached without another user's link, and no two the same.
pub fn check_report_paths(reports: &[(&str, Option<&Path>)]) -> Result<(), String> {
    let given: Vec<(&str, &Path)> = reports
        .iter()
        .filter_map(|(o, p)| p.map(|p| (*o, p)))
        .collect();
    for (i, a) in given.iter().enumerate() {
        crate::util::target::check(a.1).map_err(|e| format!("{} {}: {e}", a.0, a.1.display()))?;
        for b in &given[i + 1..] {
            if let Some(m) = crate::util::target::same_file(*a, *b) {
                return Err(m);
            }
        }
    }
    Ok(())
}

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

pub fn parse_sets(sets: &[String]) -> Result<BTreeMap<String, serde_json::Value>, String> {
    let mut m = BTreeMap::new();
    for s in sets {
        let Some((k, v)) = s.split_once('=') else {
            return Err(format!("--set {s}: expected KEY=VALUE"));
        };
        if !crate::util::names::valid_param_key(k) {
            return Err(format!("--set {s}: `{k}` is not a valid parameter name"));
        }
        m.insert(k.to_string(), typed_param(v));
    }
    Ok(m)
}

pub fn load_inventory(t: &Target) -> Result<Inventory, String> {
    let mut inv = match (&t.inventory, &t.nodes) {
        (Some(p), _) => Inventory::load(p).map_err(|e| e.to_string())?,
        (None, Some(w)) => return Inventory::from_nodeset(w).map_err(|e| e.to_string()),
        (None, None) => return Ok(Inventory::local()),
    };
    if let Some(w) = &t.nodes {
        inv.restrict(w).map_err(|e| format!("-w {w}: {e}"))?;
    }
    Ok(inv)
}

#[derive(Default)]
pub struct EnvOptions {
    pub params: BTreeMap<String, serde_json::Value>,
    pub allow_changes: bool,
    pub dry_run: bool,
    pub fanout: Option<usize>,
    pub timeout: Option<Duration>,
    pub record: Option<PathBuf>,
    pub replay: Option<PathBuf>,
    pub scenario: Option<String>,
    pub stdlib: Option<PathBuf>,
    /// The run's output channel; without one, the dry run's listing only (what scripts print
    /// is not shown).
    pub observer: Option<Arc<dyn crate::run::observer::Observer>>,
    /// `-v` for the console made when no observer is given (`exec`, `discover`).
    pub verbose: u8,
}

impl EnvOptions {
    /// For commands that must not touch nodes (`check`, `list`, `doc`): every command is a
    /// dry run.
    pub fn dry(params: BTreeMap<String, serde_json::Value>) -> EnvOptions {
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
                transport::recorder::Recorder::new(t, dir.clone())
                    .map_err(|e| format!("--record {}: {e}", dir.display()))?,
            )),
            None => Ok(t),
        }
    };
    let transports = Transports {
        ssh: wrap(Arc::new(transport::ssh::SshTransport::new(fanout)))?,
        local: wrap(Arc::new(transport::local::LocalTransport))?,
        replay: Arc::new(transport::replay::ReplayTransport::new(
            o.replay.clone(),
            o.scenario.clone(),
        )),
        force: o.replay.as_ref().map(|_| TransportKind::Replay),
    };
    let stdlib_dir = o
        .stdlib
        .or_else(|| std::env::var_os("FABCHECK_STDLIB").map(PathBuf::from));
    Ok(Arc::new(RunEnv {
        inventory: inv,
        transports,
        params: o.params,
        allow_changes: o.allow_changes,
        dry_run: o.dry_run,
        needs: Default::default(),
        fanout,
        stdlib_dir,
        timeout: o.timeout,
        observer: o.observer.unwrap_or_else(|| {
            let echo = if o.verbose > 0 { 2 } else { 0 };
            Arc::new(crate::report::console::Console::new(false, echo))
        }),
        slurm: crate::inventory::slurm::Allocation::from_env(),
        profiles: Default::default(),
        told: Default::default(),
        running: Default::default(),
    }))
}

pub fn load_all(paths: &[PathBuf], env: &Arc<RunEnv>) -> Result<Vec<engine::Script>, i32> {
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

/// `--set KEY=VALUE`: numbers and booleans are typed, the rest stays a string.
pub fn typed_param(v: &str) -> serde_json::Value {
    let t = v.trim();
    if let Ok(i) = t.parse::<i64>() {
        return serde_json::Value::from(i);
    }
    if let Ok(f) = t.parse::<f64>() {
        if f.is_finite() {
            return serde_json::Value::from(f);
        }
    }
    match t {
        "true" => serde_json::Value::Bool(true),
        "false" => serde_json::Value::Bool(false),
        _ => serde_json::Value::String(v.to_string()),
    }
}

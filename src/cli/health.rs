//! `fabcheck health`: one node's fabric judged where it runs, for Slurm's Prolog and
//! HealthCheckProgram and node_exporter's textfile collector (docs/continuous.md). The checks
//! are the embedded `scripts/node_health.rhai`, filtered by context; the verdict, the state
//! between runs and the gauges are `run::health` and `report::prom`.

use super::common::{build_env, parse_sets, usage, EnvOptions};
use super::{EXIT_INTERRUPTED, EXIT_USAGE};
use crate::engine::bindings::stash;
use crate::engine::runner;
use crate::inventory::{Inventory, TransportKind};
use crate::run::health::{self, Outcome, State, Verdict};
use crate::transport::cancel;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The checks `fabcheck health` runs, embedded: a node needs only the binary.
const CHECKS: &str = include_str!("../../scripts/node_health.rhai");
const CHECKS_FILE: &str = "node_health.rhai";

/// `fabcheck health --help`'s exit codes.
pub const HEALTH_EXIT_CODES_HELP: &str = "Exit codes:
  0  healthy: every check that ran passed (a check that could not run is UNKNOWN, listed)
  1  unhealthy: one line on stderr, `fabcheck: <part> <what>` (under 80 characters)
  2  usage or inventory error: nothing was judged
  3  interrupted (Ctrl-C, SIGTERM)
  4  unknown: the link and rail checks could not run (tools missing, no fabric found): nothing
     judged, never drained";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Context {
    /// Slurm's Prolog: local reads only, no Slurm command, no packet on the fabric.
    #[default]
    Prolog,
    /// Slurm's HealthCheckProgram: the prolog's checks, a counter-growth window and the link
    /// flaps in the kernel log since the last run.
    Healthcheck,
    /// Slurm's Epilog: the healthcheck's checks and loopback RDMA on each rail (traffic that
    /// stays in the node's own HCAs).
    Epilog,
}

impl Context {
    fn word(self) -> &'static str {
        match self {
            Context::Prolog => "prolog",
            Context::Healthcheck => "healthcheck",
            Context::Epilog => "epilog",
        }
    }

    /// The test tags this context runs (`scripts/node_health.rhai`).
    fn filters(self) -> Vec<String> {
        match self {
            Context::Prolog => vec!["tag:prolog".into()],
            Context::Healthcheck => vec!["tag:prolog".into(), "tag:healthcheck".into()],
            Context::Epilog => vec![
                "tag:prolog".into(),
                "tag:healthcheck".into(),
                "tag:epilog".into(),
            ],
        }
    }
}

#[derive(Args, Debug, Clone, Default)]
pub struct HealthArgs {
    /// Which checks: prolog (local reads, seconds), healthcheck (and a counter window), epilog.
    #[arg(long, value_enum, default_value_t = Context::Prolog)]
    pub context: Context,
    /// Inventory (site intent: expected speeds, vars); with --node, judge that node of it.
    /// Without: the node fabcheck runs on, as `fabcheck discover` finds it.
    #[arg(short = 'i', long = "inventory")]
    pub inventory: Option<PathBuf>,
    /// The node of the inventory to judge (default: $SLURMD_NODENAME, else the short hostname).
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
    /// Setting (repeatable): speed_mbps, gid_index, peermem, max_pre_fec_ber, health_window,
    /// undrain_after (docs/scripts.md).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Write DIR/fabcheck.prom (node_exporter's textfile collector), atomically.
    #[arg(long, value_name = "DIR")]
    pub prom: Option<PathBuf>,
    /// Where the counters and the healthy-run count are kept between runs (made 0700).
    #[arg(long, value_name = "DIR", default_value = "/var/lib/fabcheck")]
    pub state: PathBuf,
    /// Replay only: overlay fault scenario NAME on the transcripts (as for `run`).
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
    /// healthcheck/epilog only: drain the node when unhealthy (`scontrol update ... State=DRAIN
    /// Reason="fabcheck: <part> <what>"`), resume a node fabcheck drained after
    /// `undrain_after` healthy runs (default 2); a node drained for another reason is never
    /// touched. Slurm's name: $SLURMD_NODENAME, else --node, else the short hostname.
    #[arg(long)]
    pub slurm: bool,
}

/// Healthy runs in a row before a node fabcheck drained is resumed (`--set undrain_after`).
const UNDRAIN_AFTER: i64 = 2;

/// The cap of each Slurm command (`timeout -k 5 30 scontrol ...`): Slurm's own timeout for a
/// HealthCheckProgram is 60 s.
const SCONTROL_TIMEOUT: &str = "30";

/// The seconds between the two counter reads of the healthcheck window (default).
const WINDOW_S: i64 = 5;

pub fn health(a: &HealthArgs, verbose: u8) -> i32 {
    let started = std::time::SystemTime::now();
    let prepared = match prepare(a, verbose) {
        Ok(p) => p,
        Err(code) => return code,
    };
    cancel::install_handlers(super::common::say);
    let Prepared {
        env,
        script,
        node,
        state,
        state_note,
        undrain_after,
    } = prepared;
    let opts = runner::RunOptions {
        filters: a.context.filters(),
        env: env.clone(),
    };
    let suite = runner::run_suite(&script, &opts, env.observer.as_ref());
    let interrupted = cancel::interrupted();
    let _ = super::run::end_transports(&env, interrupted);
    if interrupted {
        return EXIT_INTERRUPTED;
    }
    let verdict = health::judge(&node, &suite.tests);
    let duration_s = started.elapsed().map(|d| d.as_secs_f64()).unwrap_or(0.0);
    let mut out = std::io::stdout().lock();
    if let Some(n) = state_note {
        let _ = writeln!(out, "note: fresh start, the state was not usable: {n}");
    }
    let passes = save_state(a, &node, state, &verdict, &mut out);
    if a.slurm {
        slurm(a, &verdict, passes, undrain_after, &mut out);
    }
    if let Some(dir) = &a.prom {
        let text = gauges(a, &node, &verdict, &suite.tests, started, duration_s);
        write_prom(dir, &text, &mut out);
    }
    summary(
        &mut out,
        &node,
        a.context,
        &verdict,
        &suite.tests,
        duration_s,
    );
    drop(out);
    say_verdict(&node, &verdict);
    verdict.code()
}

/// The one stderr line of an unhealthy or unknown run.
fn say_verdict(node: &str, v: &Verdict) {
    if let Some(line) = v.line() {
        let _ = writeln!(std::io::stderr(), "{line}");
    } else if *v == Verdict::Unknown {
        let _ = writeln!(
            std::io::stderr(),
            "fabcheck: unknown: the link and rail checks could not run on {node} (see stdout): not judged"
        );
    }
}

/// The text of DIR/fabcheck.prom for this run (times rounded to the millisecond).
fn gauges(
    a: &HealthArgs,
    node: &str,
    verdict: &Verdict,
    tests: &[crate::run::model::TestResult],
    started: std::time::SystemTime,
    duration_s: f64,
) -> String {
    let started_s = started
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let o = Outcome {
        node,
        context: a.context.word(),
        verdict,
        started_s: (started_s * 1000.0).round() / 1000.0,
        duration_s: (duration_s * 1000.0).round() / 1000.0,
        tests,
    };
    crate::report::prom::render(&o)
}

struct Prepared {
    env: Arc<crate::run::env::RunEnv>,
    script: crate::engine::Script,
    node: String,
    state: State,
    state_note: Option<String>,
    undrain_after: u32,
}

/// Settings, inventory, state folder and the checks: every usage error (exit 2) before a
/// node is read.
fn prepare(a: &HealthArgs, verbose: u8) -> Result<Prepared, i32> {
    let params = parse_sets(&a.set).map_err(usage)?;
    let window = match params.get("health_window") {
        Some(v) => v
            .as_i64()
            .filter(|s| (0..=60).contains(s))
            .ok_or_else(|| usage("--set health_window: seconds, 0 to 60"))?,
        None => WINDOW_S,
    };
    let undrain_after = match params.get("undrain_after") {
        Some(v) => v
            .as_i64()
            .filter(|k| (1..=1000).contains(k))
            .ok_or_else(|| usage("--set undrain_after: healthy runs, 1 to 1000"))?,
        None => UNDRAIN_AFTER,
    } as u32;
    if a.slurm && a.context == Context::Prolog {
        return Err(usage(
            "--slurm: only with --context healthcheck or epilog; in a Prolog, Slurm drains the \
             node itself when fabcheck exits non-zero (and a prolog must not call scontrol)",
        ));
    }
    let (inv, node) = inventory(a).map_err(usage)?;
    crate::util::target::private_folder(&a.state).map_err(|e| {
        usage(format!(
            "--state {}: {e}; nothing was judged (give --state DIR, a folder of its own)",
            a.state.display()
        ))
    })?;
    let (state, state_note) = health::load_state(&a.state, &node);
    let replayed = inv
        .nodes
        .iter()
        .any(|n| n.transport == TransportKind::Replay);
    let observer: Arc<dyn crate::run::observer::Observer> = if verbose > 0 {
        Arc::new(crate::report::console::Console::new(false, 2))
    } else {
        Arc::new(crate::run::observer::NoObserver)
    };
    let env = build_env(
        inv,
        EnvOptions {
            params,
            scenario: a.scenario.clone(),
            observer: Some(observer),
            ..Default::default()
        },
    )
    .map_err(usage)?;
    if a.scenario.is_some() && !replayed {
        return Err(usage(
            "--scenario: scenarios overlay replayed transcripts; the node is not replayed",
        ));
    }
    let script = crate::engine::load_text(Path::new(CHECKS_FILE), CHECKS.to_string(), &env)
        .map_err(|d| {
            for x in d {
                eprint!("{x}");
            }
            EXIT_USAGE
        })?;
    let modules: Vec<String> = script
        .modules
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let declared = crate::engine::params::for_run(&[(CHECKS_FILE.into(), CHECKS.into())], &modules);
    crate::engine::params::check(&env.params, &declared).map_err(usage)?;
    if let Some(c) = &state.counters {
        stash::stash_json(&format!("health:previous:{node}"), c);
    }
    if let Some(sp) = &state.speeds {
        stash::stash_json(&format!("health:previous_speeds:{node}"), sp);
    }
    if let Some(k) = &state.kernel_log {
        stash::stash_json(&format!("health:previous_kernel_log:{node}"), k);
    }
    // Replayed transcripts answer the second read themselves: no time need pass between.
    let secs = if replayed && !env.params.contains_key("health_window") {
        0
    } else {
        window
    };
    stash::stash_json("health:window", &serde_json::Value::from(secs));
    Ok(Prepared {
        env,
        script,
        node,
        state,
        state_note,
        undrain_after,
    })
}

/// The node's name where it runs: $SLURMD_NODENAME, else the short hostname.
fn own_name() -> String {
    if let Some(n) = std::env::var("SLURMD_NODENAME")
        .ok()
        .filter(|n| !n.is_empty())
    {
        return n;
    }
    let mut buf = [0u8; 256];
    // SAFETY: a writable buffer of the given length; gethostname NUL-terminates within it.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    let full = if r == 0 {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "localhost".into()
    };
    full.split('.').next().unwrap_or("localhost").to_string()
}

/// The inventory of the one node judged, and its name. With -i: that node of the inventory
/// (the others stay the ground truth of whose addresses these are), read where fabcheck runs
/// (an SSH node is read locally; a replayed one stays replayed). Without: this machine as
/// `fabcheck discover` finds it.
fn inventory(a: &HealthArgs) -> Result<(Inventory, String), String> {
    let name = a.node.clone().unwrap_or_else(own_name);
    let Some(path) = &a.inventory else {
        if a.node.is_some() {
            return Err(
                "--node NAME needs -i INVENTORY (without one, the node is this machine)".into(),
            );
        }
        return discovered(&name);
    };
    let mut inv = Inventory::load(path).map_err(|e| e.to_string())?;
    if inv.node(&name).is_none() {
        let names: Vec<&str> = inv.nodes.iter().map(|n| n.name.as_str()).collect();
        return Err(format!(
            "{}: no node {name} in the inventory (nodes: {}); give --node NAME",
            path.display(),
            names.join(", ")
        ));
    }
    inv.restrict(&name)
        .map_err(|e| format!("--node {name}: {e}"))?;
    for n in &mut inv.nodes {
        if n.transport == TransportKind::Ssh {
            n.transport = TransportKind::Local;
        }
    }
    Ok((inv, name))
}

/// This machine's fabric as `fabcheck discover` reads it (interfaces, addresses, RDMA devices,
/// ports), on the local transport.
fn discovered(name: &str) -> Result<(Inventory, String), String> {
    let mut inv = Inventory::local();
    inv.nodes[0].name = name.to_string();
    let env = build_env(inv.clone(), EnvOptions::default())?;
    let n = crate::primitives::NodeRef::new(inv.nodes[0].clone(), &env);
    let found = crate::primitives::discover::discover(&n, &[])
        .map_err(|e| format!("{name}: the fabric could not be read here: {e}"))?;
    let node = &mut inv.nodes[0];
    node.interfaces = found.interfaces();
    node.fabric_ips = found.fabric_ips();
    node.rdma_devices = found.rdma_devices();
    node.ports = found.port_specs();
    Ok((inv, name.to_string()))
}

/// Keep the counters the run read and the healthy-run count (a failure to keep them is said,
/// never the verdict).
fn save_state(
    a: &HealthArgs,
    node: &str,
    mut state: State,
    v: &Verdict,
    out: &mut impl Write,
) -> u32 {
    if let Some(c) = stash::stashed_json(&format!("health:current:{node}")) {
        state.counters = Some(c);
    }
    // whatever the verdict: a flap is counted once
    if let Some(k) = stash::stashed_json(&format!("health:current_kernel_log:{node}")) {
        state.kernel_log = Some(k);
    }
    // the speeds of a healthy run only: a drop stays flagged until the link is back
    if matches!(v, health::Verdict::Healthy) {
        if let Some(sp) = stash::stashed_json(&format!("health:current_speeds:{node}")) {
            state.speeds = Some(sp);
        }
    }
    state.passes = health::next_passes(state.passes, v);
    let path = health::state_path(&a.state, node);
    let body = serde_json::to_string_pretty(&state).unwrap_or_default();
    if let Err(e) = crate::util::target::write(&path, body.as_bytes()) {
        let _ = writeln!(
            out,
            "warning: the state was not kept in {}: {e}",
            path.display()
        );
    }
    state.passes
}

/// The node's name in Slurm: $SLURMD_NODENAME (slurmd sets it for its programs), else the
/// node judged (--node), else the short hostname.
fn slurm_name(a: &HealthArgs) -> String {
    match std::env::var("SLURMD_NODENAME") {
        Ok(n) if !n.is_empty() => n,
        _ => a.node.clone().unwrap_or_else(own_name),
    }
}

/// `scontrol ARGS` under a timeout (its processes killed past it): stdout, or what went wrong.
fn scontrol(args: &[&str]) -> Result<String, String> {
    let o = std::process::Command::new("timeout")
        .args(["-k", "5", SCONTROL_TIMEOUT, "scontrol"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run timeout/scontrol: {e}"))?;
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    if o.status.success() {
        return Ok(out);
    }
    let err = String::from_utf8_lossy(&o.stderr);
    Err(format!(
        "scontrol {} failed ({}): {}",
        args.join(" "),
        o.status,
        crate::report::one_line(&format!("{out} {err}"))
    ))
}

/// `--slurm`: one read of the node's state, at most one update, said on stdout. A Slurm that
/// cannot be asked is said, never the verdict.
fn slurm(a: &HealthArgs, v: &Verdict, passes: u32, k: u32, out: &mut impl Write) {
    let name = slurm_name(a);
    let read = scontrol(&["show", "node", "-o", &name])
        .and_then(|t| crate::parse::scontrol::parse(&t).map_err(|e| e.to_string()));
    let n = match read {
        Ok(n) => n,
        Err(e) => {
            let _ = writeln!(out, "slurm: {name}: not read, nothing changed: {e}");
            return;
        }
    };
    let (action, say) = health::slurm_action(&n, v, passes, k);
    let node_arg = format!("NodeName={name}");
    let done = match &action {
        None => Ok(String::new()),
        Some(health::SlurmAction::Drain(reason)) => scontrol(&[
            "update",
            &node_arg,
            "State=DRAIN",
            &format!("Reason={reason}"),
        ]),
        Some(health::SlurmAction::Resume) => scontrol(&["update", &node_arg, "State=RESUME"]),
    };
    let _ = match done {
        Ok(_) => writeln!(out, "slurm: {name}: {say}"),
        Err(e) => writeln!(out, "slurm: {name}: {say} FAILED: {e}"),
    };
}

fn write_prom(dir: &Path, text: &str, out: &mut impl Write) {
    let path = dir.join("fabcheck.prom");
    if let Err(e) = crate::util::target::write(&path, text.as_bytes()) {
        let _ = writeln!(out, "warning: {} not written: {e}", path.display());
    }
}

/// What was judged, on stdout: the verdict, each check, and the checks that could not run.
fn summary(
    out: &mut impl Write,
    node: &str,
    c: Context,
    v: &Verdict,
    tests: &[crate::run::model::TestResult],
    secs: f64,
) {
    let word = match v {
        Verdict::Healthy => "healthy",
        Verdict::Unhealthy { .. } => "UNHEALTHY",
        Verdict::Unknown => "UNKNOWN (nothing judged)",
    };
    let _ = writeln!(
        out,
        "{node}: {word} ({}, {} checks, {secs:.2} s)",
        c.word(),
        tests.len()
    );
    for t in tests {
        let msg = t.message.as_deref().unwrap_or("");
        let _ = writeln!(
            out,
            "  {:5} {}{}{}",
            t.status.label(),
            health::check_name(t),
            if msg.is_empty() { "" } else { ": " },
            crate::report::one_line(msg)
        );
    }
    for u in health::unknown(tests) {
        let _ = writeln!(out, "UNKNOWN (not judged, not drained): {u}");
    }
}

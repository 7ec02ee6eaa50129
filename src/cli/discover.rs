//! `fabcheck discover HOSTS… [-i DEFAULTS.toml] [-o FILE] [--diff FILE]`: read the nodes'
//! fabric (read-only) and write a commented inventory, or list what differs from an existing
//! one (docs/discover.md). Exit 0: every node read (and nothing differs); 1: a node was not
//! reached, a node's entry has a problem (no fabric interface besides the management NIC, a
//! `--fabric` name matching nothing) or something differs; 2: usage.

use super::common::{build_env, usage, EnvOptions};
use super::{EXIT_FAILED, EXIT_OK};
use crate::inventory::discovered::{render, Discovery, Header};
use crate::inventory::{diff, nodeset, Inventory, Node};
use crate::primitives::{discover as prim, NodeRef};
use crate::run::cancel;
use crate::util::duration::parse_duration;
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug, Clone, Default)]
pub struct DiscoverArgs {
    /// Hosts to read: node sets (`spark-[01-02]`, `10.0.0.[11-12]`); default with --diff:
    /// the nodes of that file.
    pub hosts: Vec<String>,
    /// Defaults file: SSH settings (user, port, ssh_config, known_hosts, timeouts, transport)
    /// as for `-i slurm:DEFAULTS.toml`; only connection settings and vars are taken from it.
    #[arg(short = 'i', long = "inventory", value_name = "DEFAULTS.toml")]
    pub defaults: Option<PathBuf>,
    /// Write the inventory here (default, or `-`: stdout; without -o, nothing is printed with
    /// --diff). A link, device, FIFO, socket or folder here is refused before any node is read.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite -o FILE if it exists (a regular file of this user only).
    #[arg(long)]
    pub force: bool,
    /// Compare with this inventory: print what differs, exit 1 when something does. Without
    /// -i, its settings are the SSH settings.
    #[arg(long, value_name = "FILE")]
    pub diff: Option<PathBuf>,
    /// The fabric interfaces, named instead of found (names or globs, comma-separated:
    /// `--fabric 'enp1s0f*,ib0'`): for a node whose management and fabric share one NIC, or
    /// to leave interfaces out. A name that matches nothing on a node is a problem (exit 1).
    #[arg(long, value_name = "IFACE[,IFACE…]", value_delimiter = ',')]
    pub fabric: Vec<String>,
    /// Parallel nodes at most.
    #[arg(long)]
    pub fanout: Option<usize>,
    /// Cap of every command on the nodes (default 30s).
    #[arg(long)]
    pub timeout: Option<String>,
    /// Replay only: overlay fault scenario NAME on the transcripts (as for `run`).
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
}

/// The hosts asked for: the node sets given, else the nodes of the --diff file.
fn host_names(a: &DiscoverArgs, was: Option<&Inventory>) -> Result<Vec<String>, String> {
    if a.hosts.is_empty() {
        return match was {
            Some(w) => Ok(w.all_nodes().map(|n| n.name.clone()).collect()),
            None => {
                Err("discover needs HOSTS (a node set such as spark-[01-02]) or --diff FILE".into())
            }
        };
    }
    let mut names = Vec::new();
    for h in &a.hosts {
        for n in nodeset::expand(h, &Default::default()).map_err(|e| format!("HOSTS `{h}`: {e}"))? {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    Ok(names)
}

/// Paths in the written file must not depend on where it is written.
fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    })
}

fn settle_paths(n: &mut Node) {
    n.ssh_config = n.ssh_config.as_deref().map(absolute);
    n.replay_dir = n.replay_dir.as_deref().map(absolute);
}

/// The file of `-o`: `None` for stdout (no -o, or `-o -`).
fn output_file(a: &DiscoverArgs) -> Option<&Path> {
    a.output.as_deref().filter(|p| p.as_os_str() != "-")
}

/// `-o FILE` checked before any node is read, by the writer's own rules
/// ([`crate::util::target`]): a regular file of this user or a new name, in a folder reached
/// without another user's link; an existing file only with --force.
fn check_output(o: &Path, force: bool) -> Result<(), String> {
    crate::util::target::check(o).map_err(|e| {
        format!(
            "-o {}: {e} (`-o -`, or no -o, prints the inventory)",
            o.display()
        )
    })?;
    if !force && std::fs::symlink_metadata(o).is_ok() {
        return Err(format!(
            "-o {}: the file exists; give --force to overwrite it, or another file",
            o.display()
        ));
    }
    Ok(())
}

/// `--fabric` as glob patterns; a usage error for an empty word or one that is neither an
/// interface name nor a glob of one.
fn fabric_patterns(words: &[String]) -> Result<Vec<glob::Pattern>, String> {
    words
        .iter()
        .map(|w| {
            let plain: String = w.chars().filter(|c| !"*?[]!".contains(*c)).collect();
            let name_like =
                plain.is_empty() && !w.is_empty() || crate::util::names::valid_name(&plain);
            if !name_like {
                return Err(format!(
                    "--fabric {w:?}: not an interface name or a glob of one (letters, digits, \
                     -_.:@% and * ? [ ])"
                ));
            }
            glob::Pattern::new(w).map_err(|e| format!("--fabric {w:?}: {e}"))
        })
        .collect()
}

pub fn discover(a: &DiscoverArgs, verbose: u8) -> i32 {
    let fabric = match fabric_patterns(&a.fabric) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    if let Some(o) = output_file(a) {
        if let Err(e) = check_output(o, a.force) {
            return usage(e);
        }
    }
    let was = match &a.diff {
        Some(p) => match Inventory::load_file(p) {
            Ok(i) => Some(i),
            Err(e) => return usage(format!("--diff: {e}")),
        },
        None => None,
    };
    let names = match host_names(a, was.as_ref()) {
        Ok(n) => n,
        Err(e) => return usage(e),
    };
    let defaults = a.defaults.clone().or_else(|| a.diff.clone());
    let mut inv = match Inventory::for_names("HOSTS", &names, defaults.as_deref()) {
        Ok(i) => i,
        Err(e) => return usage(e),
    };
    inv.nodes.iter_mut().for_each(settle_paths);
    let timeout = match a.timeout.as_deref().map(parse_duration).transpose() {
        Ok(t) => t.or(Some(Duration::from_secs(30))),
        Err(e) => return usage(format!("--timeout: {e}")),
    };
    let simulation = inv.simulation.clone();
    let env = match build_env(
        inv,
        EnvOptions {
            fanout: a.fanout,
            timeout,
            scenario: a.scenario.clone(),
            verbose,
            ..Default::default()
        },
    ) {
        Ok(e) => e,
        Err(e) => return usage(e),
    };
    cancel::install_handlers(super::common::say);
    let all = read_nodes(&env, &fabric);
    for t in env.transports.all() {
        if cancel::interrupted() {
            t.cleanup();
        }
        t.close();
    }
    if cancel::interrupted() {
        return super::EXIT_INTERRUPTED;
    }
    let not_reached = all
        .iter()
        .filter(|d| matches!(d, Discovery::NotReached { .. }))
        .count();
    let problems: usize = all
        .iter()
        .map(|d| match d {
            Discovery::Found(f) => f.problems.len(),
            _ => 0,
        })
        .sum();
    let defaults_label = defaults.as_ref().map(|p| p.display().to_string());
    let command: Vec<String> = std::env::args().collect();
    let when = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let text = render(
        &Header {
            command: &command.join(" "),
            defaults: defaults_label.as_deref(),
            simulation: simulation.as_deref(),
            when: &when,
        },
        &all,
    );
    // What is said "written" loads: checked before it is written, and read back after (a
    // file of nodes none of which answered holds only comments: nothing to load).
    let any_found = all.iter().any(|d| matches!(d, Discovery::Found(_)));
    let loads = |t: &str| Inventory::parse(t, Path::new("(discovered inventory)"));
    if let Err(e) = loads(&text)
        .map(|_| ())
        .or_else(|e| if any_found { Err(e) } else { Ok(()) })
    {
        eprintln!(
            "error: the inventory discover made does not load ({e}); nothing written. This is \
             a bug of fabcheck discover: please report it with the nodes' output (-v)"
        );
        return EXIT_FAILED;
    }
    if let Err(code) = write_out(a, &text, any_found) {
        return code;
    }
    let differs = match (&was, &a.diff) {
        (Some(w), Some(p)) => print_diff(w, p, &all),
        _ => false,
    };
    if not_reached > 0 || problems > 0 || differs {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

/// Every node, read at once up to the fan-out, held to the loader's rules
/// ([`crate::inventory::discovered::admit`]); a summary line per node on stderr (sanitised:
/// the names are the nodes' words).
fn read_nodes(env: &Arc<crate::run::env::RunEnv>, fabric: &[glob::Pattern]) -> Vec<Discovery> {
    let nodes: Vec<Node> = env.inventory.nodes.clone();
    let mut all = crate::util::pool::map(
        &nodes,
        env.fanout,
        |_, n| match prim::discover(&NodeRef::new(n.clone(), env), fabric) {
            Ok(f) => Discovery::Found(Box::new(f)),
            Err(e) => Discovery::NotReached {
                node: Box::new(n.clone()),
                reason: e.message,
            },
        },
        |_, n| Discovery::NotReached {
            node: Box::new(n.clone()),
            reason: "internal error: its thread panicked".into(),
        },
    );
    crate::inventory::discovered::admit(&mut all);
    let clean = crate::util::fmt::clean_text;
    for d in &all {
        match d {
            Discovery::Found(f) => {
                eprintln!(
                    "{}: {} fabric interface(s) [{}], {} port(s) of several rails, MTU {}",
                    f.node.name,
                    f.rails.len(),
                    f.interfaces().join(", "),
                    f.ports.len(),
                    f.mtu()
                        .map(|m| m.to_string())
                        .unwrap_or("differs or unknown".into())
                );
                for p in &f.problems {
                    eprintln!("{}: PROBLEM: {}", f.node.name, clean(p));
                }
            }
            Discovery::NotReached { node, reason } => {
                eprintln!(
                    "{} ({}): NOT REACHED: {}",
                    node.name,
                    node.host,
                    clean(reason)
                )
            }
        }
    }
    all
}

/// The inventory to -o FILE through fabcheck's one writer ([`crate::util::target`]; never
/// over an existing file without --force: the name is taken only if still free), else stdout
/// (`-o -`, or no -o when no --diff was asked).
fn write_out(a: &DiscoverArgs, text: &str, check: bool) -> Result<(), i32> {
    let Some(path) = output_file(a) else {
        if a.diff.is_none() || a.output.is_some() {
            print!("{text}");
        }
        return Ok(());
    };
    let res = if a.force {
        crate::util::target::write(path, text.as_bytes())
    } else {
        crate::util::target::write_new(path, text.as_bytes())
    };
    if let Err(e) = res {
        return Err(usage(format!("-o {}: {e}", path.display())));
    }
    match Inventory::load_file(path)
        .map(|_| ())
        .or_else(|e| if check { Err(e) } else { Ok(()) })
    {
        Ok(()) => {
            eprintln!("inventory written to {}", path.display());
            Ok(())
        }
        Err(e) => {
            eprintln!(
                "error: the inventory written to {} does not load when read back: {e}",
                path.display()
            );
            Err(EXIT_FAILED)
        }
    }
}

fn print_diff(was: &Inventory, path: &Path, now: &[Discovery]) -> bool {
    let file = path.display().to_string();
    let lines = diff::diff(was, &file, now);
    if lines.is_empty() {
        println!("no difference from {file}");
        return false;
    }
    println!("{} difference(s) from {file}:", lines.len());
    for l in &lines {
        println!("  {l}");
    }
    true
}

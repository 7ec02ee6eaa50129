//! `fabcheck exec`, `nodes`, `parse`, `compare`, `doc`.

use super::run::{build_env, load_inventory, EnvOptions};
use super::{Target, EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::inventory::{nodeset, parse_duration, Inventory};
use crate::transport::{cancel, CmdRequest};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

fn usage(msg: impl std::fmt::Display) -> i32 {
    eprintln!("error: {msg}");
    EXIT_USAGE
}

pub fn nodes(inventory: Option<&Path>, set: Option<&str>) -> i32 {
    let t = Target {
        inventory: inventory.map(Path::to_path_buf),
        nodes: set.map(str::to_string),
    };
    let inv = match (inventory, set) {
        (None, None) => return usage("give -i INVENTORY and/or a NODESET"),
        _ => match load_inventory(&t) {
            Ok(i) => i,
            Err(e) => return usage(e),
        },
    };
    if let Some(sim) = &inv.simulation {
        println!("# SIMULATED cluster: {sim}");
    }
    for n in &inv.nodes {
        let mut extra = Vec::new();
        if !n.fabric_ips.is_empty() {
            extra.push(format!("fabric_ips={}", n.fabric_ips.join(",")));
        }
        if !n.interfaces.is_empty() {
            extra.push(format!("interfaces={}", n.interfaces.join(",")));
        }
        if !n.rdma_devices.is_empty() {
            extra.push(format!("rdma={}", n.rdma_devices.join(",")));
        }
        let user = n.user.clone().map(|u| format!("{u}@")).unwrap_or_default();
        let port = n.port.map(|p| format!(":{p}")).unwrap_or_default();
        println!(
            "{}\t{user}{}{port}\t{:?}\t{}",
            n.name,
            n.host,
            n.transport,
            extra.join(" ")
        );
    }
    for (g, def) in &inv.groups {
        if let Ok(m) = nodeset::expand(def, &inv.groups) {
            println!("@{g}\t{}", nodeset::fold(&m));
        }
    }
    EXIT_OK
}

pub fn parse(kind: &str, file: Option<&Path>) -> i32 {
    let mut text = String::new();
    let res = match file {
        Some(p) => std::fs::read(p).map(|b| text = String::from_utf8_lossy(&b).into_owned()),
        None => std::io::stdin().read_to_string(&mut text).map(|_| ()),
    };
    if let Err(e) = res {
        return usage(format!(
            "cannot read {}: {e}",
            file.map(|p| p.display().to_string())
                .unwrap_or("stdin".into())
        ));
    }
    match crate::parse::parse(kind, &text) {
        Ok(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            EXIT_OK
        }
        Err(e) => usage(e),
    }
}

/// `fabcheck compare A.json B.json … [--format markdown|csv]`: the scenario table on stdout.
pub fn compare(results: &[std::path::PathBuf], format: &str) -> i32 {
    use crate::report::compare;
    if !matches!(format, "markdown" | "md" | "csv") {
        return usage(format!("--format {format}: expected `markdown` or `csv`"));
    }
    let inputs = match compare::load_all(results) {
        Ok(i) => i,
        Err(e) => return usage(format!("cannot read a result: {e}")),
    };
    let table = compare::build(&inputs);
    if format == "csv" {
        print!("{}", compare::csv(&table));
    } else {
        print!("{}", compare::markdown(&table));
    }
    EXIT_OK
}

/// Ad-hoc fan-out; identical outputs are grouped under a folded node set (like `clush -b`).
/// Exit code: the highest exit code of the nodes (255 for a node that could not be reached).
pub fn exec(
    target: &Target,
    fanout: Option<usize>,
    timeout: Option<&str>,
    command: &[String],
) -> i32 {
    if target.nodes.is_none() && target.inventory.is_none() {
        return usage("exec needs -w NODESET (and optionally -i INVENTORY)");
    }
    let inv = match load_inventory(target) {
        Ok(i) => i,
        Err(e) => return usage(e),
    };
    let timeout = match timeout.map(parse_duration).transpose() {
        Ok(t) => t,
        Err(e) => return usage(format!("--timeout: {e}")),
    };
    let env = match build_env(
        inv,
        EnvOptions {
            fanout,
            timeout,
            ..Default::default()
        },
    ) {
        Ok(e) => e,
        Err(e) => return usage(e),
    };
    cancel::install_handlers();
    let cmd = command.join(" ");
    let specs: Vec<Arc<crate::inventory::Node>> =
        env.inventory.nodes.iter().cloned().map(Arc::new).collect();
    let reqs = specs
        .iter()
        .map(|n| CmdRequest {
            command: cmd.clone(),
            timeout: env.command_timeout(n, None),
            env: vec![],
            sudo: false,
        })
        .collect();
    let results = crate::primitives::run_many(&env, &specs, reqs);
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut worst = 0i64;
    for (n, r) in specs.iter().zip(results) {
        let (key, code) = match r {
            Ok(o) => {
                let code = o.exit_code.unwrap_or(255);
                let mut k = o.stdout.clone();
                k.push_str(&o.stderr);
                if code != 0 {
                    k.push_str(&format!("[exit {code}]\n"));
                }
                (k, code)
            }
            Err(e) => (format!("fabcheck: {e}\n"), 255),
        };
        worst = worst.max(code);
        groups.entry(key).or_default().push(n.name.clone());
    }
    let mut ordered: Vec<(String, Vec<String>)> = groups.into_iter().collect();
    ordered.sort_by_key(|(_, names)| std::cmp::Reverse(names.len()));
    for (out, names) in ordered {
        println!(
            "---------------\n{} ({})\n---------------",
            nodeset::fold(&names),
            names.len()
        );
        print!("{out}");
        if !out.ends_with('\n') {
            println!();
        }
    }
    for t in env.transports.all() {
        if cancel::interrupted() {
            t.cleanup();
        }
        t.close();
    }
    if cancel::interrupted() {
        return super::EXIT_INTERRUPTED;
    }
    if worst > 0 {
        (worst.min(255)) as i32
    } else {
        EXIT_OK
    }
}

pub fn doc() -> i32 {
    let env = match build_env(Inventory::local(), EnvOptions::dry(BTreeMap::new())) {
        Ok(e) => e,
        Err(e) => return usage(e),
    };
    let reg = Arc::new(std::sync::Mutex::new(
        crate::engine::registry::Registry::default(),
    ));
    let engine = crate::engine::new_engine(&env, reg, Path::new("."));
    let mut sigs = engine.gen_fn_signatures(false);
    sigs.sort();
    sigs.dedup();
    println!("# fabcheck script functions\n\nGenerated from the engine (`fabcheck doc`). See README.md for the test model.\n");
    for s in sigs {
        println!("- `{s}`");
    }
    println!("\n## Parsers (`parse::KIND(text)`, same as `fabcheck parse KIND`)\n");
    for (kind, f, input) in crate::parse::KINDS {
        println!("- `parse::{f}(text)` — `{kind}`: {input}");
    }
    println!("\n## stdlib modules (`import \"NAME\" as NAME;`)\n");
    for (name, _) in crate::engine::stdlib::EMBEDDED {
        println!("- `{name}`");
    }
    let _ = EXIT_FAILED;
    EXIT_OK
}

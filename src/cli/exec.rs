//! `fabcheck exec -w NODESET -- COMMAND`: ad-hoc fan-out, identical outputs grouped.

use super::common::{build_env, load_inventory, usage, EnvOptions};
use super::{Target, EXIT_OK};
use crate::inventory::nodeset;
use crate::run::cancel;
use crate::transport::CmdRequest;
use std::collections::BTreeMap;
use std::sync::Arc;

pub fn exec(
    target: &Target,
    fanout: Option<usize>,
    timeout: Option<&str>,
    raw: bool,
    command: &[String],
    verbose: u8,
) -> i32 {
    if target.nodes.is_none() && target.inventory.is_none() {
        return usage("exec needs -w NODESET (and optionally -i INVENTORY)");
    }
    let inv = match load_inventory(target) {
        Ok(i) => i,
        Err(e) => return usage(e),
    };
    let timeout = match super::common::parse_timeout(timeout) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    let env = match build_env(
        inv,
        EnvOptions {
            fanout,
            timeout,
            verbose,
            ..Default::default()
        },
    ) {
        Ok(e) => e,
        Err(e) => return usage(e),
    };
    cancel::install_handlers(super::common::say);
    let cmd = command.join(" ");
    let specs: Vec<Arc<crate::inventory::Node>> =
        env.inventory.nodes.iter().cloned().map(Arc::new).collect();
    let reqs: Vec<CmdRequest> = specs
        .iter()
        .map(|n| CmdRequest {
            command: cmd.clone(),
            timeout: env.command_timeout(n, None, None, None),
            env: vec![],
            sudo: false,
        })
        .collect();
    let results = env.run_many(&specs, &reqs);
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
    let mut ordered: Vec<(String, Vec<String>)> = groups
        .into_iter()
        .map(|(out, names)| match raw {
            true => (out, names),
            false => (crate::util::fmt::clean_text(&out), names),
        })
        .collect();
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
    for l in super::run::end_transports(&env, cancel::interrupted()) {
        eprintln!("NOT CLEANED UP {}", crate::util::fmt::clean_text(&l.line()));
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

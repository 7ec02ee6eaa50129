//! `fabcheck list SCRIPT... [-i INVENTORY]`: the test names a run would produce.

use super::common::{
    build_env, expand_scripts, load_all, load_inventory, parse_sets, usage, EnvOptions,
};
use super::{Target, EXIT_FAILED, EXIT_OK};
use crate::engine::runner;
use std::io::Write;
use std::time::Duration;

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
    // The same --set keys as `run` takes (a typo is a usage error here too, not a silent 0).
    let (texts, modules) = super::run::script_sources(&scripts);
    let declared = crate::engine::params::for_run(&texts, &modules);
    if let Err(e) = crate::engine::params::check(&env.params, &declared) {
        return usage(e);
    }
    // A script whose top level throws lists only the tests declared before the throw: the
    // listing is incomplete, so it is not exit 0 (a skip at the top level is not an error).
    let mut code = EXIT_OK;
    // One write per 8 KiB, not per line (a 1000-node mesh lists 999,000 testcases).
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for s in &scripts {
        if let Some(t) = runner::register_tests(s, Duration::from_secs(60), &env) {
            let _ = out.flush();
            eprintln!("{}: {}", s.path.display(), t.message.unwrap_or_default());
            if t.status != crate::run::model::Status::Skipped {
                code = EXIT_FAILED;
            }
        }
        let listed = runner::with_selected(s, filters, |defs| {
            for d in defs {
                // The names pass the console's sanitiser (a node's or script's words).
                let clean = |t: &str| crate::util::fmt::clean_text(t).replace(['\n', '\t'], " ");
                let (sn, dn) = (clean(&s.name), clean(&d.name));
                match d.round {
                    Some((r, total)) => writeln!(out, "{sn}\t{dn}\tround {r}/{total}")?,
                    None if d.at_once.is_some() => writeln!(out, "{sn}\t{dn}\tat once")?,
                    None => writeln!(out, "{sn}\t{dn}")?,
                }
            }
            std::io::Result::Ok(())
        });
        if listed.is_err() {
            return code; // stdout closed (`| head`): nothing more to say
        }
    }
    let _ = out.flush();
    code
}

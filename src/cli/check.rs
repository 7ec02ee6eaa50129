//! `fabcheck check SCRIPT...`: compile only (syntax, unknown functions, and field and option-key
//! typos where the kind of a value is known: `engine::typos`).

use super::common::{build_env, expand_scripts, load_all, usage, EnvOptions};
use super::{EXIT_OK, EXIT_USAGE};
use crate::inventory::Inventory;
use std::collections::BTreeMap;

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
            let mut code = EXIT_OK;
            for x in &s {
                let file = x.path.display().to_string();
                let typos = crate::engine::typos::check(&file, &x.source);
                if typos.is_empty() {
                    println!("ok: {file}");
                }
                for d in &typos {
                    eprint!("{d}");
                    code = EXIT_USAGE;
                }
            }
            code
        }
        Err(c) => c,
    }
}

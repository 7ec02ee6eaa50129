//! `fabcheck check SCRIPT...`: compile only (syntax, unknown functions, and field and option-key
//! typos where the kind of a value is known: `engine::typos`). Like a compiler, it reports every
//! error of every file (a file that does not parse has one: where the parser stopped), and then
//! how many files have errors.

use super::common::{build_env, expand_scripts, usage, EnvOptions};
use super::{EXIT_OK, EXIT_USAGE};
use crate::engine;
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
    let (mut bad_files, mut errors) = (0usize, 0usize);
    for p in &paths {
        let file = p.display().to_string();
        let mut diags = match engine::load(p, &env) {
            Ok(_) => vec![],
            Err(d) => d,
        };
        // field and option-key typos too, also when `load` found unknown functions
        if let Ok(source) = std::fs::read_to_string(p) {
            diags.extend(engine::typos::check(&file, &source));
        }
        if diags.is_empty() {
            println!("ok: {file}");
            continue;
        }
        bad_files += 1;
        errors += diags.len();
        for d in &diags {
            eprint!("{d}");
        }
    }
    if bad_files == 0 {
        return EXIT_OK;
    }
    eprintln!(
        "check: {errors} error(s) in {bad_files} of {} file(s)",
        paths.len()
    );
    EXIT_USAGE
}

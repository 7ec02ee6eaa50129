//! `fabcheck check SCRIPT...`: compile only (syntax and unknown functions).

use super::common::{build_env, expand_scripts, load_all, usage, EnvOptions};
use super::EXIT_OK;
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
            for x in &s {
                println!("ok: {}", x.path.display());
            }
            EXIT_OK
        }
        Err(c) => c,
    }
}

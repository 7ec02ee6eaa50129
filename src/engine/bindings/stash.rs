//! `stash(key, value)` and `stashed(key)`: one value many tests of a run read, kept outside the
//! script's variables. A map captured by the closures of tests that run at once (`test_each`,
//! `test_pairs`) is one Rhai shared variable: a test holding it while another reads it is
//! Rhai's "Data race detected" (seen at rack size: 8 nodes' counter snapshots). These keep the
//! values in one lock of their own, held only to copy a value in or out.

use super::api::{Api, Binder, BINDINGS};
use rhai::Dynamic;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

fn store() -> &'static Mutex<HashMap<String, Dynamic>> {
    static S: OnceLock<Mutex<HashMap<String, Dynamic>>> = OnceLock::new();
    S.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Keep a deep copy of `value` under `key` (a later `stash` of the key replaces it).
pub(crate) fn stash(key: &str, value: Dynamic) {
    let v = value.flatten_clone();
    store()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key.to_string(), v);
}

/// A copy of the value kept under `key`, else `()`.
pub(crate) fn stashed(key: &str) -> Dynamic {
    store()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(key)
        .map(Dynamic::flatten_clone)
        .unwrap_or(Dynamic::UNIT)
}

/// Stash a plain value from Rust (`fabcheck health` hands a script the state of its last run).
pub(crate) fn stash_json(key: &str, value: &serde_json::Value) {
    if let Ok(v) = rhai::serde::to_dynamic(value) {
        stash(key, v);
    }
}

/// What a script stashed under `key`, as a plain value (typed results as their maps); `None`
/// when nothing is there or it has no plain form.
pub(crate) fn stashed_json(key: &str) -> Option<serde_json::Value> {
    let v = stashed(key);
    if v.is_unit() {
        return None;
    }
    let plain = super::record::as_map(&v).unwrap_or(v);
    rhai::serde::from_dynamic(&plain).ok()
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("stash(key, value)")
        .plain("()")
        .doc("keep a copy of value under key for the other tests of the run (tests that run at once must not share a captured map: Rhai's data race)")
        .register(|engine, name| {
            engine.register_fn(name, |key: &str, value: Dynamic| stash(key, value));
        });
    api.function("stashed(key)")
        .plain("the value, else ()")
        .doc("a copy of the value stash(key, value) kept, else ()")
        .register(|engine, name| {
            engine.register_fn(name, stashed);
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stashed_value_is_a_copy_read_back_from_any_thread() {
        stash("share-test-k", Dynamic::from(42_i64));
        let t = std::thread::spawn(|| stashed("share-test-k").as_int().unwrap());
        assert_eq!(t.join().unwrap(), 42);
        assert!(stashed("share-test-absent").is_unit());
    }
}

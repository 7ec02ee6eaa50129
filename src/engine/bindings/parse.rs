//! The `parse` module of scripts: `parse::ethtool(text)` etc., the parsers of
//! `fabcheck parse KIND`, each declared from its parser's own row (`parse::Parser`).

use super::api::{Api, Binder, BINDINGS};
use rhai::{Dynamic, Module};
use std::sync::{Arc, OnceLock};

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

/// `parse::ethtool(text)`, one per parser, as documented (made once).
fn calls() -> &'static [&'static str] {
    static CALLS: OnceLock<Vec<&'static str>> = OnceLock::new();
    CALLS.get_or_init(|| {
        crate::parse::parsers()
            .iter()
            .map(|p| &*Box::leak(format!("parse::{}(text)", p.name()).into_boxed_str()))
            .collect()
    })
}

/// `parse::ethtool(text)` etc.: the same parsers as `fabcheck parse KIND`.
fn register(api: &mut Api) {
    let mut m = Module::new();
    for (p, call) in crate::parse::parsers().iter().zip(calls()) {
        let returns = (p.returns)();
        api.function(call)
            .returning(returns)
            .doc("the parser of `fabcheck parse`")
            .register(|_, _| {
                m.set_native_fn(
                    p.name(),
                    move |text: &str| -> Result<Dynamic, Box<rhai::EvalAltResult>> {
                        let v = (p.parse)(text).map_err(|e| {
                            crate::engine::signal::error(e.to_string(), rhai::Position::NONE)
                        })?;
                        rhai::serde::to_dynamic(v).map(|d| super::record::typed(d, returns))
                    },
                );
            });
    }
    api.engine().register_static_module("parse", Arc::new(m));
}

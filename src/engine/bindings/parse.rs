//! The `parse` module of scripts: `parse::ethtool(text)` etc., the parsers of
//! `fabcheck parse KIND`.

use rhai::{Dynamic, Module};

/// `parse::ethtool(text)` etc.: the same parsers as `fabcheck parse KIND`.
pub fn module() -> Module {
    let mut m = Module::new();
    for (kind, fname, _) in crate::parse::KINDS {
        let kind: &'static str = kind;
        let returns = super::results::returns(&format!("parse::{fname}"));
        m.set_native_fn(
            *fname,
            move |text: &str| -> Result<Dynamic, Box<rhai::EvalAltResult>> {
                let v = crate::parse::parse(kind, text).map_err(|e| {
                    crate::engine::signal::error(e.to_string(), rhai::Position::NONE)
                })?;
                rhai::serde::to_dynamic(v).map(|d| super::record::typed(d, returns))
            },
        );
    }
    m
}

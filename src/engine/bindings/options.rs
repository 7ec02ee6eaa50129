//! Script option maps (`#{ device: "mlx5_0", duration: 10 }`) read into typed options: every
//! key must be one the primitive knows ("did you mean" otherwise), every value of the expected
//! type (the error names the option and the value).

use crate::engine::signal::{self, RhaiErr};
use crate::util::suggest::did_you_mean;
use rhai::{Array, Dynamic, Map, Position};
use std::time::Duration;

pub struct Opts<'a> {
    map: Map,
    what: &'a str,
    pos: Position,
}

impl<'a> Opts<'a> {
    /// Check `map`'s keys against `known` for primitive `what`.
    pub fn new(
        map: Option<Map>,
        what: &'a str,
        known: &[&str],
        pos: Position,
    ) -> Result<Opts<'a>, RhaiErr> {
        let map = map.unwrap_or_default();
        for k in map.keys() {
            if !known.contains(&k.as_str()) {
                return Err(signal::error(
                    format!(
                        "unknown {what} option `{k}`{}; options are {}",
                        did_you_mean(k, known.iter().copied()),
                        known.join(", ")
                    ),
                    pos,
                ));
            }
        }
        Ok(Opts { map, what, pos })
    }

    /// The raw value of an option (unit counts as absent).
    pub fn get_raw(&self, k: &str) -> Option<&Dynamic> {
        self.get(k)
    }

    /// A string, or any value shown as text (a node passed as `node: n` gives its name).
    pub fn str_or_display(&self, k: &str) -> Result<Option<String>, RhaiErr> {
        Ok(self.get(k).map(
            |v| match v.clone().try_cast::<crate::primitives::NodeRef>() {
                Some(n) => n.name().to_string(),
                None => v.to_string(),
            },
        ))
    }

    fn get(&self, k: &str) -> Option<&Dynamic> {
        self.map.get(k).filter(|v| !v.is_unit())
    }

    fn bad(&self, k: &str, v: &Dynamic, expected: &str) -> RhaiErr {
        signal::error(
            format!(
                "{} option `{k}` must be {expected}, got {} ({})",
                self.what,
                super::assertions::show(v),
                v.type_name()
            ),
            self.pos,
        )
    }

    pub fn str(&self, k: &str) -> Result<Option<String>, RhaiErr> {
        match self.get(k) {
            None => Ok(None),
            Some(v) if v.is_string() => Ok(Some(v.to_string())),
            Some(v) => Err(self.bad(k, v, "a string")),
        }
    }

    pub fn int(&self, k: &str) -> Result<Option<i64>, RhaiErr> {
        match self.get(k) {
            None => Ok(None),
            Some(v) => v
                .as_int()
                .map(Some)
                .map_err(|_| self.bad(k, v, "a whole number")),
        }
    }

    pub fn float(&self, k: &str) -> Result<Option<f64>, RhaiErr> {
        match self.get(k) {
            None => Ok(None),
            Some(v) => v
                .as_float()
                .ok()
                .or_else(|| v.as_int().ok().map(|i| i as f64))
                .filter(|f| f.is_finite())
                .map(Some)
                .ok_or_else(|| self.bad(k, v, "a number")),
        }
    }

    pub fn bool(&self, k: &str) -> Result<bool, RhaiErr> {
        match self.get(k) {
            None => Ok(false),
            Some(v) => v.as_bool().map_err(|_| self.bad(k, v, "true or false")),
        }
    }

    /// Whole seconds, or a human duration string (`"90s"`, `"2m"`).
    pub fn duration(&self, k: &str) -> Result<Option<Duration>, RhaiErr> {
        match self.get(k) {
            None => Ok(None),
            Some(v) => duration_of(v)
                .map(Some)
                .map_err(|e| signal::error(format!("{} option `{k}`: {e}", self.what), self.pos)),
        }
    }

    /// A map of environment variables (names validated).
    pub fn env(&self, k: &str) -> Result<Vec<(String, String)>, RhaiErr> {
        let Some(v) = self.get(k) else {
            return Ok(vec![]);
        };
        let m = v
            .clone()
            .try_cast::<Map>()
            .ok_or_else(|| self.bad(k, v, "a map, e.g. env: #{ NCCL_DEBUG: \"INFO\" }"))?;
        let mut out = Vec::new();
        for (ek, ev) in m {
            if !crate::util::names::valid_env_name(&ek) {
                return Err(signal::error(
                    format!(
                        "{} option `{k}`: environment variable name `{ek}` is not valid",
                        self.what
                    ),
                    self.pos,
                ));
            }
            out.push((ek.to_string(), ev.to_string()));
        }
        Ok(out)
    }

    /// An array of strings.
    pub fn strings(&self, k: &str) -> Result<Option<Vec<String>>, RhaiErr> {
        let Some(v) = self.get(k) else {
            return Ok(None);
        };
        let a = v
            .clone()
            .try_cast::<Array>()
            .ok_or_else(|| self.bad(k, v, "an array of strings"))?;
        Ok(Some(a.into_iter().map(|x| x.to_string()).collect()))
    }
}

/// A duration from a script value: whole seconds, or `"500ms"`, `"30s"`, `"5m"`.
pub fn duration_of(v: &Dynamic) -> Result<Duration, String> {
    if let Ok(i) = v.as_int() {
        if i < 0 {
            return Err(format!("{i} is negative"));
        }
        return crate::inventory::parse_duration(&i.to_string());
    }
    crate::inventory::parse_duration(&v.to_string())
}

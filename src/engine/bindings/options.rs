//! Script option maps (`#{ device: "mlx5_0", duration: 10 }`) read into the serde struct of
//! the function's options ([`read`]): the struct's fields are the keys it knows (an unknown
//! key is refused with "did you mean"), their types the values it takes (the error names the
//! option, what it must be and what it got).

use crate::engine::signal::{self, RhaiErr};
use crate::util::suggest::did_you_mean;
use rhai::{Array, Dynamic, Map, Position};
use serde::de::{DeserializeOwned, Visitor};

/// Refuse a key of `map` that is not one of `known` (the options of `what`), with "did you
/// mean" and the list of options.
fn check_keys(map: &Map, what: &str, known: &[&str], pos: Position) -> Result<(), RhaiErr> {
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
    Ok(())
}

/// Read a script's options map into `T`, a serde struct of the options a function knows
/// (`#[serde(default, deny_unknown_fields)]`): an unknown key is refused with "did you mean"
/// and the list of `T`'s fields, a value of the wrong kind names the option, what it must be
/// and what it is. Unit values count as absent.
pub(super) fn read<T: DeserializeOwned>(
    map: Option<Map>,
    what: &str,
    pos: Position,
) -> Result<T, RhaiErr> {
    let map = map.unwrap_or_default();
    check_keys(&map, what, field_names::<T>(), pos)?;
    T::deserialize(Entries::new(&map, what)).map_err(|e| signal::error(e.0, pos))
}

/// Why options could not be read: the whole message.
#[derive(Debug)]
struct OptError(String);

impl std::fmt::Display for OptError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OptError {}

impl serde::de::Error for OptError {
    fn custom<M: std::fmt::Display>(m: M) -> Self {
        OptError(m.to_string())
    }
}

/// The entries of an options map (unit values left out), as serde reads a struct or a map.
struct Entries<'a> {
    items: Vec<(&'a str, &'a Dynamic)>,
    next: usize,
    what: &'a str,
}

impl<'a> Entries<'a> {
    fn new(map: &'a Map, what: &'a str) -> Entries<'a> {
        Entries {
            items: map
                .iter()
                .filter(|(_, v)| !v.is_unit())
                .map(|(k, v)| (k.as_str(), v))
                .collect(),
            next: 0,
            what,
        }
    }
}

impl<'de> serde::de::MapAccess<'de> for Entries<'_> {
    type Error = OptError;
    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, OptError> {
        let Some((k, _)) = self.items.get(self.next) else {
            return Ok(None);
        };
        seed.deserialize(serde::de::value::StrDeserializer::<OptError>::new(k))
            .map(Some)
    }
    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, OptError> {
        let (key, v) = self.items[self.next];
        self.next += 1;
        let at = Value {
            v,
            key,
            what: self.what,
        };
        seed.deserialize(at).map_err(|e| {
            let prefix = format!("{} option `{key}`", self.what);
            if e.0.starts_with(&prefix) {
                e
            } else {
                OptError(format!("{prefix}: {}", e.0))
            }
        })
    }
}

impl<'de> serde::Deserializer<'de> for Entries<'_> {
    type Error = OptError;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
        visitor.visit_map(self)
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// One option's value.
struct Value<'a> {
    v: &'a Dynamic,
    key: &'a str,
    what: &'a str,
}

impl Value<'_> {
    fn bad(&self, expected: &str) -> OptError {
        OptError(format!(
            "{} option `{}` must be {expected}, got {} ({})",
            self.what,
            self.key,
            super::record::show(self.v),
            self.v.type_name()
        ))
    }
    fn int(&self) -> Result<i64, OptError> {
        self.v.as_int().map_err(|_| self.bad("a whole number"))
    }
}

macro_rules! whole {
    ($($f:ident),*) => {$(
        fn $f<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
            visitor.visit_i64(self.int()?)
        }
    )*};
}

impl<'de> serde::Deserializer<'de> for Value<'_> {
    type Error = OptError;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
        let v = self.v;
        if let Ok(i) = v.as_int() {
            visitor.visit_i64(i)
        } else if let Ok(f) = v.as_float() {
            visitor.visit_f64(f)
        } else if let Ok(b) = v.as_bool() {
            visitor.visit_bool(b)
        } else if v.is_unit() {
            visitor.visit_unit()
        } else if v.is_array() {
            self.deserialize_seq(visitor)
        } else if v.is_map() {
            self.deserialize_map(visitor)
        } else if let Some(m) = super::record::as_map(v) {
            // A typed result passed as an option (`cable: n.optics(iface)`): its fields.
            let m: Map = m.cast::<Map>();
            visitor.visit_map(Entries::new(&m, self.what))
        } else {
            // Strings, and values shown as text (a node passed as `node: n` gives its name).
            let text = match v.clone().try_cast::<crate::primitives::NodeRef>() {
                Some(n) => n.name().to_string(),
                None => v.to_string(),
            };
            visitor.visit_string(text)
        }
    }
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
        visitor.visit_bool(self.v.as_bool().map_err(|_| self.bad("true or false"))?)
    }
    whole!(
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64
    );
    whole!(
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64
    );
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
        let v = self.v;
        let f = v
            .as_float()
            .ok()
            .or_else(|| v.as_int().ok().map(|i| i as f64));
        visitor.visit_f64(
            f.filter(|f| f.is_finite())
                .ok_or_else(|| self.bad("a number"))?,
        )
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
        self.deserialize_f64(visitor)
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
        if !self.v.is_string() {
            return Err(self.bad("a string"));
        }
        visitor.visit_string(self.v.to_string())
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
        self.deserialize_str(visitor)
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
        if self.v.is_unit() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
        let Some(a) = self.v.read_lock::<Array>() else {
            return Err(self.bad("an array of strings"));
        };
        let items: Vec<Dynamic> = a.iter().cloned().collect();
        drop(a);
        let (key, what) = (self.key, self.what);
        let values: Vec<Value> = items.iter().map(|v| Value { v, key, what }).collect();
        visitor.visit_seq(serde::de::value::SeqDeserializer::new(values.into_iter()))
    }
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OptError> {
        let Some(m) = self.v.read_lock::<Map>() else {
            return Err(self.bad("a map"));
        };
        let m: Map = m.clone();
        visitor.visit_map(Entries::new(&m, self.what))
    }
    serde::forward_to_deserialize_any! {
        i128 u128 char bytes byte_buf unit unit_struct newtype_struct tuple tuple_struct
        struct enum identifier ignored_any
    }
}

impl<'de> serde::de::IntoDeserializer<'de, OptError> for Value<'_> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

/// An option shown as text, for `#[serde(deserialize_with = "…")]`: a string, a number, or
/// a node (`node: n` gives its name).
pub(super) fn shown<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let t = <Option<crate::util::names::Text> as serde::Deserialize>::deserialize(d)?;
    Ok(t.map(|t| t.0))
}

/// The option names of `T`: its serde fields, in declaration order.
pub(super) fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    crate::util::shape::field_names::<T>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::command::RunOpts;
    use crate::primitives::ping::PingOpts;
    use std::time::Duration;

    fn map(src: &str) -> Map {
        rhai::Engine::new().eval::<Map>(src).unwrap()
    }

    fn read_err<T: DeserializeOwned + std::fmt::Debug>(src: &str, what: &str) -> String {
        let e = read::<T>(Some(map(src)), what, Position::NONE).unwrap_err();
        match crate::engine::signal::classify(&e, "") {
            crate::engine::signal::Ending::Signal(s) => s.message,
            _ => e.to_string(),
        }
    }

    #[test]
    fn the_option_struct_is_the_list_of_keys() {
        assert_eq!(
            field_names::<PingOpts>(),
            [
                "count",
                "wait",
                "iface",
                "size",
                "dont_fragment",
                "interval",
                "timeout"
            ]
        );
        let m = read_err::<PingOpts>("#{ cont: 3 }", "ping");
        assert!(
            m.starts_with(
                "unknown ping option `cont` (did you mean `count`?); options are count, wait"
            ),
            "{m}"
        );
    }

    #[test]
    fn values_are_read_by_the_fields_types() {
        let o: PingOpts = read(
            Some(map(r#"#{ count: 3, iface: "eth1", dont_fragment: true, interval: 1, timeout: "90s", size: () }"#)),
            "ping",
            Position::NONE,
        )
        .unwrap();
        assert_eq!(o.count, Some(3));
        assert_eq!(o.iface.as_deref(), Some("eth1"));
        assert!(o.dont_fragment);
        assert_eq!(o.interval, Some(1.0));
        assert_eq!(o.timeout, Some(Duration::from_secs(90)));
        assert_eq!(o.size, None, "a unit value is an absent option");
        let r: RunOpts = read(
            Some(map(
                r#"#{ timeout: 5, env: #{ NCCL_DEBUG: "INFO", N: 2 } }"#,
            )),
            "run",
            Position::NONE,
        )
        .unwrap();
        assert_eq!(r.timeout, Some(Duration::from_secs(5)));
        assert_eq!(
            r.env,
            [
                ("N".into(), "2".into()),
                ("NCCL_DEBUG".into(), "INFO".into())
            ]
        );
    }

    #[test]
    fn a_wrong_value_names_the_option_and_what_it_must_be() {
        assert_eq!(
            read_err::<PingOpts>(r#"#{ count: "three" }"#, "ping"),
            "ping option `count` must be a whole number, got \"three\" (string)"
        );
        assert_eq!(
            read_err::<PingOpts>("#{ dont_fragment: 1 }", "ping"),
            "ping option `dont_fragment` must be true or false, got 1 (i64)"
        );
        let m = read_err::<PingOpts>("#{ timeout: -5 }", "ping");
        assert_eq!(m, "ping option `timeout`: -5 is negative");
        let m = read_err::<PingOpts>(r#"#{ timeout: "soon" }"#, "ping");
        assert!(
            m.starts_with("ping option `timeout`: `soon` is not a duration"),
            "{m}"
        );
        let m = read_err::<RunOpts>(r#"#{ env: #{ "A B": 1 } }"#, "run");
        assert_eq!(
            m,
            "run option `env`: environment variable name `A B` is not valid"
        );
        let m = read_err::<RunOpts>(r#"#{ env: "X=1" }"#, "run");
        assert!(m.starts_with("run option `env` must be a map"), "{m}");
    }
}

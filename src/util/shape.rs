//! What a result looks like to scripts, carried by its own Rust type: every type a parser or a
//! primitive returns implements [`Shaped`] beside its definition (with [`impl_shape!`]), so a
//! function's declaration reads the shape from the type it returns ([`Returned`]) and nothing
//! is listed twice. The engine types results by it (an unknown field is an error), `fabcheck
//! check` finds field typos with it and `fabcheck doc` lists the fields from it.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeMap;

/// The fields of one kind of result, as scripts see it.
pub struct Shape {
    /// What the result is called in messages (`ethtool result`).
    pub name: &'static str,
    /// Every field, sorted. A field that is absent or null reads `()`.
    pub fields: Vec<String>,
    /// Fields that hold results themselves: one (`out_of_place`) or an array (`rows`).
    pub nested: Vec<(&'static str, Nest)>,
}

#[derive(Clone, Copy)]
pub enum Nest {
    One(&'static Shape),
    Many(&'static Shape),
}

impl Shape {
    pub fn has(&self, field: &str) -> bool {
        self.fields.iter().any(|f| f == field)
    }

    /// The result held by `field`, if it holds one (or an array of them).
    pub fn nested(&self, field: &str) -> Option<Nest> {
        self.nested
            .iter()
            .find(|(k, _)| *k == field)
            .map(|(_, n)| *n)
    }
}

/// A type that reaches scripts as a result: its shape, built once.
pub trait Shaped {
    fn shape() -> &'static Shape;
}

/// What a function gives back.
#[derive(Clone, Copy)]
pub enum Returns {
    One(&'static Shape),
    /// An array of results (`n.addresses()`).
    List(&'static Shape),
    /// A map node name -> result (`run_all`).
    ByNode(&'static Shape),
    /// A plain value, described (the description is the function's, see the declaration).
    Plain(&'static str),
}

/// What a Rust return type is to a script: a result, an array or a by-node map of results, or
/// a plain value.
pub trait Returned {
    fn returns() -> Returns;
}

impl<T: Shaped> Returned for T {
    fn returns() -> Returns {
        Returns::One(T::shape())
    }
}

impl<T: Shaped> Returned for Vec<T> {
    fn returns() -> Returns {
        Returns::List(T::shape())
    }
}

impl<T: Shaped> Returned for BTreeMap<String, T> {
    fn returns() -> Returns {
        Returns::ByNode(T::shape())
    }
}

/// Plain values: described by the function that returns them.
macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Returned for $t {
            fn returns() -> Returns {
                Returns::Plain("")
            }
        }
    )*};
}
plain!((), String, Option<String>);

/// Every key of `T`'s serialised default value.
fn serialised_keys<T: Serialize + Default>() -> Vec<String> {
    match serde_json::to_value(T::default()) {
        Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
        _ => vec![],
    }
}

/// The field names a `Deserialize` struct declares, including those left out when serialised
/// (`skip_serializing_if`): read from what it asks a deserializer for.
pub(crate) fn struct_fields<T: DeserializeOwned>() -> Vec<String> {
    field_names::<T>().iter().map(|f| f.to_string()).collect()
}

/// [`struct_fields`] as serde declares them, in declaration order.
pub(crate) fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::{Error, Visitor};
    struct Names<'a>(&'a mut &'static [&'static str]);
    impl<'de> serde::Deserializer<'de> for Names<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(Error::custom("names only"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut out: &'static [&'static str] = &[];
    let _ = T::deserialize(Names(&mut out));
    out
}

/// A shape being built (see [`impl_shape!`]).
pub(crate) struct Builder(Shape);

/// The shape of a type known by its serialised default value (a primitive's own result).
pub(crate) fn serialised<T: Serialize + Default>(name: &'static str) -> Builder {
    Builder(Shape {
        name,
        fields: serialised_keys::<T>(),
        nested: vec![],
    })
}

/// The shape of a parser's type: every declared field, serialised or not.
pub(crate) fn parsed<T: Serialize + Default + DeserializeOwned>(name: &'static str) -> Builder {
    serialised::<T>(name).with(struct_fields::<T>())
}

impl Builder {
    pub(crate) fn with<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Builder {
        self.0.fields.extend(fields.into_iter().map(Into::into));
        self
    }
    /// A `#[serde(flatten)]`ed type: its fields and nested results are this one's too.
    pub(crate) fn flat<T: Shaped>(mut self) -> Builder {
        let inner = T::shape();
        self = self.with(inner.fields.iter().cloned());
        self.0.nested.extend(inner.nested.iter().copied());
        self
    }
    /// `field` holds one `T`.
    pub(crate) fn one<T: Shaped>(mut self, field: &'static str) -> Builder {
        self.0.nested.push((field, Nest::One(T::shape())));
        self
    }
    /// `field` holds an array of `T`.
    pub(crate) fn many<T: Shaped>(mut self, field: &'static str) -> Builder {
        self.0.nested.push((field, Nest::Many(T::shape())));
        self
    }
    pub(crate) fn done(mut self) -> &'static Shape {
        self.0.fields.sort();
        self.0.fields.dedup();
        Box::leak(Box::new(self.0))
    }
}

/// `impl_shape!(Type, parsed("name").many::<Row>("rows"))`: `Type`'s [`Shaped`] impl, built
/// once with [`parsed`] (a parser's type) or [`serialised`] and the [`Builder`]'s
/// methods.
#[macro_export]
macro_rules! impl_shape {
    ($t:ty, $how:ident($name:literal) $($rest:tt)*) => {
        impl $crate::util::shape::Shaped for $t {
            fn shape() -> &'static $crate::util::shape::Shape {
                static S: std::sync::OnceLock<&'static $crate::util::shape::Shape> =
                    std::sync::OnceLock::new();
                S.get_or_init(|| $crate::util::shape::$how::<$t>($name) $($rest)* .done())
            }
        }
    };
}

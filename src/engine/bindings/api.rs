//! Every script function is declared once, where it is registered: [`Api::method`] /
//! [`Api::function`] take how it is called and what it does, the options it knows, and the
//! Rust function (or the type) it returns; registering it records the declaration row that
//! `fabcheck check` (field and option-key typos), `fabcheck doc` and the dry run read. What a
//! result holds is the result type's own [`Shape`](crate::util::shape::Shape), declared beside
//! the type (`impl_shape!`): nothing here lists fields, and no lookup by name can miss.
//!
//! A file of bindings adds itself with [`linkme`]: `#[distributed_slice(BINDINGS)] static
//! _X: Binder = register;` (see `tools.rs`), so adding a tool touches only its own files.

use super::values::value;
use crate::engine::signal::RhaiErr;
pub(crate) use crate::engine::tag::{recorded, test_log, InTest};
use crate::engine::testdef::SharedRegistry;
use crate::primitives::{NodeRef, PResult};
use crate::run::env::RunEnv;
use crate::util::shape::{Nest, Returned, Returns, Shape};
use rhai::{Dynamic, Engine, Map, NativeCallContext};
use serde::Serialize;
use std::sync::{Arc, OnceLock};

/// One script function: how it is called, its options and what it returns.
pub(crate) struct Decl {
    /// As documented: `n.ethtool(iface)`.
    pub call: &'static str,
    /// The names it is registered under (`ib_write_bw`, `ib_read_bw`, ...; `parse::ethtool`).
    pub names: Vec<&'static str>,
    /// Called as a method (`n.ethtool(...)`).
    pub method: bool,
    pub opts: &'static [&'static str],
    pub returns: Returns,
    /// What it does, for `fabcheck doc` (options and returned fields are listed from `opts` and
    /// `returns`: the text does not repeat them).
    pub doc: &'static str,
}

/// What a file of bindings is given: the engine, the run's environment and its tests.
pub(crate) struct Api<'e> {
    engine: &'e mut Engine,
    pub env: Arc<RunEnv>,
    pub tests: SharedRegistry,
    decls: Vec<Decl>,
}

/// A file of bindings: `fn register(api: &mut Api)`.
pub(crate) type Binder = fn(&mut Api);

/// Every file of bindings, each adding itself (`#[distributed_slice(BINDINGS)]`).
#[linkme::distributed_slice]
pub static BINDINGS: [Binder];

impl<'e> Api<'e> {
    pub(crate) fn new(engine: &'e mut Engine, env: Arc<RunEnv>, tests: SharedRegistry) -> Api<'e> {
        Api {
            engine,
            env,
            tests,
            decls: Vec::new(),
        }
    }

    /// The engine, for what is not a script function of its own: the `Node` type's properties
    /// and operators, a result's map-like functions, modules.
    pub(crate) fn engine(&mut self) -> &mut Engine {
        self.engine
    }

    /// `n.NAME(args)`: `call` as documented, `n.ethtool(iface)`.
    pub(crate) fn method(&mut self, call: &'static str) -> Def<'_, 'e> {
        self.def(call, true)
    }

    /// `NAME(args)`: `call` as documented, `ssh_hop(from, to, opts)`.
    pub(crate) fn function(&mut self, call: &'static str) -> Def<'_, 'e> {
        self.def(call, false)
    }

    fn def(&mut self, call: &'static str, method: bool) -> Def<'_, 'e> {
        let name = call.split('(').next().unwrap_or(call);
        let name = name.strip_prefix("n.").unwrap_or(name);
        Def {
            api: self,
            decl: Decl {
                call,
                names: vec![name],
                method,
                opts: &[],
                returns: Returns::Plain("nothing"),
                doc: "",
            },
        }
    }

    pub(crate) fn into_decls(self) -> Vec<Decl> {
        self.decls
    }
}

/// A declaration being written; it is recorded when the function is registered.
pub(crate) struct Def<'a, 'e> {
    api: &'a mut Api<'e>,
    decl: Decl,
}

impl<'a, 'e> Def<'a, 'e> {
    /// What it does (`fabcheck doc`).
    pub(crate) fn doc(mut self, doc: &'static str) -> Self {
        self.decl.doc = doc;
        self
    }

    /// More names for the same function (`ib_read_bw`, `ib_send_bw` beside `ib_write_bw`).
    pub(crate) fn also(mut self, names: &[&'static str]) -> Self {
        self.decl.names.extend_from_slice(names);
        self
    }

    /// The keys its options map may have: the fields of its options struct `T` (read with
    /// `options::read::<T>`).
    pub(crate) fn options<T: serde::de::DeserializeOwned>(mut self) -> Self {
        self.decl.opts = super::options::field_names::<T>();
        self
    }

    /// It returns what Rust type `T` is to scripts (a result, an array of them, ...); a plain
    /// value keeps the description given with [`Def::plain`].
    pub(crate) fn returns<T: Returned>(self) -> Self {
        match T::returns() {
            Returns::Plain(_) => self,
            r => self.returning(r),
        }
    }

    /// It returns a plain value, described (`"stdout as a string"`).
    pub(crate) fn plain(self, what: &'static str) -> Self {
        self.returning(Returns::Plain(what))
    }

    /// It returns what another declaration says (a parser's own declaration).
    pub(crate) fn returning(mut self, r: Returns) -> Self {
        self.decl.returns = r;
        self
    }

    /// Register it under each of its names (`f(engine, name)`) and record the declaration.
    pub(crate) fn register(self, mut f: impl FnMut(&mut Engine, &'static str)) {
        for name in &self.decl.names {
            f(self.api.engine, name);
        }
        self.api.decls.push(self.decl);
    }

    /// `n.NAME()` for a primitive of one node.
    pub(crate) fn node0<T: Returned + Serialize + 'static>(self, f: fn(&NodeRef) -> PResult<T>) {
        let d = self.returns::<T>();
        d.register(|e, name| {
            e.register_fn(name, move |ctx: NativeCallContext, n: &mut NodeRef| {
                value(f(&n.in_test(&ctx)), ctx.call_position())
            });
        });
    }

    /// `n.NAME(arg)` for a primitive of one node taking one string.
    pub(crate) fn node1<T: Returned + Serialize + 'static>(
        self,
        f: fn(&NodeRef, &str) -> PResult<T>,
    ) {
        let d = self.returns::<T>();
        d.register(|e, name| {
            e.register_fn(
                name,
                move |ctx: NativeCallContext, n: &mut NodeRef, a: &str| {
                    value(f(&n.in_test(&ctx), a), ctx.call_position())
                },
            );
        });
    }
}

/// `NAME(a, b)` and `NAME(a, b, opts)` of a function of two nodes (a server and a client):
/// the same call, the options map absent or given.
pub(crate) fn node_pair<F>(engine: &mut Engine, name: &str, f: F)
where
    F: Fn(&NativeCallContext, NodeRef, NodeRef, Option<Map>) -> Result<Dynamic, RhaiErr>
        + Clone
        + Send
        + Sync
        + 'static,
{
    let g = f.clone();
    engine.register_fn(
        name,
        move |ctx: NativeCallContext, a: NodeRef, b: NodeRef| {
            f(&ctx, a.in_test(&ctx), b.in_test(&ctx), None)
        },
    );
    engine.register_fn(
        name,
        move |ctx: NativeCallContext, a: NodeRef, b: NodeRef, o: Map| {
            g(&ctx, a.in_test(&ctx), b.in_test(&ctx), Some(o))
        },
    );
}

/// Register every file of bindings into `engine`; the declarations of what was registered.
pub(crate) fn register_all(
    engine: &mut Engine,
    env: Arc<RunEnv>,
    tests: SharedRegistry,
) -> Vec<Decl> {
    super::dry::register(engine);
    super::record::register(engine);
    let mut api = Api::new(engine, env, tests);
    // In link order: files register disjoint names, so the order does not matter.
    for b in BINDINGS {
        b(&mut api);
    }
    api.into_decls()
}

/// The declarations of every script function (registered once into a scratch engine).
pub(crate) fn decls() -> &'static [Decl] {
    static DECLS: OnceLock<Vec<Decl>> = OnceLock::new();
    DECLS.get_or_init(|| {
        let tests = Arc::new(std::sync::Mutex::new(Default::default()));
        register_all(&mut Engine::new_raw(), Arc::new(RunEnv::local()), tests)
    })
}

/// The declaration of a function by the name a script calls it with (`ethtool`, `parse::nccl`).
pub(crate) fn decl(name: &str) -> Option<&'static Decl> {
    decls().iter().find(|d| d.names.contains(&name))
}

/// For `fabcheck doc`: each function's options and the fields of what it returns, node methods
/// first, each part by name.
pub(crate) fn reference() -> Vec<(&'static str, &'static [&'static str], Vec<String>)> {
    let mut ds: Vec<&Decl> = decls()
        .iter()
        .filter(|d| !d.names[0].starts_with("parse::") && !d.names[0].starts_with("test"))
        // Functions without options or a result are described in the list of functions only.
        .filter(|d| d.method || !d.opts.is_empty() || !matches!(d.returns, Returns::Plain(_)))
        .collect();
    ds.sort_by_key(|d| (!d.method, d.call));
    ds.into_iter()
        .map(|d| {
            let fields = match d.returns {
                Returns::One(s) => describe(s),
                Returns::List(s) => vec![format!("(array of: {})", describe(s).join(", "))],
                Returns::ByNode(s) => vec![format!("(map: node name -> {})", s.name)],
                Returns::Plain("nothing") => vec![],
                Returns::Plain(p) => vec![format!("({p})")],
            };
            (d.call, d.opts, fields)
        })
        .collect()
}

/// For `fabcheck doc`: the results found inside other results (`perftest row`), each once, by
/// name.
pub(crate) fn nested_kinds() -> Vec<(&'static str, Vec<String>)> {
    fn visit(s: &'static Shape, out: &mut Vec<(&'static str, Vec<String>)>) {
        for (_, n) in &s.nested {
            let (Nest::One(n) | Nest::Many(n)) = *n;
            if !out.iter().any(|(name, _)| *name == n.name) {
                out.push((n.name, describe(n)));
                visit(n, out);
            }
        }
    }
    let mut out = Vec::new();
    for d in decls() {
        if let Returns::One(s) | Returns::List(s) | Returns::ByNode(s) = d.returns {
            visit(s, &mut out);
        }
    }
    out.sort_by_key(|(name, _)| *name);
    out
}

/// A shape's fields, nested results by name: `rows (array of perftest row)`.
fn describe(s: &Shape) -> Vec<String> {
    s.fields
        .iter()
        .map(|f| match s.nested(f) {
            Some(Nest::One(n)) => format!("{f} ({})", n.name),
            Some(Nest::Many(n)) => format!("{f} (array of {})", n.name),
            None => f.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::decl;
    use crate::parse;
    use crate::primitives::{nccl as pnccl, pair as ppair, ping as pping, ssh_hop, tools};
    use crate::util::shape::{struct_fields, Nest, Returns, Shape, Shaped};

    /// Every field a result really has is declared, recursively (a field the Rust type gains
    /// and the declaration lacks would be refused at run time).
    fn all_declared(v: &serde_json::Value, s: &Shape, at: &str) {
        let serde_json::Value::Object(m) = v else {
            return;
        };
        for (k, x) in m {
            assert!(s.has(k), "{at}: `{k}` is not declared in {}", s.name);
            match (s.nested(k), x) {
                (Some(Nest::One(n)), x) => all_declared(x, n, &format!("{at}.{k}")),
                (Some(Nest::Many(n)), serde_json::Value::Array(a)) => {
                    for x in a {
                        all_declared(x, n, &format!("{at}.{k}[]"));
                    }
                }
                _ => {}
            }
        }
    }

    fn shape_of(name: &str) -> &'static Shape {
        match decl(name)
            .unwrap_or_else(|| panic!("{name} is not declared"))
            .returns
        {
            Returns::One(s) | Returns::List(s) | Returns::ByNode(s) => s,
            Returns::Plain(_) => panic!("{name} returns no result"),
        }
    }

    #[test]
    fn skipped_fields_are_declared_too() {
        // Left out of JSON when empty, still fields: reading them must give (), not an error.
        assert!(struct_fields::<parse::nccl::Nccl>().contains(&"cpu_time".to_string()));
        let nccl = shape_of("all_reduce_perf");
        assert!(nccl.has("cpu_time") && nccl.has("launcher") && nccl.has("rows"));
        let Some(Nest::Many(row)) = nccl.nested("rows") else {
            panic!("rows are nccl rows")
        };
        assert!(row.has("timestamp") && row.has("type") && !row.has("r#type"));
        assert!(shape_of("ping").has("stderr") && !shape_of("parse::ping").has("stderr"));
        assert!(shape_of("ethtool").has("speed_mbps") && !shape_of("ethtool").has("speed_mpbs"));
    }

    /// Every real capture under tests/fixtures that a parser reads gives only declared fields.
    #[test]
    fn real_results_have_only_declared_fields() {
        let fx = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let files: Vec<_> = std::fs::read_dir(&fx)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
            .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
            .collect();
        let mut checked = 0;
        for p in parse::parsers() {
            let s = shape_of(&format!("parse::{}", p.name()));
            for text in &files {
                let Ok(v) = (p.parse)(text) else { continue };
                match &v {
                    serde_json::Value::Array(a) => {
                        a.iter().for_each(|x| all_declared(x, s, p.kind))
                    }
                    v => all_declared(v, s, p.kind),
                }
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} fixtures parsed");
    }

    #[test]
    fn primitive_results_have_only_declared_fields() {
        let ping = pping::PingResult {
            stderr: Some("ping: sendmsg: Message too long".into()),
            ..Default::default()
        };
        all_declared(
            &serde_json::to_value(ping).unwrap(),
            shape_of("ping"),
            "ping",
        );
        let rail = ppair::Rail {
            result: ppair::PerftestResult {
                server: Some(Default::default()),
                ..Default::default()
            },
            ..Default::default()
        };
        let port = ppair::PortResult {
            rails: vec![rail],
            ..Default::default()
        };
        let v = serde_json::to_value(port).unwrap();
        all_declared(&v, shape_of("ib_write_bw_port"), "port");
        let v = serde_json::to_value(pnccl::NcclResult::default()).unwrap();
        all_declared(&v, shape_of("nccl_test"), "nccl");
        let v = serde_json::to_value(ssh_hop::SshHop::default()).unwrap();
        all_declared(&v, shape_of("ssh_hop"), "hop");
        let v = serde_json::to_value(tools::FileInfo::default()).unwrap();
        all_declared(&v, shape_of("file_info"), "file_info");
        // The declaration is the type's own shape, not a copy of it.
        assert!(std::ptr::eq(shape_of("ssh_hop"), ssh_hop::SshHop::shape()));
    }

    #[test]
    fn every_parser_and_option_list_is_declared() {
        for p in parse::parsers() {
            assert!(
                decl(&format!("parse::{}", p.name())).is_some(),
                "{}",
                p.kind
            );
        }
        for name in ["ib_read_bw", "ib_send_bw_port", "test_each", "metric"] {
            assert!(!decl(name).expect(name).opts.is_empty(), "{name}");
        }
        assert!(decl("test_pairs").unwrap().opts.contains(&"pattern"));
    }

    fn fn_names(e: &rhai::Engine) -> Vec<String> {
        e.gen_fn_signatures(false)
            .iter()
            .map(|s| s.split('(').next().unwrap_or("").to_string())
            .collect()
    }

    /// Every name a script can call is declared once: no function is registered without its
    /// row, and no two rows claim one name.
    #[test]
    fn every_registered_function_is_declared_once() {
        let decls = super::decls();
        let mut names: Vec<&str> = decls.iter().flat_map(|d| d.names.iter().copied()).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len(), "a name declared twice");
        let env = std::sync::Arc::new(crate::run::env::RunEnv::local());
        let tests = std::sync::Arc::new(std::sync::Mutex::new(Default::default()));
        let mut engine = rhai::Engine::new_raw();
        super::register_all(&mut engine, env, tests);
        // A result's and a dry-run stand-in's own map-like functions are their types'.
        let mut types = rhai::Engine::new_raw();
        super::super::dry::register(&mut types);
        super::super::record::register(&mut types);
        let of_types = fn_names(&types);
        let undeclared: Vec<String> = fn_names(&engine)
            .into_iter()
            .filter(|f| !of_types.contains(f))
            .filter(|f| {
                !f.starts_with("get$") && !f.starts_with("set$") && !f.starts_with("index$")
            })
            .filter(|f| f.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
            .filter(|f| {
                ![
                    "to_string",
                    "to_debug",
                    // Rhai's own, shadowed to record into the call's test (print.rs).
                    "print",
                    "debug",
                    "keys",
                    "values",
                    "len",
                    "to_json",
                    "to_map",
                    "contains",
                ]
                .contains(&f.as_str())
            })
            .filter(|f| !names.contains(&f.as_str()))
            .collect();
        assert!(
            undeclared.is_empty(),
            "registered without a declaration: {undeclared:?}"
        );
    }
}

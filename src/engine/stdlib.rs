//! `import "link" as link;`: the Rhai modules of `stdlib/`, embedded in the binary and
//! overridable with `--stdlib DIR` / `FABCHECK_STDLIB`; other paths resolve relative to the
//! importing script's folder.

use crate::util::fs::{read_capped, SCRIPT_CAP};
use rhai::{Engine, EvalAltResult, Module, ModuleResolver, Position, Scope};

pub(crate) type SharedModule = Arc<Module>;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// (module name, source) of every embedded stdlib module.
pub(crate) const EMBEDDED: &[(&str, &str)] = &[
    ("common", include_str!("../../stdlib/common.rhai")),
    ("link", include_str!("../../stdlib/link.rhai")),
    ("rdma", include_str!("../../stdlib/rdma.rhai")),
    ("nccl", include_str!("../../stdlib/nccl.rhai")),
    ("acceptance", include_str!("../../stdlib/acceptance.rhai")),
    ("health", include_str!("../../stdlib/health.rhai")),
    ("infiniband", include_str!("../../stdlib/infiniband.rhai")),
    (
        "second_cable",
        include_str!("../../stdlib/second_cable.rhai"),
    ),
];

/// The text of every module file a script's imports read (script folder, `--stdlib DIR`),
/// shared by the resolvers of one script: where `param` may be read besides the script.
pub(crate) type ModuleSources = Arc<Mutex<Vec<String>>>;

/// Resolves `import "X"`: a stdlib module (the override folder first, then the embedded
/// copy), else the file `X.rhai` relative to the script's folder. Only the modules a script
/// imports are read, each only if it is a regular file of at most
/// [`crate::util::fs::SCRIPT_CAP`] bytes (a FIFO or `/dev/zero` beside a script is an error
/// of the import that names it, never a hang).
pub(crate) struct Resolver {
    script_dir: PathBuf,
    override_dir: Option<PathBuf>,
    cache: Mutex<HashMap<String, SharedModule>>,
    sources: ModuleSources,
}

impl Resolver {
    pub(crate) fn new(
        script_dir: PathBuf,
        override_dir: Option<PathBuf>,
        sources: ModuleSources,
    ) -> Resolver {
        Resolver {
            script_dir,
            override_dir,
            cache: Mutex::new(HashMap::new()),
            sources,
        }
    }

    /// Source of a stdlib module: the override directory first, then the embedded copy.
    pub(crate) fn stdlib_source(&self, name: &str) -> Option<(String, String)> {
        if let Some(dir) = &self.override_dir {
            let p = dir.join(format!("{name}.rhai"));
            if p.exists() {
                if let Ok(s) = read_capped(&p, SCRIPT_CAP, "module") {
                    return Some((s, p.display().to_string()));
                }
            }
        }
        EMBEDDED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| (s.to_string(), format!("stdlib/{name}.rhai")))
    }

    /// The source of module file `path` (relative to the script's folder, `.rhai` added).
    fn file_source(
        &self,
        path: &str,
        pos: Position,
    ) -> Result<(String, String), Box<EvalAltResult>> {
        let mut file = self.script_dir.join(path);
        file.set_extension("rhai");
        match read_capped(&file, SCRIPT_CAP, "module") {
            Ok(text) => Ok((text, file.display().to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Box::new(
                EvalAltResult::ErrorModuleNotFound(path.to_string(), pos),
            )),
            Err(e) => Err(Box::new(EvalAltResult::ErrorRuntime(
                format!("cannot read {}: {e}", file.display()).into(),
                pos,
            ))),
        }
    }
}

impl ModuleResolver for Resolver {
    fn resolve(
        &self,
        engine: &Engine,
        _source: Option<&str>,
        path: &str,
        pos: Position,
    ) -> Result<SharedModule, Box<EvalAltResult>> {
        self.load(engine, &[], path, pos)
    }

    /// An `import` while a module is evaluated: the modules being imported come with the
    /// module's own evaluation ([`Importing`], the tag of its global state).
    fn resolve_raw(
        &self,
        engine: &Engine,
        global: &mut rhai::GlobalRuntimeState,
        _scope: &mut Scope,
        path: &str,
        pos: Position,
    ) -> Result<SharedModule, Box<EvalAltResult>> {
        let chain = global
            .tag
            .read_lock::<Importing>()
            .map(|i| i.0.clone())
            .unwrap_or_default();
        self.load(engine, &chain, path, pos)
    }
}

/// The modules being imported around a module's evaluation, outermost first: the tag of the
/// global state the module's top level runs in, so that its own imports see the chain.
#[derive(Clone, Debug)]
struct Importing(Vec<String>);

/// `import "self"` or a <-> b: without this, evaluating the module would import it again,
/// until the stack overflows.
fn check_cycle(chain: &[String], path: &str, pos: Position) -> Result<(), Box<EvalAltResult>> {
    if chain.iter().any(|p| p == path) || chain.len() >= 32 {
        let mut all = chain.to_vec();
        all.push(path.to_string());
        return Err(Box::new(EvalAltResult::ErrorRuntime(
            format!(
                "import cycle: {} (a module cannot import itself, directly or through others)",
                all.iter()
                    .map(|c| format!("\"{c}\""))
                    .collect::<Vec<_>>()
                    .join(" imports ")
            )
            .into(),
            pos,
        )));
    }
    Ok(())
}

impl Resolver {
    /// Module `path`, imported inside the modules of `chain`: from the cache, else read,
    /// compiled and evaluated (its own imports see `chain` and `path`).
    fn load(
        &self,
        engine: &Engine,
        chain: &[String],
        path: &str,
        pos: Position,
    ) -> Result<SharedModule, Box<EvalAltResult>> {
        if let Some(m) = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(path)
        {
            return Ok(m.clone());
        }
        check_cycle(chain, path, pos)?;
        let (text, origin) = match self.stdlib_source(path) {
            Some(found) => found,
            None => self.file_source(path, pos)?,
        };
        if !origin.starts_with("stdlib/") {
            self.sources
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(text.clone());
        }
        let mut ast = engine.compile(&text).map_err(|e| {
            Box::new(EvalAltResult::ErrorInModule(
                origin.clone(),
                Box::new(EvalAltResult::ErrorParsing(*e.0, e.1)),
                pos,
            ))
        })?;
        ast.set_source(origin.clone());
        let mut global = engine.new_global_runtime_state();
        let mut inner = chain.to_vec();
        inner.push(path.to_string());
        global.tag = rhai::Dynamic::from(Importing(inner));
        let m: SharedModule = Arc::new(
            Module::eval_ast_as_new_raw(engine, &mut Scope::new(), &mut global, &ast)
                .map_err(|e| Box::new(EvalAltResult::ErrorInModule(origin, e, pos)))?,
        );
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.to_string(), m.clone());
        Ok(m)
    }
}

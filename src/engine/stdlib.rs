//! `import "link" as link;`: the Rhai modules of `stdlib/`, embedded in the binary and
//! overridable with `--stdlib DIR` / `FABCHECK_STDLIB`; other paths resolve relative to the
//! importing script's folder.

use rhai::module_resolvers::FileModuleResolver;
use rhai::{Engine, EvalAltResult, Module, ModuleResolver, Position, Scope};

pub type SharedModule = Arc<Module>;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// (module name, source) of every embedded stdlib module.
pub const EMBEDDED: &[(&str, &str)] = &[
    ("common", include_str!("../../stdlib/common.rhai")),
    ("link", include_str!("../../stdlib/link.rhai")),
    ("rdma", include_str!("../../stdlib/rdma.rhai")),
    ("nccl", include_str!("../../stdlib/nccl.rhai")),
    ("acceptance", include_str!("../../stdlib/acceptance.rhai")),
    ("health", include_str!("../../stdlib/health.rhai")),
    (
        "second_cable",
        include_str!("../../stdlib/second_cable.rhai"),
    ),
];

pub struct Resolver {
    files: FileModuleResolver,
    override_dir: Option<PathBuf>,
    cache: Mutex<HashMap<String, SharedModule>>,
}

impl Resolver {
    pub fn new(script_dir: PathBuf, override_dir: Option<PathBuf>) -> Resolver {
        Resolver {
            files: FileModuleResolver::new_with_path(script_dir),
            override_dir,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Source of a stdlib module: the override directory first, then the embedded copy.
    pub fn stdlib_source(&self, name: &str) -> Option<(String, String)> {
        if let Some(dir) = &self.override_dir {
            let p = dir.join(format!("{name}.rhai"));
            if let Ok(s) = std::fs::read_to_string(&p) {
                return Some((s, p.display().to_string()));
            }
        }
        EMBEDDED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| (s.to_string(), format!("stdlib/{name}.rhai")))
    }
}

impl ModuleResolver for Resolver {
    fn resolve(
        &self,
        engine: &Engine,
        source: Option<&str>,
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
        // `import "self"` or a <-> b: without this, evaluating the module would import it again,
        // until the stack overflows.
        let _guard = ImportGuard::enter(path, pos)?;
        let Some((text, origin)) = self.stdlib_source(path) else {
            return self.files.resolve(engine, source, path, pos);
        };
        let mut ast = engine.compile(&text).map_err(|e| {
            Box::new(EvalAltResult::ErrorInModule(
                origin.clone(),
                Box::new(EvalAltResult::ErrorParsing(*e.0, e.1)),
                pos,
            ))
        })?;
        ast.set_source(origin.clone());
        let m: SharedModule = Arc::new(
            Module::eval_ast_as_new(Scope::new(), &ast, engine)
                .map_err(|e| Box::new(EvalAltResult::ErrorInModule(origin, e, pos)))?,
        );
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.to_string(), m.clone());
        Ok(m)
    }
}

thread_local! {
    static IMPORTING: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Modules being imported on this thread, innermost last.
struct ImportGuard;

impl ImportGuard {
    fn enter(path: &str, pos: Position) -> Result<ImportGuard, Box<EvalAltResult>> {
        IMPORTING.with(|s| {
            let mut s = s.borrow_mut();
            if s.iter().any(|p| p == path) || s.len() >= 32 {
                let mut chain = s.clone();
                chain.push(path.to_string());
                return Err(Box::new(EvalAltResult::ErrorRuntime(
                    format!(
                        "import cycle: {} (a module cannot import itself, directly or through others)",
                        chain.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(" imports ")
                    )
                    .into(),
                    pos,
                )));
            }
            s.push(path.to_string());
            Ok(ImportGuard)
        })
    }
}

impl Drop for ImportGuard {
    fn drop(&mut self) {
        IMPORTING.with(|s| {
            s.borrow_mut().pop();
        });
    }
}

//! The Rhai engine: script loading with explicit limits, the test registry and the runner that
//! turns registered tests into results. Every function scripts call is registered in
//! `bindings/`.

pub(crate) mod bindings;
pub(crate) mod diagnostics;
pub(crate) mod pair_plan;
pub(crate) mod params;
pub(crate) mod runner;
pub(crate) mod signal;
pub(crate) mod stdlib;
pub(crate) mod tag;
pub(crate) mod testdef;
pub(crate) mod typos;

use crate::run::cancel;
use crate::run::env::RunEnv;
use diagnostics::Diagnostic;
use rhai::{Dynamic, Engine, AST};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A compiled script with its own engine and test registry.
pub struct Script {
    pub path: PathBuf,
    /// The script's name in reports (file stem, e.g. `five_step_acceptance`).
    pub name: String,
    pub source: String,
    pub engine: Arc<Engine>,
    pub ast: Arc<AST>,
    pub registry: testdef::SharedRegistry,
    /// The text of the module files its imports read (not the embedded stdlib).
    pub modules: stdlib::ModuleSources,
}

/// Limits are explicit: debug builds have much lower defaults than release builds.
fn apply_limits(engine: &mut Engine) {
    engine.set_max_call_levels(96);
    engine.set_max_expr_depths(256, 128);
    engine.set_max_string_size(64 * 1024 * 1024);
    engine.set_max_array_size(1_000_000);
    engine.set_max_map_size(200_000);
    engine.set_max_modules(256);
    engine.set_max_operations(0); // unlimited count; runaway loops stop at the test timeout
}

/// An engine with every fabcheck function registered (no test registry attached).
pub(crate) fn new_engine(
    env: &Arc<RunEnv>,
    registry: testdef::SharedRegistry,
    script_dir: &Path,
    modules: stdlib::ModuleSources,
) -> Engine {
    let mut engine = Engine::new();
    apply_limits(&mut engine);
    // Rhai gives the progress callback no call context: the deadline of the evaluation on
    // this thread is the one the runner entered in the run's `running` (`context::Running`).
    let run = env.clone();
    engine.on_progress(move |_| {
        if cancel::interrupted() {
            Some(Dynamic::from("interrupted"))
        } else if run.running.past_deadline() {
            Some(Dynamic::from("timeout"))
        } else {
            None
        }
    });
    // `print`/`debug` record through their call's tag (`bindings/print.rs`).
    engine.on_print(|_| {});
    engine.on_debug(|_, _, _| {});
    bindings::register(&mut engine, env.clone(), registry);
    engine.set_module_resolver(stdlib::Resolver::new(
        script_dir.to_path_buf(),
        env.stdlib_dir.clone(),
        modules,
    ));
    engine
}

/// Read and compile a script; syntax errors and unknown functions are diagnostics (exit 2).
pub(crate) fn load(path: &Path, env: &Arc<RunEnv>) -> Result<Script, Vec<Diagnostic>> {
    let display = path.display().to_string();
    let source = crate::util::fs::read_capped(path, crate::util::fs::SCRIPT_CAP, "script")
        .map_err(|e| {
            vec![Diagnostic::plain(
                &display,
                format!("cannot read the script: {e}"),
                "check the path and its permissions",
            )]
        })?;
    load_text(path, source, env)
}

/// Compile `source` as the script `path` (its imports resolve beside `path`): a script the
/// binary carries (`fabcheck health`'s checks), or one read by [`load`].
pub(crate) fn load_text(
    path: &Path,
    source: String,
    env: &Arc<RunEnv>,
) -> Result<Script, Vec<Diagnostic>> {
    let display = path.display().to_string();
    let registry: testdef::SharedRegistry = Arc::new(Mutex::new(testdef::Registry::default()));
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let modules = stdlib::ModuleSources::default();
    let mut engine = new_engine(env, registry.clone(), &dir, modules.clone());
    let mut ast = engine
        .compile(&source)
        .map_err(|e| vec![Diagnostic::from_parse_error(&display, &source, &e)])?;
    ast.set_source(display.clone());
    // Closures run later (each test) without the top level's imports: make every top-level
    // `import "X" as Y;` visible everywhere by registering the module under Y.
    let resolver = stdlib::Resolver::new(dir.clone(), env.stdlib_dir.clone(), modules.clone());
    let mut imported = Vec::new();
    for stmt in ast.statements() {
        if let rhai::Stmt::Import(x, pos) = stmt {
            if let rhai::Expr::StringConstant(path, _) = &x.0 {
                use rhai::ModuleResolver;
                let m = resolver
                    .resolve(&engine, Some(&display), path, *pos)
                    .map_err(|e| vec![import_error(&display, &source, path, *pos, &e)])?;
                if !x.1.name.is_empty() {
                    imported.push((x.1.name.to_string(), m));
                }
            }
        }
    }
    for (alias, m) in imported {
        engine.register_static_module(alias, m);
    }
    // `for` loop variables: a test closure capturing one gets its own iteration's value.
    let mut loop_vars = std::collections::HashSet::new();
    ast.walk(&mut |path: &[rhai::ASTNode]| {
        if let Some(rhai::ASTNode::Stmt(rhai::Stmt::For(x, _))) = path.last() {
            loop_vars.insert(x.0.name.to_string());
            if let Some(i) = &x.1 {
                loop_vars.insert(i.name.to_string());
            }
        }
        true
    });
    registry.lock().unwrap_or_else(|p| p.into_inner()).loop_vars = loop_vars;
    let unknown = diagnostics::unknown_functions(&engine, &ast, &display, &source);
    if !unknown.is_empty() {
        return Err(unknown);
    }
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| display.clone());
    Ok(Script {
        path: path.to_path_buf(),
        name,
        source,
        engine: Arc::new(engine),
        ast: Arc::new(ast),
        registry,
        modules,
    })
}

/// `import "X"` that cannot be resolved: where, why, and which modules there are.
fn import_error(
    file: &str,
    source: &str,
    path: &str,
    pos: rhai::Position,
    e: &rhai::EvalAltResult,
) -> Diagnostic {
    let stdlib: Vec<&str> = stdlib::EMBEDDED.iter().map(|m| m.0).collect();
    Diagnostic::at(
        file,
        source,
        pos.line(),
        pos.position(),
        format!("cannot import `{path}`: {}", first_line(&e.to_string())),
        Some(format!(
            "stdlib modules: {}; other paths are relative to the script's folder",
            stdlib.join(", ")
        )),
    )
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

#[cfg(test)]
mod layering {
    use std::path::{Path, PathBuf};

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// The folders below `engine` (what imports no Rhai).
    const BELOW_THE_ENGINE: [&str; 7] = [
        "util",
        "parse",
        "primitives",
        "run",
        "transport",
        "inventory",
        "report",
    ];

    /// The Rust files under each of `dirs` (folders of `src`).
    fn files_in(src: &Path, dirs: &[&str]) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for d in dirs {
            rust_files(&src.join(d), &mut files);
        }
        files
    }

    /// Lines of `file` that name `crate::MODULE` outside comments and unit tests.
    fn naming(file: &Path, module: &str) -> Vec<String> {
        let needle = format!("crate::{module}");
        let text = std::fs::read_to_string(file).unwrap();
        text.lines()
            .take_while(|l| l.trim() != "#[cfg(test)]")
            .filter(|l| !l.trim_start().starts_with("//") && l.contains(&needle))
            .map(|l| format!("{}: {}", file.display(), l.trim()))
            .collect()
    }

    /// Arrows go one way: the engine reaches the transports only through `run`/`primitives`,
    /// and the parsers only through the `parse::` script module (results carry their own
    /// shapes: no declaration table names parser types).
    #[test]
    fn the_engine_does_not_import_transport_or_parse_directly() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        assert!(files.len() > 5, "found {} engine files", files.len());
        let mut bad = Vec::new();
        for f in &files {
            bad.extend(naming(f, "transport"));
            let allowed = f.ends_with("bindings/parse.rs");
            if !allowed {
                bad.extend(naming(f, "parse"));
            }
        }
        assert!(bad.is_empty(), "engine imports below run: {bad:#?}");
    }

    /// The modules a file of `root` (`src/engine`, `src/run`) uses, read from its code
    /// (comments and unit tests left out): paths from `super::`, `super::super::`,
    /// `crate::engine::` (`crate::run::`) and `self::` (and
    /// `use` groups of them) and, in a `mod.rs`, its own modules named `x::`, followed as far
    /// as they name modules; an item of a `mod.rs` uses that `mod.rs`.
    fn uses(file: &Path, root: &Path) -> Vec<PathBuf> {
        let text = std::fs::read_to_string(file).unwrap();
        let code: Vec<&str> = text
            .lines()
            .take_while(|l| l.trim() != "#[cfg(test)]")
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect();
        let code = code.join("\n");
        let dir = file.parent().unwrap().to_path_buf();
        let is_mod = file.ends_with("mod.rs");
        // The directory `super` names from this file.
        let parent = if is_mod {
            dir.parent().unwrap().to_path_buf()
        } else {
            dir.clone()
        };
        let path = r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*";
        let krate = format!("crate::{}::", root.file_name().unwrap().to_str().unwrap());
        let re = regex::Regex::new(&format!(
            r"({}|(?:super::)+|self::)(\{{[^}}]*\}}|{path})",
            regex::escape(&krate)
        ))
        .unwrap();
        let mut out = Vec::new();
        for c in re.captures_iter(&code) {
            let base = match &c[1] {
                k if k == krate => root.to_path_buf(),
                "self::" => dir.clone(),
                p => {
                    let mut b = parent.clone();
                    for _ in 1..p.matches("super::").count() {
                        b = b.parent().unwrap().to_path_buf();
                    }
                    b
                }
            };
            for n in c[2].trim_matches(|c| c == '{' || c == '}').split(',') {
                let segs: Vec<&str> = n.trim().split("::").map(str::trim).collect();
                if !segs[0].is_empty() && segs[0] != "self" {
                    out.extend(module(&base, &segs));
                }
            }
        }
        if is_mod {
            let child = regex::Regex::new(&format!(r"\b({path})::")).unwrap();
            for c in child.captures_iter(&code) {
                let segs: Vec<&str> = c[1].split("::").collect();
                if dir.join(format!("{}.rs", segs[0])).exists() {
                    out.extend(module(&dir, &segs));
                }
            }
        }
        out.retain(|p| p != file && p.starts_with(root));
        out.sort();
        out.dedup();
        out
    }

    /// The file of the module `segs` names from `dir`, followed as far as they name modules
    /// (`dir/a.rs`, `dir/a/mod.rs`, then `dir/a/b.rs` ...); a first name that is no module
    /// is an item of `dir/mod.rs`.
    fn module(dir: &Path, segs: &[&str]) -> Option<PathBuf> {
        let mut at = dir.join("mod.rs").exists().then(|| dir.join("mod.rs"));
        let mut base = dir.to_path_buf();
        for s in segs {
            let file = base.join(format!("{s}.rs"));
            let sub = base.join(s);
            if file.exists() {
                at = Some(file);
            } else if sub.join("mod.rs").exists() {
                at = Some(sub.join("mod.rs"));
            } else {
                break;
            }
            base = sub;
        }
        at
    }

    /// A circle of `use`s among the files, if there is one.
    fn circle(graph: &[(PathBuf, Vec<PathBuf>)]) -> Option<Vec<PathBuf>> {
        fn visit(
            at: &PathBuf,
            graph: &[(PathBuf, Vec<PathBuf>)],
            path: &mut Vec<PathBuf>,
            done: &mut Vec<PathBuf>,
        ) -> Option<Vec<PathBuf>> {
            if let Some(i) = path.iter().position(|p| p == at) {
                let mut c = path[i..].to_vec();
                c.push(at.clone());
                return Some(c);
            }
            if done.contains(at) {
                return None;
            }
            path.push(at.clone());
            let next = graph.iter().find(|(f, _)| f == at).map(|(_, u)| u.clone());
            for n in next.unwrap_or_default() {
                if let Some(c) = visit(&n, graph, path, done) {
                    return Some(c);
                }
            }
            path.pop();
            done.push(at.clone());
            None
        }
        let mut done = Vec::new();
        graph
            .iter()
            .find_map(|(f, _)| visit(f, graph, &mut Vec::new(), &mut done))
    }

    /// The circle of `use`s among the files of `src/DIR`, if any, as `a.rs -> b.rs -> a.rs`.
    /// `modules`: among its modules instead, a folder (`diagnosis/`) one module whose files
    /// may use each other.
    fn circle_in(dir: &str, least_edges: usize, modules: bool) -> Option<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        let unit = |f: &Path| -> PathBuf {
            match f.strip_prefix(&root).unwrap().components().next() {
                Some(c) if modules => root.join(c),
                _ => f.to_path_buf(),
            }
        };
        let mut graph: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
        for f in &files {
            let (from, to) = (
                unit(f),
                uses(f, &root).iter().map(|u| unit(u)).collect::<Vec<_>>(),
            );
            let to: Vec<PathBuf> = to.into_iter().filter(|u| *u != from).collect();
            match graph.iter_mut().find(|(g, _)| *g == from) {
                Some((_, u)) => u.extend(to),
                None => graph.push((from, to)),
            }
        }
        let edges: usize = graph.iter().map(|(_, u)| u.len()).sum();
        assert!(edges > least_edges, "read only {edges} uses in src/{dir}");
        let c = circle(&graph)?;
        let names: Vec<String> = c
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        Some(names.join(" -> "))
    }

    /// The engine's files import one way: no circle of `use`s (issue 34: the result table was
    /// the hub of an 11-file circle inside `bindings/`).
    #[test]
    fn the_engine_has_no_import_circle() {
        // The reader sees a circle where there is one (two files that use each other).
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
        let a = root.join("a.rs");
        let b = root.join("b.rs");
        assert!(circle(&[(a.clone(), vec![b.clone()]), (b, vec![a])]).is_some());
        if let Some(c) = circle_in("engine", 30, false) {
            panic!("import circle in src/engine: {c}");
        }
    }

    /// `run`'s modules import one way too (issue 48 item 4: `env.rs` and `preflight.rs` used
    /// each other; the dry run's listing is now a transport of its own, `run/dry.rs`). A
    /// folder of `run` (`diagnosis/`) is one module here.
    #[test]
    fn run_has_no_import_circle() {
        if let Some(c) = circle_in("run", 20, true) {
            panic!("import circle in src/run: {c}");
        }
    }

    /// No `thread_local!` holds state in `src/run` or `src/engine` (issue 48 item 1: state a
    /// thread carries is invisible in every signature, and a command on a worker thread
    /// depends on which thread runs it). `LEFT` names the one file item 1 has still to empty,
    /// so that a new one fails here, and an emptied one must leave the list.
    #[test]
    fn no_thread_local_holds_state_in_run_or_engine() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let marker = concat!("thread_", "local!");
        let mut found = Vec::new();
        for dir in ["run", "engine"] {
            let mut files = Vec::new();
            rust_files(&src.join(dir), &mut files);
            assert!(files.len() > 10, "read {} files of src/{dir}", files.len());
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap();
                let code = text
                    .lines()
                    .take_while(|l| l.trim() != "#[cfg(test)]")
                    .filter(|l| !l.trim_start().starts_with("//"));
                if code.into_iter().any(|l| l.contains(marker)) {
                    found.push(f.strip_prefix(&src).unwrap().display().to_string());
                }
            }
        }
        assert!(
            found.is_empty(),
            "{marker} in src/run or src/engine ({found:?}): the running test is a value the runner owns, reaching bindings through Rhai's tag and primitives as an argument"
        );
    }

    /// One output channel (issue 48 item 5): below `cli` and `report` nothing prints; what a
    /// run says goes through the observer or back to the caller as a value. `util/skip.rs` is
    /// the unit tests' skip (compiled for tests only): its NOTICE is libtest's output.
    #[test]
    fn nothing_prints_below_cli_and_report() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let skip = |f: &Path| {
            let r = f.strip_prefix(&src).unwrap();
            r.starts_with("cli")
                || r.starts_with("report")
                || r == Path::new("main.rs")
                || r == Path::new("util/skip.rs")
        };
        let printing = regex::Regex::new(r"\b(e?print(ln)?|dbg)!\(").unwrap();
        let mut bad = Vec::new();
        let mut read = 0;
        for f in files.iter().filter(|f| !skip(f)) {
            read += 1;
            let text = std::fs::read_to_string(f).unwrap();
            let code = text
                .lines()
                .take_while(|l| l.trim() != "#[cfg(test)]")
                .filter(|l| !l.trim_start().starts_with("//"));
            for l in code {
                if printing.is_match(l) {
                    bad.push(format!(
                        "{}: {}",
                        f.strip_prefix(&src).unwrap().display(),
                        l.trim()
                    ));
                }
            }
        }
        assert!(read > 100, "read {read} files");
        assert!(bad.is_empty(), "printing below cli and report: {bad:#?}");
    }

    /// A tool's three files are modules of their folders: Rust ignores a file no `mod` line
    /// names, and a parser or binding in it would silently not exist.
    #[test]
    fn every_tool_file_is_declared() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut missing = Vec::new();
        let mut seen = 0;
        for dir in ["parse", "primitives", "engine/bindings"] {
            let mod_rs = std::fs::read_to_string(src.join(dir).join("mod.rs")).unwrap();
            for e in std::fs::read_dir(src.join(dir)).unwrap() {
                let p = e.unwrap().path();
                let Some(stem) = p.file_stem().and_then(|s| s.to_str()) else {
                    continue;
                };
                if p.extension().is_none_or(|x| x != "rs") || stem == "mod" {
                    continue;
                }
                seen += 1;
                let declared = mod_rs.lines().any(|l| {
                    let l = l
                        .trim()
                        .trim_start_matches("pub ")
                        .trim_start_matches("pub(crate) ");
                    l == format!("mod {stem};")
                });
                if !declared {
                    missing.push(format!("src/{dir}/{stem}.rs"));
                }
            }
        }
        assert!(seen > 60, "saw {seen} files");
        assert!(
            missing.is_empty(),
            "files without a `mod` line: {missing:?}"
        );
    }

    /// No Rhai type below `engine`: the primitives, the run, the transports, the parsers and
    /// the shapes of results are plain Rust.
    #[test]
    fn no_rhai_below_the_engine() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let bad: Vec<String> = files_in(&src, &BELOW_THE_ENGINE)
            .iter()
            .flat_map(|f| naming_crate(f, "rhai::"))
            .collect();
        assert!(bad.is_empty(), "Rhai below the engine: {bad:#?}");
    }

    /// Errors are typed below `cli` (issue 34, item 6): a `Result<_, String>` says nothing a
    /// caller can match on, and its message is assembled far from where the fault is known.
    /// `cli` keeps strings: there the message is the final text shown, with the exit code.
    #[test]
    fn errors_are_typed_below_the_cli() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let stringly = regex::Regex::new(r"Result<.*,\s*String>\s*(?:[{;=)]|$)").unwrap();
        assert!(stringly.is_match("fn f() -> Result<Vec<(usize, usize)>, String> {"));
        assert!(stringly.is_match("fn f(p: Result<String, String>) -> String {"));
        assert!(!stringly.is_match("-> Result<BTreeMap<String, String>, InventoryError> {"));
        let mut files = files_in(&src, &["engine"]);
        files.extend(files_in(&src, &BELOW_THE_ENGINE));
        assert!(files.len() > 100, "read {} files", files.len());
        let bad: Vec<String> = files
            .iter()
            .flat_map(|f| code_lines(f, |l| stringly.is_match(l)))
            .collect();
        assert!(bad.is_empty(), "Result<_, String> below cli: {bad:#?}");
    }

    /// The dry run is confined (issue 34, item 6): `--dry-run` is read where the run is set up
    /// (`cli`), where a command is listed instead of sent and its needs noted (`run/env.rs`),
    /// where a test's status is decided (`engine/runner.rs`), and by the one primitive that
    /// lists a plan the transport cannot see whole (`primitives/pair.rs`: an exchange's server,
    /// probe, client and stop). Everything else reacts to what a listed command returns (a
    /// `NotRun` transport error, a `DryRun` outcome, a stand-in value).
    #[test]
    fn the_dry_run_flag_is_read_in_few_places() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let allowed = [
            "engine/runner.rs",
            "run/env.rs",
            "run/model.rs",
            "primitives/pair.rs",
        ];
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let mut readers = std::collections::BTreeSet::new();
        for f in &files {
            let rel = f.strip_prefix(&src).unwrap().display().to_string();
            if !naming_crate(f, ".dry_run").is_empty() && !rel.starts_with("cli/") {
                readers.insert(rel);
            }
        }
        assert!(readers.contains("run/env.rs"), "{readers:?}");
        let others: Vec<&String> = readers
            .iter()
            .filter(|r| !allowed.contains(&r.as_str()))
            .collect();
        assert!(others.is_empty(), "--dry-run read in {others:?}");
    }

    /// Issue 34 item 3, issue 48 item 1: a primitive records only into the test record it is
    /// handed (the node's `n.keep(Kept::…)`, the command log of `n.exec`, a `&TestLog`
    /// argument), never one it finds behind its signature's back: of `run::context` it names
    /// the two types, no function.
    #[test]
    fn primitives_keep_only_through_what_they_are_handed() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let files = files_in(&src, &["primitives"]);
        assert!(files.len() > 20, "{files:?}");
        let types = regex::Regex::new(r"context::(\{Kept, TestLog\}|Kept\b|TestLog\b)").unwrap();
        let hidden: Vec<String> = files
            .iter()
            .flat_map(|f| naming_crate(f, "context::"))
            .filter(|l| types.replace_all(l, "").contains("context::"))
            .collect();
        assert!(hidden.is_empty(), "{hidden:#?}");
    }

    /// Issue 48 item 1: a binding given a node by a script hands its primitive the node in
    /// the call's test (`n.in_test(&ctx)`, or `node0`/`node1`/`node_pair`/`node_array`, which
    /// do it): a node handed on as the script gave it records into no test (its commands
    /// would vanish from the report). Every native function with a call context and a node
    /// parameter says `in_test` in its body.
    #[test]
    fn bindings_hand_primitives_the_node_in_the_calls_test() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let files = files_in(&src, &["engine/bindings"]);
        let header = regex::Regex::new(
            r"(\|ctx: NativeCallContext,[^|]*NodeRef[^|]*\||fn \w+\(ctx: NativeCallContext,[^)]*NodeRef[^)]*\))",
        )
        .unwrap();
        let mut seen = 0;
        let mut bad = Vec::new();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for m in header.find_iter(code) {
                seen += 1;
                // The body: up to the next function or registration.
                let rest = &code[m.end()..];
                let end = ["register_fn(", "\nfn ", "api.method(", "api.function("]
                    .iter()
                    .filter_map(|k| rest.find(k))
                    .min()
                    .unwrap_or(rest.len());
                if !rest[..end].contains("in_test(") {
                    bad.push(format!("{}: {}", f.display(), m.as_str()));
                }
            }
        }
        assert!(seen > 15, "read {seen} node bindings");
        assert!(
            bad.is_empty(),
            "a node handed on outside the call's test: {bad:#?}"
        );
    }

    /// Lines of `file` that use `needle` (a crate path) outside comments and unit tests.
    fn naming_crate(file: &Path, needle: &str) -> Vec<String> {
        code_lines(file, |l| l.contains(needle))
    }

    /// Lines of `file` outside comments and unit tests that `hit` holds for, named by file.
    fn code_lines(file: &Path, hit: impl Fn(&str) -> bool) -> Vec<String> {
        let text = std::fs::read_to_string(file).unwrap();
        text.lines()
            .take_while(|l| l.trim() != "#[cfg(test)]")
            .filter(|l| !l.trim_start().starts_with("//") && hit(l))
            .map(|l| format!("{}: {}", file.display(), l.trim()))
            .collect()
    }
}

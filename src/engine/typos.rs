//! `fabcheck check`: typos that would otherwise only show when the script runs, found from the
//! declarations in `bindings/results.rs`:
//! - a field a result does not have (`e.speed_mpbs` after `let e = n.ethtool(iface)`), also
//!   nested (`r.rows[0].bw_avg_gbz`, `for row in r.rows { row.x }`), on a call's result
//!   directly (`n.ethtool(i).speed_mpbs`) and in closures that capture the variable;
//! - an option key a function does not know, in a `#{ ... }` written in the call
//!   (`n.ping(ip, #{ cont: 3 })`, `test("x", #{ timout: "5m" }, || ...)`);
//! - a field a node does not have (`n.interface`): on the node of a `test_each` closure, the
//!   two of a `test_pairs` closure, `node(name)` and the elements of `nodes(...)` and
//!   `inventory_nodes()`.
//!
//! Limits (the run still refuses all of these, as an error of the test): a variable's kind is
//! known only when it is bound by `let` (or `for`) to a declared call, a field of a known
//! result or an element of one, in the same function or closure or captured by the closure;
//! a function's parameters (stdlib helpers taking a result) are not followed; option maps built
//! in a variable and passed on are not checked; a variable assigned anywhere is unknown from
//! there on.

use super::bindings::decl;
use super::diagnostics::Diagnostic;
use crate::util::shape::{Nest, Returns, Shape};
use crate::util::suggest::did_you_mean;
use rhai::{ASTFlags, ASTNode, Expr, Stmt, AST};
use std::collections::BTreeSet;

/// What is known about a value.
#[derive(Clone, Copy)]
enum Ty {
    Rec(&'static Shape),
    /// An array of results.
    Arr(&'static Shape),
    /// A map node name -> result.
    ByNode(&'static Shape),
}

fn of_returns(r: Returns) -> Option<Ty> {
    match r {
        Returns::One(s) => Some(Ty::Rec(s)),
        Returns::List(s) => Some(Ty::Arr(s)),
        Returns::ByNode(s) => Some(Ty::ByNode(s)),
        Returns::Plain(_) => None,
    }
}

/// The address of an AST node, to tell the blocks a binding is visible in.
fn addr(n: &ASTNode) -> usize {
    match n {
        ASTNode::Stmt(s) => *s as *const Stmt as usize,
        ASTNode::Expr(e) => *e as *const Expr as usize,
        _ => 0,
    }
}

/// (line, column), comparable.
type Pos = (usize, usize);

fn pos(p: rhai::Position) -> Pos {
    (p.line().unwrap_or(0), p.position().unwrap_or(0))
}

fn within(b: &rhai::StmtBlock, at: Pos) -> bool {
    pos(b.position()) <= at && at <= pos(b.end_position())
}

/// Where the block that a statement at `at` under `parent` lies in ends (an `if`'s two
/// branches are two blocks: a variable bound in one is not seen in the other).
fn block_end(parent: Option<&ASTNode>, at: Pos) -> Pos {
    let end = |b: &rhai::StmtBlock| pos(b.end_position());
    match parent {
        Some(ASTNode::Stmt(Stmt::If(fc, _) | Stmt::TryCatch(fc, _))) => {
            if within(&fc.body, at) {
                end(&fc.body)
            } else {
                end(&fc.branch)
            }
        }
        Some(ASTNode::Stmt(Stmt::While(fc, _) | Stmt::Do(fc, ..))) => end(&fc.body),
        Some(ASTNode::Stmt(Stmt::For(x, _))) => end(&x.2.body),
        Some(ASTNode::Stmt(Stmt::Block(b))) => end(b),
        _ => (usize::MAX, usize::MAX),
    }
}

/// A variable: what it holds, the node it is visible under (0: the whole body) and where its
/// block ends.
struct Binding {
    name: String,
    ty: Option<Ty>,
    under: usize,
    until: Pos,
}

struct Checker<'a> {
    file: &'a str,
    source: &'a str,
    bindings: Vec<Binding>,
    /// Where the node being looked at is.
    here: Pos,
    /// The ancestors of the node being looked at.
    scope: Vec<usize>,
    out: Vec<Diagnostic>,
    seen: BTreeSet<(usize, usize)>,
    /// Closure (anonymous function) name -> what its captured variables hold where it is made.
    captures: std::collections::HashMap<String, Vec<Option<Ty>>>,
    /// Closure name -> how many of its last parameters are nodes (`test_each`: 1,
    /// `test_pairs`: 2).
    node_params: std::collections::HashMap<String, usize>,
}

/// The closure an argument makes: `|n| ...` (a function pointer) or, capturing variables,
/// `{ share ...; Fn("anon$..").curry(captured...) }`.
fn closure_name(e: &Expr) -> Option<String> {
    match e {
        Expr::DynamicConstant(f, _) => f
            .read_lock::<rhai::FnPtr>()
            .map(|f| f.fn_name().to_string()),
        Expr::FnCall(call, _) if call.name == "curry" => call.args.first().and_then(closure_name),
        // The curry is made in a block that shares the captured variables first.
        Expr::Stmt(b) => b.iter().find_map(|s| match s {
            Stmt::Expr(e) => closure_name(e),
            Stmt::FnCall(call, _) if call.name == "curry" => {
                call.args.first().and_then(closure_name)
            }
            _ => None,
        }),
        _ => None,
    }
}

/// The node type of a call that gives nodes (`node`, `nodes`, `inventory_nodes`).
fn of_node_call(name: &str) -> Option<Ty> {
    let node = super::bindings::nodes::node_shape();
    match name {
        "node" => Some(Ty::Rec(node)),
        "nodes" | "inventory_nodes" => Some(Ty::Arr(node)),
        _ => None,
    }
}

impl Checker<'_> {
    fn report(&mut self, pos: rhai::Position, message: String, hint: String) {
        let (line, col) = (pos.line().unwrap_or(0), pos.position().unwrap_or(0));
        if self.seen.insert((line, col)) {
            self.out.push(Diagnostic::at(
                self.file,
                self.source,
                pos.line(),
                pos.position(),
                message,
                Some(hint),
            ));
        }
    }

    fn lookup(&self, name: &str) -> Option<Ty> {
        self.bindings
            .iter()
            .rev()
            .find(|b| {
                b.name == name
                    && (b.under == 0 || self.scope.contains(&b.under))
                    && self.here <= b.until
            })
            .and_then(|b| b.ty)
    }

    fn bind(&mut self, name: &str, ty: Option<Ty>, under: usize, until: Pos) {
        self.bindings.push(Binding {
            name: name.to_string(),
            ty,
            under,
            until,
        });
    }

    /// Field `name` of a `ty` value: reported when the kind does not declare it.
    fn field(&mut self, ty: Option<Ty>, name: &str, pos: rhai::Position) -> Option<Ty> {
        let Some(Ty::Rec(s)) = ty else { return None };
        if !s.has(name) {
            let msg = super::bindings::record::unknown_field(s, name);
            self.report(pos, msg, format!("its fields are {}", s.fields.join(", ")));
            return None;
        }
        match s.nested(name)? {
            Nest::One(n) => Some(Ty::Rec(n)),
            Nest::Many(n) => Some(Ty::Arr(n)),
        }
    }

    /// One step of a chain (`x.<step>`): a property or a declared method.
    fn step(&mut self, ty: Option<Ty>, e: &Expr) -> Option<Ty> {
        match e {
            Expr::Property(x, pos) => self.field(ty, &x.2, *pos),
            Expr::MethodCall(call, _) => decl(&call.name)
                .filter(|d| d.method)
                .and_then(|d| of_returns(d.returns)),
            _ => None,
        }
    }

    /// The rest of a chain after `.` on a `ty` value.
    fn follow(&mut self, ty: Option<Ty>, rhs: &Expr) -> Option<Ty> {
        match rhs {
            Expr::Dot(b, ..) => {
                let t = self.step(ty, &b.lhs);
                self.follow(t, &b.rhs)
            }
            Expr::Index(b, flags, _) => {
                let t = self.step(ty, &b.lhs);
                self.index(t, &b.rhs, *flags)
            }
            other => self.step(ty, other),
        }
    }

    /// `[idx]` on a `ty` value, then the rest of the chain (when `flags` do not end it there).
    fn index(&mut self, ty: Option<Ty>, rhs: &Expr, flags: ASTFlags) -> Option<Ty> {
        // `[idx].rest` is Dot(idx, rest), `[idx][idx2]...` is Index(idx, ...).
        let chained = !flags.contains(ASTFlags::BREAK);
        let (idx, rest) = match rhs {
            Expr::Dot(b, ..) | Expr::Index(b, ..) if chained => (&b.lhs, Some(rhs)),
            other => (other, None),
        };
        let elem = match ty? {
            Ty::Arr(s) | Ty::ByNode(s) => Some(Ty::Rec(s)),
            rec @ Ty::Rec(_) => match idx {
                Expr::StringConstant(k, pos) => self.field(Some(rec), k, *pos),
                _ => None,
            },
        };
        match rest {
            Some(Expr::Dot(b, ..)) => self.follow(elem, &b.rhs),
            Some(Expr::Index(b, f, _)) => self.index(elem, &b.rhs, *f),
            _ => elem,
        }
    }

    /// What an expression gives, as far as the declarations tell.
    fn ty(&mut self, e: &Expr) -> Option<Ty> {
        match e {
            Expr::Variable(x, ..) if x.2.is_empty() => self.lookup(&x.1),
            Expr::FnCall(call, _) => {
                let name = if call.namespace.is_empty() {
                    call.name.to_string()
                } else {
                    format!("{}::{}", call.namespace, call.name)
                };
                of_node_call(&name).or_else(|| {
                    decl(&name)
                        .filter(|d| !d.method)
                        .and_then(|d| of_returns(d.returns))
                })
            }
            Expr::Dot(b, ..) => {
                let t = self.ty(&b.lhs);
                self.follow(t, &b.rhs)
            }
            Expr::Index(b, flags, _) => {
                let t = self.ty(&b.lhs);
                self.index(t, &b.rhs, *flags)
            }
            _ => None,
        }
    }

    /// `#{ key: ... }` written in a call to a function with declared options.
    fn options(&mut self, name: &str, method: bool, args: &[Expr]) {
        let Some(d) = decl(name).filter(|d| d.method == method && !d.opts.is_empty()) else {
            return;
        };
        for a in args {
            if let Expr::Map(m, _) = a {
                for (key, _) in &m.0 {
                    if !d.opts.contains(&key.name.as_str()) {
                        self.report(
                            key.pos,
                            format!(
                                "unknown {name} option `{}`{}",
                                key.name,
                                did_you_mean(&key.name, d.opts.iter().copied())
                            ),
                            format!("options of {}: {}", d.call, d.opts.join(", ")),
                        );
                    }
                }
            }
        }
    }

    fn visit(&mut self, path: &[ASTNode]) {
        let Some(node) = path.last() else { return };
        self.scope = path.iter().map(addr).collect();
        self.here = match node {
            ASTNode::Stmt(s) => pos(s.position()),
            ASTNode::Expr(e) => pos(e.position()),
            _ => self.here,
        };
        let parent = path.len().checked_sub(2).map(|i| &path[i]);
        let under = parent.map(addr).unwrap_or(0);
        match node {
            ASTNode::Stmt(Stmt::Var(x, ..)) => {
                let t = self.ty(&x.1);
                let until = block_end(parent, self.here);
                self.bind(&x.0.name, t, under, until);
            }
            ASTNode::Stmt(s @ Stmt::For(x, _)) => {
                let t = match self.ty(&x.2.expr) {
                    Some(Ty::Arr(s)) => Some(Ty::Rec(s)),
                    _ => None,
                };
                let until = pos(x.2.body.end_position());
                self.bind(&x.0.name, t, *s as *const Stmt as usize, until);
            }
            ASTNode::Stmt(Stmt::Assignment(x)) => {
                // From here on (whichever branch assigned it) it holds what was assigned.
                if let Expr::Variable(v, ..) = &x.1.lhs {
                    let t = self.ty(&x.1.rhs);
                    self.bind(&v.1, t, 0, (usize::MAX, usize::MAX));
                }
            }
            ASTNode::Stmt(Stmt::FnCall(call, _)) | ASTNode::Expr(Expr::FnCall(call, _))
                if call.name == "curry" =>
            {
                // A closure made here: `Fn("anon$..").curry(captured...)`.
                if let Some((Expr::DynamicConstant(f, _), captured)) = call.args.split_first() {
                    if let Some(f) = f.read_lock::<rhai::FnPtr>() {
                        let tys = captured.iter().map(|a| self.ty(a)).collect();
                        self.captures.insert(f.fn_name().to_string(), tys);
                    }
                }
            }
            ASTNode::Stmt(Stmt::FnCall(call, _)) | ASTNode::Expr(Expr::FnCall(call, _)) => {
                let name = if call.namespace.is_empty() {
                    call.name.to_string()
                } else {
                    format!("{}::{}", call.namespace, call.name)
                };
                self.options(&name, false, &call.args);
                let nodes = match name.as_str() {
                    "test_each" => 1,
                    "test_pairs" => 2,
                    _ => 0,
                };
                if nodes > 0 {
                    if let Some(f) = call.args.iter().rev().find_map(closure_name) {
                        self.node_params.insert(f, nodes);
                    }
                }
            }
            ASTNode::Expr(Expr::MethodCall(call, _)) => self.options(&call.name, true, &call.args),
            ASTNode::Expr(e @ (Expr::Dot(..) | Expr::Index(..))) => {
                // Only where a chain starts: its continuations are followed from there.
                let continuation = matches!(parent, Some(ASTNode::Expr(Expr::Dot(b, ..) | Expr::Index(b, ..))) if std::ptr::eq(&b.rhs, *e));
                if !continuation {
                    self.ty(e);
                }
            }
            _ => {}
        }
    }
}

/// Field and option-key typos in a script (its own functions and closures included). The
/// source is compiled again without optimisation, so that `#{ ... }` written in a call keeps
/// its keys' positions (the optimiser folds constant maps into one value).
pub(crate) fn check(file: &str, source: &str) -> Vec<Diagnostic> {
    let mut engine = rhai::Engine::new_raw();
    super::apply_limits(&mut engine);
    engine.set_optimization_level(rhai::OptimizationLevel::None);
    match engine.compile(source) {
        Ok(ast) => check_ast(&ast, file, source),
        Err(_) => vec![], // `engine::load` has reported it
    }
}

fn check_ast(ast: &AST, file: &str, source: &str) -> Vec<Diagnostic> {
    let mut c = Checker {
        file,
        source,
        bindings: vec![],
        here: (0, 0),
        scope: vec![],
        out: vec![],
        seen: BTreeSet::new(),
        captures: Default::default(),
        node_params: Default::default(),
    };
    // The top level, then each function and closure, each with its own variables: a body
    // starts where a top-level statement lies in another function's source range. A
    // closure's captured variables (its first parameters) hold what they held where it was
    // made, when that was seen before.
    let fns: Vec<_> = ast
        .iter_fn_def()
        .map(|f| {
            let range = (pos(f.body.start_position()), pos(f.body.end_position()));
            (range, f.name.to_string(), f.params.clone())
        })
        .collect();
    let owner = |p: rhai::Position| {
        let p = pos(p);
        fns.iter()
            .filter(|((s, e), ..)| *s <= p && p <= *e)
            .min_by_key(|((s, e), ..)| (e.0 - s.0, e.1.abs_diff(s.1)))
    };
    let mut body = None;
    ast.walk(&mut |p: &[ASTNode]| {
        if let [ASTNode::Stmt(s)] = p {
            let o = owner(s.position());
            if o.map(|f| f.0) != body {
                body = o.map(|f| f.0);
                c.bindings.clear();
                if let Some((_, name, params)) = o {
                    let tys = c.captures.get(name).cloned().unwrap_or_default();
                    for (param, ty) in params.iter().zip(tys) {
                        c.bind(param, ty, 0, (usize::MAX, usize::MAX));
                    }
                    // A test_each / test_pairs closure's own parameters (after the captured
                    // ones) are nodes.
                    let k = c.node_params.get(name).copied().unwrap_or(0);
                    let node = Some(Ty::Rec(super::bindings::nodes::node_shape()));
                    for param in params.iter().skip(params.len().saturating_sub(k)) {
                        c.bind(param, node, 0, (usize::MAX, usize::MAX));
                    }
                }
            }
        }
        c.visit(p);
        true
    });
    c.out
        .sort_by_key(|d| (d.line.unwrap_or(0), d.col.unwrap_or(0)));
    c.out
}

#[cfg(test)]
mod tests {
    fn found(src: &str) -> Vec<String> {
        super::check("t.rhai", src)
            .into_iter()
            .map(|d| {
                format!(
                    "{}:{} {}",
                    d.line.unwrap_or(0),
                    d.col.unwrap_or(0),
                    d.message
                )
            })
            .collect()
    }

    #[test]
    fn a_typo_on_a_known_result_is_found_where_it_is() {
        let f = found(
            "let e = n.ethtool(\"x\");\nif e.speed_mpbs < 1 {}\nif c { let b = n.bond(\"b\"); b.mod; }\n",
        );
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f[0].starts_with("2:6 ") && f[0].contains("did you mean `speed_mbps`"),
            "{f:?}"
        );
        assert!(
            f[1].starts_with("3:31 ") && f[1].contains("did you mean `mode`"),
            "{f:?}"
        );
    }

    #[test]
    fn nested_loops_indexes_and_direct_calls_are_followed() {
        let src = "let r = parse::nccl(t);\nr.rows[0].out_of_place.busbw_gb;\nfor row in r.rows { row.size_byte; }\nn.bond(\"b\").slaves[1].mii_statu;\nlet a = n.addresses(); a[0][\"ifnam\"];\n";
        let f = found(src);
        assert_eq!(f.len(), 4, "{f:?}");
        for w in ["busbw_gbs", "size_bytes", "mii_status", "ifname"] {
            assert!(
                f.iter().any(|m| m.contains(&format!("`{w}`"))),
                "{w}: {f:?}"
            );
        }
    }

    #[test]
    fn rebinding_shadowing_parameters_and_right_fields_are_not_flagged() {
        let src = "let e = #{};\nif c { let e = n.ethtool(\"x\"); } else { e.c; }\ne.d;\nlet e = n.ethtool(\"x\");\ne.speed_mbps;\nif c { e = #{ a: 1 }; }\ne.b;\nlet r = n.run(\"x\");\nlet r = 5;\nr.z;\nfn f(e) { e.whatever }\nlet g = |e| e.other;\nlet p = n.ping(\"x\"); p.loss_pct; p.stderr;\n";
        assert!(found(src).is_empty(), "{:?}", found(src));
    }

    #[test]
    fn captured_variables_keep_their_kind() {
        let f = found("let e = n.ethtool(\"x\");\ntest(\"t\", || { e.lanes; e.lanez; });\n");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].starts_with("2:27 ") && f[0].contains("`lanes`"),
            "{f:?}"
        );
    }

    #[test]
    fn node_fields_are_checked_where_a_node_is_known() {
        let f = found(
            "let want = 1;\ntest_each(nodes(), \"a\", |n| { want; n.interface; n.interfaces; });\ntest_pairs(nodes(), \"p\", #{}, |a, b| { b.nam; a.name; });\nfor x in inventory_nodes() { x.rdma_device; }\nnode(\"a\").fabric_ip;\nnodes()[0].hots;\ntest(\"t\", |n| { n.whatever; });\n",
        );
        assert_eq!(f.len(), 5, "{f:?}");
        assert!(
            f[0].starts_with("2:39 ") && f[0].contains("did you mean `interfaces`"),
            "{f:?}"
        );
        assert!(
            f[1].starts_with("3:42 ") && f[1].contains("did you mean `name`"),
            "{f:?}"
        );
        assert!(f[2].contains("did you mean `rdma_devices`"), "{f:?}");
        assert!(f[3].contains("did you mean `fabric_ips`"), "{f:?}");
        assert!(f[4].contains("`hots` is not a field of the node"), "{f:?}");
    }

    #[test]
    fn option_keys_written_in_calls_are_checked() {
        let src = "test(\"x\", #{ timout: 5 }, || {});\nn.run(\"x\", #{ sudo: true, timeout: 3 });\nib_read_bw(a, b, #{ gid_indx: 3 });\nlet o = #{ anything: 1 }; n.ping(\"x\", o);\n";
        let f = found(src);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f[0].starts_with("1:14 ") && f[0].contains("(did you mean `timeout`?)"),
            "{f:?}"
        );
        assert!(
            f[1].starts_with("3:21 ") && f[1].contains("ib_read_bw option `gid_indx`"),
            "{f:?}"
        );
    }
}

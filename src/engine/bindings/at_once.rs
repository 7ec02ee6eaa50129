//! `at_once(items, f)`: `f(item)` for every item on threads of its own, at once (up to the
//! run's fan-out), inside the one running test: what each call records (commands, metrics,
//! printed lines) goes into that test, and it keeps the test's deadline. localise.rhai runs a
//! round of disjoint pair tests through it.

use super::api::{Api, Binder, BINDINGS};
use crate::engine::signal::{self, RhaiErr};
use crate::run::context;
use crate::util::pool;
use rhai::{Array, Dynamic, FnPtr, NativeCallContext};
use std::sync::Mutex;

/// One call's answer and what it recorded.
type Done = (Result<Dynamic, RhaiErr>, Option<context::TestCtx>);

fn at_once(
    ctx: &NativeCallContext,
    items: Array,
    f: FnPtr,
    workers: usize,
) -> Result<Array, RhaiErr> {
    let pos = ctx.call_position();
    let file = context::file();
    // Forked here, on the test's thread: the workers' threads have no test of their own.
    let forks: Vec<Mutex<Option<context::TestCtx>>> =
        items.iter().map(|_| Mutex::new(context::fork())).collect();
    let call = |k: usize, item: &Dynamic| -> Done {
        context::set_file(&file);
        let fork = forks[k].lock().map(|mut f| f.take()).unwrap_or(None);
        if let Some(c) = fork {
            context::install(c);
        }
        let r = f.call_within_context::<Dynamic>(ctx, (item.clone(),));
        (r, context::take())
    };
    let panicked = |k: usize, _: &Dynamic| -> Done {
        let e = signal::error(format!("at_once: the call for item {k} panicked"), pos);
        (Err(e), None)
    };
    let done = pool::map(&items, workers.max(1), call, panicked);
    let mut out = Array::with_capacity(done.len());
    let mut first_err = None;
    for (r, c) in done {
        if let Some(c) = c {
            context::merge(c);
        }
        match r {
            Ok(v) => out.push(v),
            Err(e) => {
                first_err.get_or_insert(e);
                out.push(Dynamic::UNIT);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    let fanout = api.env.fanout;
    api.function("at_once(items, f)")
        .plain("array of f's answers, in item order")
        .doc("f(item) for every item at once, each on a thread of its own (at most --fanout at a time), within the running test: their commands and metrics are the test's, the test's timeout bounds them; the first error (in item order) is raised once all have ended. f must not capture maps or arrays (pass them in the items)")
        .register(|engine, name| {
            engine.register_fn(
                name,
                move |ctx: NativeCallContext, items: Array, f: FnPtr| -> Result<Array, RhaiErr> {
                    at_once(&ctx, items, f, fanout)
                },
            );
        });
}

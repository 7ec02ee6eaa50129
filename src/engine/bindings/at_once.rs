//! `at_once(items, f)`: `f(item)` for every item on threads of its own, at once (up to the
//! run's fan-out), inside the one running test: what each call records (commands, metrics,
//! printed lines) goes into that test, and it keeps the test's deadline. localise.rhai runs a
//! round of disjoint pair tests through it.

use super::api::{test_log, Api, Binder, BINDINGS};
use crate::engine::signal::{self, RhaiErr};
use crate::run::context::{Running, TestLog};
use crate::util::pool;
use rhai::{Array, Dynamic, FnPtr, NativeCallContext};

/// One call's answer and what it recorded.
type Done = (Result<Dynamic, RhaiErr>, Option<TestLog>);

fn at_once(
    ctx: &NativeCallContext,
    items: Array,
    f: FnPtr,
    workers: usize,
    running: &Running,
) -> Result<Array, RhaiErr> {
    let pos = ctx.call_position();
    let log = test_log(ctx);
    let call = |_: usize, item: &Dynamic| -> Done {
        // Each call its own record, forked from the test's, as the tag of its evaluation.
        let fork = log.as_ref().map(TestLog::fork);
        let mut global = ctx.global_runtime_state().clone();
        if let Some(l) = &fork {
            global.tag = Dynamic::from(l.clone());
        }
        let _deadline = fork.as_ref().map(|l| running.enter(l));
        let c = NativeCallContext::new_with_all_fields(
            ctx.engine(),
            ctx.fn_name(),
            ctx.fn_source(),
            &global,
            pos,
        );
        let r = f.call_within_context::<Dynamic>(&c, (item.clone(),));
        (r, fork)
    };
    let panicked = |k: usize, _: &Dynamic| -> Done {
        let e = signal::error(format!("at_once: the call for item {k} panicked"), pos);
        (Err(e), None)
    };
    let done = pool::map(&items, workers.max(1), call, panicked);
    let mut out = Array::with_capacity(done.len());
    let mut first_err = None;
    for (r, c) in done {
        if let (Some(l), Some(c)) = (&log, c) {
            l.merge(c.take());
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
    let env = api.env.clone();
    api.function("at_once(items, f)")
        .plain("array of f's answers, in item order")
        .doc("f(item) for every item at once, each on a thread of its own (at most --fanout at a time), within the running test: their commands and metrics are the test's, the test's timeout bounds them; the first error (in item order) is raised once all have ended. f must not capture maps or arrays (pass them in the items)")
        .register(|engine, name| {
            let env = env.clone();
            engine.register_fn(
                name,
                move |ctx: NativeCallContext, items: Array, f: FnPtr| -> Result<Array, RhaiErr> {
                    at_once(&ctx, items, f, fanout, &env.running)
                },
            );
        });
}

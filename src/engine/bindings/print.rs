//! `print(x)` and `debug(x)`: the line into the test the call runs in (the call's tag), as
//! the test's output and to its observer. Rhai's own print and debug callbacks are given no
//! call context, so these shadow the packages' `print`/`debug` (one per type the packages
//! register them for, and the catch-all) with the same text (`to_string`/`to_debug`), and the
//! engine's callbacks do nothing (`engine::new_engine`).

use super::api::{test_log, Api, Binder, BINDINGS};
use rhai::{Array, Dynamic, Engine, FnPtr, ImmutableString, Map, NativeCallContext, FLOAT, INT};

/// The text Rhai's own `print`/`debug` make of `v`: its `to_string` / `to_debug` (`f`).
fn text(ctx: &NativeCallContext, f: &str, mut v: Dynamic) -> ImmutableString {
    let engine = ctx.engine();
    match ctx.call_native_fn_raw(f, true, &mut [&mut v]) {
        Ok(r) if r.is_string() => r.into_immutable_string().unwrap_or_default(),
        Ok(r) => engine.map_type_name(r.type_name()).into(),
        Err(_) if f == "to_debug" => engine.map_type_name(&format!("{v:?}")).into(),
        Err(_) => engine.map_type_name(&format!("{v}")).into(),
    }
}

fn print(ctx: &NativeCallContext, v: Dynamic) -> ImmutableString {
    let t = text(ctx, "to_string", v);
    if let Some(l) = test_log(ctx) {
        l.log_line(&t);
    }
    t
}

fn debug(ctx: &NativeCallContext, v: Dynamic) -> ImmutableString {
    debug_line(ctx, text(ctx, "to_debug", v))
}

fn debug_line(ctx: &NativeCallContext, t: ImmutableString) -> ImmutableString {
    if let Some(l) = test_log(ctx) {
        l.log_line(&format!("[debug {}] {t}", ctx.call_position()));
    }
    t
}

/// `print`/`debug` for values of type `T` (the packages register both for it).
fn both<T: rhai::Variant + Clone>(engine: &mut Engine) {
    engine.register_fn("print", |ctx: NativeCallContext, v: T| {
        print(&ctx, Dynamic::from(v))
    });
    engine.register_fn("debug", |ctx: NativeCallContext, v: T| {
        debug(&ctx, Dynamic::from(v))
    });
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    let engine = api.engine();
    engine.register_fn("print", |ctx: NativeCallContext, v: Dynamic| print(&ctx, v));
    engine.register_fn("debug", |ctx: NativeCallContext, v: Dynamic| debug(&ctx, v));
    engine.register_fn("print", |ctx: NativeCallContext| {
        print(&ctx, Dynamic::from(ImmutableString::new()))
    });
    engine.register_fn("debug", |ctx: NativeCallContext| {
        debug_line(&ctx, ImmutableString::new())
    });
    both::<ImmutableString>(engine);
    both::<char>(engine);
    both::<bool>(engine);
    both::<()>(engine);
    both::<INT>(engine);
    both::<FLOAT>(engine);
    both::<f32>(engine);
    both::<Array>(engine);
    both::<Map>(engine);
    engine.register_fn("debug", |ctx: NativeCallContext, v: FnPtr| {
        debug(&ctx, Dynamic::from(v))
    });
}

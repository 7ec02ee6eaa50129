//! `all_reduce_perf(nodes, opts)` and `nccl_test(name, nodes, opts)` (`primitives::nccl`).

use super::api::{Api, Binder, BINDINGS};
use super::options;
use super::values::{node_array, value};
use crate::engine::signal::RhaiErr;
use crate::primitives::nccl::{self, NcclOpts};
use rhai::{Array, Dynamic, Map, NativeCallContext};

fn nccl_test(
    ctx: &NativeCallContext,
    name: &str,
    nodes: Array,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let nodes = node_array(ctx, nodes)?;
    let no: NcclOpts = options::read(o, name, pos)?;
    value(nccl::nccl_test(name, &nodes, &no), pos)
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("all_reduce_perf(nodes, opts)")
        .options::<NcclOpts>()
        .returns::<nccl::NcclResult>()
        .doc("nccl-tests all_reduce_perf across the nodes, launched from the first (mpirun, srun or local), parsed, the transport NCCL chose included")
        .register(|engine, name| {
            engine.register_fn(name, |ctx: NativeCallContext, nodes: Array| {
                nccl_test(&ctx, "all_reduce_perf", nodes, None)
            });
            engine.register_fn(name, |ctx: NativeCallContext, nodes: Array, o: Map| {
                nccl_test(&ctx, "all_reduce_perf", nodes, Some(o))
            });
        });
    api.function("nccl_test(name, nodes, opts)")
        .options::<NcclOpts>()
        .returns::<nccl::NcclResult>()
        .doc("any nccl-tests binary by name (`all_gather_perf`, ...), as all_reduce_perf")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, name: &str, nodes: Array, o: Map| {
                    nccl_test(&ctx, name, nodes, Some(o))
                },
            );
            engine.register_fn(name, |ctx: NativeCallContext, name: &str, nodes: Array| {
                nccl_test(&ctx, name, nodes, None)
            });
        });
}

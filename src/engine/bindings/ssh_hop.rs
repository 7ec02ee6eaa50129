//! `ssh_hop(from, to, opts)` (`primitives::ssh_hop`): passwordless SSH from one node.

use super::api::InTest;
use super::api::{Api, Binder, BINDINGS};
use super::options;
use super::values::value;
use crate::engine::signal::RhaiErr;
use crate::primitives::ssh_hop::{self, SshHopOpts};
use crate::primitives::NodeRef;
use rhai::{Dynamic, Map, NativeCallContext};

fn hop(
    ctx: &NativeCallContext,
    from: &NodeRef,
    to: &str,
    o: Option<Map>,
) -> Result<Dynamic, RhaiErr> {
    let pos = ctx.call_position();
    let ho: SshHopOpts = options::read(o, "ssh_hop", pos)?;
    value(ssh_hop::ssh_hop(from, to, &ho), pos)
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("ssh_hop(from, to, opts)")
        .options::<SshHopOpts>()
        .returns::<ssh_hop::SshHop>()
        .doc("passwordless SSH from one node to an address (BatchMode): who and where it reached, or why not")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, from: NodeRef, to: &str| hop(&ctx, &from.in_test(&ctx), to, None),
            );
            engine.register_fn(
                name,
                |ctx: NativeCallContext, from: NodeRef, to: &str, o: Map| {
                    hop(&ctx, &from.in_test(&ctx), to, Some(o))
                },
            );
        });
}
